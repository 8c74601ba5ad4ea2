// Loom plugin SDK: kernel contexts and kernel tables.
//
// A kernel is either a plain function `void(KernelContext&)` that reads its
// attributes through ctx.node() on every call, or a class K with a
// constructor K(const Node&) (parse attributes once) and a
// `void compute(KernelContext&) const` method. Both report errors by throwing;
// the thunks here turn exceptions into statuses.
#pragma once

#include <chrono>
#include <deque>
#include <memory>
#include <new>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "loom/sdk/checked.h"
#include "loom/sdk/node.h"
#include "loom/sdk/tensor.h"
#include "loom/sdk/value.h"

namespace loom::sdk {

class KernelContext {
 public:
  explicit KernelContext(LOOM_KernelContext* ctx) : ctx_(ctx) {}
  LOOM_KernelContext* raw() const { return ctx_; }

  size_t input_count() const { return static_cast<size_t>(host().kernel_input_count(ctx_)); }
  bool has_input(size_t i) const { return i < input_count() && host().kernel_input(ctx_, i) != nullptr; }
  // Empty view for an omitted optional input or an index past the end.
  ConstTensor input(size_t i) const {
    return i < input_count() ? ConstTensor(host().kernel_input(ctx_, i)) : ConstTensor();
  }
  // Throws INVALID_ARGUMENT when the input is absent.
  ConstTensor required_input(size_t i) const {
    ConstTensor t = input(i);
    if (!t.exists())
      throw Error("required input " + std::to_string(i) + " is missing", LOOM_STATUS_INVALID_ARGUMENT);
    return t;
  }
  size_t output_count() const { return static_cast<size_t>(host().kernel_output_count(ctx_)); }
  // Allocates output i with element type `dtype` (LOOM_DTYPE_*; by default
  // the output's statically inferred type — pass it explicitly whenever the
  // kernel knows it). Throws on failure.
  Tensor output(size_t i, const std::vector<int64_t>& dims, int32_t dtype = LOOM_DTYPE_UNDEFINED) const {
    for (int64_t d : dims)
      if (d < 0) throw Error("negative output dimension " + std::to_string(d), LOOM_STATUS_INVALID_ARGUMENT);
    LOOM_Tensor* t = host().kernel_output(ctx_, i, dtype, dims.data(), dims.size());
    if (t == nullptr)
      throw Error("cannot allocate output " + std::to_string(i) + " (" + dtype_name(dtype) + ")",
                  LOOM_STATUS_OUT_OF_MEMORY);  // the host adds its reason and code
    return Tensor(t);
  }
  Node node() const { return Node(host().kernel_node(ctx_)); }

