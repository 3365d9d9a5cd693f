#include "server/server.h"

#include <grp.h>
#include <grpcpp/ext/proto_server_reflection_plugin.h>
#include <grpcpp/health_check_service_interface.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <random>
#include <thread>

#include "common/util/file_util.h"

namespace zarrd::server {
namespace {

Result<std::string> ReadPem(const std::string& path, const char* what) {
  auto text = ReadTextFile(path);
  if (!text.ok()) return text.status().WithContext(std::string("tls.") + what);
  return text;
}

Result<std::shared_ptr<grpc::ServerCredentials>> TlsCredentials(const TlsConfig& tls) {
  grpc::SslServerCredentialsOptions options(
      tls.client_ca_file.empty() ? GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE
                                 : GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY);
  grpc::SslServerCredentialsOptions::PemKeyCertPair pair;
  ZARRD_ASSIGN_OR_RETURN(pair.private_key, ReadPem(tls.key_file, "key_file"));
  ZARRD_ASSIGN_OR_RETURN(pair.cert_chain, ReadPem(tls.cert_file, "cert_file"));
  options.pem_key_cert_pairs.push_back(std::move(pair));
  if (!tls.client_ca_file.empty()) {
    ZARRD_ASSIGN_OR_RETURN(options.pem_root_certs, ReadPem(tls.client_ca_file, "client_ca_file"));
  }
  return grpc::SslServerCredentials(options);
}

// Clears the way for a Unix socket at `path`: removes a socket that nothing answers on (left by a
// process that died), refuses when a server answers there or when the path is not a socket.
Status ClaimSocketPath(const std::string& path) {
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0) {
    return errno == ENOENT ? OkStatus() : ErrnoStatus(errno, "socket " + path);
  }
  if (!S_ISSOCK(st.st_mode)) {
    return FailedPrecondition("socket " + path + " exists and is not a socket; not removing it");
  }
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.size() >= sizeof addr.sun_path) return InvalidArgument("socket path too long: " + path);
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return ErrnoStatus(errno, "socket " + path);
  const int connected = ::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr);
  const int err = errno;
  ::close(fd);
  if (connected == 0 || err == EAGAIN) {  // EAGAIN: alive, its backlog full
    return FailedPrecondition("another server answers on " + path +
                              " (a zarrd running already?); refusing to start");
  }
  if (err != ECONNREFUSED) return ErrnoStatus(err, "probing socket " + path);
  if (::unlink(path.c_str()) != 0 && errno != ENOENT) return ErrnoStatus(errno, "socket " + path);
  spdlog::info("removed the stale socket {} (nothing answered on it)", path);
  return OkStatus();
}

}  // namespace

