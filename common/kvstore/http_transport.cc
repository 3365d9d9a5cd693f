#include "common/kvstore/http_transport.h"

#include <curl/curl.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <random>
#include <thread>

namespace zarrd {
namespace {

constexpr size_t kMaxErrorBody = 4096;

void GlobalInit() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

// One attempt's state, seen by curl's callbacks.
struct Transfer {
  CURL* curl = nullptr;
  HttpSink sink;
  ByteView body;
  size_t body_pos = 0;
  uint64_t written = 0;
  bool size_mismatch = false;
  std::optional<uint64_t> announced;  // Content-Length of the final response
  std::optional<uint64_t> range_total;
  std::optional<uint64_t> range_first;
  Bytes error_body;

  long Status() const {
    long status = 0;
    curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
    return status;
  }
};

bool StartsWithNoCase(std::string_view s, std::string_view prefix) {
  if (s.size() < prefix.size()) return false;
  for (size_t i = 0; i < prefix.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(s[i])) != prefix[i]) return false;
  }
  return true;
}

std::optional<uint64_t> ParseUnsigned(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  uint64_t v = 0;
  size_t i = 0;
  for (; i < s.size() && s[i] >= '0' && s[i] <= '9'; ++i) {
    if (v > (UINT64_MAX - 9) / 10) return std::nullopt;
    v = v * 10 + static_cast<uint64_t>(s[i] - '0');
  }
  if (i == 0) return std::nullopt;
  return v;
}

size_t OnHeader(char* data, size_t size, size_t n, void* user) {
  auto* t = static_cast<Transfer*>(user);
  std::string_view line(data, size * n);
  if (line.rfind("HTTP/", 0) == 0) {  // a new response (after a 100 Continue or a redirect)
    t->announced.reset();
    t->range_total.reset();
    t->range_first.reset();
  } else if (StartsWithNoCase(line, "content-length:")) {
    t->announced = ParseUnsigned(line.substr(15));
  } else if (StartsWithNoCase(line, "content-range:")) {
    const size_t slash = line.find('/');
    if (slash != std::string_view::npos) t->range_total = ParseUnsigned(line.substr(slash + 1));
    const size_t unit = line.find("bytes");
    if (unit != std::string_view::npos) t->range_first = ParseUnsigned(line.substr(unit + 5));
  }
  return size * n;
}

size_t OnBody(char* data, size_t size, size_t n, void* user) {
  auto* t = static_cast<Transfer*>(user);
  const size_t len = size * n;
  const long status = t->Status();
  if (status < 200 || status >= 300) {
    const size_t keep =
        std::min(len, kMaxErrorBody - std::min(kMaxErrorBody, t->error_body.size()));
    t->error_body.insert(t->error_body.end(), data, data + keep);
    return len;
  }
  if (t->sink.bytes != nullptr) {
    if (t->written == 0 && t->announced) t->sink.bytes->reserve(*t->announced);
    t->sink.bytes->insert(t->sink.bytes->end(), data, data + len);
  } else {
    MutableByteView dst = t->sink.exact;
    if ((t->announced && *t->announced != dst.size()) || t->written + len > dst.size()) {
      t->size_mismatch = true;
      return 0;  // stops the transfer: the caller only wanted a value of dst.size() bytes
    }
    std::memcpy(dst.data() + t->written, data, len);
  }
  t->written += len;
  return len;
}

size_t OnUpload(char* buffer, size_t size, size_t n, void* user) {
  auto* t = static_cast<Transfer*>(user);
  const size_t len = std::min(size * n, t->body.size() - t->body_pos);
  std::memcpy(buffer, t->body.data() + t->body_pos, len);
  t->body_pos += len;
  return len;
}

bool RetryableCurlCode(CURLcode code) {
  switch (code) {
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_CONNECT:
    case CURLE_OPERATION_TIMEDOUT:
    case CURLE_SEND_ERROR:
    case CURLE_RECV_ERROR:
    case CURLE_GOT_NOTHING:
    case CURLE_PARTIAL_FILE:
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM:
    case CURLE_SSL_CONNECT_ERROR:
      return true;
    default:
      return false;
  }
}

