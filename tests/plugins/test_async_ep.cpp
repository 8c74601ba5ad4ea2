// Test plugin with asynchronous EPs, built on the SDK, so that streams,
// events and copies on streams are exercised without a GPU:
//  - "test_async": a device whose memory kind "test_async" is marked not
//    host-accessible (host memory behind checked headers), a data transfer
//    that queues copies on streams, and streams that run queued work on a
//    worker thread after a latency, so kernels complete well after they are
//    launched. Kernels: Relu, Add, Mul (float, equal shapes).
//  - "test_async_host" and "test_async_host_b": the same stream machinery on
//    host memory, so work on one asynchronous stream can feed another without
//    the host waiting.
// The device EP also has Shape (its output written on the host during
// compute) and Reshape (its shape input read on the host), as a GPU EP
// serves shape operands (LOOM_KernelDef.host_inputs / host_outputs).
// Option "capture" = "1" makes the device EP ask for recorded runs (its
// streams record and replay jobs: tests/plugins/async_stream.h); "fail"
// makes each recording fail at end_capture.
// Option "ops" (comma list, e.g. "Relu,Mul") limits the kernels an EP
// offers, so tests can place each node where they want; "latency_us" sets
// the delay before each queued job (default 200); "fuse" = "1" makes the EP
// a compiling one that claims every node it has a kernel for as one fused
// set (a compiled partition with per-run state).
// Options "fail_at", "fail_call" and "fail_once" make it fail on purpose at
// one point (fault_injection.h); loom_test_async_disarm_faults switches
// that off again.
// Exported counters let tests see launches that returned before their work
// ran, host-side waits (stream and event synchronizations), stream-side
// waits, copies, live device allocations, streams, events, kernel objects,
// compiled partitions and run states, and the calls made at each fault point.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "async_stream.h"
#include "checked_memory.h"
#include "fused_graph.h"
#include "fault_injection.h"
#include "loom/sdk.h"

namespace loom::test_plugins {
std::atomic<uint64_t> g_stream_host_syncs{0};  // LOOM_Stream.synchronize calls
std::atomic<uint64_t> g_event_host_syncs{0};   // LOOM_Event.synchronize calls
std::atomic<uint64_t> g_event_stream_waits{0};  // LOOM_Event.wait calls
std::atomic<int> g_live_streams{0};
std::atomic<int> g_live_events{0};
FaultPlan g_faults;
}  // namespace loom::test_plugins

