#include "bench/bench_server.h"

#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>

extern char** environ;

namespace zarrd::bench {

std::string FindZarrd() {
  const auto self = std::filesystem::canonical("/proc/self/exe").parent_path();
  for (auto candidate : {self / "zarrd", self / ".." / "server" / "zarrd"}) {
    if (std::filesystem::exists(candidate)) return candidate.string();
  }
  return "zarrd";
}

BenchServer::BenchServer(const std::string& zarrd, nlohmann::json config) {
  static std::atomic<int> count{0};
  const std::string tag = std::to_string(::getpid()) + "-" + std::to_string(count++);
  const std::string socket = "/tmp/zarrd-bench-" + tag + ".sock";
  config_path_ = "/tmp/zarrd-bench-" + tag + ".json";
  config["listen"] = {"unix:" + socket};
  config["metrics_listen"] = "";
  if (!config.contains("log_level")) config["log_level"] = "warn";
  std::ofstream(config_path_) << config.dump();
  const char* argv[] = {zarrd.c_str(), "--config", config_path_.c_str(), nullptr};
  if (posix_spawn(&pid_, zarrd.c_str(), nullptr, nullptr, const_cast<char**>(argv), environ)) {
    std::fprintf(stderr, "cannot start %s\n", zarrd.c_str());
    std::exit(1);
  }
  address_ = "unix:" + socket;
  auto c = client::Client::Connect(address_, 60);
  if (!c.ok()) {
    std::fprintf(stderr, "%s\n", c.status().ToString().c_str());
    Stop();
    std::exit(1);
  }
  client_ = std::move(*c);
}

int BenchServer::Stop() {
  client_.reset();
  if (pid_ > 0) {
    ::kill(pid_, SIGTERM);
    ::waitpid(pid_, &status_, 0);
    pid_ = 0;
    std::filesystem::remove(config_path_);
  }
  return status_;
}

BenchServer::~BenchServer() { Stop(); }

}  // namespace zarrd::bench