int64_t BackoffMs(const HttpOptions& o, int attempt) {
  thread_local std::mt19937_64 rng(std::random_device{}());
  const int64_t cap =
      std::min<int64_t>(o.backoff_max_ms, o.backoff_base_ms << std::min(attempt, 20));
  return std::uniform_int_distribution<int64_t>(0, std::max<int64_t>(cap, 1))(rng);
}

std::string PercentEncode(std::string_view s, bool keep_slash) {
  static const char* kHex = "0123456789ABCDEF";
  std::string out;
  out.reserve(s.size());
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~' ||
        (keep_slash && c == '/')) {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

}  // namespace

struct HttpTransport::Handle {
  CURL* curl = nullptr;
  ~Handle() {
    if (curl != nullptr) curl_easy_cleanup(curl);
  }
};

bool RetryableHttpStatus(long status) { return status == 429 || (status >= 500 && status < 600); }

std::string UrlEncodePath(std::string_view s) { return PercentEncode(s, true); }
std::string UrlEncodeQuery(std::string_view s) { return PercentEncode(s, false); }

HttpTransport::HttpTransport(HttpOptions options)
    : options_(std::move(options)), budget_(options_.retry_budget) {
  GlobalInit();
}

HttpTransport::~HttpTransport() = default;

std::unique_ptr<HttpTransport::Handle> HttpTransport::Acquire() {
  {
    std::lock_guard lock(mutex_);
    if (!idle_.empty()) {
      auto h = std::move(idle_.back());
      idle_.pop_back();
      return h;
    }
  }
  auto h = std::make_unique<Handle>();
  h->curl = curl_easy_init();
  stats_.handles_created.fetch_add(1, std::memory_order_relaxed);
  return h;
}

void HttpTransport::Release(std::unique_ptr<Handle> handle) {
  std::lock_guard lock(mutex_);
  if (idle_.size() < options_.max_idle_handles) idle_.push_back(std::move(handle));
}

bool HttpTransport::TakeRetryToken() {
  std::lock_guard lock(mutex_);
  if (budget_ < 1) return false;
  budget_ -= 1;
  return true;
}

void HttpTransport::ReturnTokens(double tokens) {
  std::lock_guard lock(mutex_);
  budget_ = std::min(options_.retry_budget, budget_ + tokens);
}

