#include "common/kvstore/s3_xml.h"

#include <cstdint>

namespace zarrd {
namespace {

constexpr size_t kMaxListDocument = 8u << 20;
constexpr size_t kMaxKeysInPage = 10000;

void AppendUtf8(uint32_t cp, std::string* out) {
  if (cp < 0x80) {
    *out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    *out += static_cast<char>(0xC0 | (cp >> 6));
    *out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    *out += static_cast<char>(0xE0 | (cp >> 12));
    *out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    *out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    *out += static_cast<char>(0xF0 | (cp >> 18));
    *out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    *out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    *out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

// The text of the next <tag>...</tag> at or after `*pos` and before `end`; advances `*pos` past
// it. False when there is none.
bool NextElement(std::string_view xml, std::string_view tag, size_t* pos, size_t end,
                 std::string_view* text) {
  const std::string open = "<" + std::string(tag) + ">";
  const std::string close = "</" + std::string(tag) + ">";
  const size_t start = xml.find(open, *pos);
  if (start == std::string_view::npos || start >= end) return false;
  const size_t body = start + open.size();
  const size_t stop = xml.find(close, body);
  if (stop == std::string_view::npos || stop > end) return false;
  *text = xml.substr(body, stop - body);
  *pos = stop + close.size();
  return true;
}

}  // namespace

Result<std::string> XmlUnescape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '&') {
      out += text[i];
      continue;
    }
    const size_t semi = text.find(';', i);
    if (semi == std::string_view::npos || semi - i > 12) {
      return DataLoss("XML text has an unterminated entity");
    }
    const std::string_view name = text.substr(i + 1, semi - i - 1);
    if (name == "amp") {
      out += '&';
    } else if (name == "lt") {
      out += '<';
    } else if (name == "gt") {
      out += '>';
    } else if (name == "quot") {
      out += '"';
    } else if (name == "apos") {
      out += '\'';
    } else if (name.size() > 1 && name[0] == '#') {
      const bool hex = name[1] == 'x' || name[1] == 'X';
      const std::string_view digits = name.substr(hex ? 2 : 1);
      uint32_t cp = 0;
      if (digits.empty()) return DataLoss("XML text has an empty character reference");
      for (char c : digits) {
        uint32_t d;
        if (c >= '0' && c <= '9') {
          d = static_cast<uint32_t>(c - '0');
        } else if (hex && c >= 'a' && c <= 'f') {
          d = static_cast<uint32_t>(c - 'a' + 10);
        } else if (hex && c >= 'A' && c <= 'F') {
          d = static_cast<uint32_t>(c - 'A' + 10);
        } else {
          return DataLoss("XML text has a bad character reference");
        }
        cp = cp * (hex ? 16 : 10) + d;
        if (cp > 0x10FFFF) return DataLoss("XML character reference out of range");
      }
      if (cp == 0) return DataLoss("XML character reference to NUL");
      AppendUtf8(cp, &out);
    } else {
      return DataLoss("XML text has an unknown entity &" + std::string(name) + ";");
    }
    i = semi;
  }
  return out;
}

Result<S3ListPage> ParseS3ListPage(std::string_view xml) {
  if (xml.size() > kMaxListDocument) {
    return DataLoss("ListObjectsV2 answer of " + std::to_string(xml.size()) +
                    " bytes is too large");
  }
  // The root element may carry an xmlns attribute: take what follows its opening tag.
  const size_t open = xml.find("<ListBucketResult");
  if (open == std::string_view::npos)
    return DataLoss("ListObjectsV2 answer is not a ListBucketResult");
  const size_t open_end = xml.find('>', open);
  const size_t close = xml.rfind("</ListBucketResult>");
  if (open_end == std::string_view::npos || close == std::string_view::npos || close < open_end) {
    return DataLoss("ListObjectsV2 answer is not a complete ListBucketResult");
  }
  const std::string_view body = xml.substr(open_end + 1, close - open_end - 1);
  S3ListPage page;
  size_t pos = 0;
  std::string_view contents;
  while (NextElement(body, "Contents", &pos, body.size(), &contents)) {
    size_t inner = 0;
    std::string_view key;
    if (!NextElement(contents, "Key", &inner, contents.size(), &key)) {
      return DataLoss("ListObjectsV2 answer has a Contents without a Key");
    }
    if (page.keys.size() >= kMaxKeysInPage) {
      return DataLoss("ListObjectsV2 answer has more than " + std::to_string(kMaxKeysInPage) +
                      " keys");
    }
    ZARRD_ASSIGN_OR_RETURN(std::string unescaped, XmlUnescape(key));
    page.keys.push_back(std::move(unescaped));
  }
  // IsTruncated and the token sit beside the Contents, not inside them.
  std::string outside(body);
  for (size_t s; (s = outside.find("<Contents>")) != std::string::npos;) {
    const size_t e = outside.find("</Contents>", s);
    outside.erase(s, e == std::string::npos ? std::string::npos : e + 11 - s);
  }
  pos = 0;
  std::string_view truncated;
  if (NextElement(outside, "IsTruncated", &pos, outside.size(), &truncated)) {
    page.truncated = truncated == "true";
  }
  pos = 0;
  std::string_view token;
  if (NextElement(outside, "NextContinuationToken", &pos, outside.size(), &token)) {
    ZARRD_ASSIGN_OR_RETURN(page.next_continuation_token, XmlUnescape(token));
  }
  if (page.truncated && page.next_continuation_token.empty()) {
    return DataLoss("ListObjectsV2 answer is truncated but has no NextContinuationToken");
  }
  return page;
}

std::string S3ErrorSummary(std::string_view xml) {
  size_t pos = 0;
  std::string_view error;
  if (!NextElement(xml, "Error", &pos, xml.size(), &error)) return "";
  std::string_view code, message;
  size_t p = 0;
  NextElement(error, "Code", &p, error.size(), &code);
  p = 0;
  NextElement(error, "Message", &p, error.size(), &message);
  auto clean = [](std::string_view s) {
    auto u = XmlUnescape(s.substr(0, 256));
    return u.ok() ? *u : std::string(s.substr(0, 256));
  };
  std::string out = clean(code);
  if (!message.empty()) out += (out.empty() ? "" : ": ") + clean(message);
  return out;
}

}  // namespace zarrd
