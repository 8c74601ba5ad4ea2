// Test plugin with two providers, built on the SDK:
//  - "test_device": a kernel EP whose memory kind "test_device" is marked not
//    host-accessible, with its own allocator and data transfer. Its kernels
//    (Relu, Mul on float) refuse inputs that are not in its memory, so a run
//    that succeeds proves the core inserted copies at the right places.
//  - "test_fused": a compiling EP that claims every Add and Relu node as one
//    fused set (possibly creating a cycle, which the partitioner must refuse)
//    and interprets the set when computed.
//  - "test_serial": a kernel EP (host memory, Relu) that declares it cannot
//    run concurrently; its kernel counts how many of its calls overlap.
//  - "test_overlap": the same, allowed to run concurrently, with a Relu that
//    takes 20 ms, so parallel execution is seen to overlap branches.
// Counters are exported so tests can see how many copies and partition
// launches happened.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "checked_memory.h"
#include "fused_graph.h"
#include "loom/sdk.h"

namespace {

using namespace loom::sdk;

std::atomic<uint64_t> g_copies{0};
std::atomic<uint64_t> g_partition_runs{0};
std::atomic<uint64_t> g_live_allocations{0};

constexpr char kMemory[] = "test_device";

bool in_device_memory(const ConstTensor& t) {
  const LOOM_MemoryInfo* m = host().tensor_memory(t.raw());
  return m != nullptr && from_view(m->name) == kMemory;
}

// Blocks the allocator handed out, so a kernel can tell its scratch came
// from this EP's memory.
std::mutex g_blocks_mutex;
std::map<const char*, uint64_t> g_blocks;  // start -> bytes

bool in_device_block(const void* p, uint64_t bytes) {
  const char* c = static_cast<const char*>(p);
  std::lock_guard<std::mutex> lock(g_blocks_mutex);
  auto it = g_blocks.upper_bound(c);
  if (it == g_blocks.begin()) return false;
  --it;
  return c + bytes <= it->first + it->second;
}

void* device_alloc(void*, uint64_t bytes, uint64_t alignment) {
  void* p = loom::test_plugins::checked_alloc(bytes, alignment, g_live_allocations);
  std::lock_guard<std::mutex> lock(g_blocks_mutex);
  if (p != nullptr) g_blocks[static_cast<const char*>(p)] = bytes;
  return p;
}
void device_free(void*, void* p) {
  {
    std::lock_guard<std::mutex> lock(g_blocks_mutex);
    g_blocks.erase(static_cast<const char*>(p));
  }
  loom::test_plugins::checked_free(p, g_live_allocations);
}

int32_t can_copy(void*, const LOOM_MemoryInfo* src, const LOOM_MemoryInfo* dst) {
  const std::string s(from_view(src->name)), d(from_view(dst->name));
  return (s == "cpu" && d == kMemory) || (s == kMemory && d == "cpu") || (s == kMemory && d == kMemory);
}
LOOM_Status* copy(void* state, const LOOM_DataTransfer_Copy_Args* a) {
  if (!can_copy(state, a->src_memory, a->dst_memory))
    return make_status(LOOM_STATUS_INVALID_ARGUMENT, "test_device: cannot copy between these memories");
  std::memcpy(a->dst, a->src, a->bytes);
  ++g_copies;
  return nullptr;
}

void device_relu(KernelContext& ctx) {
  ConstTensor x = ctx.required_input(0);
  LOOM_SDK_ENFORCE(in_device_memory(x), "test_device Relu: input is not in test_device memory");
  Tensor y = ctx.output(0, x.shape(), LOOM_DTYPE_FLOAT);
  LOOM_SDK_ENFORCE(in_device_memory(y), "test_device Relu: output is not in test_device memory");
  const float* px = x.data<float>();
  float* py = y.mutable_data<float>();
  for (int64_t i = 0; i < x.size(); ++i) py[i] = px[i] > 0 ? px[i] : 0;
}

void device_mul(KernelContext& ctx) {
  ConstTensor a = ctx.required_input(0), b = ctx.required_input(1);
  LOOM_SDK_ENFORCE(in_device_memory(a) && in_device_memory(b), "test_device Mul: input is not in test_device memory");
  LOOM_SDK_ENFORCE(a.shape() == b.shape(), "test_device Mul: only equal shapes");
  Tensor y = ctx.output(0, a.shape(), LOOM_DTYPE_FLOAT);
  // Products go through working memory, which the host must give in this
  // EP's memory (LOOM_HostApi::kernel_scratch).
  float* products = ctx.scratch<float>(a.size());
  LOOM_SDK_ENFORCE(in_device_block(products, static_cast<uint64_t>(a.size()) * sizeof(float)),
                   "test_device Mul: scratch is not in test_device memory");
  for (int64_t i = 0; i < a.size(); ++i) products[i] = a.data<float>()[i] * b.data<float>()[i];
  std::memcpy(y.mutable_data<float>(), products, static_cast<size_t>(a.size()) * sizeof(float));
}

class DeviceEp : public Ep {
 public:
  DeviceEp() {
    allocator_.struct_size = LOOM_Allocator_STRUCT_SIZE;
    allocator_.memory = &memory_;
    allocator_.alloc = device_alloc;
    allocator_.free = device_free;
    transfer_.struct_size = LOOM_DataTransfer_STRUCT_SIZE;
    transfer_.can_copy = can_copy;
    transfer_.copy = copy;
  }
  const KernelRegistry* kernels() const override {
    static const KernelRegistry r = [] {
      KernelRegistry k;
      const std::vector<TypeConstraintSpec> f = {{"T", {LOOM_DTYPE_FLOAT}}};
      k.add("", "Relu", 6, LOOM_OPSET_OPEN_END, device_relu, f);
      k.add("", "Mul", 7, LOOM_OPSET_OPEN_END, device_mul, f);
      return k;
    }();
    return &r;
  }
  const LOOM_Allocator* allocator() const override { return &allocator_; }
  const LOOM_DataTransfer* data_transfer() const override { return &transfer_; }