Result<HttpResponse> HttpTransport::Perform(const HttpRequest& request, HttpSink sink,
                                            const std::string& what) {
  auto handle = Acquire();
  if (handle->curl == nullptr) return Internal(what + ": could not create a curl handle");
  const uint64_t now_in_flight = stats_.in_flight.fetch_add(1) + 1;
  uint64_t seen = stats_.max_in_flight.load();
  while (now_in_flight > seen && !stats_.max_in_flight.compare_exchange_weak(seen, now_in_flight)) {
  }
  struct InFlight {
    std::atomic<uint64_t>& n;
    ~InFlight() { n.fetch_sub(1); }
  } in_flight{stats_.in_flight};

  std::string range_header;
  if (request.range) {
    const ByteRange& r = *request.range;
    range_header = r.suffix ? "Range: bytes=-" + std::to_string(r.length)
                            : "Range: bytes=" + std::to_string(r.offset) + "-" +
                                  std::to_string(r.offset + r.length - 1);
  }
  struct curl_slist* headers = nullptr;
  for (const std::string& h : request.headers) headers = curl_slist_append(headers, h.c_str());
  if (!range_header.empty()) headers = curl_slist_append(headers, range_header.c_str());
  struct SlistFree {
    curl_slist* l;
    ~SlistFree() { curl_slist_free_all(l); }
  } free_headers{headers};

  HttpResponse response;
  char errbuf[CURL_ERROR_SIZE];
  for (int attempt = 0;; ++attempt) {
    CURL* c = handle->curl;
    curl_easy_reset(c);  // keeps the handle's open connections
    Transfer t;
    t.curl = c;
    t.sink = sink;
    t.body = request.body;
    if (sink.bytes != nullptr) sink.bytes->clear();
    errbuf[0] = '\0';
    curl_easy_setopt(c, CURLOPT_URL, request.url.c_str());
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_ERRORBUFFER, errbuf);
    curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(options_.connect_timeout_ms));
    curl_easy_setopt(c, CURLOPT_LOW_SPEED_LIMIT, static_cast<long>(options_.low_speed_bytes));
    curl_easy_setopt(c, CURLOPT_LOW_SPEED_TIME, static_cast<long>(options_.low_speed_seconds));
    curl_easy_setopt(c, CURLOPT_TCP_KEEPALIVE, 1L);
    if (!options_.reuse_connections) curl_easy_setopt(c, CURLOPT_FORBID_REUSE, 1L);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, OnHeader);
    curl_easy_setopt(c, CURLOPT_HEADERDATA, &t);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, OnBody);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &t);
    if (!options_.aws_sigv4.empty()) {
      curl_easy_setopt(c, CURLOPT_AWS_SIGV4, options_.aws_sigv4.c_str());
      curl_easy_setopt(c, CURLOPT_USERPWD, options_.user_password.c_str());
    }
    if (request.head) {
      curl_easy_setopt(c, CURLOPT_NOBODY, 1L);
    } else if (request.method == "PUT") {
      curl_easy_setopt(c, CURLOPT_UPLOAD, 1L);
      curl_easy_setopt(c, CURLOPT_READFUNCTION, OnUpload);
      curl_easy_setopt(c, CURLOPT_READDATA, &t);
      curl_easy_setopt(c, CURLOPT_INFILESIZE_LARGE, static_cast<curl_off_t>(request.body.size()));
    } else if (request.method == "POST") {
      curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE,
                       static_cast<curl_off_t>(request.body.size()));
      curl_easy_setopt(c, CURLOPT_POSTFIELDS, request.body.data());
    } else if (request.method != "GET") {
      curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, request.method.c_str());
    }
    stats_.requests.fetch_add(1, std::memory_order_relaxed);
    const CURLcode code = curl_easy_perform(c);
    response.attempts = attempt + 1;
    response.status = t.Status();
    response.range_total = t.range_total;
    response.range_first = t.range_first;
    response.content_length = t.announced;
    response.error_body = std::move(t.error_body);
    if (code == CURLE_WRITE_ERROR && t.size_mismatch) {
      response.body_size = t.announced.value_or(t.written);
      break;
    }
    bool retry = false;
    std::string why;
    if (code != CURLE_OK) {
      retry = RetryableCurlCode(code);
      why = std::string(curl_easy_strerror(code)) + (errbuf[0] ? std::string(": ") + errbuf : "");
    } else if (RetryableHttpStatus(response.status)) {
      retry = true;
    } else {
      response.body_size = request.head ? t.announced.value_or(0) : t.written;
      if (attempt == 0) ReturnTokens(0.1);
      break;
    }
    if (!retry || attempt + 1 >= options_.max_attempts || !TakeRetryToken()) {
      if (code != CURLE_OK) {
        // The handle's connection may be in any state: drop it.
        curl_easy_cleanup(handle->curl);
        handle->curl = curl_easy_init();
        if (handle->curl != nullptr) Release(std::move(handle));
        return Unavailable(what + ": " + request.method + " failed after " +
                           std::to_string(attempt + 1) + " attempt(s): " + why);
      }
      break;  // a final retryable status: the caller reports it
    }
    stats_.retries.fetch_add(1, std::memory_order_relaxed);
    std::this_thread::sleep_for(std::chrono::milliseconds(BackoffMs(options_, attempt)));
  }
  Release(std::move(handle));
  return response;
}

}  // namespace zarrd
