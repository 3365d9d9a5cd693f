#include "server/request_scope.h"

#include <spdlog/spdlog.h>

namespace zarrd::server {

RequestScope::RequestScope(RequestGate& gate, Metrics& metrics, const char* method,
                           std::string store, std::string what)
    : gate_(gate),
      metrics_(metrics),
      method_(method),
      store_(std::move(store)),
      what_(std::move(what)),
      draining_at_start_(gate.draining()) {
  ++gate_.in_flight_;
}

RequestScope::~RequestScope() {
  if (!finished_) Finish(Cancelled("the request ended without an answer"));
  ++gate_.completed_;
  --gate_.in_flight_;
}

Status RequestScope::Admitted() const {
  if (!draining_at_start_) return OkStatus();
  return Unavailable("zarrd is shutting down").WithReason(reason::kShuttingDown);
}

const Status& RequestScope::Finish(const Status& status, const char* where) {
  if (finished_) return status;
  finished_ = true;
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  spdlog::debug("{} {}{}{} -> {} ({:.3f} ms{}{}){}{}", method_, store_, store_.empty() ? "" : ":",
                what_, StatusCodeName(status.code()), seconds * 1000, *where ? ", " : "", where,
                status.ok() ? "" : ": ", status.message());
  metrics_.Request(method_, store_, status.code(), seconds);
  return status;
}

}  // namespace zarrd::server
