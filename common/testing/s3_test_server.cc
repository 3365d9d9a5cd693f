#include "common/testing/s3_test_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <thread>

namespace zarrd::testing {
namespace {

std::string EnvOr(const char* name, const std::string& fallback) {
  const char* v = std::getenv(name);
  return v != nullptr && *v ? v : fallback;
}

}  // namespace

ChildProcess::~ChildProcess() { Stop(); }

bool ChildProcess::Start(const std::vector<std::string>& argv) {
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_ = ::fork();
  if (pid_ < 0) return false;
  if (pid_ == 0) {
    ::setpgid(0, 0);
    ::execvp(args[0], args.data());
    ::_exit(127);
  }
  return true;
}

void ChildProcess::Stop() {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGTERM);
  for (int i = 0; i < 50; ++i) {
    if (::waitpid(pid_, nullptr, WNOHANG) == pid_) {
      pid_ = -1;
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ::kill(pid_, SIGKILL);
  ::waitpid(pid_, nullptr, 0);
  pid_ = -1;
}

int FreePort() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  ::close(fd);
  return ntohs(addr.sin_port);
}

bool WaitForPort(int port, double seconds) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < deadline) {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    const bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
    ::close(fd);
    if (ok) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

std::string S3TestServer::Start() {
  const std::string s3rver = EnvOr("ZARRD_S3RVER", ZARRD_S3RVER);
  if (!std::filesystem::exists(s3rver)) {
    return "no s3rver at " + s3rver + " (run `npm ci` in tests/s3, as scripts/dev does)";
  }
  port_ = FreePort();
  // s3rver's continuation tokens use a cipher that OpenSSL 3 keeps in its legacy provider.
  if (!process_.Start({EnvOr("ZARRD_NODE", "node"), "--openssl-legacy-provider", s3rver, "-d",
                       dir_.path(), "-a", "127.0.0.1", "-p", std::to_string(port_), "--silent",
                       "--configure-bucket", kBucket})) {
    return "could not start s3rver";
  }
  if (!WaitForPort(port_, 30)) return "s3rver did not listen on port " + std::to_string(port_);
  return "";
}

S3StoreOptions S3TestServer::Options(const std::string& prefix) const {
  S3StoreOptions o;
  o.endpoint = endpoint();
  o.bucket = kBucket;
  o.prefix = prefix;
  o.credentials.access_key_id = kKey;
  o.credentials.secret_access_key = kKey;
  o.http.backoff_base_ms = 5;
  return o;
}

std::string FaultProxy::Start(int upstream_port) {
  port_ = FreePort();
  if (!process_.Start({EnvOr("ZARRD_TEST_PYTHON", "/usr/bin/python3"), ZARRD_FAULT_PROXY, "--port",
                       std::to_string(port_), "--upstream",
                       "127.0.0.1:" + std::to_string(upstream_port), "--verify-sigv4",
                       std::string(S3TestServer::kKey) + ":" + S3TestServer::kKey})) {
    return "could not start the fault proxy";
  }
  if (!WaitForPort(port_, 30)) return "the fault proxy did not listen";
  return "";
}

}  // namespace zarrd::testing

namespace zarrd::testing {

std::string FaultProxy::Control(const std::string& method, const std::string& query) {
  HttpTransport transport(HttpOptions{.max_attempts = 1});
  HttpRequest request;
  request.method = method;
  request.url = endpoint() + "/__fault__" + (query.empty() ? "" : "?" + query);
  Bytes body;
  auto response = transport.Perform(request, HttpSink{.bytes = &body}, "fault proxy control");
  if (!response.ok() || response->status != 200) return "";
  return std::string(body.begin(), body.end());
}

bool FaultProxy::Inject(const std::string& mode, int count, const std::string& match,
                        const std::string& method) {
  return Control("POST", "mode=" + UrlEncodeQuery(mode) + "&count=" + std::to_string(count) +
                             "&match=" + UrlEncodeQuery(match) +
                             "&method=" + UrlEncodeQuery(method)) == "ok";
}

int FaultProxy::Injected() {
  const std::string n = Control("GET", "");
  return n.empty() ? -1 : std::stoi(n);
}

}  // namespace zarrd::testing
