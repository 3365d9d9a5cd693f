// What the unary handlers share (service.cc and service_nodes.cc): running a request's work
// inline or on the executor in its RequestScope, retrying work that found its array stale.
#pragma once

#include <atomic>
#include <memory>
#include <string>

#include "proto/error_detail.h"
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

}  // namespace internal

template <typename Work>
grpc::ServerUnaryReactor* ZarrdService::RunUnary(const char* method, std::string store,
                                                 std::string what, Dispatch dispatch, Work work) {
  auto* reactor = new internal::UnaryReactor;
  auto scope = std::make_shared<RequestScope>(state_.requests, *state_.metrics, method,
                                              std::move(store), std::move(what));
  if (Status admitted = scope->Admitted(); !admitted.ok()) {
    reactor->Finish(wire::ToGrpcStatus(scope->Finish(admitted)));
    return reactor;
  }
  auto run = [reactor, scope, work = std::move(work)](const char* where) mutable {
    reactor->Finish(wire::ToGrpcStatus(scope->Finish(work(reactor->cancelled), where)));
  };
  if (dispatch == Dispatch::kShort) {
    if (inline_running_.fetch_add(1) < state_.config.inline_requests) {
      run("inline");
      --inline_running_;
      return reactor;
    }
    --inline_running_;
  }
  state_.executor.Submit([run = std::move(run)]() mutable { run("worker"); });
  return reactor;
}

}  // namespace zarrd::server
