// A third-party EP that breaks the kernel contract on demand, built on the
// SDK: provider "test_contract" serves float Relu on host memory, and its
// option "break" makes that Relu hand back
//   "shape": the right element count with the dims reversed,
//   "rank":  the right element count as one flat dim,
//   "dtype": int32 values instead of float,
//   "values": the right shape and type, but x itself (wrong below zero),
// (absent or "none": a correct Relu). The host must fail the run naming the
// provider, the node and both shapes or types, not pass wrong results on.
//
// Provider "test_peer" runs float Neg, and ReduceSum over every element
// (no axes, keepdims 1), in memory "test_peer" (not host
// accessible) and copies between it and host memory, and also straight
// between it and test_device_ep's "test_device" memory, as GPUs with a peer
// link do. Options: "peer" = "0" drops the direct link, "upload" = "0"
// refuses copies from host memory, "pack" = "1" makes ReduceSum keep its own
// copy of a constant input on the first run and release the input
// (kernel_release_constant_input), as EPs that pack weights do. The host must plan every copy through a
// data transfer whose can_copy says yes.
#include <algorithm>
#include <atomic>
#include <cstring>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "checked_memory.h"
#include "loom/sdk.h"

namespace {

using namespace loom::sdk;

enum class Break { kNone, kShape, kRank, kDtype, kValues };

template <Break kBreak>
void relu(KernelContext& ctx) {
  ConstTensor x = ctx.required_input(0);
  std::vector<int64_t> dims = x.shape();
  if (kBreak == Break::kShape) std::reverse(dims.begin(), dims.end());
  if (kBreak == Break::kRank) dims = {x.size()};
  if (kBreak == Break::kDtype) {
    Tensor y = ctx.output(0, dims, LOOM_DTYPE_INT32);
    for (int64_t i = 0; i < x.size(); ++i) y.mutable_data<int32_t>()[i] = x.data<float>()[i] > 0 ? 1 : 0;
    return;
  }
  Tensor y = ctx.output(0, dims, LOOM_DTYPE_FLOAT);
  for (int64_t i = 0; i < x.size(); ++i)
    y.mutable_data<float>()[i] = kBreak == Break::kValues ? x.data<float>()[i] : std::max(x.data<float>()[i], 0.0f);
}

template <Break kBreak>
const KernelRegistry* registry() {
  static const KernelRegistry r = [] {
    KernelRegistry k;
    k.add("", "Relu", 6, LOOM_OPSET_OPEN_END, relu<kBreak>, {{"T", {LOOM_DTYPE_FLOAT}}});
    return k;
  }();
  return &r;
}

class ContractEp : public Ep {
 public:
  explicit ContractEp(const KernelRegistry* kernels) : kernels_(kernels) {}
  const KernelRegistry* kernels() const override { return kernels_; }

 private:
  const KernelRegistry* kernels_;
};

class ContractFactory : public EpFactory {
 public:
  ContractFactory() : EpFactory("test_contract") {}
  std::unique_ptr<Ep> create_ep(size_t, const Options& options) override {
    std::string mode = "none";
    for (const auto& [key, value] : options)
      if (key == "break") mode = value;
    if (mode == "none") return std::make_unique<ContractEp>(registry<Break::kNone>());
    if (mode == "shape") return std::make_unique<ContractEp>(registry<Break::kShape>());
    if (mode == "rank") return std::make_unique<ContractEp>(registry<Break::kRank>());
    if (mode == "dtype") return std::make_unique<ContractEp>(registry<Break::kDtype>());
    if (mode == "values") return std::make_unique<ContractEp>(registry<Break::kValues>());
    throw Error("test_contract: unknown break mode '" + mode + "'", LOOM_STATUS_INVALID_ARGUMENT);
  }
};

constexpr char kPeerMemory[] = "test_peer";
std::atomic<uint64_t> g_peer_live{0};
std::atomic<uint64_t> g_peer_link_copies{0};  // straight between test_device and test_peer

struct PeerLinks {
  bool peer = true;    // copies between test_device and test_peer memory
  bool upload = true;  // copies from host memory into test_peer
  bool pack = false;   // ReduceSum packs its constant input
};

int32_t peer_can_copy(void* state, const LOOM_MemoryInfo* src, const LOOM_MemoryInfo* dst) {
  const PeerLinks& links = *static_cast<const PeerLinks*>(state);
  const std::string s(from_view(src->name)), d(from_view(dst->name));
  const bool ours = s == kPeerMemory || d == kPeerMemory;
  const std::string other = s == kPeerMemory ? d : s;
  if (!ours) return 0;
  if (other == kPeerMemory) return 1;
  if (other == "cpu") return d == "cpu" || links.upload;
  return other == "test_device" && links.peer;
}

LOOM_Status* peer_copy(void* state, const LOOM_DataTransfer_Copy_Args* a) {
  if (!peer_can_copy(state, a->src_memory, a->dst_memory))
    return make_status(LOOM_STATUS_INVALID_ARGUMENT, "test_peer: asked for a copy its can_copy refuses");
  std::memcpy(a->dst, a->src, a->bytes);
  if (from_view(a->src_memory->name) == "test_device" || from_view(a->dst_memory->name) == "test_device")
    ++g_peer_link_copies;
  return nullptr;
}

void peer_neg(KernelContext& ctx) {
  ConstTensor x = ctx.required_input(0);
  const LOOM_MemoryInfo* m = host().tensor_memory(x.raw());
  LOOM_SDK_ENFORCE(m != nullptr && from_view(m->name) == kPeerMemory, "test_peer Neg: input is not in its memory");
  Tensor y = ctx.output(0, x.shape(), LOOM_DTYPE_FLOAT);
  for (int64_t i = 0; i < x.size(); ++i) y.mutable_data<float>()[i] = -x.data<float>()[i];
}

void peer_reduce_sum(KernelContext& ctx) {
  ConstTensor x = ctx.required_input(0);
  const LOOM_MemoryInfo* m = host().tensor_memory(x.raw());
  LOOM_SDK_ENFORCE(m != nullptr && from_view(m->name) == kPeerMemory, "test_peer ReduceSum: input is not in its memory");
  LOOM_SDK_ENFORCE(ctx.input_count() == 1, "test_peer ReduceSum: reduces every axis only");
  double sum = 0;
  for (int64_t i = 0; i < x.size(); ++i) sum += x.data<float>()[i];
  Tensor y = ctx.output(0, std::vector<int64_t>(x.shape().size(), 1), LOOM_DTYPE_FLOAT);
  y.mutable_data<float>()[0] = static_cast<float>(sum);
}

// ReduceSum that packs a constant input: its own copy from the first run
// on, the host's released (later runs bind the input without data).
class PackingReduceSum {
 public:
  explicit PackingReduceSum(const Node&) {}
  void compute(KernelContext& ctx) const {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!packed_) {
      ConstTensor x = ctx.required_input(0);
      packed_.emplace(x.data<float>(), x.data<float>() + x.size());
      rank_ = x.shape().size();
      LOOM_SDK_ENFORCE(ctx.release_constant_input(0), "test_peer ReduceSum: the host cannot release constants");
    }
    double sum = 0;
    for (float v : *packed_) sum += v;
    Tensor y = ctx.output(0, std::vector<int64_t>(rank_, 1), LOOM_DTYPE_FLOAT);
    y.mutable_data<float>()[0] = static_cast<float>(sum);
  }

