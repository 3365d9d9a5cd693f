#include "common/kvstore/s3_credentials.h"

#include <cstdlib>
#include <fstream>

namespace zarrd {
namespace {

std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v == nullptr ? "" : v;
}

std::string Trim(const std::string& s) {
  const size_t b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t\r") - b + 1);
}

std::string CredentialsFile() {
  std::string file = Env("AWS_SHARED_CREDENTIALS_FILE");
  if (file.empty() && !Env("HOME").empty()) file = Env("HOME") + "/.aws/credentials";
  return file;
}

}  // namespace

Result<S3Credentials> ReadS3Profile(const std::string& file, const std::string& profile) {
  std::ifstream in(file);
  if (!in) return NotFound("no AWS credentials file " + file);
  S3Credentials c;
  bool found = false;
  bool inside = false;
  std::string line;
  while (std::getline(in, line)) {
    line = Trim(line);
    if (line.empty() || line[0] == '#' || line[0] == ';') continue;
    if (line.front() == '[' && line.back() == ']') {
      inside = Trim(line.substr(1, line.size() - 2)) == profile;
      found |= inside;
      continue;
    }
    if (!inside) continue;
    const size_t eq = line.find('=');
    if (eq == std::string::npos) continue;
    const std::string key = Trim(line.substr(0, eq));
    const std::string value = Trim(line.substr(eq + 1));
    if (key == "aws_access_key_id") c.access_key_id = value;
    if (key == "aws_secret_access_key") c.secret_access_key = value;
    if (key == "aws_session_token") c.session_token = value;
  }
  if (!found) return NotFound("no profile \"" + profile + "\" in " + file);
  if (c.access_key_id.empty() || c.secret_access_key.empty()) {
    return InvalidArgument("profile \"" + profile + "\" in " + file +
                           " lacks aws_access_key_id or aws_secret_access_key");
  }
  c.source = "profile " + profile + " in " + file;
  return c;
}

Result<S3Credentials> ResolveS3Credentials(const S3CredentialSettings& s) {
  if (!s.access_key_id.empty() || !s.secret_access_key.empty()) {
    if (s.access_key_id.empty() || s.secret_access_key.empty()) {
      return InvalidArgument("access_key_id and secret_access_key must be given together");
    }
    return S3Credentials{s.access_key_id, s.secret_access_key, s.session_token, "config"};
  }
  if (s.anonymous) return S3Credentials{"", "", "", "anonymous"};
  if (!s.profile.empty()) return ReadS3Profile(CredentialsFile(), s.profile);
  if (!Env("AWS_ACCESS_KEY_ID").empty() && !Env("AWS_SECRET_ACCESS_KEY").empty()) {
    return S3Credentials{Env("AWS_ACCESS_KEY_ID"), Env("AWS_SECRET_ACCESS_KEY"),
                         Env("AWS_SESSION_TOKEN"), "environment"};
  }
  const std::string profile = Env("AWS_PROFILE").empty() ? "default" : Env("AWS_PROFILE");
  auto from_file = ReadS3Profile(CredentialsFile(), profile);
  if (from_file.ok()) return from_file;
  if (from_file.status().code() != StatusCode::kNotFound) return from_file.status();
  return S3Credentials{"", "", "", "anonymous"};
}

}  // namespace zarrd
