// Definitions of the ABI's opaque host objects (LOOM_Status, LOOM_Tensor,
// LOOM_NodeView, LOOM_GraphView, LOOM_ClaimSink). Plugins only ever see
// pointers to these; the host functions in host_api.cpp read them.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "loom/plugin_api.h"
#include "loom/status.h"
#include "loom/value.h"

struct LOOM_Status {
  int32_t code = LOOM_STATUS_FAIL;
  std::string message;
};

// A tensor handed to a plugin. Does not own its storage.
struct LOOM_Tensor {
  int32_t dtype = LOOM_DTYPE_UNDEFINED;
  std::vector<int64_t> dims;
  uint64_t count = 0;
  void* data = nullptr;  // NULL for strings and empty tensors
  const LOOM_MemoryInfo* memory = nullptr;
  std::vector<std::string>* strings = nullptr;  // STRING tensors only
};

// A value of any kind. Tensor data may live in the run's arena, device
// memory or `owned`; sequence elements are host tensors owned here.
struct LOOM_Value {
  int32_t kind = LOOM_VALUE_NONE;
  LOOM_Tensor tensor;    // kind TENSOR: the view
  loom::Tensor owned;    // host storage the view points into, when owned or shared
  int32_t elem_dtype = LOOM_DTYPE_UNDEFINED;  // kind SEQUENCE
  // kind SEQUENCE: the elements; kind MAP: {keys, values}, two 1-D tensors.
  std::vector<std::unique_ptr<LOOM_Value>> elements;
};

struct LOOM_GraphView;

struct LOOM_NodeView {
  const loom::ir::Node* node = nullptr;
  const loom::ir::Graph* graph = nullptr;  // graph the node belongs to (types, initializers)
  std::vector<std::vector<int64_t>> input_dims;  // -1 for unknown dims
  std::vector<int64_t> input_ranks;              // -1 when unknown
  std::vector<std::unique_ptr<LOOM_Tensor>> input_constants;  // NULL entries when not initializers
  std::map<std::string, std::unique_ptr<LOOM_Tensor>> attr_tensors;
  std::map<std::string, std::unique_ptr<LOOM_GraphView>> attr_graphs;
};

struct LOOM_GraphView {
  const loom::ir::Graph* graph = nullptr;
  std::vector<std::unique_ptr<LOOM_NodeView>> nodes;
  std::vector<std::string> inputs;
  std::vector<std::string> outputs;
  // Set on the view a compile call gets: LOOM_HostApi::
  // graph_release_constant_input(view, index) lands here. Empty elsewhere.
  std::function<void(uint64_t index)> release_input;
};

namespace loom::plugin_host {

struct Claim {
  int32_t kind = LOOM_CLAIM_KERNEL;
  std::vector<uint64_t> node_ids;
  std::string reason;
};

}  // namespace loom::plugin_host

// One compute call's context. The executor implements it; host functions
// forward to these methods. Used by one thread at a time.
struct LOOM_KernelContext {
  virtual ~LOOM_KernelContext() = default;
  virtual uint64_t input_count() const = 0;
  virtual const LOOM_Tensor* input(uint64_t index) const = 0;
  virtual uint64_t output_count() const = 0;
  virtual LOOM_Tensor* output(uint64_t index, int32_t dtype, const int64_t* dims, uint64_t rank) = 0;
  virtual const LOOM_NodeView* node() const = 0;
  virtual const LOOM_Value* input_value(uint64_t index) const = 0;
  // Takes ownership of `value`.
  virtual loom::Status set_output(uint64_t index, std::unique_ptr<LOOM_Value> value) = 0;
  virtual loom::Status run_subgraph(const std::string& attr, const LOOM_Value* const* inputs, uint64_t input_count,
                                    LOOM_Value** outputs, uint64_t output_count) = 0;
  // See LOOM_HostApi::kernel_release_constant_input; contexts that keep
  // every input ignore it.
  virtual void release_constant_input(uint64_t) {}
  // See LOOM_HostApi::kernel_stream; NULL for synchronous steps.
  virtual LOOM_Stream* stream() const { return nullptr; }
  // See LOOM_HostApi::kernel_scratch; NULL (with the reason kept for the
  // step's error) on failure.
  virtual void* scratch(uint64_t bytes) = 0;
  // See LOOM_HostApi::kernel_should_stop.
  virtual bool should_stop() const { return false; }
  // See LOOM_HostApi::kernel_profiling / kernel_profile_part: contexts of
  // runs that are not profiled keep nothing.
  virtual bool profiling() const { return false; }
  virtual void profile_part(std::string name, uint64_t start_ns, uint64_t end_ns) {
    (void)name, (void)start_ns, (void)end_ns;
  }
};