  // Input i as a value of any kind (exists() false when omitted).
  ConstValue input_value(size_t i) const {
    return i < input_count() ? ConstValue(host().kernel_input_value(ctx_, i)) : ConstValue();
  }
  // Tells the host the kernel keeps its own copy of constant input i (see
  // LOOM_HostApi::kernel_release_constant_input); false when the host is
  // older than the call (the input is then kept).
  bool release_constant_input(size_t i) const {
    if (!LOOM_HAS_FIELD(&host(), LOOM_HostApi, kernel_release_constant_input)) return false;
    host().kernel_release_constant_input(ctx_, i);
    return true;
  }
  // The stream this step is launched on (LOOM_HostApi::kernel_stream): an
  // asynchronous EP queues its work there. NULL for synchronous steps and
  // on hosts older than the call.
  LOOM_Stream* stream() const {
    if (!LOOM_HAS_FIELD(&host(), LOOM_HostApi, kernel_stream)) return nullptr;
    return host().kernel_stream(ctx_);
  }
  // Working memory for `count` elements of T, valid until compute returns
  // (LOOM_HostApi::kernel_scratch: in the memory of the EP's values, counted
  // against the run's limits before it is allocated). Uninitialised. Throws
  // OUT_OF_MEMORY when refused (the host's reason joins the step's error) and
  // INVALID_ARGUMENT when count x sizeof(T) overflows. On hosts older than
  // the call: host memory the SDK allocates, without the host's limits.
  template <class T>
  T* scratch(int64_t count, const std::string& what = "scratch") const {
    const int64_t bytes = checked_mul(count, static_cast<int64_t>(sizeof(T)), what);
    void* p = nullptr;
    if (LOOM_HAS_FIELD(&host(), LOOM_HostApi, kernel_scratch)) {
      p = host().kernel_scratch(ctx_, static_cast<uint64_t>(bytes));
    } else {
      own_scratch_.emplace_back(new (std::nothrow) unsigned char[bytes > 0 ? bytes : 1]);
      p = own_scratch_.back().get();
    }
    if (p == nullptr)
      throw Error("cannot get " + what + " of " + std::to_string(bytes) + " bytes", LOOM_STATUS_OUT_OF_MEMORY);
    return static_cast<T*>(p);
  }
  // Throws once the run is cancelled or past its deadline
  // (LOOM_HostApi::kernel_should_stop); the host then reports the run as
  // such. Kernels whose one call can run long call it between chunks of
  // work, about every millisecond. Never throws on hosts older than the call.
  void stop_if_asked() const {
    if (LOOM_HAS_FIELD(&host(), LOOM_HostApi, kernel_should_stop) && host().kernel_should_stop(ctx_) != 0)
      throw Error("stopped: the run was cancelled or reached its deadline", LOOM_STATUS_FAIL);
  }
  // True when this run is profiled (LOOM_HostApi::kernel_profiling): name
  // the pieces of the work with profile_part (or ProfilePart below). False
  // on hosts older than the call.
  bool profiling() const {
    return LOOM_HAS_FIELD(&host(), LOOM_HostApi, kernel_profiling) && host().kernel_profiling(ctx_) != 0;
  }
  // One named piece of this step's work, [start, end) on steady_clock
  // (LOOM_HostApi::kernel_profile_part): say what ran and for which node,
  // "gemv MatMul_3". Ignored when the run is not profiled or the host is
  // older than the call.
  void profile_part(std::string_view name, std::chrono::steady_clock::time_point start,
                    std::chrono::steady_clock::time_point end) const {
    if (!LOOM_HAS_FIELD(&host(), LOOM_HostApi, kernel_profile_part)) return;
    auto ns = [](std::chrono::steady_clock::time_point t) {
      return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count());
    };
    host().kernel_profile_part(ctx_, to_view(name), ns(start), ns(end));
  }
  // Sets output i to a value (sequences and empty optionals go this way).
  void set_output(size_t i, OwnedValue value) const {
    throw_if_error(host().kernel_set_output(ctx_, i, value.release()));
  }
  // Runs the subgraph in graph attribute `attr` on its formal inputs.
  std::vector<OwnedValue> run_subgraph(std::string_view attr, const std::vector<ConstValue>& inputs,
                                       size_t output_count) const {
    std::vector<const LOOM_Value*> in;
    for (const ConstValue& v : inputs) in.push_back(v.raw());
    std::vector<LOOM_Value*> out(output_count, nullptr);
    LOOM_Status* st = host().kernel_run_subgraph(ctx_, to_view(attr), in.data(), in.size(), out.data(), out.size());
    std::vector<OwnedValue> result;
    for (LOOM_Value* v : out) result.emplace_back(v);  // owned even on error, so nothing leaks
    throw_if_error(st);
    return result;
  }

 private:
  LOOM_KernelContext* ctx_;
  // scratch() on hosts without kernel_scratch (shared, so contexts copy).
  mutable std::vector<std::shared_ptr<unsigned char[]>> own_scratch_;
};