namespace {

using namespace loom::sdk;

using namespace loom::test_plugins;

std::atomic<uint64_t> g_launched_early{0};     // launches that returned before their work ran
std::atomic<uint64_t> g_copies{0};
std::atomic<uint64_t> g_live_allocations{0};
std::atomic<uint64_t> g_recordings{0};  // end_capture calls that returned a recording
std::atomic<uint64_t> g_replays{0};     // recordings queued
std::atomic<int> g_live_partitions{0};
std::atomic<int> g_live_states{0};
std::atomic<int> g_live_kernels{0};

using loom::test_plugins::FaultPlan;
using loom::test_plugins::FaultPoint;

// Throws the injected failure when the plan says this call at `p` fails.
void maybe_fail(FaultPoint p) {
  if (g_faults.hit(p)) throw Error(FaultPlan::message(p));
}

constexpr char kDeviceMemory[] = "test_async";
constexpr char kHostMemory[] = "cpu";

// Queues `job` on the step's stream (or runs it now without one) and counts
// launches that return before their work has run.
void launch(KernelContext& ctx, std::function<void()> job) {
  LOOM_Stream* stream = ctx.stream();
  if (stream == nullptr) {
    job();
    return;
  }
  auto done = std::make_shared<std::atomic<bool>>(false);
  queue_of(stream).push([job = std::move(job), done] {
    job();
    done->store(true);
  });
  if (!done->load()) ++g_launched_early;
}

void check_memory(const ConstTensor& t, const char* memory, const char* op) {
  const LOOM_MemoryInfo* m = host().tensor_memory(t.raw());
  LOOM_SDK_ENFORCE(m != nullptr && from_view(m->name) == memory,
                   std::string("test_async ") + op + ": a tensor is not in " + memory + " memory");
}

template <const char* kMemory>
void relu(KernelContext& ctx) {
  maybe_fail(FaultPoint::kCompute);
  ConstTensor x = ctx.required_input(0);
  check_memory(x, kMemory, "Relu");
  Tensor y = ctx.output(0, x.shape(), LOOM_DTYPE_FLOAT);
  check_memory(y, kMemory, "Relu");
  const float* in = x.data<float>();
  float* out = y.mutable_data<float>();
  const size_t n = x.size();
  launch(ctx, [in, out, n] {
    for (size_t i = 0; i < n; ++i) out[i] = in[i] > 0 ? in[i] : 0;
  });
}

template <const char* kMemory, bool kMul>
void binary(KernelContext& ctx) {
  maybe_fail(FaultPoint::kCompute);
  ConstTensor a = ctx.required_input(0), b = ctx.required_input(1);
  const char* op = kMul ? "Mul" : "Add";
  check_memory(a, kMemory, op);
  check_memory(b, kMemory, op);
  LOOM_SDK_ENFORCE(a.shape() == b.shape(), std::string("test_async ") + op + ": only equal shapes");
  Tensor y = ctx.output(0, a.shape(), LOOM_DTYPE_FLOAT);
  const float* pa = a.data<float>();
  const float* pb = b.data<float>();
  float* out = y.mutable_data<float>();
  const size_t n = a.size();
  launch(ctx, [pa, pb, out, n] {
    for (size_t i = 0; i < n; ++i) out[i] = kMul ? pa[i] * pb[i] : pa[i] + pb[i];
  });
}

// Shape: dims only, written on the host (an output_on_host kernel).
void shape(KernelContext& ctx) {
  maybe_fail(FaultPoint::kCompute);
  ConstTensor x = ctx.required_input(0);
  check_memory(x, kDeviceMemory, "Shape");
  const std::vector<int64_t> dims = x.shape();
  Tensor y = ctx.output(0, {static_cast<int64_t>(dims.size())}, LOOM_DTYPE_INT64);
  check_memory(y, kHostMemory, "Shape");
  std::copy(dims.begin(), dims.end(), y.mutable_data<int64_t>());
}

// Reshape: the shape is read on the host now (an input_on_host kernel), the
// bytes are copied on the stream.
void reshape(KernelContext& ctx) {
  maybe_fail(FaultPoint::kCompute);
  ConstTensor x = ctx.required_input(0), shape = ctx.required_input(1);
  check_memory(x, kDeviceMemory, "Reshape");
  check_memory(shape, kHostMemory, "Reshape");
  std::vector<int64_t> dims = shape.to_int64_vector();
  int64_t known = 1, infer = -1;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] == 0) dims[i] = x.dim(i);
    if (dims[i] == -1) infer = static_cast<int64_t>(i);
    else known *= dims[i];
  }
  if (infer >= 0) dims[static_cast<size_t>(infer)] = known == 0 ? 0 : x.size() / known;
  Tensor y = ctx.output(0, dims, LOOM_DTYPE_FLOAT);
  LOOM_SDK_ENFORCE(y.size() == x.size(), "test_async Reshape: element count changes");
  const float* in = x.data<float>();
  float* out = y.mutable_data<float>();
  const size_t n = static_cast<size_t>(x.size());
  launch(ctx, [in, out, n] { std::memcpy(out, in, n * sizeof(float)); });
}

int32_t can_copy(void*, const LOOM_MemoryInfo* src, const LOOM_MemoryInfo* dst) {
  const std::string s(from_view(src->name)), d(from_view(dst->name));
  return (s == kHostMemory || s == kDeviceMemory) && (d == kHostMemory || d == kDeviceMemory) && s != d;
}

