#include "common/kvstore/object_store_base.h"

#include <string_view>

#include "common/kvstore/s3_xml.h"

namespace zarrd::internal {
namespace {

std::string RangeText(const ByteRange& r) {
  return r.suffix ? "the last " + std::to_string(r.length) + " bytes"
                  : "[" + std::to_string(r.offset) + ", +" + std::to_string(r.length) + ")";
}

}  // namespace

Result<long> ObjectStoreBase::Call(const HttpRequest& request, HttpSink sink,
                                   const std::string& key, HttpResponse* out) {
  const std::string where = Describe() + ": " + request.method + " \"" + key + "\"";
  ZARRD_ASSIGN_OR_RETURN(HttpResponse response, transport_->Perform(request, sink, where));
  const long status = response.status;
  if (out != nullptr) *out = response;
  const std::string detail = S3ErrorSummary(std::string_view(
      reinterpret_cast<const char*>(response.error_body.data()), response.error_body.size()));
  if (status == 404 && detail.rfind("NoSuchBucket", 0) == 0) {
    return NotFound(where + ": HTTP 404 " + detail);
  }
  if ((status >= 200 && status < 300) || status == 404) return status;
  const std::string message = where + ": HTTP " + std::to_string(status) +
                              (detail.empty() ? "" : " " + detail) + " after " +
                              std::to_string(response.attempts) + " attempt(s)";
  if (status == 401 || status == 403) return PermissionDenied(message);
  if (status == 416 && request.range) {
    return DataLoss("range " + RangeText(*request.range) + " is past the end of \"" + key +
                    "\" in " + Describe());
  }
  if (RetryableHttpStatus(status)) return Unavailable(message);
  return Internal(message);
}

Result<bool> ObjectStoreBase::Get(const std::string& key, Bytes* out) {
  ZARRD_RETURN_IF_ERROR(ValidateKey(key));
  ZARRD_ASSIGN_OR_RETURN(long status, Call(RequestFor("GET", key), HttpSink{.bytes = out}, key));
  return status != 404;
}

Result<std::optional<uint64_t>> ObjectStoreBase::GetExact(const std::string& key,
                                                          MutableByteView dst) {
  ZARRD_RETURN_IF_ERROR(ValidateKey(key));
  HttpResponse response;
  ZARRD_ASSIGN_OR_RETURN(long status,
                         Call(RequestFor("GET", key), HttpSink{.exact = dst}, key, &response));
  if (status == 404) return std::optional<uint64_t>();
  if (response.body_size != dst.size() && !response.content_length) {
    // Another size, and the server did not say which: read the value to learn it.
    thread_local Bytes value;
    ZARRD_ASSIGN_OR_RETURN(bool found, Get(key, &value));
    if (!found) return std::optional<uint64_t>();
    return std::optional<uint64_t>(value.size());
  }
  return std::optional<uint64_t>(response.body_size);
}

Result<bool> ObjectStoreBase::GetRange(const std::string& key, ByteRange range, Bytes* out) {
  ZARRD_RETURN_IF_ERROR(ValidateKey(key));
  const std::string where = "\"" + key + "\" in " + Describe();
  HttpResponse response;
  if (range.length == 0) {  // no HTTP range is empty: learn the size and check the range fits
    HttpRequest head = RequestFor("HEAD", key);
    head.head = true;
    ZARRD_ASSIGN_OR_RETURN(long status, Call(head, HttpSink{.bytes = out}, key, &response));
    if (status == 404) return false;
    ZARRD_RETURN_IF_ERROR(RangeOffset(range, response.content_length.value_or(0), where).status());
    out->clear();
    return true;
  }
  HttpRequest request = RequestFor("GET", key);
  request.range = range;
  ZARRD_ASSIGN_OR_RETURN(long status, Call(request, HttpSink{.bytes = out}, key, &response));
  if (status == 404) return false;
  if (status == 206) {
    if (!response.range_total) {
      return DataLoss("partial answer without a Content-Range total for " + where);
    }
    ZARRD_ASSIGN_OR_RETURN(uint64_t offset, RangeOffset(range, *response.range_total, where));
    if (range.suffix && response.range_first != offset) {
      // A server that does not understand suffix ranges (s3rver reads "-N" as "0-N"): ask for
      // the same bytes by offset, now that the size is known.
      return GetRange(key, ByteRange::Prefix(offset, range.length), out);
    }
    if (out->size() != range.length) {
      return DataLoss("range " + RangeText(range) + " of " + where + " came back with " +
                      std::to_string(out->size()) + " bytes");
    }
    return true;
  }
  // 200: the server sent the whole value (it ignores ranges); cut the range out here.
  ZARRD_ASSIGN_OR_RETURN(uint64_t offset, RangeOffset(range, out->size(), where));
  out->erase(out->begin(), out->begin() + static_cast<ptrdiff_t>(offset));
  out->resize(range.length);
  return true;
}

}  // namespace zarrd::internal