// Times one piece of a compute call when the run is profiled and reports it
// when it goes out of scope (also when the work throws):
//   { ProfilePart part(ctx, "gemv " + label); run_gemv(...); }
// Costs one flag test when the run is not profiled (build the name only then
// with the lazy constructor: ProfilePart(ctx, [&] { return name; })).
class ProfilePart {
 public:
  ProfilePart(const KernelContext& ctx, std::string name) : ctx_(ctx), on_(ctx.profiling()) {
    if (on_) start(std::move(name));
  }
  template <class NameFn, class = decltype(std::string(std::declval<NameFn>()()))>
  ProfilePart(const KernelContext& ctx, NameFn&& name) : ctx_(ctx), on_(ctx.profiling()) {
    if (on_) start(std::string(name()));
  }
  ~ProfilePart() {
    if (on_) ctx_.profile_part(name_, start_, std::chrono::steady_clock::now());
  }
  ProfilePart(const ProfilePart&) = delete;
  ProfilePart& operator=(const ProfilePart&) = delete;

 private:
  void start(std::string name) {
    name_ = std::move(name);
    start_ = std::chrono::steady_clock::now();
  }
  const KernelContext& ctx_;
  const bool on_;
  std::string name_;
  std::chrono::steady_clock::time_point start_;
};

using KernelFn = void (*)(KernelContext&);

// Type parameter constraint, e.g. {"T", {LOOM_DTYPE_FLOAT, LOOM_DTYPE_DOUBLE}}.
struct TypeConstraintSpec {
  std::string param;
  std::vector<int32_t> dtypes;
};

// Owns a set of LOOM_KernelDef entries with stable addresses.
class KernelRegistry {
 public:
  // Function kernel serving `op_type` in `domain` for opsets [since, end].
  KernelRegistry& add(std::string domain, std::string op_type, int since, int end, KernelFn fn,
                      std::vector<TypeConstraintSpec> constraints = {}) {
    Entry& e = emplace(std::move(domain), std::move(op_type), since, end, std::move(constraints));
    e.fn = fn;
    e.def.create = &create_fn;
    e.def.compute = &compute_fn;
    e.def.release = &release_nothing;
    return *this;
  }
  // Class kernel: K(const Node&) parses attributes once per node.
  template <class K>
  KernelRegistry& add_class(std::string domain, std::string op_type, int since, int end,
                            std::vector<TypeConstraintSpec> constraints = {}) {
    Entry& e = emplace(std::move(domain), std::move(op_type), since, end, std::move(constraints));
    e.def.create = &create_class<K>;
    e.def.compute = &compute_class<K>;
    e.def.release = &release_class<K>;
    return *this;
  }

  // The kernel added last may write output `output` into input `input`'s
  // buffer (LOOM_KernelDef.inplace_pairs): only for kernels correct with the
  // two aliased.
  KernelRegistry& output_may_reuse_input(int output, int input) {
    Entry& e = entries_.back();
    e.inplace.push_back(input);
    e.inplace.push_back(output);
    e.def.inplace_pairs = e.inplace.data();
    e.def.inplace_pair_count = e.inplace.size() / 2;
    return *this;
  }

  // The kernel added last reads input `input` on the host during compute
  // (LOOM_KernelDef.host_inputs): a device kernel's shape-like operand.
  KernelRegistry& input_on_host(int input) {
    Entry& e = entries_.back();
    e.host_inputs.push_back(input);
    e.def.host_inputs = e.host_inputs.data();
    e.def.host_input_count = e.host_inputs.size();
    return *this;
  }
  // The kernel added last writes output `output` on the host during compute
  // (LOOM_KernelDef.host_outputs), e.g. a device EP's Shape.
  KernelRegistry& output_on_host(int output) {
    Entry& e = entries_.back();
    e.host_outputs.push_back(output);
    e.def.host_outputs = e.host_outputs.data();
    e.def.host_output_count = e.host_outputs.size();
    return *this;
  }