// On a stream a host source is staged now (the caller may reuse it once this
// returns); the copy itself runs when the stream reaches it.
LOOM_Status* copy(void* state, const LOOM_DataTransfer_Copy_Args* a) {
  if (!can_copy(state, a->src_memory, a->dst_memory))
    return make_status(LOOM_STATUS_INVALID_ARGUMENT, "test_async: cannot copy between these memories");
  if (g_faults.hit(FaultPoint::kCopy)) return make_status(LOOM_STATUS_FAIL, FaultPlan::message(FaultPoint::kCopy));
  ++g_copies;
  void* dst = a->dst;
  const uint64_t bytes = a->bytes;
  if (a->stream == nullptr) {
    std::memcpy(dst, a->src, bytes);
    return nullptr;
  }
  if (from_view(a->src_memory->name) == kHostMemory) {
    auto staged = std::make_shared<std::vector<char>>(static_cast<const char*>(a->src),
                                                      static_cast<const char*>(a->src) + bytes);
    queue_of(a->stream).push([dst, staged] { std::memcpy(dst, staged->data(), staged->size()); });
  } else {
    const void* src = a->src;
    queue_of(a->stream).push([dst, src, bytes] { std::memcpy(dst, src, bytes); });
  }
  return nullptr;
}

// A kernel object per node, so that kernel creation is a call that can fail.
template <KernelFn kFn>
struct NodeKernel {
  explicit NodeKernel(const Node&) {
    maybe_fail(FaultPoint::kKernelCreate);
    ++g_live_kernels;
  }
  ~NodeKernel() { --g_live_kernels; }
  NodeKernel(const NodeKernel&) = delete;
  NodeKernel& operator=(const NodeKernel&) = delete;
  void compute(KernelContext& ctx) const { kFn(ctx); }
};

bool offered(const std::string& ops, std::string_view op) {
  return ops.empty() || ("," + ops + ",").find("," + std::string(op) + ",") != std::string::npos;
}

template <const char* kMemory>
KernelRegistry async_kernels(const std::string& ops) {
  KernelRegistry k;
  const std::vector<TypeConstraintSpec> f = {{"T", {LOOM_DTYPE_FLOAT}}};
  if (offered(ops, "Relu")) k.add_class<NodeKernel<relu<kMemory>>>("", "Relu", 6, LOOM_OPSET_OPEN_END, f);
  if (offered(ops, "Add")) k.add_class<NodeKernel<binary<kMemory, false>>>("", "Add", 7, LOOM_OPSET_OPEN_END, f);
  if (offered(ops, "Mul")) k.add_class<NodeKernel<binary<kMemory, true>>>("", "Mul", 7, LOOM_OPSET_OPEN_END, f);
  if (kMemory == kDeviceMemory && offered(ops, "Shape"))
    k.add_class<NodeKernel<shape>>("", "Shape", 1, LOOM_OPSET_OPEN_END, f).output_on_host(0);
  if (kMemory == kDeviceMemory && offered(ops, "Reshape"))
    k.add_class<NodeKernel<reshape>>("", "Reshape", 5, LOOM_OPSET_OPEN_END, f).input_on_host(1);
  return k;
}

// The fused set of an "fuse" EP: Relu, Add and Mul on equal shapes,
// interpreted in one job on the step's stream. Run states are counted.
class AsyncPartition : public CompiledPartition {
 public:
  explicit AsyncPartition(const Graph& g) : graph_(g) { ++g_live_partitions; }
  ~AsyncPartition() override { --g_live_partitions; }
  void* create_state() override {
    maybe_fail(FaultPoint::kCreateState);
    ++g_live_states;
    return new int(0);
  }
  void release_state(void* state) override {
    delete static_cast<int*>(state);
    --g_live_states;
  }
  void compute(void*, KernelContext& ctx) override {
    maybe_fail(FaultPoint::kCompute);
    std::vector<const float*> in;
    std::vector<int64_t> shape;
    for (size_t i = 0; i < inputs_.size(); ++i) {
      ConstTensor t = ctx.required_input(i);
      check_memory(t, kDeviceMemory, "fused");
      if (i == 0) shape = t.shape();
      LOOM_SDK_ENFORCE(t.shape() == shape, "test_async fused: only equal shapes");
      in.push_back(t.data<float>());
    }
    std::vector<float*> out;
    for (size_t i = 0; i < outputs_.size(); ++i)
      out.push_back(ctx.output(i, shape, LOOM_DTYPE_FLOAT).mutable_data<float>());
    size_t n = 1;
    for (int64_t d : shape) n *= static_cast<size_t>(d);
    launch(ctx, [this, in, out, n] {
      std::map<std::string, std::vector<float>> values;
      for (size_t i = 0; i < inputs_.size(); ++i) values[inputs_[i]].assign(in[i], in[i] + n);
      for (const loom::testing::FusedGraph::Op& op : ops_) {
        std::vector<float> r = values.at(op.in[0]);
        for (size_t i = 0; i < n; ++i) {
          if (op.type == "Relu") r[i] = r[i] > 0 ? r[i] : 0;
          else if (op.type == "Add") r[i] += values.at(op.in[1])[i];
          else r[i] *= values.at(op.in[1])[i];
        }
        values[op.out[0]] = std::move(r);
      }
      for (size_t i = 0; i < outputs_.size(); ++i) std::memcpy(out[i], values.at(outputs_[i]).data(), n * sizeof(float));
    });
  }

