#include <algorithm>

#include "common/kvstore/object_store.h"
#include "common/kvstore/object_store_base.h"
#include "common/kvstore/s3_xml.h"

namespace zarrd {
namespace {

// "a//b/" → "a/b/": the store's key prefix, with one '/' after it ("" stays "").
std::string NormalizePrefix(std::string_view p) {
  std::string out;
  size_t start = 0;
  while (start < p.size()) {
    size_t end = p.find('/', start);
    if (end == std::string_view::npos) end = p.size();
    if (end > start) out += std::string(p.substr(start, end - start)) + "/";
    start = end + 1;
  }
  return out;
}

class S3Store : public internal::ObjectStoreBase {
 public:
  S3Store(const S3StoreOptions& o, HttpOptions http, std::string credential_source,
          std::string session_token)
      : ObjectStoreBase(std::move(http)),
        prefix_(NormalizePrefix(o.prefix)),
        list_page_keys_(o.list_page_keys),
        credential_source_(std::move(credential_source)),
        session_token_(std::move(session_token)) {
    std::string endpoint =
        o.endpoint.empty() ? "https://s3." + o.region + ".amazonaws.com" : o.endpoint;
    while (!endpoint.empty() && endpoint.back() == '/') endpoint.pop_back();
    if (o.virtual_addressing) {
      const size_t host = endpoint.find("://");
      const size_t at = host == std::string::npos ? 0 : host + 3;
      base_ = endpoint.substr(0, at) + o.bucket + "." + endpoint.substr(at) + "/";
    } else {
      base_ = endpoint + "/" + o.bucket + "/";
    }
    describe_ = "s3 store s3://" + o.bucket + "/" + prefix_ + " at " + endpoint + " (" +
                credential_source_ + ")";
  }

  Status Set(const std::string& key, ByteView value) override {
    ZARRD_RETURN_IF_ERROR(ValidateKey(key));
    HttpRequest request = RequestFor("PUT", key);
    request.body = value;
    request.headers.push_back("Content-Type: application/octet-stream");
    return Call(request, HttpSink{.bytes = &scratch()}, key).status();
  }

  Status Delete(const std::string& key) override {
    ZARRD_RETURN_IF_ERROR(ValidateKey(key));
    return Call(RequestFor("DELETE", key), HttpSink{.bytes = &scratch()}, key).status();
  }

  Result<std::vector<std::string>> List(const std::string& prefix) override {
    const std::string full = prefix_ + prefix;
    std::vector<std::string> keys;
    std::string token;
    Bytes page_bytes;
    for (int page_no = 0;; ++page_no) {
      // SigV4 signs the query string as sent: its parameters in order, values percent-encoded.
      std::string query = token.empty() ? "" : "continuation-token=" + UrlEncodeQuery(token) + "&";
      query += "list-type=2&max-keys=" + std::to_string(list_page_keys_) +
               "&prefix=" + UrlEncodeQuery(full);
      HttpRequest request = Signed("GET", base_ + "?" + query);
      const std::string what = "list of \"" + prefix + "\" (page " + std::to_string(page_no) + ")";
      ZARRD_ASSIGN_OR_RETURN(long status, Call(request, HttpSink{.bytes = &page_bytes}, what));
      if (status == 404) return NotFound(Describe() + ": the bucket does not exist");
      auto page = ParseS3ListPage(
          std::string_view(reinterpret_cast<const char*>(page_bytes.data()), page_bytes.size()));
      if (!page.ok()) return page.status().WithContext(Describe() + ": " + what);
      for (std::string& k : page->keys) {
        if (k.compare(0, prefix_.size(), prefix_) != 0) continue;
        k.erase(0, prefix_.size());
        if (ValidateKey(k).ok()) keys.push_back(std::move(k));
      }
      if (!page->truncated) break;
      if (page->next_continuation_token == token) {
        return DataLoss(Describe() + ": " + what + " repeats its continuation token");
      }
      token = page->next_continuation_token;
    }
    std::sort(keys.begin(), keys.end());
    return keys;
  }

  std::string Describe() const override { return describe_; }

 protected:
  HttpRequest RequestFor(const std::string& method, const std::string& key) const override {
    return Signed(method, base_ + UrlEncodePath(prefix_ + key));
  }

 private:
  HttpRequest Signed(const std::string& method, std::string url) const {
    HttpRequest r;
    r.method = method;
    r.url = std::move(url);
    // curl 7.88 signs the headers we send and takes the payload hash from this one.
    r.headers.push_back("x-amz-content-sha256: UNSIGNED-PAYLOAD");
    if (!session_token_.empty()) r.headers.push_back("x-amz-security-token: " + session_token_);
    return r;
  }
  static Bytes& scratch() {
    thread_local Bytes b;
    return b;
  }

  std::string prefix_;
  int list_page_keys_;
  std::string base_;
  std::string describe_;
  std::string credential_source_;
  std::string session_token_;
};

}  // namespace

Result<std::shared_ptr<Store>> OpenS3Store(const S3StoreOptions& o) {
  if (o.bucket.empty()) return InvalidArgument("s3 store: bucket is required");
  if (o.bucket.find('/') != std::string::npos) {
    return InvalidArgument("s3 store: bucket \"" + o.bucket + "\" contains a '/'");
  }
  if (!o.endpoint.empty() && o.endpoint.rfind("http://", 0) != 0 &&
      o.endpoint.rfind("https://", 0) != 0) {
    return InvalidArgument("s3 store: endpoint \"" + o.endpoint + "\" must start with http(s)://");
  }
  if (o.list_page_keys < 1 || o.list_page_keys > 1000) {
    return InvalidArgument("s3 store: list_page_keys must be 1 to 1000");
  }
  if (o.region.empty() || o.region.find(':') != std::string::npos) {
    return InvalidArgument("s3 store: region \"" + o.region + "\" is not a region");
  }
  ZARRD_ASSIGN_OR_RETURN(S3Credentials credentials, ResolveS3Credentials(o.credentials));
  HttpOptions http = o.http;
  if (!credentials.anonymous()) {
    http.aws_sigv4 = "aws:amz:" + o.region + ":s3";
    http.user_password = credentials.access_key_id + ":" + credentials.secret_access_key;
  }
  auto store =
      std::make_shared<S3Store>(o, std::move(http), credentials.source, credentials.session_token);
  return std::shared_ptr<Store>(std::move(store));
}

const HttpStats* ObjectStoreStats(const Store& store) {
  auto* object = dynamic_cast<const internal::ObjectStoreBase*>(&store);
  return object == nullptr ? nullptr : &object->http_stats();
}

}  // namespace zarrd
