// The plan's constants live in the pool's ConstantStore, not in the plan or
// the IR: taken from the session's graph (which keeps their types), bound
// as shared views, and released once (the bytes go when the last holder
// lets go), without any run writing into the plan or the graph.
#include "exec/constant_store.h"

#include <gtest/gtest.h>

#include "common/test_env.h"
#include "plugin_host/abi_objects.h"

namespace loom::exec {
namespace {

// A plan of two slots: constant "w" (slot 0) and an intermediate (slot 1),
// and a graph whose initializer "w" holds three floats.
struct Fixture {
  ExecutionPlan plan;
  ir::Graph graph;
  Fixture() {
    plan.slots.resize(2);
    plan.slots[0].name = "w";
    plan.slots[0].kind = SlotKind::kConstant;
    plan.slots[1].name = "y";
    graph.initializers.emplace("w", testing::float_tensor({3}, {1, 2, 3}));
  }
};

TEST(ConstantStoreTest, TakesTheSessionGraphsBytesAndBindsOneSharedView) {
  Fixture f;
  const void* bytes = f.graph.initializers.at("w").data();
  auto store = ConstantStore::take(f.plan, f.graph);
  EXPECT_EQ(f.graph.initializers.at("w").data(), nullptr) << "the graph keeps no bytes";
  auto a = store->value(0, nullptr), b = store->value(0, nullptr);
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a, b) << "one value, shared by every run";
  EXPECT_EQ(a->tensor.data, bytes);
  EXPECT_EQ(a->tensor.count, 3u);
}

TEST(ConstantStoreTest, ReleaseFreesTheBytesOnceRunsLetGo) {
  Fixture f;
  std::weak_ptr<const LOOM_Value> bound;
  auto store = ConstantStore::take(f.plan, f.graph);
  auto in_flight = store->value(0, nullptr);  // a run that bound it
  bound = in_flight;
  EXPECT_TRUE(store->release(0));
  EXPECT_FALSE(store->release(0)) << "released once";
  EXPECT_FALSE(store->release(1)) << "not a constant";
  ASSERT_TRUE(store->released(0).has_value());
  EXPECT_EQ(store->released(0)->first, DType::kFloat);
  EXPECT_EQ(store->released(0)->second, (Dims{3}));
  auto later = store->value(0, nullptr);
  EXPECT_EQ(later->tensor.data, nullptr) << "later runs bind dtype and dims only";
  EXPECT_EQ(later->tensor.count, 3u);
  EXPECT_NE(in_flight->tensor.data, nullptr) << "the run in flight keeps what it bound";
  in_flight.reset();
  EXPECT_TRUE(bound.expired());
}

TEST(ConstantStoreTest, SharedConstantsStayInTheirGraph) {
  Fixture f;
  auto store = ConstantStore::share(f.plan, f.graph);
  EXPECT_NE(f.graph.initializers.at("w").data(), nullptr);
  EXPECT_EQ(store->value(0, nullptr)->tensor.data, f.graph.initializers.at("w").data());
}

TEST(ConstantStoreTest, DeviceCopiesAreMarkedReleased) {
  Fixture f;
  auto store = ConstantStore::take(f.plan, f.graph);
  EXPECT_FALSE(store->released(1).has_value());
  store->mark_released(1, DType::kFloat, {4, 4});
  ASSERT_TRUE(store->released(1).has_value());
  EXPECT_EQ(store->released(1)->second, (Dims{4, 4}));
}

}  // namespace
}  // namespace loom::exec