 private:
  const loom::testing::FusedGraph graph_;
  const std::vector<std::string>& inputs_ = graph_.inputs;
  const std::vector<std::string>& outputs_ = graph_.outputs;
  const std::vector<loom::testing::FusedGraph::Op>& ops_ = graph_.ops;
};

std::string option(const Options& options, const std::string& key, const std::string& fallback) {
  for (const auto& [k, value] : options)
    if (k == key) return value;
  return fallback;
}

class AsyncEp : public Ep {
 public:
  AsyncEp(bool device_memory, const Options& options)
      : device_memory_(device_memory),
        latency_(std::stoll(option(options, "latency_us", "200"))),
        ops_(option(options, "ops", "")),
        fuse_(option(options, "fuse", "") == "1"),
        capture_(option(options, "capture", "")),
        kernels_(device_memory ? async_kernels<kDeviceMemory>(ops_) : async_kernels<kHostMemory>(ops_)) {
    if (!g_faults.arm(options)) throw Error("test_async: unknown fail_at point", LOOM_STATUS_INVALID_ARGUMENT);
    allocator_.struct_size = LOOM_Allocator_STRUCT_SIZE;
    allocator_.memory = &memory_;
    allocator_.alloc = [](void*, uint64_t bytes, uint64_t alignment) noexcept -> void* {
      if (g_faults.hit(FaultPoint::kAllocate)) return nullptr;
      return loom::test_plugins::checked_alloc(bytes, alignment, g_live_allocations);
    };
    allocator_.free = [](void*, void* p) noexcept { loom::test_plugins::checked_free(p, g_live_allocations); };
    transfer_.struct_size = LOOM_DataTransfer_STRUCT_SIZE;
    transfer_.can_copy = can_copy;
    transfer_.copy = copy;
  }
  const KernelRegistry* kernels() const override { return &kernels_; }
  bool has_capability() const override { return fuse_; }
  // Claims every float node it has a kernel for as one fused set.
  void claim(const Graph& g, ClaimSink& sink) override {
    maybe_fail(FaultPoint::kGetCapability);
    std::vector<uint64_t> ids;
    for (size_t i = 0; i < g.node_count(); ++i) {
      Node n = g.node(i);
      if (n.domain().empty() && offered(ops_, n.op_type()) &&
          (n.op_type() == "Relu" || n.op_type() == "Add" || n.op_type() == "Mul") && n.input_dtype(0) == LOOM_DTYPE_FLOAT)
        ids.push_back(n.id());
    }
    if (!ids.empty()) sink.claim_fused(ids, "fused by test_async");
  }
  std::unique_ptr<CompiledPartition> compile(const Graph& g) override {
    maybe_fail(FaultPoint::kCompile);
    LOOM_SDK_ENFORCE(device_memory_, "test_async: only the device EP compiles");
    return std::make_unique<AsyncPartition>(g);
  }
  const LOOM_Allocator* allocator() const override { return device_memory_ ? &allocator_ : nullptr; }
  const LOOM_DataTransfer* data_transfer() const override { return device_memory_ ? &transfer_ : nullptr; }
  LOOM_Stream* create_stream() override { return new_stream(latency_); }
  LOOM_Event* create_event() override { return new_event(); }
  bool captures_runs() const override { return !capture_.empty(); }
  void begin_capture(LOOM_Stream* stream) override { queue_of(stream).begin_capture(); }
  LOOM_CapturedWork* end_capture(LOOM_Stream* stream) override {
    auto jobs = std::make_unique<std::vector<std::function<void()>>>(queue_of(stream).end_capture());
    if (capture_ == "fail") throw Error("test_async: recording refused (option capture=fail)");
    auto* w = new LOOM_CapturedWork{};
    w->struct_size = LOOM_CapturedWork_STRUCT_SIZE;
    w->state = jobs.release();
    w->replay = [](void* st, LOOM_Stream* s) noexcept -> LOOM_Status* {
      ++g_replays;
      for (const auto& job : *static_cast<std::vector<std::function<void()>>*>(st)) queue_of(s).push(job);
      return nullptr;
    };
    w->release = [](LOOM_CapturedWork* self) noexcept {
      delete static_cast<std::vector<std::function<void()>>*>(self->state);
      delete self;
    };
    ++g_recordings;
    return w;
  }