struct LOOM_ClaimSink {
  const LOOM_GraphView* graph = nullptr;
  std::vector<loom::plugin_host::Claim> claims;
  std::map<uint64_t, std::string> declined;  // node id -> the EP's reason
};

namespace loom::plugin_host {

// The host's pageable memory ("cpu").
const LOOM_MemoryInfo& host_memory();
bool same_memory(const LOOM_MemoryInfo& a, const LOOM_MemoryInfo& b);
std::string memory_name(const LOOM_MemoryInfo& m);
// Where a tensor lives; a tensor that names no memory is in host memory.
inline const LOOM_MemoryInfo& memory_of(const LOOM_Tensor& t) { return t.memory != nullptr ? *t.memory : host_memory(); }

// Wraps a host tensor's storage (no copy; `t` must outlive the view).
std::unique_ptr<LOOM_Tensor> view_of(const Tensor& t);

// A read-only view of `nodes` of `graph`, with the given graph-level inputs
// and outputs (for a whole graph: graph.inputs / graph.outputs).
std::unique_ptr<LOOM_GraphView> make_graph_view(const ir::Graph& graph, const std::vector<const ir::Node*>& nodes,
                                                std::vector<std::string> inputs, std::vector<std::string> outputs);
std::unique_ptr<LOOM_GraphView> make_full_view(const ir::Graph& graph);
// The views of initializer `name` in `view`'s nodes point to no data from
// now on (its bytes are about to be freed).
void forget_constant_bytes(LOOM_GraphView& view, const std::string& name);

// Status conversion. from_abi takes ownership of (and releases) `s`.
Status from_abi(LOOM_Status* s);
LOOM_Status* to_abi(const Status& s);

// --- values ---
// A tensor value viewing `t`'s storage (shared, not copied).
std::unique_ptr<LOOM_Value> tensor_value(const Tensor& t);
// A tensor value viewing `data` (not owned; NULL for dtype and dims only) in
// `memory`, which must outlive the value.
std::unique_ptr<LOOM_Value> tensor_view_value(DType dtype, const Dims& dims, void* data, const LOOM_MemoryInfo* memory);
// A zero-filled host tensor value.
Expected<std::unique_ptr<LOOM_Value>> new_tensor_value(DType dtype, const Dims& dims);
// Deep copy into host memory (fails for data the host cannot read).
Expected<std::unique_ptr<LOOM_Value>> clone_value(const LOOM_Value& v);
// Whether keys of `key_dtype` and `key_dims` and values of `value_dims` make
// a map: keys int64 or string, both 1-D of one length; else why not.
Status check_map_parts(DType key_dtype, const Dims& key_dims, const Dims& value_dims);
// A MAP value of two TENSOR values (check_map_parts), both host-readable;
// else an error saying which.
Expected<std::unique_ptr<LOOM_Value>> make_map_value(std::unique_ptr<LOOM_Value> keys,
                                                     std::unique_ptr<LOOM_Value> values);
// Conversions with the public Value; from_public shares tensor storage.
std::unique_ptr<LOOM_Value> from_public(const Value& v);
Expected<Value> to_public(const LOOM_Value& v);

// The host function table handed to every plugin.
const LOOM_HostApi* host_api();

}  // namespace loom::plugin_host
