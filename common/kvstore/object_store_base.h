// What the S3 and HTTP stores share: reads (whole, exact, ranged) of objects at URLs, and the
// mapping of HTTP answers to errors that name the store, the key and the status.
#pragma once

#include <memory>
#include <string>

#include "common/kvstore/http_transport.h"
#include "common/kvstore/store.h"

namespace zarrd::internal {

class ObjectStoreBase : public Store {
 public:
  explicit ObjectStoreBase(HttpOptions options)
      : transport_(std::make_unique<HttpTransport>(std::move(options))) {}

  Result<bool> Get(const std::string& key, Bytes* out) override;
  Result<std::optional<uint64_t>> GetExact(const std::string& key, MutableByteView dst) override;
  Result<bool> GetRange(const std::string& key, ByteRange range, Bytes* out) override;

  const HttpStats& http_stats() const { return transport_->stats(); }

 protected:
  // A request for `key` (validated by the caller) with the store's URL and headers.
  virtual HttpRequest RequestFor(const std::string& method, const std::string& key) const = 0;
  // Performs a request about `key`; errors and non-2xx answers other than 404 become a Status.
  // Returns the status code (2xx or 404).
  Result<long> Call(const HttpRequest& request, HttpSink sink, const std::string& key,
                    HttpResponse* response = nullptr);

 private:
  std::unique_ptr<HttpTransport> transport_;
};

}  // namespace zarrd::internal