 private:
  bool device_memory_;
  std::chrono::microseconds latency_;
  std::string ops_;
  bool fuse_;
  std::string capture_;  // option "capture": "1" records runs, "fail" refuses each recording
  KernelRegistry kernels_;
  LOOM_MemoryInfo memory_{LOOM_MemoryInfo_STRUCT_SIZE, nullptr, {kDeviceMemory, sizeof(kDeviceMemory) - 1}, 0, 0};
  LOOM_Allocator allocator_{};
  LOOM_DataTransfer transfer_{};
};

class AsyncFactory : public EpFactory {
 public:
  AsyncFactory(const char* name, bool device_memory) : EpFactory(name), device_memory_(device_memory) {}
  std::vector<DeviceSpec> devices() override {
    if (device_memory_) return {DeviceSpec{"test async device", kDeviceMemory, 0, false}};
    return {DeviceSpec{"test async host worker"}};
  }
  std::unique_ptr<Ep> create_ep(size_t, const Options& options) override {
    return std::make_unique<AsyncEp>(device_memory_, options);
  }

 private:
  bool device_memory_;
};

std::unique_ptr<Plugin> create_plugin() {
  auto p = std::make_unique<Plugin>();
  p->add_factory(std::make_unique<AsyncFactory>("test_async", true));
  p->add_factory(std::make_unique<AsyncFactory>("test_async_host", false));
  p->add_factory(std::make_unique<AsyncFactory>("test_async_host_b", false));
  return p;
}

}  // namespace

LOOM_SDK_DEFINE_PLUGIN("test_async_ep", "0.1.0", create_plugin)

LOOM_EXPORT uint64_t loom_test_async_launched_early() { return g_launched_early.load(); }
LOOM_EXPORT uint64_t loom_test_async_stream_host_syncs() { return g_stream_host_syncs.load(); }
LOOM_EXPORT uint64_t loom_test_async_event_host_syncs() { return g_event_host_syncs.load(); }
LOOM_EXPORT uint64_t loom_test_async_event_stream_waits() { return g_event_stream_waits.load(); }
LOOM_EXPORT uint64_t loom_test_async_copies() { return g_copies.load(); }
LOOM_EXPORT uint64_t loom_test_async_recordings() { return g_recordings.load(); }
LOOM_EXPORT uint64_t loom_test_async_replays() { return g_replays.load(); }
LOOM_EXPORT uint64_t loom_test_async_live_allocations() { return g_live_allocations.load(); }
LOOM_EXPORT int loom_test_async_live_streams() { return g_live_streams.load(); }
LOOM_EXPORT int loom_test_async_live_events() { return g_live_events.load(); }
LOOM_EXPORT int loom_test_async_live_partitions() { return g_live_partitions.load(); }
LOOM_EXPORT int loom_test_async_live_states() { return g_live_states.load(); }
LOOM_EXPORT int loom_test_async_live_kernels() { return g_live_kernels.load(); }
// Calls made so far at the fault point named `point` (fault_injection.h).
LOOM_EXPORT uint64_t loom_test_async_fault_point_calls(const char* point) {
  FaultPoint p;
  return loom::test_plugins::fault_point_from_name(point, &p) ? g_faults.calls(p) : 0;
}
LOOM_EXPORT void loom_test_async_disarm_faults() { g_faults.disarm(); }