  // Class kernel built with an EP-wide context: K(const Node&, const C&).
  // `context` must outlive the registry's kernels (the EP owns both).
  template <class K, class C>
  KernelRegistry& add_class_with(std::string domain, std::string op_type, int since, int end, const C* context,
                                 std::vector<TypeConstraintSpec> constraints = {}) {
    Entry& e = emplace(std::move(domain), std::move(op_type), since, end, std::move(constraints));
    e.context = context;
    e.def.create = &create_class_with<K, C>;
    e.def.compute = &compute_class<K>;
    e.def.release = &release_class<K>;
    return *this;
  }

  const LOOM_KernelDef* const* defs() const { return pointers_.data(); }
  size_t size() const { return pointers_.size(); }

 private:
  struct Entry {
    std::string domain, op_type;
    std::vector<TypeConstraintSpec> specs;
    std::vector<LOOM_TypeConstraint> constraints;
    std::vector<const LOOM_TypeConstraint*> constraint_ptrs;
    KernelFn fn = nullptr;
    std::vector<int32_t> inplace;  // flattened (input, output) pairs
    std::vector<int32_t> host_inputs, host_outputs;
    const void* context = nullptr;  // add_class_with's context
    LOOM_KernelDef def{};
  };

  Entry& emplace(std::string domain, std::string op_type, int since, int end,
                 std::vector<TypeConstraintSpec> specs) {
    Entry& e = entries_.emplace_back();
    e.domain = std::move(domain);
    e.op_type = std::move(op_type);
    e.specs = std::move(specs);
    for (const auto& s : e.specs) {
      LOOM_TypeConstraint c{};
      c.struct_size = LOOM_TypeConstraint_STRUCT_SIZE;
      c.param = to_view(s.param);
      c.dtypes = s.dtypes.data();
      c.dtype_count = s.dtypes.size();
      e.constraints.push_back(c);
    }
    for (const LOOM_TypeConstraint& c : e.constraints) e.constraint_ptrs.push_back(&c);
    e.def.struct_size = LOOM_KernelDef_STRUCT_SIZE;
    e.def.domain = to_view(e.domain);
    e.def.op_type = to_view(e.op_type);
    e.def.since_version = since;
    e.def.end_version = end;
    e.def.constraints = e.constraint_ptrs.empty() ? nullptr : e.constraint_ptrs.data();
    e.def.constraint_count = e.constraints.size();
    e.def.state = &e;
    pointers_.push_back(&e.def);
    return e;
  }

  static LOOM_Status* create_fn(LOOM_Kernel_Create_Args* args) noexcept {
    args->kernel = const_cast<void*>(args->kernel_def_state);  // the Entry itself
    return nullptr;
  }
  static LOOM_Status* compute_fn(const void* kernel, LOOM_KernelContext* ctx) noexcept {
    const Entry* e = static_cast<const Entry*>(kernel);
    return guarded([&] {
      KernelContext c(ctx);
      e->fn(c);
    });
  }
  static void release_nothing(void*) noexcept {}

  template <class K>
  static LOOM_Status* create_class(LOOM_Kernel_Create_Args* args) noexcept {
    return guarded([&] { args->kernel = new K(Node(args->node)); });
  }
  template <class K, class C>
  static LOOM_Status* create_class_with(LOOM_Kernel_Create_Args* args) noexcept {
    const Entry* e = static_cast<const Entry*>(args->kernel_def_state);
    return guarded([&] { args->kernel = new K(Node(args->node), *static_cast<const C*>(e->context)); });
  }
  template <class K>
  static LOOM_Status* compute_class(const void* kernel, LOOM_KernelContext* ctx) noexcept {
    return guarded([&] {
      KernelContext c(ctx);
      static_cast<const K*>(kernel)->compute(c);
    });
  }
  template <class K>
  static void release_class(void* kernel) noexcept {
    delete static_cast<K*>(kernel);
  }

  std::deque<Entry> entries_;
  std::vector<const LOOM_KernelDef*> pointers_;
};

}  // namespace loom::sdk
