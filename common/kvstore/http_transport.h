// HTTP requests on libcurl for the object stores: kept connections (a pool of easy handles, each
// with its own connection cache; safe to call from many threads at once), timeouts, and retries
// with capped exponential backoff and full jitter under a shared retry budget.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "common/kvstore/store.h"
#include "common/util/bytes.h"
#include "common/util/status.h"

namespace zarrd {

struct HttpOptions {
  int64_t connect_timeout_ms = 5000;
  // A transfer slower than low_speed_bytes per second for low_speed_seconds is a timeout.
  int64_t low_speed_bytes = 1024;
  int64_t low_speed_seconds = 15;
  // Attempts of one request (the first and its retries).
  int max_attempts = 6;
  int64_t backoff_base_ms = 50;
  int64_t backoff_max_ms = 5000;
  // Retries across all requests: each costs one token, each first-time success returns a tenth.
  // When none are left requests fail after their first attempt until successes refill it.
  double retry_budget = 100;
  // "aws:amz:REGION:s3" with user_password "KEY:SECRET" signs requests (curl's SigV4).
  std::string aws_sigv4;
  std::string user_password;
  // Handles kept for reuse (each keeps its connection open).
  size_t max_idle_handles = 64;
  // False closes each connection after its request (for measuring what reuse saves).
  bool reuse_connections = true;
};

struct HttpRequest {
  std::string method = "GET";
  std::string url;
  std::vector<std::string> headers;  // "Name: value"
  std::optional<ByteRange> range;
  ByteView body;      // PUT/POST
  bool head = false;  // no body expected (HEAD)
};

// Where a response body goes: a growable buffer, or a fixed destination that must be filled
// exactly (GetExact: a body of another size is not written, its size is reported).
struct HttpSink {
  Bytes* bytes = nullptr;
  MutableByteView exact;
};

struct HttpResponse {
  long status = 0;
  // Bytes of the body (written to the sink, or, for an exact sink, announced by Content-Length).
  uint64_t body_size = 0;
  // The value's whole size from Content-Range ("bytes a-b/total"), when the server sent one.
  std::optional<uint64_t> range_total;
  std::optional<uint64_t> range_first;  // and the offset of the first byte sent
  // Content-Length of the final response, when it had one.
  std::optional<uint64_t> content_length;
  int attempts = 0;
  Bytes error_body;  // bodies of non-2xx responses (bounded), for their error code
};

struct HttpStats {
  std::atomic<uint64_t> requests{0};
  std::atomic<uint64_t> retries{0};
  std::atomic<uint64_t> in_flight{0};
  std::atomic<uint64_t> max_in_flight{0};
  std::atomic<uint64_t> handles_created{0};
};

class HttpTransport {
 public:
  explicit HttpTransport(HttpOptions options);
  ~HttpTransport();
  HttpTransport(const HttpTransport&) = delete;
  HttpTransport& operator=(const HttpTransport&) = delete;

  // Performs a request, retrying transient failures (connection errors, timeouts, cut bodies,
  // 5xx, 429). A non-2xx final status is returned in the response, not as an error; an error
  // means no HTTP answer came (its message names `what` and curl's reason).
  Result<HttpResponse> Perform(const HttpRequest& request, HttpSink sink, const std::string& what);

  const HttpStats& stats() const { return stats_; }
  const HttpOptions& options() const { return options_; }

 private:
  struct Handle;
  std::unique_ptr<Handle> Acquire();
  void Release(std::unique_ptr<Handle> handle);
  bool TakeRetryToken();
  void ReturnTokens(double tokens);

  HttpOptions options_;
  std::mutex mutex_;
  std::vector<std::unique_ptr<Handle>> idle_;
  double budget_;
  HttpStats stats_;
};

// Whether an HTTP status is worth retrying (5xx, 429).
bool RetryableHttpStatus(long status);
// Percent-encodes a key for a URL path: everything but unreserved characters and '/'.
std::string UrlEncodePath(std::string_view s);
// Percent-encodes a query value (also '/').
std::string UrlEncodeQuery(std::string_view s);

}  // namespace zarrd
