#include <cstring>

#include "common/kvstore/store.h"

namespace zarrd {
namespace {

class MemoryStore : public Store {
 public:
  Result<bool> Get(const std::string& key, Bytes* out) override {
    ZARRD_RETURN_IF_ERROR(ValidateKey(key));
    auto value = values_.Find(key);
    if (!value) return false;
    out->assign(value->begin(), value->end());
    return true;
  }

  Result<std::optional<uint64_t>> GetExact(const std::string& key, MutableByteView dst) override {
    ZARRD_RETURN_IF_ERROR(ValidateKey(key));
    auto value = values_.Find(key);
    if (!value) return std::optional<uint64_t>();
    if (value->size() == dst.size() && !dst.empty()) {
      std::memcpy(dst.data(), value->data(), dst.size());
    }
    return std::optional<uint64_t>(value->size());
  }

  Result<bool> GetRange(const std::string& key, ByteRange range, Bytes* out) override {
    ZARRD_RETURN_IF_ERROR(ValidateKey(key));
    auto value = values_.Find(key);
    if (!value) return false;
    const uint64_t size = value->size();
    ZARRD_ASSIGN_OR_RETURN(uint64_t offset, RangeOffset(range, size, "\"" + key + "\""));
    out->assign(value->begin() + offset, value->begin() + offset + range.length);
    return true;
  }

  Status Set(const std::string& key, ByteView value) override {
    ZARRD_RETURN_IF_ERROR(ValidateKey(key));
    values_.Put(key, std::make_shared<const Bytes>(value.begin(), value.end()));
    return OkStatus();
  }

  Status Delete(const std::string& key) override {
    ZARRD_RETURN_IF_ERROR(ValidateKey(key));
    values_.Erase(key);
    return OkStatus();
  }

  Result<std::vector<std::string>> List(const std::string& prefix) override {
    return values_.Keys(prefix);
  }

  std::string Describe() const override { return "memory store"; }

 private:
  internal::KeyedValues<Bytes> values_;
};

}  // namespace

std::shared_ptr<Store> MakeMemoryStore() { return std::make_shared<MemoryStore>(); }

}  // namespace zarrd
