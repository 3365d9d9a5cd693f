// Where the S3 store's credentials come from, in the order AWS's own tools look.
#pragma once

#include <string>

#include "common/util/status.h"

namespace zarrd {

struct S3Credentials {
  std::string access_key_id;
  std::string secret_access_key;
  std::string session_token;
  // Where they came from ("config", "environment", "profile NAME in FILE", "anonymous"); safe to
  // log, unlike the rest.
  std::string source;
  bool anonymous() const { return access_key_id.empty(); }
};

struct S3CredentialSettings {
  std::string access_key_id;  // config fields, when set
  std::string secret_access_key;
  std::string session_token;
  std::string profile;     // a profile of the shared credentials file
  bool anonymous = false;  // sign nothing even when credentials are around
};

// Config fields, else `anonymous`, else the named profile (an error when it is missing), else
// AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY/AWS_SESSION_TOKEN, else profile $AWS_PROFILE or
// "default" of AWS_SHARED_CREDENTIALS_FILE or ~/.aws/credentials when there, else anonymous.
Result<S3Credentials> ResolveS3Credentials(const S3CredentialSettings& settings);

// Reads one profile of an AWS credentials file (INI); NOT_FOUND when the file or the profile is
// missing. Messages name the file and profile, never a secret.
Result<S3Credentials> ReadS3Profile(const std::string& file, const std::string& profile);

}  // namespace zarrd
