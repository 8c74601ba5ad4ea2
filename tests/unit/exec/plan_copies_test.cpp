// The copies pass of build_plan (exec/plan_copies.h) on plans made by hand:
// host memory and two devices, each owned by an EP whose can_copy the test
// decides.
#include "exec/plan_copies.h"

#include <gtest/gtest.h>

#include <set>
#include <tuple>

#include "plugin_host/abi_objects.h"  // ExecutionPlan holds a LOOM_GraphView

namespace loom::exec {
namespace {

constexpr size_t kHost = 0, kDevA = 1, kDevB = 2;

class CopyPlan {
 public:
  CopyPlan() {
    for (const char* name : {"cpu", "dev_a", "dev_b"}) {
      MemoryKind m;
      m.info.name = {name, std::char_traits<char>::length(name)};
      plan.memories.push_back(m);
    }
    plan.streams.push_back(StreamInfo{-1, "host"});
    rules.memory_owner = {-1, 0, 1};  // EP 0 owns dev_a, EP 1 dev_b
    rules.can_copy = [this](size_t ep, size_t from, size_t to) { return allowed.count({ep, from, to}) > 0; };
    rules.stream_of = [](size_t) { return kHostStream; };
    rules.ep_name = [](size_t ep) { return ep == 0 ? std::string("ep_a") : std::string("ep_b"); };
  }
  SlotId slot(const std::string& name, size_t memory, SlotKind kind = SlotKind::kIntermediate,
              DType dtype = DType::kFloat) {
    Slot s;
    s.name = name;
    s.kind = kind;
    s.memory = memory;
    s.type.dtype = dtype;
    plan.slots.push_back(s);
    return static_cast<SlotId>(plan.slots.size() - 1);
  }
  // A step reading `in` (each needed in `memory`) and writing `out`.
  Step& step(const std::string& label, std::vector<SlotId> in, size_t memory, std::vector<SlotId> out = {}) {
    Step st;
    st.label = label;
    st.inputs = std::move(in);
    st.input_memory.assign(st.inputs.size(), memory);
    st.outputs = std::move(out);
    plan.steps.push_back(st);
    return plan.steps.back();
  }
  std::vector<std::string> labels() const {
    std::vector<std::string> out;
    for (const Step& s : plan.steps) out.push_back(s.label);
    return out;
  }
  ExecutionPlan plan;
  CopyRules rules;
  std::set<std::tuple<size_t, size_t, size_t>> allowed;  // (ep, from, to)
};

TEST(PlanCopiesTest, AHostValueGoesToTheDeviceOnceForEveryReaderThere) {
  CopyPlan p;
  p.allowed = {{0, kHost, kDevA}};
  const SlotId x = p.slot("x", kHost, SlotKind::kGraphInput), y = p.slot("y", kDevA), z = p.slot("z", kDevA);
  p.step("first", {x}, kDevA, {y});
  p.step("second", {x, y}, kDevA, {z});
  ASSERT_TRUE(insert_copies(p.plan, p.rules).has_value());
  EXPECT_EQ(p.labels(), (std::vector<std::string>{"'x' from cpu to dev_a", "first", "second"}));
  const SlotId copy = p.plan.steps[0].outputs[0];
  EXPECT_EQ(p.plan.slots[copy].memory, kDevA);
  EXPECT_EQ(p.plan.slots[copy].name, "x@dev_a");
  EXPECT_EQ(p.plan.steps[1].inputs, (std::vector<SlotId>{copy}));
  EXPECT_EQ(p.plan.steps[2].inputs, (std::vector<SlotId>{copy, y}));
  EXPECT_EQ(p.plan.steps[0].ep, 0u);
  EXPECT_FALSE(p.plan.steps[0].constant_copy) << "a graph input changes every run";
}

TEST(PlanCopiesTest, OnlyInitializersNoRunOverridesAreCopiedOncePerSession) {
  CopyPlan p;
  p.allowed = {{0, kHost, kDevA}};
  const SlotId w = p.slot("w", kHost, SlotKind::kConstant), v = p.slot("v", kHost, SlotKind::kConstant);
  p.rules.input_slots = {v};  // an initializer that is also a graph input
  p.step("reader", {w, v}, kDevA);
  ASSERT_TRUE(insert_copies(p.plan, p.rules).has_value());
  ASSERT_EQ(p.plan.steps.size(), 3u);
  EXPECT_TRUE(p.plan.steps[0].constant_copy);
  EXPECT_FALSE(p.plan.steps[1].constant_copy);
}

TEST(PlanCopiesTest, BetweenDevicesTheSourcesOwnerCopiesThenTheTargets) {
  for (const auto& [allowed, ep] : std::vector<std::pair<std::tuple<size_t, size_t, size_t>, size_t>>{
           {{0, kDevA, kDevB}, 0}, {{1, kDevA, kDevB}, 1}}) {
    CopyPlan p;
    p.allowed = {allowed};
    const SlotId a = p.slot("a", kDevA);
    p.step("reader", {a}, kDevB);
    ASSERT_TRUE(insert_copies(p.plan, p.rules).has_value());
    ASSERT_EQ(p.plan.steps.size(), 2u);
    EXPECT_EQ(p.plan.steps[0].ep, ep);
    EXPECT_EQ(p.plan.slots[p.plan.steps[1].inputs[0]].memory, kDevB);
  }
}

TEST(PlanCopiesTest, DevicesWithoutALinkGoThroughHostMemory) {
  CopyPlan p;
  p.allowed = {{0, kDevA, kHost}, {1, kHost, kDevB}};
  const SlotId a = p.slot("a", kDevA);
  p.step("reader", {a}, kDevB);
  ASSERT_TRUE(insert_copies(p.plan, p.rules).has_value());
  EXPECT_EQ(p.labels(), (std::vector<std::string>{"'a' from dev_a to cpu", "'a@cpu' from cpu to dev_b", "reader"}));
  EXPECT_EQ(p.plan.steps[0].ep, 0u);
  EXPECT_EQ(p.plan.steps[1].ep, 1u);
}

TEST(PlanCopiesTest, AMoveNoOwnerMakesIsAnErrorNamingValueMemoriesAndProvider) {
  CopyPlan p;  // nothing allowed
  const SlotId x = p.slot("x", kHost, SlotKind::kGraphInput);
  p.step("reader", {x}, kDevA);
  auto r = insert_copies(p.plan, p.rules);
  ASSERT_FALSE(r.has_value());
  const std::string& msg = r.status().message();
  for (const char* part : {"'x'", "'cpu'", "'dev_a'", "'ep_a'", "can_copy"})
    EXPECT_NE(msg.find(part), std::string::npos) << part << " in: " << msg;
}

TEST(PlanCopiesTest, StringTensorsDoNotMove) {
  CopyPlan p;
  p.allowed = {{0, kHost, kDevA}};
  const SlotId s = p.slot("names", kHost, SlotKind::kGraphInput, DType::kString);
  p.step("reader", {s}, kDevA);
  auto r = insert_copies(p.plan, p.rules);
  ASSERT_FALSE(r.has_value());
  EXPECT_NE(r.status().message().find("string tensor"), std::string::npos) << r.status().message();
}

TEST(PlanCopiesTest, OutputsEndOnTheHostAndCapturesAreReadThere) {
  CopyPlan p;
  p.allowed = {{0, kDevA, kHost}};
  const SlotId a = p.slot("a", kDevA), b = p.slot("b", kHost);
  p.step("make a", {}, kDevA, {a});
  Step& loop = p.step("loop", {}, kHost, {b});
  loop.captures["a"] = a;
  p.plan.outputs = {a, b};
  auto r = insert_copies(p.plan, p.rules);
  ASSERT_TRUE(r.has_value()) << r.status().message();
  EXPECT_EQ(p.labels(), (std::vector<std::string>{"make a", "'a' from dev_a to cpu", "loop"}));
  const SlotId on_host = p.plan.steps[1].outputs[0];
  EXPECT_EQ(p.plan.steps[2].captures.at("a"), on_host);
  EXPECT_EQ(*r, (std::vector<std::pair<size_t, SlotId>>{{2, on_host}})) << "the capture is read by the loop step";
  EXPECT_EQ(p.plan.outputs, (std::vector<SlotId>{on_host, b})) << "the output reuses the capture's copy";
}

TEST(PlanCopiesTest, OmittedInputsAndValuesAlreadyInPlaceAreLeftAlone) {
  CopyPlan p;
  const SlotId a = p.slot("a", kDevA);
  p.step("reader", {a, kNoSlot}, kDevA);
  ASSERT_TRUE(insert_copies(p.plan, p.rules).has_value());
  ASSERT_EQ(p.plan.steps.size(), 1u);
  EXPECT_EQ(p.plan.steps[0].inputs, (std::vector<SlotId>{a, kNoSlot}));
}

}  // namespace
}  // namespace loom::exec