Result<std::unique_ptr<ZarrdServer>> ZarrdServer::Start(ServerConfig config) {
  std::unique_ptr<ZarrdServer> s(new ZarrdServer());
  // First, so that a second zarrd started by mistake touches nothing of the running one.
  for (const auto& address : config.listen) {
    if (address.rfind("unix:", 0) != 0) continue;
    const std::string path = address.substr(5);
    std::error_code ec;
    std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ec);
    ZARRD_RETURN_IF_ERROR(ClaimSocketPath(path));
  }
  std::shared_ptr<grpc::ServerCredentials> tcp_credentials = grpc::InsecureServerCredentials();
  if (config.tls) {
    ZARRD_ASSIGN_OR_RETURN(tcp_credentials, TlsCredentials(*config.tls));
  }
  std::random_device rd;
  s->epoch_ = (static_cast<uint64_t>(rd()) << 32 | rd()) ^
              static_cast<uint64_t>(std::chrono::system_clock::now().time_since_epoch().count());
  ZARRD_ASSIGN_OR_RETURN(auto devices, MakeDeviceBackend(config));
  std::map<std::string, NamedStore> stores;
  for (const auto& sc : config.stores) {
    std::shared_ptr<Store> store;
    if (sc.kind == "memory") {
      store = MakeMemoryStore();
    } else if (sc.kind == "gpu") {
      auto gpu = devices->MakeGpuStore(sc);
      if (!gpu.ok()) return gpu.status().WithContext("store \"" + sc.name + "\"");
      store = std::move(*gpu);
    } else if (sc.kind == "s3" || sc.kind == "http") {
      auto opened = sc.kind == "s3" ? OpenS3Store(sc.s3) : OpenHttpStore(sc.http);
      if (!opened.ok()) return opened.status().WithContext("store \"" + sc.name + "\"");
      store = std::move(*opened);
    } else {
      ZARRD_ASSIGN_OR_RETURN(store, OpenLocalStore(sc.root, {.fsync = sc.fsync}));
    }
    spdlog::info("store \"{}\": {}{}", sc.name, store->Describe(),
                 sc.read_only ? " (read-only)" : "");
    stores.emplace(sc.name, NamedStore{sc, StoreHandle(store)});
  }
  ZARRD_ASSIGN_OR_RETURN(auto metrics, Metrics::Start(config.metrics_listen));
  if (!metrics->url().empty()) spdlog::info("metrics on {}", metrics->url());
  s->service_ = std::make_unique<ZarrdService>(config, std::move(stores), s->epoch_,
                                               std::move(devices), std::move(metrics));

  grpc::EnableDefaultHealthCheckService(true);
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  grpc::ServerBuilder builder;
  builder.SetMaxReceiveMessageSize(
      static_cast<int>(std::min<uint64_t>(config.max_unary_result_bytes + (64u << 20), INT32_MAX)));
  builder.SetMaxSendMessageSize(
      static_cast<int>(std::min<uint64_t>(config.max_unary_result_bytes + (64u << 20), INT32_MAX)));
  std::vector<int> ports(config.listen.size(), 0);
  for (size_t i = 0; i < config.listen.size(); ++i) {
    const std::string& address = config.listen[i];
    const bool unix_socket = address.rfind("unix:", 0) == 0;
    builder.AddListeningPort(
        address, unix_socket ? grpc::InsecureServerCredentials() : tcp_credentials, &ports[i]);
  }
  builder.RegisterService(s->service_.get());
  s->server_ = builder.BuildAndStart();
  if (!s->server_) return Unavailable("could not listen on the configured addresses");
  for (const auto& address : config.listen) {
    if (address.rfind("unix:", 0) != 0) continue;
    // Remembered by inode, so that Shutdown removes this socket and not one bound there later.
    struct stat st;
    if (::lstat(address.c_str() + 5, &st) == 0)
      s->sockets_.push_back({address.substr(5), st.st_ino});
  }
  for (size_t i = 0; i < config.listen.size(); ++i) {
    std::string address = config.listen[i];
    if (address.rfind("unix:", 0) != 0) {
      if (ports[i] == 0) return Unavailable("could not listen on " + address);
      address = address.substr(0, address.rfind(':') + 1) + std::to_string(ports[i]);
    }
    s->addresses_.push_back(address);
  }
  gid_t group = static_cast<gid_t>(-1);
  if (!config.socket_group.empty()) {
    const struct group* g = ::getgrnam(config.socket_group.c_str());
    if (g == nullptr)
      return InvalidArgument("socket_group: no group \"" + config.socket_group + "\"");
    group = g->gr_gid;
  }
  for (const auto& [path, inode] : s->sockets_) {
    if (::chmod(path.c_str(), config.socket_mode) != 0) {
      return ErrnoStatus(errno, "chmod of socket " + path);
    }
    if (group != static_cast<gid_t>(-1) && ::chown(path.c_str(), static_cast<uid_t>(-1), group)) {
      return ErrnoStatus(errno, "chown of socket " + path + " to group " + config.socket_group);
    }
  }
  s->server_->GetHealthCheckService()->SetServingStatus(true);
  s->config_ = std::move(config);
  return s;
}

void ZarrdServer::Shutdown() {
  if (!server_) return;
  service_->StartDraining();
  server_->GetHealthCheckService()->SetServingStatus(false);
  const auto grace = std::chrono::duration<double>(config_.shutdown_grace_seconds);
  const auto deadline = std::chrono::system_clock::now() +
                        std::chrono::duration_cast<std::chrono::system_clock::duration>(grace);
  while (service_->in_flight() > 0 && std::chrono::system_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  if (service_->in_flight() > 0) {
    spdlog::warn("shutdown: {} requests still in flight after the grace period; cancelling",
                 service_->in_flight());
  }
  server_->Shutdown(deadline);
  for (const auto& [path, inode] : sockets_) {
    struct stat st;
    if (::lstat(path.c_str(), &st) == 0 && st.st_ino == inode) ::unlink(path.c_str());
  }
  server_.reset();
}

ZarrdServer::~ZarrdServer() { Shutdown(); }

}  // namespace zarrd::server
