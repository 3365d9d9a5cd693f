// A zarrd of a benchmark's own: started (posix_spawn) on a Unix socket with the given stores,
// metrics off, stopped by SIGTERM when destroyed.
#pragma once

#include <sys/types.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "client/client.h"

namespace zarrd::bench {

// The zarrd next to this executable (a device bundle) or in the build tree.
std::string FindZarrd();

class BenchServer {
 public:
  // `config` holds the stores and any settings; listen, metrics and log level are added. Exits
  // the benchmark when zarrd does not start.
  BenchServer(const std::string& zarrd, nlohmann::json config);
  ~BenchServer();
  BenchServer(const BenchServer&) = delete;
  BenchServer& operator=(const BenchServer&) = delete;

  const std::string& address() const { return address_; }
  pid_t pid() const { return pid_; }
  client::Client& client() { return *client_; }
  // SIGTERM, then the exit status (as waitpid gives it).
  int Stop();

 private:
  std::string address_, config_path_;
  pid_t pid_ = 0;
  int status_ = 0;
  std::unique_ptr<client::Client> client_;
};

}  // namespace zarrd::bench
