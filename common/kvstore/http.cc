#include "common/kvstore/object_store.h"
#include "common/kvstore/object_store_base.h"

namespace zarrd {
namespace {

class HttpStore : public internal::ObjectStoreBase {
 public:
  HttpStore(std::string base, HttpOptions http)
      : ObjectStoreBase(std::move(http)), base_(std::move(base)) {}

  Status Set(const std::string& key, ByteView) override { return ReadOnly("write", key); }
  Status Delete(const std::string& key) override { return ReadOnly("delete", key); }
  Status DeletePrefix(const std::string& prefix) override { return ReadOnly("delete", prefix); }
  Result<std::vector<std::string>> List(const std::string& prefix) override {
    return Unimplemented(Describe() + ": cannot list \"" + prefix +
                         "\": plain HTTP has no listing; open arrays and groups by path");
  }
  std::string Describe() const override { return "http store " + base_; }

 protected:
  HttpRequest RequestFor(const std::string& method, const std::string& key) const override {
    HttpRequest r;
    r.method = method;
    r.url = base_ + "/" + UrlEncodePath(key);
    return r;
  }

 private:
  Status ReadOnly(const char* what, const std::string& key) const {
    return PermissionDenied(Describe() + " is read-only: cannot " + what + " \"" + key + "\"");
  }
  std::string base_;
};

}  // namespace

Result<std::shared_ptr<Store>> OpenHttpStore(const HttpStoreOptions& o) {
  std::string base = o.base_url;
  if (base.rfind("http://", 0) != 0 && base.rfind("https://", 0) != 0) {
    return InvalidArgument("http store: url \"" + base + "\" must start with http(s)://");
  }
  while (!base.empty() && base.back() == '/') base.pop_back();
  return std::shared_ptr<Store>(std::make_shared<HttpStore>(std::move(base), o.http));
}

}  // namespace zarrd
