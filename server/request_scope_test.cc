#include "server/request_scope.h"

#include <gtest/gtest.h>

namespace zarrd::server {
namespace {

TEST(RequestScope, CountsARequestInFlightUntilItEnds) {
  auto metrics = Metrics::Start("");
  ASSERT_TRUE(metrics.ok());
  RequestGate gate;
  {
    RequestScope a(gate, **metrics, "GetItem", "s", "a");
    RequestScope b(gate, **metrics, "GetItem", "s", "b");
    EXPECT_EQ(gate.in_flight(), 2u);
    EXPECT_TRUE(a.Admitted().ok());
    a.Finish(OkStatus());
    EXPECT_EQ(gate.in_flight(), 2u);  // finished, but its reply may still be on its way
  }
  EXPECT_EQ(gate.in_flight(), 0u);
  EXPECT_EQ(gate.completed(), 2u);
}

TEST(RequestScope, RefusesWhatArrivesWhileDraining) {
  auto metrics = Metrics::Start("");
  ASSERT_TRUE(metrics.ok());
  RequestGate gate;
  RequestScope before(gate, **metrics, "GetItem", "s", "a");
  gate.StartDraining();
  RequestScope after(gate, **metrics, "GetItem", "s", "a");
  EXPECT_TRUE(before.Admitted().ok());  // in flight before the drain: it goes on
  const Status refused = after.Admitted();
  EXPECT_EQ(refused.code(), StatusCode::kUnavailable);
  EXPECT_EQ(refused.reason(), reason::kShuttingDown);
}

TEST(RequestScope, FinishesOnceWithTheFirstOutcome) {
  auto metrics = Metrics::Start("");
  ASSERT_TRUE(metrics.ok());
  RequestGate gate;
  RequestScope scope(gate, **metrics, "GetItem", "s", "a");
  EXPECT_FALSE(scope.finished());
  EXPECT_EQ(scope.Finish(NotFound("x")).code(), StatusCode::kNotFound);
  EXPECT_TRUE(scope.finished());
  // A later outcome is handed back unchanged; the first one stands.
  EXPECT_EQ(scope.Finish(OkStatus()).code(), StatusCode::kOk);
}

}  // namespace
}  // namespace zarrd::server
