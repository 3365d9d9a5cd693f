// zarrd: serves Zarr arrays over gRPC. `zarrd --help` lists the options.
//
// Without --config it serves one local store "local" in ./zarrd-data on unix:zarrd.sock.
// SIGTERM or SIGINT: stop taking requests, finish those in flight within the grace period, exit 0.
#include <malloc.h>
#include <signal.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <cstring>
#include <iostream>
#include <optional>

#include "common/util/version.h"
#include "server/sd_notify.h"
#include "server/server.h"

namespace {

// The command line; an option given replaces its config file key.
struct CommandLine {
  std::string config_path, log_level;
  std::vector<std::string> listen;
  std::optional<std::string> metrics_listen;
  std::string gpu_decode;
};

// The options, one a line.
void AddOptions(CLI::App& app, CommandLine& cl) {
  app.add_option("--config", cl.config_path, "the JSON or YAML configuration file");
  app.add_option("--listen", cl.listen,
                 "an address to serve, unix:/path/zarrd.sock or HOST:PORT; repeat for several "
                 "(replaces the config's listen)")
      ->allow_extra_args(false);
  app.add_option("--log-level", cl.log_level, "replaces the config's log_level")
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error", "critical", "off"}));
  app.add_option("--metrics-listen", cl.metrics_listen,
                 "HOST:PORT for Prometheus metrics, or off (replaces the config's metrics_listen)");
  app.add_option("--gpu-decode", cl.gpu_decode,
                 "where DEVICE reads decode zstd, blosc, gzip and zlib chunks: auto, always "
                 "(the GPU) or never (the CPUs) (replaces the config's gpu_decode)")
      ->check(CLI::IsMember({"auto", "always", "never"}));
}

}  // namespace

int main(int argc, char** argv) {
  CommandLine cl;
  CLI::App app("zarrd: serves Zarr arrays over gRPC.", "zarrd");
  app.footer(
      "Without --config: one local store \"local\" in ./zarrd-data, on unix:zarrd.sock.\n"
      "SIGTERM/SIGINT drain and exit 0; SIGHUP reloads the log level. Exit 2 on a bad command\n"
      "line or configuration, 1 when the server cannot start.\n"
      "Example:\n  zarrd --config /etc/zarrd/zarrd.json --listen 127.0.0.1:7070 --log-level debug");
  app.failure_message([](const CLI::App*, const CLI::Error& e) {
    return "zarrd: " + std::string(e.what()) + "\nRun with --help for more information.\n";
  });
  bool version = false;
  app.add_flag("--version", version, "print the version and exit");
  AddOptions(app, cl);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  if (version) {
    std::cout << "zarrd " << zarrd::kZarrdVersion << "\n";
    return 0;
  }
  const std::string& config_path = cl.config_path;
  const std::vector<std::string>& listen = cl.listen;
  const std::string& log_level = cl.log_level;
  auto config = config_path.empty()
                    ? zarrd::Result<zarrd::server::ServerConfig>(zarrd::server::DefaultConfig())
                    : zarrd::server::LoadConfig(config_path);
  if (!config.ok()) {
    std::cerr << "zarrd: " << config.status().ToString() << "\n";
    return 2;
  }
  if (!listen.empty()) config->listen = listen;
  if (!log_level.empty()) config->log_level = log_level;
  if (cl.metrics_listen) config->metrics_listen = zarrd::server::MetricsAddress(*cl.metrics_listen);
  if (!cl.gpu_decode.empty()) config->gpu_decode = *zarrd::ParseGpuDecodeMode(cl.gpu_decode);
  auto level = spdlog::level::from_str(config->log_level);
  if (level == spdlog::level::off && config->log_level != "off") {
    std::cerr << "zarrd: unknown log level \"" << config->log_level << "\"\n";
    return 2;
  }
  spdlog::set_default_logger(spdlog::stderr_color_mt("zarrd"));
  spdlog::set_level(level);
  spdlog::flush_on(spdlog::level::trace);  // a line per request, none lost when the process dies

  // Signals are taken by sigwait in this thread; every thread started later inherits the mask.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  // glibc raises its mmap threshold to the largest buffer freed (up to 32 MiB) and its trim
  // threshold to twice that. The top of each per-thread arena, which malloc_trim leaves alone,
  // then stays resident after a burst of large requests: idle RSS settled at 50-60 MiB instead
  // of 24, and grew for rounds (tests/e2e/hardening/test_vanish.py under load). Fixed thresholds
  // keep buffers below 32 MiB reused from the heap and let an arena's top shrink past 1 MiB free.
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 1 << 20);

  auto server = zarrd::server::ZarrdServer::Start(*config);
  if (!server.ok()) {
    spdlog::error("{}", server.status().ToString());
    return 1;
  }
  for (const auto& a : (*server)->addresses()) spdlog::info("listening on {}", a);
  spdlog::info("zarrd {} ready (epoch {:016x})", zarrd::kZarrdVersion, (*server)->epoch());
  zarrd::server::SdNotify("READY=1");
  int sig = 0;
  while (sigwait(&signals, &sig) == 0 && sig == SIGHUP) {
    // Reload: the log level applies at once; stores, listeners, devices and limits are fixed
    // for the server's run (clients hold IPC mappings of its pools), so they need a restart.
    auto reloaded = config_path.empty() ? zarrd::Result<zarrd::server::ServerConfig>(*config)
                                        : zarrd::server::LoadConfig(config_path);
    if (!reloaded.ok()) {
      spdlog::error("SIGHUP: {}; keeping the running configuration", reloaded.status().ToString());
      continue;
    }
    const auto new_level = spdlog::level::from_str(reloaded->log_level);
    if (new_level != spdlog::level::off || reloaded->log_level == "off") {
      spdlog::set_level(new_level);
    }
    spdlog::info("SIGHUP: log level {}; other settings take effect at the next restart",
                 reloaded->log_level);
  }
  zarrd::server::SdNotify("STOPPING=1");
  spdlog::info("{}: shutting down (grace {} s)", strsignal(sig), config->shutdown_grace_seconds);
  (*server)->Shutdown();
  spdlog::info("stopped");
  return 0;
}
