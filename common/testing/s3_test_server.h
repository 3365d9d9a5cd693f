// Test helpers: a real S3 server (s3rver, from tests/s3/node_modules) on 127.0.0.1 and the
// fault-injecting proxy (tests/s3/fault_proxy.py) in front of it, each a child process stopped by
// the destructor.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "common/kvstore/object_store.h"
#include "common/testing/test_util.h"

namespace zarrd::testing {

// A child process started with fork+exec, killed (SIGTERM, then SIGKILL) and reaped on destruction.
class ChildProcess {
 public:
  ChildProcess() = default;
  ~ChildProcess();
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;
  bool Start(const std::vector<std::string>& argv);
  void Stop();

 private:
  pid_t pid_ = -1;
};

// A TCP port nobody listens on now.
int FreePort();
// Waits until 127.0.0.1:port accepts connections; false after `seconds`.
bool WaitForPort(int port, double seconds);

class S3TestServer {
 public:
  static constexpr const char* kBucket = "zarrd-test";
  static constexpr const char* kKey = "S3RVER";  // s3rver's built-in access key and secret

  // Empty when the server is running, else why not (the test skips with it).
  std::string Start();
  std::string endpoint() const { return "http://127.0.0.1:" + std::to_string(port_); }
  int port() const { return port_; }
  // Options for a store in the test bucket under `prefix`, signed with s3rver's credentials.
  S3StoreOptions Options(const std::string& prefix) const;

 private:
  TempDir dir_;
  ChildProcess process_;
  int port_ = 0;
};

// The fault proxy in front of `upstream_port`; it checks the SigV4 signature of every request
// (s3rver does not) with S3TestServer's credentials. Faults are queued with Inject and apply to the
// next requests whose path contains `match` (and method, when given).
class FaultProxy {
 public:
  std::string Start(int upstream_port);
  std::string endpoint() const { return "http://127.0.0.1:" + std::to_string(port_); }
  // mode: "status:503", "status:429", "cut", "reset", "slow:SECONDS".
  bool Inject(const std::string& mode, int count, const std::string& match = "",
              const std::string& method = "");
  // Faults injected so far.
  int Injected();

 private:
  std::string Control(const std::string& method, const std::string& query);
  ChildProcess process_;
  int port_ = 0;
};

}  // namespace zarrd::testing
