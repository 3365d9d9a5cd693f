#include "common/cuda/ready_events.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <set>
#include <thread>

#include "common/cuda/cuda_test_util.h"

namespace zarrd::cuda {
namespace {

using namespace std::chrono_literals;

// Work on a stream that does not finish until the test lets it: a host function that waits.
struct Gate {
  std::promise<void> open;
  std::shared_future<void> opened = open.get_future().share();
  static void CUDART_CB Wait(void* gate) { static_cast<Gate*>(gate)->opened.wait(); }
};

// Something a read holds, which reports when it is let go.
std::shared_ptr<const void> Held(std::atomic<bool>& released) {
  return std::shared_ptr<const void>(new int(0), [&released](const void* p) {
    delete static_cast<const int*>(p);
    released = true;
  });
}

bool WaitFor(const std::atomic<bool>& flag) {
  for (auto until = std::chrono::steady_clock::now() + 10s;
       std::chrono::steady_clock::now() < until; std::this_thread::sleep_for(1ms)) {
    if (flag) return true;
  }
  return false;
}

TEST(ReadyEvents, HoldLastsUntilTheWorkIsDoneAndTheEventIsThenReused) {
  ZARRD_REQUIRE_GPU();
  ReadyEvents events(0, 4);
  auto first = events.Acquire();
  ASSERT_TRUE(first.ok() && *first != nullptr) << first.status().ToString();
  ReadyEvent* e = *first;
  EXPECT_EQ(e->id, 1u);
  EXPECT_NE(e->handle, IpcHandleBytes{});
  Gate gate;
  ASSERT_EQ(cudaLaunchHostFunc(e->stream, Gate::Wait, &gate), cudaSuccess);
  std::atomic<bool> released{false};
  ASSERT_TRUE(events.Record(e, {Held(released)}).ok());
  std::this_thread::sleep_for(50ms);
  EXPECT_FALSE(released) << "let go while the work was still queued";
  EXPECT_EQ(cudaEventQuery(e->event), cudaErrorNotReady);
  // While it is in flight, another read gets another event.
  auto second = events.Acquire();
  ASSERT_TRUE(second.ok() && *second != nullptr);
  EXPECT_EQ((*second)->id, 2u);
  ASSERT_TRUE(events.Abandon(*second).ok());
  gate.open.set_value();
  ASSERT_TRUE(WaitFor(released));
  EXPECT_EQ(cudaEventQuery(e->event), cudaSuccess);
  // Both are free again (an event is freed before its hold is let go): no third is made.
  std::set<uint64_t> ids;
  for (int i = 0; i < 2; ++i) {
    auto again = events.Acquire();
    ASSERT_TRUE(again.ok() && *again != nullptr);
    ids.insert((*again)->id);
  }
  EXPECT_EQ(ids, (std::set<uint64_t>{1, 2}));
  EXPECT_EQ(events.created(), 2u);
}

TEST(ReadyEvents, NoneFreeBeyondTheCapacity) {
  ZARRD_REQUIRE_GPU();
  ReadyEvents events(0, 2);
  auto a = events.Acquire(), b = events.Acquire(), c = events.Acquire();
  ASSERT_TRUE(a.ok() && b.ok() && c.ok());
  EXPECT_NE(*a, nullptr);
  EXPECT_NE(*b, nullptr);
  EXPECT_EQ(*c, nullptr);
  ASSERT_TRUE(events.Abandon(*a).ok());
  auto d = events.Acquire();
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(*d, *a);
  ASSERT_TRUE(events.Abandon(*b).ok());
  ASSERT_TRUE(events.Abandon(*d).ok());
}

TEST(ReadyEvents, DestructionWaitsForWorkInFlight) {
  ZARRD_REQUIRE_GPU();
  std::atomic<bool> released{false};
  Gate gate;
  auto events = std::make_unique<ReadyEvents>(0, 1);
  auto e = events->Acquire();
  ASSERT_TRUE(e.ok() && *e != nullptr);
  ASSERT_EQ(cudaLaunchHostFunc((*e)->stream, Gate::Wait, &gate), cudaSuccess);
  ASSERT_TRUE(events->Record(*e, {Held(released)}).ok());
  std::thread opener([&] {
    std::this_thread::sleep_for(50ms);
    gate.open.set_value();
  });
  events.reset();
  EXPECT_TRUE(released);
  opener.join();
}

}  // namespace
}  // namespace zarrd::cuda
