#include "common/util/utf8.h"

namespace zarrd {
namespace {

// The code point at text[*at] (advancing *at), or -1 for a malformed sequence (advancing one
// byte).
int32_t Next(std::string_view text, size_t* at) {
  const auto byte = [&](size_t i) { return static_cast<uint8_t>(text[i]); };
  const uint8_t b0 = byte(*at);
  if (b0 < 0x80) {
    ++*at;
    return b0;
  }
  size_t n;
  int32_t cp, min;
  if ((b0 & 0xe0) == 0xc0) {
    n = 2, cp = b0 & 0x1f, min = 0x80;
  } else if ((b0 & 0xf0) == 0xe0) {
    n = 3, cp = b0 & 0x0f, min = 0x800;
  } else if ((b0 & 0xf8) == 0xf0) {
    n = 4, cp = b0 & 0x07, min = 0x10000;
  } else {
    ++*at;
    return -1;
  }
  if (text.size() - *at < n) {
    ++*at;
    return -1;
  }
  for (size_t i = 1; i < n; ++i) {
    const uint8_t b = byte(*at + i);
    if ((b & 0xc0) != 0x80) {
      ++*at;
      return -1;
    }
    cp = cp << 6 | (b & 0x3f);
  }
  if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) {
    ++*at;
    return -1;
  }
  *at += n;
  return cp;
}

}  // namespace

bool IsValidUtf8(std::string_view text) {
  for (size_t at = 0; at < text.size();) {
    if (static_cast<uint8_t>(text[at]) < 0x80) {
      ++at;
      continue;
    }
    if (Next(text, &at) < 0) return false;
  }
  return true;
}

size_t Utf8ToUtf32(std::string_view text, size_t max_code_points, char32_t* out) {
  size_t n = 0;
  for (size_t at = 0; at < text.size() && n < max_code_points;) {
    const int32_t cp = Next(text, &at);
    out[n++] = cp < 0 ? char32_t{0xfffd} : static_cast<char32_t>(cp);
  }
  return n;
}

bool AppendUtf8(char32_t cp, std::string* out) {
  if (cp < 0x80) {
    out->push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out->push_back(static_cast<char>(0xc0 | (cp >> 6)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3f)));
  } else if (cp < 0x10000) {
    out->push_back(static_cast<char>(0xe0 | (cp >> 12)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3f)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3f)));
  } else if (cp <= 0x10ffff) {
    out->push_back(static_cast<char>(0xf0 | (cp >> 18)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3f)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3f)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3f)));
  } else {
    return false;
  }
  return true;
}

}  // namespace zarrd
