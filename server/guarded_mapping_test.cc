#include "server/guarded_mapping.h"

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <vector>

namespace zarrd::server {
namespace {

constexpr size_t kSize = 1 << 20;

struct SharedFile {
  SharedFile() : fd(::memfd_create("guarded-mapping-test", MFD_CLOEXEC)) {
    EXPECT_GE(fd, 0);
    EXPECT_EQ(::ftruncate(fd, kSize), 0);
  }
  ~SharedFile() { ::close(fd); }
  Result<std::unique_ptr<GuardedMapping>> Map() const {
    void* p = ::mmap(nullptr, kSize, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    EXPECT_NE(p, MAP_FAILED);
    return GuardedMapping::Adopt(static_cast<uint8_t*>(p), kSize);
  }
  int fd;
};

TEST(GuardedMapping, AShrunkObjectIsLostPagesNotTheEndOfTheProcess) {
  SharedFile file;
  auto mapping = file.Map();
  ASSERT_TRUE(mapping.ok()) << mapping.status().ToString();
  uint8_t* data = (*mapping)->data();
  std::memset(data, 7, kSize);
  EXPECT_TRUE((*mapping)->Intact(true));
  uint8_t byte = 0;
  ASSERT_EQ(::pread(file.fd, &byte, 1, kSize - 1), 1);
  EXPECT_EQ(byte, 7);  // shared with the file while intact

  ASSERT_EQ(::ftruncate(file.fd, kSize / 2), 0);
  EXPECT_EQ(data[0], 7);  // the first half is still the file's
  data[kSize - 1] = 9;    // past the end: the mapping is replaced, not the process ended
  EXPECT_FALSE((*mapping)->Intact(false));
  EXPECT_EQ(data[kSize - 1], 9);
  EXPECT_EQ(data[0], 0);  // all of it: private zero pages from the fault on
  data[0] = 5;
  ASSERT_EQ(::pread(file.fd, &byte, 1, 0), 1);
  EXPECT_EQ(byte, 7);  // and the file no longer sees the writes
}

TEST(GuardedMapping, TouchingFindsAShrinkBeforeTheRequestDoes) {
  SharedFile file;
  auto mapping = file.Map();
  ASSERT_TRUE(mapping.ok());
  ASSERT_EQ(::ftruncate(file.fd, 0), 0);
  EXPECT_TRUE((*mapping)->Intact(false));  // nothing touched yet
  EXPECT_FALSE((*mapping)->Intact(true));
}

TEST(GuardedMapping, OthersAreUnaffectedAndSlotsComeBack) {
  SharedFile a, b;
  auto lost = a.Map();
  auto kept = b.Map();
  ASSERT_TRUE(lost.ok() && kept.ok());
  ASSERT_EQ(::ftruncate(a.fd, 0), 0);
  EXPECT_FALSE((*lost)->Intact(true));
  (*kept)->data()[kSize - 1] = 3;
  EXPECT_TRUE((*kept)->Intact(true));
  lost->reset();
  kept->reset();
  // Every slot can be taken, and the one past them is refused.
  std::vector<std::unique_ptr<GuardedMapping>> all;
  for (size_t i = 0; i < GuardedMapping::kMaxMappings; ++i) {
    void* p = ::mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    auto m = GuardedMapping::Adopt(static_cast<uint8_t*>(p), 4096);
    ASSERT_TRUE(m.ok()) << i;
    all.push_back(std::move(*m));
  }
  void* p = ::mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  EXPECT_EQ(GuardedMapping::Adopt(static_cast<uint8_t*>(p), 4096).status().code(),
            StatusCode::kResourceExhausted);
}

}  // namespace
}  // namespace zarrd::server
