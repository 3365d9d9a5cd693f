#include "server/leases.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

namespace zarrd::server {
namespace {

using namespace std::chrono_literals;

// Memory whose release the test can observe.
std::shared_ptr<void> Tracked(std::shared_ptr<int>* freed_count) {
  auto counter = *freed_count;
  return std::shared_ptr<void>(new char[16], [counter](void* p) {
    delete[] static_cast<char*>(p);
    ++*counter;
  });
}

TEST(Leases, ReleaseFreesOnceAndUnknownIsNotFound) {
  auto freed = std::make_shared<int>(0);
  LeaseRegistry leases(60s, 0);
  auto a = leases.Grant({.memory = Tracked(&freed), .nbytes = 100, .device = "GPU-a"});
  ASSERT_TRUE(a.ok());
  EXPECT_GT(a->id, 0u);
  EXPECT_GT(a->expiry, std::chrono::system_clock::now() + 59s);
  EXPECT_EQ(leases.Stats("GPU-a").bytes, 100u);
  EXPECT_EQ(leases.Stats("GPU-b").leases, 0u);
  EXPECT_EQ(*freed, 0);
  ASSERT_TRUE(leases.Release(a->id).ok());
  EXPECT_EQ(*freed, 1);
  EXPECT_EQ(leases.Release(a->id).code(), StatusCode::kNotFound);
  EXPECT_EQ(leases.Find(a->id).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(leases.Stats("GPU-a").leases, 0u);
}

TEST(Leases, ExpireAtTheirTtl) {
  auto freed = std::make_shared<int>(0);
  LeaseRegistry leases(100ms, 0);
  auto a = *leases.Grant({.memory = Tracked(&freed), .nbytes = 1});
  EXPECT_EQ(leases.Reap(std::chrono::system_clock::now()), 0u);
  EXPECT_EQ(*freed, 0);
  EXPECT_EQ(leases.Reap(a.expiry + 1ms), 1u);
  EXPECT_EQ(*freed, 1);
}

TEST(Leases, EndWhenTheClientProcessExits) {
  auto freed = std::make_shared<int>(0);
  LeaseRegistry leases(1h, 0);
  const pid_t child = fork();
  if (child == 0) _exit(0);
  ASSERT_GT(child, 0);
  auto of_child = *leases.Grant({.client_pid = child, .memory = Tracked(&freed), .nbytes = 8});
  auto of_self = *leases.Grant({.client_pid = getpid(), .memory = Tracked(&freed), .nbytes = 8});
  EXPECT_EQ(leases.Reap(std::chrono::system_clock::now()), 0u);  // a zombie is not gone yet
  waitpid(child, nullptr, 0);
  EXPECT_EQ(leases.Reap(std::chrono::system_clock::now()), 1u);
  EXPECT_EQ(*freed, 1);
  EXPECT_EQ(leases.Find(of_child.id).status().code(), StatusCode::kNotFound);
  EXPECT_TRUE(leases.Find(of_self.id).ok());
}

TEST(Leases, QuotaPerClientProcess) {
  auto freed = std::make_shared<int>(0);
  LeaseRegistry leases(1h, 1000);
  auto a = *leases.Grant({.client_pid = 1, .memory = Tracked(&freed), .nbytes = 600});
  auto over = leases.Grant({.client_pid = 1, .memory = Tracked(&freed), .nbytes = 600});
  ASSERT_EQ(over.status().code(), StatusCode::kResourceExhausted);
  EXPECT_NE(over.status().message().find("holds 600 bytes"), std::string::npos);
  EXPECT_EQ(*freed, 1);  // the refused memory was not kept
  EXPECT_TRUE(leases.Grant({.client_pid = 2, .memory = Tracked(&freed), .nbytes = 600}).ok());
  ASSERT_TRUE(leases.Release(a.id).ok());
  EXPECT_TRUE(leases.Grant({.client_pid = 1, .memory = Tracked(&freed), .nbytes = 600}).ok());
}

}  // namespace
}  // namespace zarrd::server
