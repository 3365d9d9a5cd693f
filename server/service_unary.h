// What the unary handlers share (service.cc and service_nodes.cc): running a request's work
// inline or on the executor, retrying work that found its array stale.
#pragma once

#include <spdlog/spdlog.h>

#include <atomic>
#include <chrono>
#include <string>

#include "server/service.h"

namespace zarrd::server {
namespace internal {

// Runs a request's work again (at most 3 more times) while it fails ABORTED: an array it opened
// was created, deleted or resized through another handle meanwhile, and OpenArray opens it anew
// (a deleted array is NOT_FOUND then).
template <typename Work>
auto RetryStale(Work work) {
  return [work = std::move(work)](const std::atomic<bool>& cancelled) mutable -> Status {
    Status s;
    for (int attempt = 0; attempt < 4; ++attempt) {
      s = work(cancelled);
      if (s.code() != StatusCode::kAborted) break;
    }
    return s;
  };
}

class UnaryReactor : public grpc::ServerUnaryReactor {
 public:
  std::atomic<bool> cancelled{false};
  void OnCancel() override { cancelled = true; }
  void OnDone() override { delete this; }
};

inline std::string NodeName(const std::string& store, const std::string& path) {
  return store + ":" + (path.empty() ? "/" : path);
}

}  // namespace internal

template <typename Work>
grpc::ServerUnaryReactor* ZarrdService::RunUnary(const char* method, const std::string& what,
                                                 Dispatch dispatch, Work work) {
  auto* reactor = new internal::UnaryReactor;
  if (draining_) {
    reactor->Finish(wire::ToGrpcStatus(
        Unavailable("zarrd is shutting down").WithReason(reason::kShuttingDown)));
    return reactor;
  }
  BeginRequest();
  auto run = [this, reactor, method, what, work = std::move(work)](const char* where) mutable {
    const auto t0 = std::chrono::steady_clock::now();
    Status s = work(reactor->cancelled);
    const double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    spdlog::debug("{} {} -> {} ({:.3f} ms, {}){}{}", method, what, StatusCodeName(s.code()), ms,
                  where, s.ok() ? "" : ": ", s.message());
    const size_t colon = what.find(':');
    metrics_->Request(method, colon == std::string::npos ? "" : what.substr(0, colon), s.code(),
                      ms / 1000);
    reactor->Finish(wire::ToGrpcStatus(s));
    EndRequest();
  };
  if (dispatch == Dispatch::kShort) {
    if (inline_running_.fetch_add(1) < config_.inline_requests) {
      run("inline");
      --inline_running_;
      return reactor;
    }
    --inline_running_;
  }
  executor_.Submit([run = std::move(run)]() mutable { run("worker"); });
  return reactor;
}

}  // namespace zarrd::server