 private:
  LOOM_MemoryInfo memory_{LOOM_MemoryInfo_STRUCT_SIZE, nullptr, {kMemory, sizeof(kMemory) - 1}, 0, 0};
  LOOM_Allocator allocator_{};
  LOOM_DataTransfer transfer_{};
};

class DeviceFactory : public EpFactory {
 public:
  DeviceFactory() : EpFactory("test_device") {}
  std::vector<DeviceSpec> devices() override { return {DeviceSpec{"test device", kMemory, 0, false}}; }
  std::unique_ptr<Ep> create_ep(size_t, const Options&) override { return std::make_unique<DeviceEp>(); }
};

// Interprets a fused set of Add (equal shapes) and Relu nodes on host memory.
class FusedPartition : public CompiledPartition {
 public:
  explicit FusedPartition(const Graph& g) : graph_(g) {}
  void compute(void*, KernelContext& ctx) override {
    ++g_partition_runs;
    std::map<std::string, std::pair<std::vector<int64_t>, std::vector<float>>> values;
    for (size_t i = 0; i < inputs_.size(); ++i) {
      ConstTensor t = ctx.required_input(i);
      values[inputs_[i]] = {t.shape(), std::vector<float>(t.data<float>(), t.data<float>() + t.size())};
    }
    for (const loom::testing::FusedGraph::Op& op : ops_) {
      auto& a = values.at(op.in[0]);
      auto result = a;
      if (op.type == "Add") {
        const auto& b = values.at(op.in[1]);
        LOOM_SDK_ENFORCE(b.first == a.first, "test_fused Add: only equal shapes");
        for (size_t i = 0; i < result.second.size(); ++i) result.second[i] += b.second[i];
      } else {
        for (float& v : result.second) v = v > 0 ? v : 0;
      }
      values[op.out[0]] = std::move(result);
    }
    for (size_t i = 0; i < outputs_.size(); ++i) {
      const auto& v = values.at(outputs_[i]);
      Tensor out = ctx.output(i, v.first, LOOM_DTYPE_FLOAT);
      std::memcpy(out.mutable_data<float>(), v.second.data(), v.second.size() * sizeof(float));
    }
  }

