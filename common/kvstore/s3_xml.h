// The few S3 XML answers the S3 store reads (ListObjectsV2 pages, error documents), parsed by a
// small bounded scanner: S3 documents are flat lists of simple elements, so no tree is built.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/util/status.h"

namespace zarrd {

struct S3ListPage {
  std::vector<std::string> keys;  // unescaped, in the order the server sent them
  bool truncated = false;
  std::string next_continuation_token;
};

// Parses a ListBucketResult (ListObjectsV2). DATA_LOSS when the document is malformed or larger
// than the bound an S3 page can be (1000 keys of at most 1024 bytes).
Result<S3ListPage> ParseS3ListPage(std::string_view xml);

// "Code: Message" of an S3 <Error> document, or "" when it is not one.
std::string S3ErrorSummary(std::string_view xml);

// Resolves the five predefined XML entities and numeric character references.
Result<std::string> XmlUnescape(std::string_view text);

}  // namespace zarrd
