// The host function table (LOOM_HostApi). Every slot is noexcept in effect:
// none throws across the boundary; bad indices return empty values.
#include <algorithm>
#include <cstring>

#include "base/logging.h"
#include "ir/graph.h"
#include "plugin_host/abi_objects.h"

namespace loom::plugin_host {
namespace {

std::string str(LOOM_StringView v) { return v.size ? std::string(v.data, v.size) : std::string(); }
LOOM_StringView view(const std::string& s) { return {s.data(), s.size()}; }
const LOOM_StringView kEmpty{nullptr, 0};

// --- status ---
LOOM_Status* status_create(int32_t code, LOOM_StringView message) {
  try {
    return new LOOM_Status{code == LOOM_STATUS_OK ? LOOM_STATUS_FAIL : code, str(message)};
  } catch (...) {
    return nullptr;
  }
}
void status_release(LOOM_Status* s) { delete s; }
int32_t status_code(const LOOM_Status* s) { return s ? s->code : LOOM_STATUS_OK; }
LOOM_StringView status_message(const LOOM_Status* s) { return s ? view(s->message) : kEmpty; }

// --- logging ---
void log_message(int32_t level, LOOM_StringView source, LOOM_StringView message) {
  auto lvl = level <= LOOM_LOG_TRACE  ? spdlog::level::trace
             : level == LOOM_LOG_DEBUG ? spdlog::level::debug
             : level == LOOM_LOG_INFO  ? spdlog::level::info
             : level == LOOM_LOG_WARN  ? spdlog::level::warn
                                       : spdlog::level::err;
  log::write(lvl, "[" + std::string(source.data ? source.data : "", source.size) + "] " +
                     std::string(message.data ? message.data : "", message.size));
}
// spdlog's levels trace..err are LOOM_LOG_TRACE..ERROR; above that, nothing is logged.
int32_t log_level() {
  const int32_t l = static_cast<int32_t>(log::effective_level());
  return l > LOOM_LOG_ERROR ? LOOM_LOG_ERROR + 1 : l;
}

// --- graph view ---
uint64_t graph_node_count(const LOOM_GraphView* g) { return g->nodes.size(); }
const LOOM_NodeView* graph_node(const LOOM_GraphView* g, uint64_t i) {
  return i < g->nodes.size() ? g->nodes[i].get() : nullptr;
}
uint64_t graph_input_count(const LOOM_GraphView* g) { return g->inputs.size(); }
LOOM_StringView graph_input_name(const LOOM_GraphView* g, uint64_t i) {
  return i < g->inputs.size() ? view(g->inputs[i]) : kEmpty;
}
uint64_t graph_output_count(const LOOM_GraphView* g) { return g->outputs.size(); }
LOOM_StringView graph_output_name(const LOOM_GraphView* g, uint64_t i) {
  return i < g->outputs.size() ? view(g->outputs[i]) : kEmpty;
}
int64_t graph_opset(const LOOM_GraphView* g, LOOM_StringView domain) {
  std::string d = str(domain);
  if (d == "ai.onnx") d.clear();
  auto it = g->graph->opsets.find(d);
  return it == g->graph->opsets.end() ? 0 : it->second;
}

// --- node view ---
uint64_t node_id(const LOOM_NodeView* n) { return n->node->id; }
LOOM_StringView node_name(const LOOM_NodeView* n) { return view(n->node->name); }
LOOM_StringView node_op_type(const LOOM_NodeView* n) { return view(n->node->op_type); }
LOOM_StringView node_domain(const LOOM_NodeView* n) { return view(n->node->domain); }
int64_t node_opset(const LOOM_NodeView* n) { return n->node->opset; }
uint64_t node_input_count(const LOOM_NodeView* n) { return n->node->inputs.size(); }
LOOM_StringView node_input_name(const LOOM_NodeView* n, uint64_t i) {
  return i < n->node->inputs.size() ? view(n->node->inputs[i]) : kEmpty;
}
uint64_t node_output_count(const LOOM_NodeView* n) { return n->node->outputs.size(); }
LOOM_StringView node_output_name(const LOOM_NodeView* n, uint64_t i) {
  return i < n->node->outputs.size() ? view(n->node->outputs[i]) : kEmpty;
}
int32_t value_dtype(const LOOM_NodeView* n, const std::string& v) {
  const ir::ValueType* t = v.empty() ? nullptr : n->graph->type_of(v);
  return t ? static_cast<int32_t>(t->dtype) : LOOM_DTYPE_UNDEFINED;
}
int32_t node_input_dtype(const LOOM_NodeView* n, uint64_t i) {
  return i < n->node->inputs.size() ? value_dtype(n, n->node->inputs[i]) : LOOM_DTYPE_UNDEFINED;
}
int32_t node_output_dtype(const LOOM_NodeView* n, uint64_t i) {
  return i < n->node->outputs.size() ? value_dtype(n, n->node->outputs[i]) : LOOM_DTYPE_UNDEFINED;
}
int64_t node_input_shape(const LOOM_NodeView* n, uint64_t i, const int64_t** dims) {
  if (i >= n->input_ranks.size()) {
    if (dims) *dims = nullptr;
    return -1;
  }
  if (dims) *dims = n->input_dims[i].data();
  return n->input_ranks[i];
}
const LOOM_Tensor* node_input_constant(const LOOM_NodeView* n, uint64_t i) {
  return i < n->input_constants.size() ? n->input_constants[i].get() : nullptr;
}

// --- attributes ---
const ir::Attribute* attr(const LOOM_NodeView* n, LOOM_StringView name) {
  return n->node->find_attribute(str(name));
}
uint64_t node_attr_count(const LOOM_NodeView* n) { return n->node->attributes.size(); }
LOOM_StringView node_attr_name(const LOOM_NodeView* n, uint64_t i) {
  return i < n->node->attributes.size() ? view(n->node->attributes[i].name) : kEmpty;
}
int32_t node_attr_type(const LOOM_NodeView* n, LOOM_StringView name) {
  const ir::Attribute* a = attr(n, name);
  return a ? static_cast<int32_t>(a->type) : LOOM_ATTR_UNDEFINED;
}
int32_t node_attr_int(const LOOM_NodeView* n, LOOM_StringView name, int64_t* out) {
  const ir::Attribute* a = attr(n, name);
  if (!a || a->type != ir::AttrType::kInt) return 0;
  *out = a->i;
  return 1;
}
int32_t node_attr_float(const LOOM_NodeView* n, LOOM_StringView name, float* out) {
  const ir::Attribute* a = attr(n, name);
  if (!a || a->type != ir::AttrType::kFloat) return 0;
  *out = a->f;
  return 1;
}
int32_t node_attr_string(const LOOM_NodeView* n, LOOM_StringView name, LOOM_StringView* out) {
  const ir::Attribute* a = attr(n, name);
  if (!a || a->type != ir::AttrType::kString) return 0;
  *out = view(a->s);
  return 1;
}
int32_t node_attr_ints(const LOOM_NodeView* n, LOOM_StringView name, const int64_t** values, uint64_t* count) {
  const ir::Attribute* a = attr(n, name);
  if (!a || a->type != ir::AttrType::kInts) return 0;
  *values = a->ints.data();
  *count = a->ints.size();
  return 1;
}
int32_t node_attr_floats(const LOOM_NodeView* n, LOOM_StringView name, const float** values, uint64_t* count) {
  const ir::Attribute* a = attr(n, name);
  if (!a || a->type != ir::AttrType::kFloats) return 0;
  *values = a->floats.data();
  *count = a->floats.size();
  return 1;
}
int32_t node_attr_strings(const LOOM_NodeView* n, LOOM_StringView name, uint64_t* count) {
  const ir::Attribute* a = attr(n, name);
  if (!a || a->type != ir::AttrType::kStrings) return 0;
  *count = a->strings.size();
  return 1;
}
LOOM_StringView node_attr_string_at(const LOOM_NodeView* n, LOOM_StringView name, uint64_t i) {
  const ir::Attribute* a = attr(n, name);
  if (!a || a->type != ir::AttrType::kStrings || i >= a->strings.size()) return kEmpty;
  return view(a->strings[i]);
}
int32_t node_attr_tensor(const LOOM_NodeView* n, LOOM_StringView name, const LOOM_Tensor** out) {
  auto it = n->attr_tensors.find(str(name));
  if (it == n->attr_tensors.end()) return 0;
  *out = it->second.get();
  return 1;
}
int32_t node_attr_graph(const LOOM_NodeView* n, LOOM_StringView name, const LOOM_GraphView** out) {
  auto it = n->attr_graphs.find(str(name));
  if (it == n->attr_graphs.end()) return 0;
  *out = it->second.get();
  return 1;
}

// --- claims ---
LOOM_Status* claim_nodes(LOOM_ClaimSink* sink, int32_t kind, const uint64_t* ids, uint64_t count,
                         LOOM_StringView reason) {
  if (kind != LOOM_CLAIM_KERNEL && kind != LOOM_CLAIM_FUSED)
    return status_create(LOOM_STATUS_INVALID_ARGUMENT, view("claim_nodes: unknown claim kind " + std::to_string(kind)));
  if (count == 0 || ids == nullptr)
    return status_create(LOOM_STATUS_INVALID_ARGUMENT, view(std::string("claim_nodes: empty claim")));
  if (kind == LOOM_CLAIM_KERNEL && count != 1)
    return status_create(LOOM_STATUS_INVALID_ARGUMENT,
                         view(std::string("claim_nodes: a kernel claim names exactly one node")));
  try {
    sink->claims.push_back(Claim{kind, std::vector<uint64_t>(ids, ids + count), str(reason)});
  } catch (...) {
    return status_create(LOOM_STATUS_OUT_OF_MEMORY, view(std::string("claim_nodes: out of memory")));
  }
  return nullptr;
}

LOOM_Status* decline_nodes(LOOM_ClaimSink* sink, const uint64_t* ids, uint64_t count, LOOM_StringView reason) {
  if (count > 0 && ids == nullptr)
    return status_create(LOOM_STATUS_INVALID_ARGUMENT, view(std::string("decline_nodes: count without ids")));
  try {
    for (uint64_t i = 0; i < count; ++i) sink->declined[ids[i]] = str(reason);
  } catch (...) {
    return status_create(LOOM_STATUS_OUT_OF_MEMORY, view(std::string("decline_nodes: out of memory")));
  }
  return nullptr;
}

// --- tensors ---
int32_t tensor_dtype(const LOOM_Tensor* t) { return t->dtype; }
uint64_t tensor_rank(const LOOM_Tensor* t) { return t->dims.size(); }
const int64_t* tensor_dims(const LOOM_Tensor* t) { return t->dims.data(); }
uint64_t tensor_element_count(const LOOM_Tensor* t) { return t->count; }
void* tensor_data(const LOOM_Tensor* t) { return t->data; }
const LOOM_MemoryInfo* tensor_memory(const LOOM_Tensor* t) { return t->memory; }
LOOM_StringView tensor_string_at(const LOOM_Tensor* t, uint64_t i) {
  if (!t->strings || i >= t->strings->size()) return kEmpty;
  return view((*t->strings)[i]);
}
LOOM_Status* tensor_set_string(LOOM_Tensor* t, uint64_t i, LOOM_StringView value) {
  if (!t->strings || i >= t->strings->size())
    return status_create(LOOM_STATUS_INVALID_ARGUMENT, view("tensor_set_string: index " + std::to_string(i) +
                                                              " out of range or not a string tensor"));
  try {
    (*t->strings)[i] = str(value);
  } catch (...) {
    return status_create(LOOM_STATUS_OUT_OF_MEMORY, view(std::string("tensor_set_string: out of memory")));
  }
  return nullptr;
}

// --- kernel context ---
uint64_t kernel_input_count(const LOOM_KernelContext* c) { return c->input_count(); }
const LOOM_Tensor* kernel_input(const LOOM_KernelContext* c, uint64_t i) { return c->input(i); }
uint64_t kernel_output_count(const LOOM_KernelContext* c) { return c->output_count(); }
LOOM_Tensor* kernel_output(LOOM_KernelContext* c, uint64_t i, int32_t dtype, const int64_t* dims, uint64_t rank) {
  try {
    return c->output(i, dtype, dims, rank);
  } catch (...) {
    return nullptr;
  }
}
const LOOM_NodeView* kernel_node(const LOOM_KernelContext* c) { return c->node(); }

// --- values ---
const LOOM_Value* kernel_input_value(const LOOM_KernelContext* c, uint64_t i) { return c->input_value(i); }
int32_t value_kind(const LOOM_Value* v) { return v ? v->kind : LOOM_VALUE_NONE; }
const LOOM_Tensor* value_tensor(const LOOM_Value* v) {
  return v && v->kind == LOOM_VALUE_TENSOR ? &v->tensor : nullptr;
}
int32_t value_sequence_dtype(const LOOM_Value* v) {
  return v && v->kind == LOOM_VALUE_SEQUENCE ? v->elem_dtype : LOOM_DTYPE_UNDEFINED;
}
uint64_t value_sequence_length(const LOOM_Value* v) {
  return v && v->kind == LOOM_VALUE_SEQUENCE ? v->elements.size() : 0;
}
const LOOM_Value* value_sequence_at(const LOOM_Value* v, uint64_t i) {
  if (!v || v->kind != LOOM_VALUE_SEQUENCE || i >= v->elements.size()) return nullptr;
  return v->elements[i].get();
}
LOOM_Value* value_create_tensor(int32_t dtype, const int64_t* dims, uint64_t rank) {
  try {
    auto v = new_tensor_value(static_cast<DType>(dtype), Dims(dims, dims + rank));
    return v ? v->release() : nullptr;
  } catch (...) {
    return nullptr;
  }
}
LOOM_Value* value_create_sequence(int32_t elem_dtype) {
  try {
    auto* v = new LOOM_Value();
    v->kind = LOOM_VALUE_SEQUENCE;
    v->elem_dtype = elem_dtype;
    return v;
  } catch (...) {
    return nullptr;
  }
}
LOOM_Value* value_create_none() {
  try {
    return new LOOM_Value();
  } catch (...) {
    return nullptr;
  }
}
LOOM_Value* value_clone(const LOOM_Value* v) {
  if (v == nullptr) return nullptr;
  try {
    auto c = clone_value(*v);
    return c ? c->release() : nullptr;
  } catch (...) {
    return nullptr;
  }
}
LOOM_Tensor* value_mutable_tensor(LOOM_Value* v) { return v && v->kind == LOOM_VALUE_TENSOR ? &v->tensor : nullptr; }
LOOM_Status* value_sequence_append(LOOM_Value* seq, LOOM_Value* element) {
  std::unique_ptr<LOOM_Value> e(element);  // owned from here on, also on error
  if (seq == nullptr || seq->kind != LOOM_VALUE_SEQUENCE)
    return status_create(LOOM_STATUS_INVALID_ARGUMENT, view(std::string("value_sequence_append: not a sequence")));
  if (!e || (e->kind != LOOM_VALUE_TENSOR && e->kind != LOOM_VALUE_MAP))
    return status_create(LOOM_STATUS_INVALID_ARGUMENT,
                         view(std::string("value_sequence_append: sequence elements must be tensors or maps")));
  if (!seq->elements.empty() && seq->elements.front()->kind != e->kind)
    return status_create(LOOM_STATUS_INVALID_ARGUMENT,
                         view(std::string("value_sequence_append: a sequence holds tensors or maps, not both")));
  // A map's element type is its values'.
  const int32_t elem = e->kind == LOOM_VALUE_MAP ? e->elements[1]->tensor.dtype : e->tensor.dtype;
  if (seq->elem_dtype != LOOM_DTYPE_UNDEFINED && elem != seq->elem_dtype)
    return status_create(LOOM_STATUS_INVALID_ARGUMENT,
                         view("value_sequence_append: element type " + dtype_name(static_cast<DType>(elem)) +
                              " differs from the sequence's " + dtype_name(static_cast<DType>(seq->elem_dtype))));
  try {
    seq->elements.push_back(std::move(e));
  } catch (...) {
    return status_create(LOOM_STATUS_OUT_OF_MEMORY, view(std::string("value_sequence_append: out of memory")));
  }
  return nullptr;
}
void value_release(LOOM_Value* v) { delete v; }
LOOM_Status* value_create_map(LOOM_Value* keys, LOOM_Value* values, LOOM_Value** out) {
  std::unique_ptr<LOOM_Value> k(keys), v(values);  // owned from here on, also on error
  if (out == nullptr) return status_create(LOOM_STATUS_INVALID_ARGUMENT, view(std::string("value_create_map: NULL out")));
  *out = nullptr;
  auto m = make_map_value(std::move(k), std::move(v));
  if (!m) return to_abi(m.status().with_context("value_create_map"));
  *out = m->release();
  return nullptr;
}
const LOOM_Value* value_map_keys(const LOOM_Value* m) {
  return m && m->kind == LOOM_VALUE_MAP ? m->elements[0].get() : nullptr;
}
const LOOM_Value* value_map_values(const LOOM_Value* m) {
  return m && m->kind == LOOM_VALUE_MAP ? m->elements[1].get() : nullptr;
}
LOOM_Status* kernel_set_output(LOOM_KernelContext* c, uint64_t i, LOOM_Value* value) {
  std::unique_ptr<LOOM_Value> v(value);
  if (!v) return status_create(LOOM_STATUS_INVALID_ARGUMENT, view(std::string("kernel_set_output: NULL value")));
  try {
    return to_abi(c->set_output(i, std::move(v)));
  } catch (...) {
    return status_create(LOOM_STATUS_FAIL, view(std::string("kernel_set_output failed")));
  }
}
LOOM_Status* kernel_run_subgraph(LOOM_KernelContext* c, LOOM_StringView attr, const LOOM_Value* const* inputs,
                                 uint64_t input_count, LOOM_Value** outputs, uint64_t output_count) {
  try {
    return to_abi(c->run_subgraph(str(attr), inputs, input_count, outputs, output_count));
  } catch (const std::exception& e) {
    return status_create(LOOM_STATUS_FAIL, view(std::string("kernel_run_subgraph: ") + e.what()));
  }
}

void kernel_release_constant_input(LOOM_KernelContext* c, uint64_t i) {
  try {
    if (c != nullptr) c->release_constant_input(i);
  } catch (...) {
    // A hint: failing to release only keeps memory.
  }
}

void graph_release_constant_input(const LOOM_GraphView* g, uint64_t i) {
  try {
    if (g != nullptr && g->release_input) g->release_input(i);
  } catch (...) {
    // A hint: failing to release only keeps memory.
  }
}

LOOM_Stream* kernel_stream(const LOOM_KernelContext* c) { return c != nullptr ? c->stream() : nullptr; }
int32_t kernel_should_stop(const LOOM_KernelContext* c) { return c != nullptr && c->should_stop() ? 1 : 0; }
int32_t kernel_profiling(const LOOM_KernelContext* c) { return c != nullptr && c->profiling() ? 1 : 0; }
void kernel_profile_part(LOOM_KernelContext* c, LOOM_StringView name, uint64_t start_ns, uint64_t end_ns) {
  if (c == nullptr || end_ns < start_ns || (name.size != 0 && name.data == nullptr)) return;
  try {
    c->profile_part(str(name), start_ns, end_ns);
  } catch (...) {
    // What the profile shows: a piece it cannot keep is only left out.
  }
}
void* kernel_scratch(LOOM_KernelContext* c, uint64_t bytes) {
  if (c == nullptr) return nullptr;
  try {
    return c->scratch(bytes);
  } catch (...) {
    return nullptr;
  }
}

LOOM_HostApi make_table() {
  LOOM_HostApi t{};
  t.struct_size = LOOM_HostApi_STRUCT_SIZE;
  t.abi_major = LOOM_ABI_VERSION_MAJOR;
  t.abi_minor = LOOM_ABI_VERSION_MINOR;
  t.status_create = status_create;
  t.status_release = status_release;
  t.status_code = status_code;
  t.status_message = status_message;
  t.log = log_message;
  t.log_level = log_level;
  t.graph_node_count = graph_node_count;
  t.graph_node = graph_node;
  t.graph_input_count = graph_input_count;
  t.graph_input_name = graph_input_name;
  t.graph_output_count = graph_output_count;
  t.graph_output_name = graph_output_name;
  t.graph_opset = graph_opset;
  t.node_id = node_id;
  t.node_name = node_name;
  t.node_op_type = node_op_type;
  t.node_domain = node_domain;
  t.node_opset = node_opset;
  t.node_input_count = node_input_count;
  t.node_input_name = node_input_name;
  t.node_output_count = node_output_count;
  t.node_output_name = node_output_name;
  t.node_input_dtype = node_input_dtype;
  t.node_output_dtype = node_output_dtype;
  t.node_input_shape = node_input_shape;
  t.node_input_constant = node_input_constant;
  t.node_attr_count = node_attr_count;
  t.node_attr_name = node_attr_name;
  t.node_attr_type = node_attr_type;
  t.node_attr_int = node_attr_int;
  t.node_attr_float = node_attr_float;
  t.node_attr_string = node_attr_string;
  t.node_attr_ints = node_attr_ints;
  t.node_attr_floats = node_attr_floats;
  t.node_attr_strings = node_attr_strings;
  t.node_attr_string_at = node_attr_string_at;
  t.node_attr_tensor = node_attr_tensor;
  t.node_attr_graph = node_attr_graph;
  t.claim_nodes = claim_nodes;
  t.tensor_dtype = tensor_dtype;
  t.tensor_rank = tensor_rank;
  t.tensor_dims = tensor_dims;
  t.tensor_element_count = tensor_element_count;
  t.tensor_data = tensor_data;
  t.tensor_memory = tensor_memory;
  t.tensor_string_at = tensor_string_at;
  t.tensor_set_string = tensor_set_string;
  t.kernel_input_count = kernel_input_count;
  t.kernel_input = kernel_input;
  t.kernel_output_count = kernel_output_count;
  t.kernel_output = kernel_output;
  t.kernel_node = kernel_node;
  t.kernel_input_value = kernel_input_value;
  t.value_kind = value_kind;
  t.value_tensor = value_tensor;
  t.value_sequence_dtype = value_sequence_dtype;
  t.value_sequence_length = value_sequence_length;
  t.value_sequence_at = value_sequence_at;
  t.value_create_tensor = value_create_tensor;
  t.value_create_sequence = value_create_sequence;
  t.value_create_none = value_create_none;
  t.value_clone = value_clone;
  t.value_mutable_tensor = value_mutable_tensor;
  t.value_sequence_append = value_sequence_append;
  t.value_release = value_release;
  t.kernel_set_output = kernel_set_output;
  t.kernel_run_subgraph = kernel_run_subgraph;
  t.decline_nodes = decline_nodes;
  t.kernel_release_constant_input = kernel_release_constant_input;
  t.kernel_stream = kernel_stream;
  t.kernel_scratch = kernel_scratch;
  t.kernel_should_stop = kernel_should_stop;
  t.value_create_map = value_create_map;
  t.value_map_keys = value_map_keys;
  t.value_map_values = value_map_values;
  t.kernel_profiling = kernel_profiling;
  t.graph_release_constant_input = graph_release_constant_input;
  t.kernel_profile_part = kernel_profile_part;
  return t;
}

}  // namespace

const LOOM_HostApi* host_api() {
  static const LOOM_HostApi table = make_table();
  return &table;
}

}  // namespace loom::plugin_host