 private:
  mutable std::mutex mutex_;
  mutable std::optional<std::vector<float>> packed_;
  mutable size_t rank_ = 0;
};

class PeerEp : public Ep {
 public:
  explicit PeerEp(PeerLinks links) : links_(links) {
    allocator_.struct_size = LOOM_Allocator_STRUCT_SIZE;
    allocator_.memory = &memory_;
    allocator_.alloc = [](void*, uint64_t bytes, uint64_t alignment) -> void* {
      return loom::test_plugins::checked_alloc(bytes, alignment, g_peer_live);
    };
    allocator_.free = [](void*, void* p) { loom::test_plugins::checked_free(p, g_peer_live); };
    transfer_.struct_size = LOOM_DataTransfer_STRUCT_SIZE;
    transfer_.state = &links_;
    transfer_.can_copy = peer_can_copy;
    transfer_.copy = peer_copy;
  }
  const KernelRegistry* kernels() const override {
    static const KernelRegistry plain = [] {
      KernelRegistry k;
      k.add("", "Neg", 6, LOOM_OPSET_OPEN_END, peer_neg, {{"T", {LOOM_DTYPE_FLOAT}}});
      k.add("", "ReduceSum", 13, LOOM_OPSET_OPEN_END, peer_reduce_sum, {{"T", {LOOM_DTYPE_FLOAT}}});
      return k;
    }();
    static const KernelRegistry packing = [] {
      KernelRegistry k;
      k.add("", "Neg", 6, LOOM_OPSET_OPEN_END, peer_neg, {{"T", {LOOM_DTYPE_FLOAT}}});
      k.add_class<PackingReduceSum>("", "ReduceSum", 13, LOOM_OPSET_OPEN_END, {{"T", {LOOM_DTYPE_FLOAT}}});
      return k;
    }();
    return links_.pack ? &packing : &plain;
  }
  const LOOM_Allocator* allocator() const override { return &allocator_; }
  const LOOM_DataTransfer* data_transfer() const override { return &transfer_; }

 private:
  PeerLinks links_;
  LOOM_MemoryInfo memory_{LOOM_MemoryInfo_STRUCT_SIZE, nullptr, {kPeerMemory, sizeof(kPeerMemory) - 1}, 0, 0};
  LOOM_Allocator allocator_{};
  LOOM_DataTransfer transfer_{};
};

class PeerFactory : public EpFactory {
 public:
  PeerFactory() : EpFactory("test_peer") {}
  std::vector<DeviceSpec> devices() override { return {DeviceSpec{"test peer device", kPeerMemory, 0, false}}; }
  std::unique_ptr<Ep> create_ep(size_t, const Options& options) override {
    PeerLinks links;
    for (const auto& [key, value] : options) {
      if (key == "peer") links.peer = value != "0";
      if (key == "upload") links.upload = value != "0";
      if (key == "pack") links.pack = value == "1";
    }
    return std::make_unique<PeerEp>(links);
  }
};

std::unique_ptr<Plugin> create_plugin() {
  auto p = std::make_unique<Plugin>();
  p->add_factory(std::make_unique<ContractFactory>());
  p->add_factory(std::make_unique<PeerFactory>());
  return p;
}

}  // namespace

LOOM_SDK_DEFINE_PLUGIN("test_contract_ep", "0.1.0", create_plugin)

LOOM_EXPORT uint64_t loom_test_peer_link_copies() { return g_peer_link_copies.load(); }
LOOM_EXPORT uint64_t loom_test_peer_live_allocations() { return g_peer_live.load(); }