 private:
  const loom::testing::FusedGraph graph_;
  const std::vector<std::string>& inputs_ = graph_.inputs;
  const std::vector<std::string>& outputs_ = graph_.outputs;
  const std::vector<loom::testing::FusedGraph::Op>& ops_ = graph_.ops;
};

class FusedEp : public EpOf<FusedEp> {
 public:
  void claim(const Graph& g, ClaimSink& sink) override {
    std::vector<uint64_t> ids;
    for (size_t i = 0; i < g.node_count(); ++i) {
      Node n = g.node(i);
      if (n.domain().empty() && (n.op_type() == "Add" || n.op_type() == "Relu") &&
          n.input_dtype(0) == LOOM_DTYPE_FLOAT)
        ids.push_back(n.id());
      else
        sink.decline(n.id(), "test_fused only fuses float Add and Relu");
    }
    if (!ids.empty()) sink.claim_fused(ids, "Add/Relu fused by test_fused");
  }
  std::unique_ptr<CompiledPartition> compile(const Graph& g) override { return std::make_unique<FusedPartition>(g); }
};

class FusedFactory : public EpFactory {
 public:
  FusedFactory() : EpFactory("test_fused") {}
  std::unique_ptr<Ep> create_ep(size_t, const Options&) override { return std::make_unique<FusedEp>(); }
};

// Per provider (0: test_serial, 1: test_overlap): calls in flight now and
// the most seen at once.
std::atomic<int> g_in_flight[2];
std::atomic<int> g_max_in_flight[2];

// Relu that stays in flight `kMicros`, recording how many calls overlap.
template <int kId, int kMicros>
void counted_relu(KernelContext& ctx) {
  const int now = ++g_in_flight[kId];
  int seen = g_max_in_flight[kId].load();
  while (now > seen && !g_max_in_flight[kId].compare_exchange_weak(seen, now)) {
  }
  std::this_thread::sleep_for(std::chrono::microseconds(kMicros));
  ConstTensor x = ctx.required_input(0);
  Tensor y = ctx.output(0, x.shape(), LOOM_DTYPE_FLOAT);
  const float* in = x.data<float>();
  float* out = y.mutable_data<float>();
  for (int64_t i = 0; i < x.size(); ++i) out[i] = std::max(in[i], 0.f);
  --g_in_flight[kId];
}

// test_serial declares it cannot run concurrently; test_overlap can, and
// its Relu stays in flight long enough (20 ms) that parallel branches
// overlap for sure.
template <int kId, int kMicros>
class CountingEp : public Ep {
 public:
  const KernelRegistry* kernels() const override {
    static const KernelRegistry r = [] {
      KernelRegistry k;
      k.add("", "Relu", 6, LOOM_OPSET_OPEN_END, counted_relu<kId, kMicros>, {{"T", {LOOM_DTYPE_FLOAT}}});
      return k;
    }();
    return &r;
  }
  bool supports_concurrent_runs() const override { return kId != 0; }
};

template <int kId, int kMicros>
class CountingFactory : public EpFactory {
 public:
  explicit CountingFactory(const char* name) : EpFactory(name) {}
  std::unique_ptr<Ep> create_ep(size_t, const Options&) override {
    return std::make_unique<CountingEp<kId, kMicros>>();
  }
};

std::unique_ptr<Plugin> create_plugin() {
  auto p = std::make_unique<Plugin>();
  p->add_factory(std::make_unique<DeviceFactory>());
  p->add_factory(std::make_unique<FusedFactory>());
  p->add_factory(std::make_unique<CountingFactory<0, 200>>("test_serial"));
  p->add_factory(std::make_unique<CountingFactory<1, 20000>>("test_overlap"));
  return p;
}

}  // namespace

LOOM_SDK_DEFINE_PLUGIN("test_device_ep", "0.1.0", create_plugin)

LOOM_EXPORT uint64_t loom_test_device_copies() { return g_copies.load(); }
LOOM_EXPORT uint64_t loom_test_device_live_allocations() { return g_live_allocations.load(); }
LOOM_EXPORT uint64_t loom_test_fused_partition_runs() { return g_partition_runs.load(); }
LOOM_EXPORT int loom_test_serial_max_in_flight() { return g_max_in_flight[0].load(); }
LOOM_EXPORT int loom_test_overlap_max_in_flight() { return g_max_in_flight[1].load(); }
