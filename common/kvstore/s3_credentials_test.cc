#include "common/kvstore/s3_credentials.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <fstream>

#include "common/testing/test_util.h"

namespace zarrd {
namespace {

// Sets environment variables for one test and restores them after.
class Env {
 public:
  void Set(const char* name, const char* value) {
    const char* old = ::getenv(name);
    saved_.emplace_back(name, old ? std::optional<std::string>(old) : std::nullopt);
    if (value) {
      ::setenv(name, value, 1);
    } else {
      ::unsetenv(name);
    }
  }
  ~Env() {
    for (auto it = saved_.rbegin(); it != saved_.rend(); ++it) {
      if (it->second) {
        ::setenv(it->first.c_str(), it->second->c_str(), 1);
      } else {
        ::unsetenv(it->first.c_str());
      }
    }
  }

 private:
  std::vector<std::pair<std::string, std::optional<std::string>>> saved_;
};

class S3CredentialsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    file_ = dir_.path() + "/credentials";
    std::ofstream(file_) << "# comment\n[default]\naws_access_key_id = DEFKEY\n"
                            "aws_secret_access_key=DEFSECRET\n\n[ci]\n"
                            "  aws_access_key_id=CIKEY \naws_secret_access_key = CISECRET\n"
                            "aws_session_token = CITOKEN\n[broken]\naws_access_key_id = X\n";
    env_.Set("AWS_SHARED_CREDENTIALS_FILE", file_.c_str());
    env_.Set("AWS_ACCESS_KEY_ID", nullptr);
    env_.Set("AWS_SECRET_ACCESS_KEY", nullptr);
    env_.Set("AWS_SESSION_TOKEN", nullptr);
    env_.Set("AWS_PROFILE", nullptr);
  }
  testing::TempDir dir_;
  std::string file_;
  Env env_;
};

TEST_F(S3CredentialsTest, OrderOfSources) {
  auto c = ResolveS3Credentials({.access_key_id = "CFG", .secret_access_key = "CFGSECRET"});
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->access_key_id, "CFG");
  EXPECT_EQ(c->source, "config");

  c = ResolveS3Credentials({.profile = "ci"});
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->access_key_id, "CIKEY");
  EXPECT_EQ(c->secret_access_key, "CISECRET");
  EXPECT_EQ(c->session_token, "CITOKEN");
  EXPECT_EQ(c->source, "profile ci in " + file_);

  c = ResolveS3Credentials({});  // no environment: the file's default profile
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->access_key_id, "DEFKEY");
  EXPECT_EQ(c->secret_access_key, "DEFSECRET");

  env_.Set("AWS_ACCESS_KEY_ID", "ENVKEY");
  env_.Set("AWS_SECRET_ACCESS_KEY", "ENVSECRET");
  env_.Set("AWS_SESSION_TOKEN", "ENVTOKEN");
  c = ResolveS3Credentials({});
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->access_key_id, "ENVKEY");
  EXPECT_EQ(c->session_token, "ENVTOKEN");
  EXPECT_EQ(c->source, "environment");

  c = ResolveS3Credentials({.anonymous = true});
  ASSERT_TRUE(c.ok());
  EXPECT_TRUE(c->anonymous());
}

TEST_F(S3CredentialsTest, NothingAnywhereIsAnonymous) {
  env_.Set("AWS_SHARED_CREDENTIALS_FILE", (dir_.path() + "/none").c_str());
  auto c = ResolveS3Credentials({});
  ASSERT_TRUE(c.ok());
  EXPECT_TRUE(c->anonymous());
  EXPECT_EQ(c->source, "anonymous");
}

TEST_F(S3CredentialsTest, ErrorsNameTheProfileButNoSecret) {
  auto c = ResolveS3Credentials({.profile = "missing"});
  EXPECT_EQ(c.status().code(), StatusCode::kNotFound);
  EXPECT_NE(c.status().message().find("\"missing\""), std::string::npos);
  c = ResolveS3Credentials({.profile = "broken"});
  EXPECT_EQ(c.status().code(), StatusCode::kInvalidArgument);
  c = ResolveS3Credentials({.access_key_id = "ONLYKEY"});
  EXPECT_EQ(c.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(c.status().message().find("ONLYKEY"), std::string::npos);
}

}  // namespace
}  // namespace zarrd
