#include "common/kvstore/s3_xml.h"

#include <gtest/gtest.h>

namespace zarrd {
namespace {

// As AWS documents a ListObjectsV2 answer (its namespace attribute, Contents with more than a Key).
constexpr const char* kPage = R"(<?xml version="1.0" encoding="UTF-8"?>
<ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">
  <Name>bucket</Name><Prefix>p/</Prefix><KeyCount>2</KeyCount><MaxKeys>2</MaxKeys>
  <IsTruncated>true</IsTruncated>
  <Contents><Key>p/a&amp;b</Key><LastModified>2026-01-01T00:00:00.000Z</LastModified>
    <ETag>&quot;x&quot;</ETag><Size>3</Size><StorageClass>STANDARD</StorageClass></Contents>
  <Contents><Key>p/&#x3b1;/c&#60;1&gt;</Key><Size>1</Size></Contents>
  <NextContinuationToken>1ueGcxLPRx1Tr/XYExHnhbYLgveDs2J/wm36Hy4vbOwM=</NextContinuationToken>
</ListBucketResult>)";

TEST(S3Xml, ParsesAListPage) {
  auto page = ParseS3ListPage(kPage);
  ASSERT_TRUE(page.ok()) << page.status().ToString();
  EXPECT_EQ(page->keys, (std::vector<std::string>{"p/a&b", "p/\xce\xb1/c<1>"}));
  EXPECT_TRUE(page->truncated);
  EXPECT_EQ(page->next_continuation_token, "1ueGcxLPRx1Tr/XYExHnhbYLgveDs2J/wm36Hy4vbOwM=");
}

TEST(S3Xml, TheLastPageAndAnEmptyOne) {
  auto last = ParseS3ListPage(
      "<ListBucketResult><IsTruncated>false</IsTruncated><Contents><Key>k</Key></Contents>"
      "</ListBucketResult>");
  ASSERT_TRUE(last.ok());
  EXPECT_EQ(last->keys, std::vector<std::string>{"k"});
  EXPECT_FALSE(last->truncated);
  auto empty = ParseS3ListPage("<ListBucketResult><KeyCount>0</KeyCount></ListBucketResult>");
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->keys.empty());
}

TEST(S3Xml, MalformedPagesAreDataLoss) {
  for (const char* bad : {
           "",
           "<Error><Code>x</Code></Error>",
           "<ListBucketResult><Contents><Key>k</Key></Contents>",
           "<ListBucketResult><Contents><Size>1</Size></Contents></ListBucketResult>",
           "<ListBucketResult><Contents><Key>a&bogus;</Key></Contents></ListBucketResult>",
           "<ListBucketResult><Contents><Key>a&#0;</Key></Contents></ListBucketResult>",
           "<ListBucketResult><Contents><Key>a&#x110000;</Key></Contents></ListBucketResult>",
           "<ListBucketResult><IsTruncated>true</IsTruncated></ListBucketResult>",
       }) {
    SCOPED_TRACE(bad);
    EXPECT_EQ(ParseS3ListPage(bad).status().code(), StatusCode::kDataLoss);
  }
  EXPECT_EQ(ParseS3ListPage(std::string(9u << 20, ' ')).status().code(), StatusCode::kDataLoss);
}

TEST(S3Xml, ErrorSummary) {
  EXPECT_EQ(S3ErrorSummary("<?xml version=\"1.0\"?><Error><Code>SlowDown</Code><Message>Please "
                           "reduce your request rate.</Message><RequestId>1</RequestId></Error>"),
            "SlowDown: Please reduce your request rate.");
  EXPECT_EQ(S3ErrorSummary("<Error><Code>NoSuchKey</Code></Error>"), "NoSuchKey");
  EXPECT_EQ(S3ErrorSummary("<html>Bad gateway</html>"), "");
}

}  // namespace
}  // namespace zarrd
