// ZarrdServer owns start, serve and shutdown: stores from the config, listening sockets (a Unix
// socket with the configured mode, TCP when asked), health checking and reflection.
#pragma once

#include <grpcpp/grpcpp.h>
#include <sys/types.h>

#include <memory>
#include <string>

#include "server/config.h"
#include "server/service.h"

namespace zarrd::server {

class ZarrdServer {
 public:
  static Result<std::unique_ptr<ZarrdServer>> Start(ServerConfig config);
  ~ZarrdServer();

  // Stops taking requests, lets those in flight finish for up to the grace period, then
  // cancels the rest and returns.
  void Shutdown();
  uint64_t epoch() const { return epoch_; }
  const std::vector<std::string>& addresses() const { return addresses_; }

 private:
  ZarrdServer() = default;
  ServerConfig config_;
  uint64_t epoch_ = 0;
  std::unique_ptr<ZarrdService> service_;
  std::unique_ptr<grpc::Server> server_;
  std::vector<std::string> addresses_;
  struct BoundSocket {
    std::string path;
    ino_t inode;
  };
  std::vector<BoundSocket> sockets_;
};

}  // namespace zarrd::server
