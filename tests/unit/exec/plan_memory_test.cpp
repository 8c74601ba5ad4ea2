// The plan's lifetimes and memory pass (exec/plan_memory.h) on plans made
// by hand: when each intermediate dies, which buffers share arena bytes,
// what stays unplanned, and in-place reuse.
#include "exec/plan_memory.h"

#include <gtest/gtest.h>

#include "memory/memory_planner.h"
#include "plugin_host/abi_objects.h"  // ExecutionPlan holds a LOOM_GraphView

namespace loom::exec {
namespace {

// A host-only plan; add() appends float slots of `elements` elements
// (-1: shape unknown) and steps reading and writing them.
class PlanMaker {
 public:
  PlanMaker() {
    plan.memories.push_back(MemoryKind{});
    plan.streams.push_back(StreamInfo{-1, "host"});
  }
  SlotId slot(const std::string& name, int64_t elements, SlotKind kind = SlotKind::kIntermediate) {
    Slot s;
    s.name = name;
    s.kind = kind;
    s.type.dtype = DType::kFloat;
    s.type.has_shape = true;
    s.type.dims = {DimInfo{elements, elements < 0 ? "n" : ""}};
    plan.slots.push_back(s);
    return static_cast<SlotId>(plan.slots.size() - 1);
  }
  Step& step(std::vector<SlotId> in, std::vector<SlotId> out) {
    Step st;
    st.inputs = std::move(in);
    st.outputs = std::move(out);
    plan.steps.push_back(st);
    return plan.steps.back();
  }
  // Whether two planned slots' arena bytes overlap.
  bool overlap(SlotId a, SlotId b) const {
    const Slot &x = plan.slots[a], &y = plan.slots[b];
    return x.planned_offset < y.planned_offset + y.planned_bytes && y.planned_offset < x.planned_offset + x.planned_bytes;
  }
  ExecutionPlan plan;
};

TEST(PlanMemoryTest, LifetimesFreesAndReaders) {
  PlanMaker m;
  const SlotId x = m.slot("x", 4, SlotKind::kGraphInput), a = m.slot("a", 4), b = m.slot("b", 4), c = m.slot("c", 4);
  m.step({x}, {a});
  m.step({a}, {b});
  m.step({b, a}, {c});
  m.step({c}, {});
  plan_lifetimes_and_memory(m.plan, {});
  EXPECT_EQ(m.plan.slots[a].produced_at, 0);
  EXPECT_EQ(m.plan.slots[a].dies_at, 2);
  EXPECT_EQ(m.plan.slots[b].dies_at, 2);
  EXPECT_EQ(m.plan.slots[c].dies_at, 3);
  EXPECT_EQ(m.plan.steps[2].frees, (std::vector<SlotId>{a, b}));
  EXPECT_EQ(m.plan.slots[a].readers, 2);
  EXPECT_EQ(m.plan.slots[x].readers, 1);
  EXPECT_EQ(m.plan.slots[x].dies_at, -1) << "graph inputs are not the run's to free";
  EXPECT_TRUE(m.plan.steps[0].frees.empty());
}

TEST(PlanMemoryTest, BuffersAliveTogetherNeverShareBytes) {
  PlanMaker m;
  const SlotId x = m.slot("x", 4, SlotKind::kGraphInput);
  const SlotId a = m.slot("a", 256), b = m.slot("b", 256), c = m.slot("c", 256), d = m.slot("d", 256);
  m.step({x}, {a});
  m.step({a}, {b});
  m.step({b}, {c});  // a is dead by now: c may take its bytes
  m.step({c}, {d});
  m.step({d}, {});
  plan_lifetimes_and_memory(m.plan, {});
  for (SlotId s : {a, b, c, d}) {
    EXPECT_GE(m.plan.slots[s].planned_offset, 0) << m.plan.slots[s].name;
    EXPECT_EQ(m.plan.slots[s].planned_bytes, 1024);
  }
  EXPECT_FALSE(m.overlap(a, b));
  EXPECT_FALSE(m.overlap(b, c));
  EXPECT_FALSE(m.overlap(c, d));
  EXPECT_LE(m.plan.memories[0].arena_bytes, 2 * (1024 + memory::kBufferAlignment))
      << "a chain needs two buffers at a time";
}

TEST(PlanMemoryTest, ExtraReadsKeepACaptureAlive) {
  PlanMaker m;
  const SlotId x = m.slot("x", 4, SlotKind::kGraphInput), a = m.slot("a", 64), b = m.slot("b", 64),
               c = m.slot("c", 64);
  m.step({x}, {a});
  m.step({a}, {b});
  m.step({b}, {c});  // reads a too, as a subgraph's capture
  m.step({c}, {});
  plan_lifetimes_and_memory(m.plan, {{2, a}});
  EXPECT_EQ(m.plan.slots[a].dies_at, 2);
  EXPECT_EQ(m.plan.steps[2].frees, (std::vector<SlotId>{a, b}));
  EXPECT_FALSE(m.overlap(a, c)) << "c is made while the capture a is still read";
}

TEST(PlanMemoryTest, UnknownShapesAndSessionCopiesAreNotPlanned) {
  PlanMaker m;
  const SlotId x = m.slot("x", 4, SlotKind::kGraphInput), w = m.slot("w", 8, SlotKind::kConstant);
  const SlotId dynamic = m.slot("dyn", -1), copied = m.slot("w@device", 8);
  m.step({x}, {dynamic});
  m.step({w}, {copied}).constant_copy = true;
  m.step({dynamic, copied}, {});
  plan_lifetimes_and_memory(m.plan, {});
  EXPECT_EQ(m.plan.slots[dynamic].planned_offset, -1) << "sized by the real tensor at run time";
  EXPECT_EQ(m.plan.slots[dynamic].dies_at, 2) << "but still freed after its last reader";
  EXPECT_EQ(m.plan.slots[copied].planned_offset, -1) << "kept by the session, not in a run's arena";
  EXPECT_EQ(m.plan.memories[0].arena_bytes, 0);
}

TEST(PlanMemoryTest, AbsurdDeclaredShapesAreLeftToRunTime) {
  PlanMaker m;
  const SlotId x = m.slot("x", 4, SlotKind::kGraphInput);
  const SlotId huge = m.slot("huge", int64_t{1} << 45), small = m.slot("small", 16);
  m.step({x}, {huge, small});
  m.step({huge, small}, {});
  plan_lifetimes_and_memory(m.plan, {});
  EXPECT_EQ(m.plan.slots[huge].planned_offset, -1) << "past the 1 TiB the plan sizes";
  EXPECT_GE(m.plan.slots[small].planned_offset, 0);
}

TEST(PlanMemoryTest, InPlacePairsShareTheDyingInputsBuffer) {
  static const int32_t pairs[] = {0, 0};
  LOOM_KernelDef def{};
  def.struct_size = LOOM_KernelDef_STRUCT_SIZE;
  def.inplace_pairs = pairs;
  def.inplace_pair_count = 1;
  PlanMaker m;
  const SlotId x = m.slot("x", 4, SlotKind::kGraphInput), a = m.slot("a", 32), b = m.slot("b", 32),
               c = m.slot("c", 32), d = m.slot("d", 16);
  m.step({x}, {a});
  m.step({a}, {b}).def = &def;  // a dies here: b takes its buffer
  m.step({b}, {c}).def = &def;  // b is read again below: no sharing
  m.step({b, c}, {d}).def = &def;  // d is smaller than b: no sharing
  m.step({d}, {});
  plan_lifetimes_and_memory(m.plan, {});
  EXPECT_EQ(m.plan.slots[b].planned_offset, m.plan.slots[a].planned_offset);
  EXPECT_FALSE(m.overlap(b, c));
  EXPECT_FALSE(m.overlap(c, d));
  EXPECT_FALSE(m.overlap(b, d));
}

}  // namespace
}  // namespace loom::exec
