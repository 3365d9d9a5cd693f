#include "common/kvstore/store.h"

#include <algorithm>
#include <cstring>
#include <functional>

namespace zarrd {

Result<std::optional<uint64_t>> Store::GetExact(const std::string& key, MutableByteView dst) {
  thread_local Bytes value;
  ZARRD_ASSIGN_OR_RETURN(bool found, Get(key, &value));
  if (!found) return std::optional<uint64_t>();
  if (value.size() == dst.size() && !dst.empty()) std::memcpy(dst.data(), value.data(), dst.size());
  return std::optional<uint64_t>(value.size());
}

Result<bool> Store::GetBounded(const std::string& key, uint64_t max_bytes, Bytes* out) {
  // Values of stores without this override are in memory already; the bound still holds for
  // the caller.
  ZARRD_ASSIGN_OR_RETURN(bool found, Get(key, out));
  if (found && out->size() > max_bytes) {
    const uint64_t size = out->size();
    Bytes().swap(*out);
    return OversizedValue("\"" + key + "\"", size, max_bytes);
  }
  return found;
}

Status OversizedValue(const std::string& where, uint64_t size, uint64_t max_bytes) {
  return DataLoss(where + " holds " + std::to_string(size) + " bytes, more than the " +
                  std::to_string(max_bytes) + " it may hold");
}

Status Store::DeletePrefix(const std::string& prefix) {
  ZARRD_ASSIGN_OR_RETURN(auto keys, List(prefix));
  for (const auto& key : keys) ZARRD_RETURN_IF_ERROR(Delete(key));
  return OkStatus();
}

Result<uint64_t> RangeOffset(ByteRange range, uint64_t size, const std::string& where) {
  const uint64_t offset = range.suffix ? size - std::min(size, range.length) : range.offset;
  if (range.length > size || offset > size - range.length) {
    return DataLoss("range [" + std::to_string(offset) + ", +" + std::to_string(range.length) +
                    ") is past the end of " + where + " (" + std::to_string(size) + " bytes)");
  }
  return offset;
}

Status ValidateKey(std::string_view key) {
  auto bad = [&](const std::string& why) {
    std::string shown;
    for (char c : key.substr(0, kMaxKeyShown)) {
      shown += c == '\0' ? std::string("\\0") : std::string(1, c);
    }
    if (key.size() > kMaxKeyShown) shown += "...";
    return InvalidArgument("store key \"" + shown + "\": " + why);
  };
  if (key.empty()) return bad("is empty");
  // Longer paths cannot be opened (PATH_MAX); errors naming them would exceed gRPC's metadata.
  if (key.size() > kMaxKeyBytes) {
    return bad("is " + std::to_string(key.size()) + " bytes long, more than " +
               std::to_string(kMaxKeyBytes));
  }
  if (key.find('\0') != std::string_view::npos) return bad("contains a NUL byte");
  if (key.front() == '/') return bad("is absolute");
  if (key.find('\\') != std::string_view::npos) return bad("contains a backslash");
  size_t start = 0;
  while (start <= key.size()) {
    size_t end = key.find('/', start);
    if (end == std::string_view::npos) end = key.size();
    std::string_view part = key.substr(start, end - start);
    if (part.empty()) return bad("has an empty path component");
    if (part == "." || part == "..") return bad("has a '.' or '..' component");
    start = end + 1;
  }
  return OkStatus();
}

std::string JoinKey(std::string_view path, std::string_view key) {
  if (path.empty()) return std::string(key);
  std::string out(path);
  if (out.back() != '/') out += '/';
  out += key;
  return out;
}

}  // namespace zarrd
