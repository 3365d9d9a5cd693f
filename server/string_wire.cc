#include "server/string_wire.h"

#include <cstring>
#include <vector>

#include "common/util/checked.h"
#include "common/util/utf8.h"

namespace zarrd::server {
namespace {

size_t ItemBytes(const ArrayMetadata& m) {
  return m.dtype == DataType::kString ? 4 * m.string_width : m.string_width;
}

void AppendLE32(uint32_t v, std::string* out) {
  for (int i = 0; i < 4; ++i) out->push_back(static_cast<char>(v >> (8 * i)));
}

}  // namespace

uint64_t FixedStringWireBytes(const ArrayMetadata& m, uint64_t n) {
  return SaturatingMul(n, ItemBytes(m));
}

uint64_t MinStringWireBytes(const ArrayMetadata& m, uint64_t n) {
  return m.string_width ? FixedStringWireBytes(m, n) : SaturatingMul(n, 4);
}

uint64_t StringWireBytes(const ArrayMetadata& m, const uint8_t* handles, uint64_t n) {
  if (m.string_width) return FixedStringWireBytes(m, n);
  uint64_t total = 0;
  for (uint64_t i = 0; i < n; ++i) {
    total += 4 + LoadStringHandle(handles + i * kStringHandleSize).size();
  }
  return total;
}

std::string StringsToWire(const ArrayMetadata& m, const uint8_t* handles, uint64_t n) {
  const uint64_t total = StringWireBytes(m, handles, n);
  std::string out;
  if (!m.string_width) {
    out.reserve(total);
    for (uint64_t i = 0; i < n; ++i) {
      const std::string& s = LoadStringHandle(handles + i * kStringHandleSize);
      AppendLE32(static_cast<uint32_t>(s.size()), &out);
      out += s;
    }
    return out;
  }
  const size_t item = ItemBytes(m);
  out.assign(total, '\0');
  std::vector<char32_t> points(m.string_width);
  for (uint64_t i = 0; i < n; ++i) {
    const std::string& s = LoadStringHandle(handles + i * kStringHandleSize);
    char* dst = out.data() + i * item;
    if (m.dtype == DataType::kBytes) {
      std::memcpy(dst, s.data(), std::min(s.size(), item));
    } else {
      const size_t count = Utf8ToUtf32(s, m.string_width, points.data());
      std::memcpy(dst, points.data(), 4 * count);  // little-endian host
    }
  }
  return out;
}

Result<Bytes> StringsFromWire(const ArrayMetadata& m, ByteView in, uint64_t n, StringArena& arena) {
  const bool text = m.dtype == DataType::kString;
  if (m.string_width) {
    const size_t item = ItemBytes(m);
    if (in.size() != FixedStringWireBytes(m, n)) {
      return InvalidArgument("input holds " + std::to_string(in.size()) + " bytes, " +
                             std::to_string(n) + " elements of " + m.result_typestr() + " take " +
                             std::to_string(FixedStringWireBytes(m, n)));
    }
    ZARRD_RETURN_IF_ERROR(arena.Fits(StringArena::MemoryOf(n, in.size())));
    std::vector<std::string> strings(n);
    for (uint64_t i = 0; i < n; ++i) {
      const uint8_t* p = in.data() + i * item;
      size_t len = text ? m.string_width : item;
      if (!text) {
        while (len > 0 && p[len - 1] == 0) --len;
        strings[i].assign(reinterpret_cast<const char*>(p), len);
        continue;
      }
      auto point = [&](size_t k) {
        uint32_t v;
        std::memcpy(&v, p + 4 * k, 4);
        return v;
      };
      while (len > 0 && point(len - 1) == 0) --len;
      for (size_t k = 0; k < len; ++k) {
        if (!AppendUtf8(point(k), &strings[i])) {
          return InvalidArgument("input element " + std::to_string(i) +
                                 " holds a code point past U+10FFFF");
        }
      }
    }
    Bytes handles(n * kStringHandleSize);
    ZARRD_RETURN_IF_ERROR(arena.Adopt(std::move(strings), handles.data()));
    return handles;
  }
  if (n > in.size() / 4) {
    return InvalidArgument("input of " + std::to_string(in.size()) + " bytes cannot hold " +
                           std::to_string(n) + " strings (4 bytes of length each at least)");
  }
  ZARRD_RETURN_IF_ERROR(arena.Fits(StringArena::MemoryOf(n, in.size())));
  std::vector<std::string> strings;
  strings.reserve(n);
  size_t at = 0;
  for (uint64_t i = 0; i < n; ++i) {
    if (in.size() - at < 4) {
      return InvalidArgument("input ends before string " + std::to_string(i) + " of " +
                             std::to_string(n));
    }
    uint32_t len;
    std::memcpy(&len, in.data() + at, 4);  // little-endian host
    at += 4;
    if (len > in.size() - at) {
      return InvalidArgument("input string " + std::to_string(i) + " of " + std::to_string(len) +
                             " bytes runs past the input's end");
    }
    std::string_view s(reinterpret_cast<const char*>(in.data()) + at, len);
    if (text && !IsValidUtf8(s)) {
      return InvalidArgument("input string " + std::to_string(i) + " is not UTF-8");
    }
    strings.emplace_back(s);
    at += len;
  }
  if (at != in.size()) {
    return InvalidArgument("input holds " + std::to_string(in.size() - at) + " bytes past its " +
                           std::to_string(n) + " strings");
  }
  Bytes handles(n * kStringHandleSize);
  ZARRD_RETURN_IF_ERROR(arena.Adopt(std::move(strings), handles.data()));
  return handles;
}

}  // namespace zarrd::server
