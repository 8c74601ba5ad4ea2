#include "onnx/model_loader.h"

#include <fcntl.h>
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <set>
#include <unordered_set>
#include <onnx/onnx_pb.h>

#include <filesystem>
#include <functional>
#include <memory>
#include <fstream>
#include <limits>
#include <sstream>

#include "base/logging.h"
#include "onnx/custom_op_check.h"
#include "opreg/onnx_inference/isolated_inference.h"
#include "onnx/function_inliner.h"
#include "onnx/graph_inference.h"
#include "onnx/model_census.h"
#include "onnx/proto_structure.h"
#include "onnx/tensor_proto.h"
#include "onnx/op_schemas.h"
#include "opreg/op_def.h"

namespace loom::onnxio {
namespace {

namespace fs = std::filesystem;

// Nesting deeper than this is refused: real models nest a few levels, and
// unbounded recursion on hostile input would exhaust the stack.
constexpr int kMaxSubgraphDepth = 32;
// Protobuf's default nesting limit (100 messages) would refuse a model with
// about 32 nested subgraphs (3 messages per level: graph, node, attribute)
// as a bare parse failure. Allow enough that such models reach the check
// above and get a clear message, while still bounding the parser's recursion.
constexpr int kMaxProtoNesting = 5 * kMaxSubgraphDepth;
// Value names a model may mention per node limits.max_nodes allows (node
// inputs and outputs, graph inputs, outputs, value_info): real models
// mention about five.
constexpr int64_t kValueNamesPerNode = 8;

int64_t saturating_mul(int64_t a, int64_t b) {
  int64_t r = 0;
  return __builtin_mul_overflow(a, b, &r) ? std::numeric_limits<int64_t>::max() : r;
}

std::string normalise_domain(const std::string& d) { return d == "ai.onnx" ? "" : d; }

// attribute_from_proto; with `owned` (ap itself, mutable), tensors take
// their bytes out of it rather than copying them (a model's Constant
// weights, as the loader converts them).
Expected<ir::Attribute> convert_plain_attribute(const ::onnx::AttributeProto& ap, const std::string& model_dir,
                                                int64_t max_tensor_bytes, ::onnx::AttributeProto* owned) {
  ir::Attribute a;
  a.name = ap.name();
  if (!ap.ref_attr_name().empty())
    return not_implemented("attribute references (function bodies) are not supported");
  a.type = static_cast<ir::AttrType>(ap.type());
  switch (ap.type()) {
    case ::onnx::AttributeProto::FLOAT: a.f = ap.f(); break;
    case ::onnx::AttributeProto::INT: a.i = ap.i(); break;
    case ::onnx::AttributeProto::STRING: a.s = ap.s(); break;
    case ::onnx::AttributeProto::FLOATS: a.floats.assign(ap.floats().begin(), ap.floats().end()); break;
    case ::onnx::AttributeProto::INTS: a.ints.assign(ap.ints().begin(), ap.ints().end()); break;
    case ::onnx::AttributeProto::STRINGS: a.strings.assign(ap.strings().begin(), ap.strings().end()); break;
    case ::onnx::AttributeProto::TENSOR: {
      auto t = owned ? take_tensor_from_proto(*owned->mutable_t(), model_dir, max_tensor_bytes)
                     : tensor_from_proto(ap.t(), model_dir, max_tensor_bytes);
      if (!t) return t.status();
      a.tensor = std::make_shared<Tensor>(std::move(*t));
      break;
    }
    case ::onnx::AttributeProto::TENSORS:
      for (int i = 0; i < ap.tensors_size(); ++i) {
        auto t = owned ? take_tensor_from_proto(*owned->mutable_tensors(i), model_dir, max_tensor_bytes)
                       : tensor_from_proto(ap.tensors(i), model_dir, max_tensor_bytes);
        if (!t) return t.status();
        a.tensors.push_back(std::move(*t));
      }
      break;
    case ::onnx::AttributeProto::GRAPH:
    case ::onnx::AttributeProto::GRAPHS:
      return invalid_argument("attribute '" + ap.name() + "': graph attributes are converted with their model");
    case ::onnx::AttributeProto::TYPE_PROTO:
    case ::onnx::AttributeProto::SPARSE_TENSOR:
      break;  // kept as typed but empty: no op in the supported opsets reads them
    default:
      // Models from older exporters may omit `type`; infer it from the set field.
      if (ap.has_f()) { a.type = ir::AttrType::kFloat; a.f = ap.f(); }
      else if (ap.has_i()) { a.type = ir::AttrType::kInt; a.i = ap.i(); }
      else if (ap.has_s()) { a.type = ir::AttrType::kString; a.s = ap.s(); }
      else if (ap.ints_size()) { a.type = ir::AttrType::kInts; a.ints.assign(ap.ints().begin(), ap.ints().end()); }
      else if (ap.floats_size()) { a.type = ir::AttrType::kFloats; a.floats.assign(ap.floats().begin(), ap.floats().end()); }
      else return invalid_graph("attribute of unknown type " + std::to_string(ap.type()));
  }
  return a;
}


class GraphConverter {
 public:
  GraphConverter(std::string model_dir, std::map<std::string, int64_t> opsets, const LoadOptions& options,
                 int64_t file_bytes)
      : model_dir_(std::move(model_dir)),
        opsets_(std::move(opsets)),
        schemas_(options.schemas),
        limits_(options),
        model_bytes_(file_bytes) {}

  // Consumes the initializers' data in `gp` as it converts them, so a large
  // model is never held twice in memory.
  Expected<std::shared_ptr<ir::Graph>> convert(::onnx::GraphProto& gp, const ir::Graph* parent,
                                               int depth) {
    if (depth > kMaxSubgraphDepth)
      return invalid_graph("subgraphs nested deeper than " + std::to_string(kMaxSubgraphDepth) + " levels");
    auto g = std::make_shared<ir::Graph>();
    g->name = gp.name();
    g->parent = parent;
    g->opsets = opsets_;
    g->op_schemas = schemas_;
    Scope scope(scopes_);
    for (auto& init : *gp.mutable_initializer()) {
      const std::string name = init.name();
      if (g->initializers.count(name)) return invalid_graph("initializer '" + name + "' is defined twice");
      LOOM_RETURN_IF_ERROR(define(name, "initializer"));
      const bool external = init.data_location() == ::onnx::TensorProto_DataLocation_EXTERNAL;
      auto t = take_tensor_from_proto(init, model_dir_, limits_.max_tensor_bytes);
      if (!t) return t.status().with_context("initializer '" + name + "'");
      // Data inside the model file is counted by the file's size.
      if (external) LOOM_RETURN_IF_ERROR(count_model_bytes(t->byte_size(), "initializer '" + name + "'"));
      ::onnx::TensorProto().Swap(&init);  // frees now what the tensor did not take (typed fields)
      g->value_types[name] = ir::tensor_type(*t);
      g->initializers.emplace(name, std::move(*t));
    }
    if (gp.sparse_initializer_size() > 0)
      return not_implemented("graph '" + gp.name() + "' has sparse initializers, which Loom does not support yet");
    for (const auto* list : {&gp.input(), &gp.output(), &gp.value_info()})
      for (const auto& vi : *list) LOOM_RETURN_IF_ERROR(check_declared_rank(vi));
    for (const auto& vi : gp.input()) {
      if (!g->initializers.count(vi.name())) LOOM_RETURN_IF_ERROR(define(vi.name(), "graph input"));
      g->inputs.push_back(vi.name());
      if (vi.has_type()) g->value_types[vi.name()] = value_type_from_proto(vi.type());
    }
    for (const auto& vi : gp.output()) {
      g->outputs.push_back(vi.name());
      if (vi.has_type()) g->value_types[vi.name()] = value_type_from_proto(vi.type());
    }
    for (const auto& vi : gp.value_info())
      if (vi.has_type() && !g->value_types.count(vi.name())) g->value_types[vi.name()] = value_type_from_proto(vi.type());
    // limits.max_nodes was checked on the bytes, before parsing (check_model_census).
    const std::unordered_set<std::string> graph_inputs(g->inputs.begin(), g->inputs.end());  // hashed: per node output
    for (auto& np : *gp.mutable_node()) {
      ir::Node n;
      n.name = np.name();
      n.op_type = np.op_type();
      n.domain = normalise_domain(np.domain());
      n.inputs.assign(np.input().begin(), np.input().end());
      n.outputs.assign(np.output().begin(), np.output().end());
      auto opset = opsets_.find(n.domain);
      if (opset == opsets_.end())
        return invalid_graph("node " + n.label() + " uses domain '" + n.domain +
                             "' which the model does not import (no opset_import for it)");
      n.opset = opset->second;
      if (is_onnx_domain(n.domain) && !is_known_onnx_op(n.op_type, n.domain, n.opset))
        return invalid_graph("node " + n.label() + ": unknown op '" + n.op_type + "' in domain '" +
                             (n.domain.empty() ? "ai.onnx" : n.domain) + "' at opset " + std::to_string(n.opset));
      for (auto& ap : *np.mutable_attribute()) {
        auto a = convert_attribute(ap, g.get(), depth);
        if (!a) return a.status().with_context("node " + n.label() + " attribute '" + ap.name() + "'");
        n.attributes.push_back(std::move(*a));
      }
      for (const std::string& o : n.outputs)
        if (!o.empty()) LOOM_RETURN_IF_ERROR(define(o, "output of node " + n.label()));
      const ir::Node& added = g->add_node(std::move(n));
      // Values are assigned once: a node may not overwrite a graph input or
      // an initializer (two nodes writing one value is refused when the
      // graph is ordered).
      for (const std::string& o : added.outputs)
        if (!o.empty() && (g->initializers.count(o) || graph_inputs.count(o)))
          return invalid_graph("node " + added.label() + " writes value '" + o + "', which is already " +
                               (g->initializers.count(o) ? "an initializer" : "a graph input"));
    }
    return g;
  }

 private:
  // A declared type's rank is bounded as a tensor's (a value_info with a
  // million dims costs memory for nothing).
  static Status check_declared_rank(const ::onnx::ValueInfoProto& vi) {
    const ::onnx::TypeProto* t = &vi.type();
    while (t->has_sequence_type() || t->has_optional_type())
      t = t->has_sequence_type() ? &t->sequence_type().elem_type() : &t->optional_type().elem_type();
    if (t->has_tensor_type() && t->tensor_type().has_shape() &&
        static_cast<size_t>(t->tensor_type().shape().dim_size()) > kMaxTensorRank)
      return invalid_graph("the declared type of '" + vi.name() + "' has rank " +
                           std::to_string(t->tensor_type().shape().dim_size()) + ", over the limit of " +
                           std::to_string(kMaxTensorRank));
    return Status::ok();
  }

  // The names each graph being converted defines, innermost last: ONNX
  // forbids a subgraph to define a name an enclosing graph defines (it
  // would shadow the outer value its nodes may read).
  struct Scope {
    explicit Scope(std::vector<std::set<std::string>>& s) : scopes(s) { scopes.emplace_back(); }
    ~Scope() { scopes.pop_back(); }
    std::vector<std::set<std::string>>& scopes;
  };

  Status define(const std::string& name, const std::string& what) {
    for (size_t i = 0; i + 1 < scopes_.size(); ++i)
      if (scopes_[i].count(name))
        return invalid_graph(what + " '" + name + "' in a subgraph shadows a value of an enclosing graph");
    scopes_.back().insert(name);
    return Status::ok();
  }

  Expected<ir::Attribute> convert_attribute(::onnx::AttributeProto& ap, const ir::Graph* owner, int depth) {
    if (ap.type() != ::onnx::AttributeProto::GRAPH && ap.type() != ::onnx::AttributeProto::GRAPHS)
      return convert_plain_attribute(ap, model_dir_, limits_.max_tensor_bytes, &ap);
    if (!ap.ref_attr_name().empty())
      return not_implemented("attribute references (function bodies) are not supported");
    ir::Attribute a;
    a.name = ap.name();
    a.type = static_cast<ir::AttrType>(ap.type());
    if (ap.type() == ::onnx::AttributeProto::GRAPH) {
      auto sg = convert(*ap.mutable_g(), owner, depth + 1);
      if (!sg) return sg.status();
      a.graph = *sg;
      return a;
    }
    for (auto& gp : *ap.mutable_graphs()) {
      auto sg = convert(gp, owner, depth + 1);
      if (!sg) return sg.status();
      a.graphs.push_back(*sg);
    }
    return a;
  }

  std::vector<std::set<std::string>> scopes_;
  std::string model_dir_;
  std::map<std::string, int64_t> opsets_;
  std::shared_ptr<OpSchemas> schemas_;
  LoadOptions limits_;
  int64_t model_bytes_ = 0;

  Status count_model_bytes(int64_t bytes, const std::string& what) {
    model_bytes_ += bytes;
    if (limits_.max_model_bytes > 0 && model_bytes_ > limits_.max_model_bytes)
      return invalid_argument(what + ": the model and its external data take more than " +
                              describe_byte_limit("max_model_mb", limits_.max_model_bytes));
    return Status::ok();
  }
};

// Nodes of custom-op domains, in `g` and its subgraphs, against their
// plugins' schemas, once inference has typed their values.
Status check_custom_nodes(const ir::Graph& g, const OpSchemas& schemas) {
  for (const auto& node : g.nodes()) {
    if (schemas.has_custom_domain(node->domain)) LOOM_RETURN_IF_ERROR(check_custom_node(g, *node, schemas));
    for (const ir::Graph* body : ir::subgraphs_of(*node)) LOOM_RETURN_IF_ERROR(check_custom_nodes(*body, schemas));
  }
  return Status::ok();
}

Expected<LoadedModel> convert_model(::onnx::ModelProto& model, const std::string& model_dir, const std::string& source,
                                    const LoadOptions& options, int64_t file_bytes) {
  if (!model.has_graph()) return invalid_argument(source + ": not an ONNX model (no graph)");
  if (model.graph().output_size() == 0)
    return invalid_graph(source + ": graph '" + model.graph().name() + "' has no outputs");
  // Model-local functions are expanded in place, bounded, before ONNX's
  // inference would expand them unbounded (61 functions each calling the
  // previous twice held the inference server for its whole timeout).
  if (Status st = inline_local_functions(model, options.max_nodes); !st) return st.with_context(source);
  std::map<std::string, int64_t> opsets;
  for (const auto& op : model.opset_import()) opsets[normalise_domain(op.domain())] = op.version();
  if (opsets.empty()) opsets[""] = 1;  // IR < 3 models have no opset imports
  // Before ONNX's inference, which assumes every read value is defined.
  if (Status st = check_value_definitions(model.graph(), kMaxSubgraphDepth); !st) return st.with_context(source);
  if (Status st = verify_onnx_nodes(model.graph(), options.schemas.get(), opsets); !st) return st.with_context(source);
  // The main graph's declared shapes, before inference adds its own.
  std::vector<std::string> declared;
  for (const auto* list : {&model.graph().output(), &model.graph().value_info()})
    for (const auto& vi : *list)
      if (vi.type().has_tensor_type() && vi.type().tensor_type().has_shape()) declared.push_back(vi.name());
  // The registry's in-process inference types the graph; ONNX's (in its
  // server) runs after it only for what it leaves untyped, or alone where
  // the options ask (failures of ONNX's only mean less is known).
  if (options.onnx_inference && !options.loom_inference) {
    const InferenceResult r = infer_shapes_isolated(model, options.schemas.get());
    if (r.outcome != InferenceOutcome::kDone)
      log::logger()->info("{}: ONNX's static shape inference {}; types come from the kernels at run time", source,
                          r.detail);
  }

  GraphConverter converter(model_dir, opsets, options, file_bytes);
  auto graph = converter.convert(*model.mutable_graph(), nullptr, 0);
  if (!graph) return graph.status().with_context(source);
  bind_op_defs(**graph);
  if (options.loom_inference) infer_types(**graph, source, options.onnx_inference);
  if (options.schemas)
    if (Status st = check_custom_nodes(**graph, *options.schemas); !st) return st.with_context(source);
  for (const std::string& name : declared) {
    auto t = (*graph)->value_types.find(name);
    if (t != (*graph)->value_types.end() && t->second.has_shape) t->second.declared = true;
  }
  // Each value produced once, every read defined, no cycle: refused here as
  // a bad model rather than by whichever pass first orders the graph.
  if (auto order = (*graph)->topological_order(); !order) return order.status().with_context(source);
  LoadedModel out;
  out.graph = *graph;
  out.source = source;
  out.model_dir = model_dir;
  out.ir_version = model.ir_version();
  out.producer = model.producer_name();
  ModelMetadata& meta = out.metadata;
  meta.producer_name = model.producer_name();
  meta.producer_version = model.producer_version();
  meta.graph_name = model.graph().name();
  meta.graph_description = model.graph().doc_string();
  meta.domain = model.domain();
  meta.description = model.doc_string();
  meta.version = model.model_version();
  meta.ir_version = model.ir_version();
  for (const auto& kv : model.metadata_props()) meta.custom_metadata_map[kv.key()] = kv.value();
  return out;
}

// Opens the model's bytes from their start (called once per pass over them).
using StreamOpener = std::function<std::unique_ptr<google::protobuf::io::ZeroCopyInputStream>()>;

// limits.max_nodes, checked on the wire format before the parse allocates
// anything per node: nodes, and the value names they and the graphs mention
// (a 1M-output or 1M-input graph costs memory like a 1M-node one).
Status check_model_census(const StreamOpener& open, const std::string& source, int64_t max_nodes) {
  if (max_nodes <= 0) return Status::ok();
  const int64_t max_value_names = saturating_mul(max_nodes, kValueNamesPerNode);
  const ModelCensus census = take_model_census(*open(), max_nodes, max_value_names, kMaxProtoNesting);
  if (census.nodes > max_nodes)
    return invalid_argument(source + ": the model has more than " + std::to_string(max_nodes) +
                            " nodes (subgraphs' included), over limits.max_nodes");
  if (census.value_names > max_value_names)
    return invalid_argument(source + ": the model names more than " + std::to_string(max_value_names) +
                            " values (node inputs and outputs, graph inputs, outputs and value_info), over " +
                            std::to_string(kValueNamesPerNode) + " x limits.max_nodes (" +
                            std::to_string(max_nodes) + ")");
  return Status::ok();  // malformed bytes are left for the parser to report
}

Expected<LoadedModel> parse_and_convert(const StreamOpener& open, const std::string& model_dir,
                                        const std::string& source, const LoadOptions& options, int64_t file_bytes) {
  if (options.max_model_bytes > 0 && file_bytes > options.max_model_bytes)
    return invalid_argument(source + ": " + std::to_string(file_bytes) + " bytes, over " +
                            describe_byte_limit("max_model_mb", options.max_model_bytes));
  // Protobuf cannot parse 2 GiB or more; say so rather than "truncated".
  if (file_bytes > std::numeric_limits<int>::max())
    return invalid_argument(source + ": " + std::to_string(file_bytes) +
                            " bytes; an ONNX model file of 2 GiB or more cannot be parsed: keep its large tensors "
                            "in external data");
  LOOM_RETURN_IF_ERROR(check_model_census(open, source, options.max_nodes));
  ::onnx::ModelProto model;
  const auto in = open();
  google::protobuf::io::CodedInputStream stream(in.get());
  stream.SetTotalBytesLimit(std::numeric_limits<int>::max());
  stream.SetRecursionLimit(kMaxProtoNesting);
  if (!model.ParseFromCodedStream(&stream) || !stream.ConsumedEntireMessage())
    return invalid_argument(source + ": not a valid ONNX model (protobuf parse failed: truncated, not ONNX, or "
                                     "messages nested deeper than " + std::to_string(kMaxProtoNesting) + " levels?)");
  return convert_model(model, model_dir, source, options, file_bytes);
}

}  // namespace

Expected<ir::Attribute> attribute_from_proto(const ::onnx::AttributeProto& ap, const std::string& model_dir,
                                             int64_t max_tensor_bytes) {
  return convert_plain_attribute(ap, model_dir, max_tensor_bytes, nullptr);
}

ir::ValueType value_type_from_proto(const ::onnx::TypeProto& t) {
  ir::ValueType vt;
  const ::onnx::TypeProto* tensor = nullptr;
  switch (t.value_case()) {
    case ::onnx::TypeProto::kTensorType:
      tensor = &t;
      break;
    case ::onnx::TypeProto::kSequenceType:
      vt.kind = ir::ValueKind::kSequence;
      if (t.sequence_type().elem_type().has_tensor_type()) {
        tensor = &t.sequence_type().elem_type();
      } else if (t.sequence_type().elem_type().has_map_type()) {  // seq(map(K, tensor(V))): ZipMap's
        const auto& m = t.sequence_type().elem_type().map_type();
        vt.key_dtype = static_cast<DType>(m.key_type());
        if (m.value_type().has_tensor_type()) vt.dtype = static_cast<DType>(m.value_type().tensor_type().elem_type());
      }
      break;
    case ::onnx::TypeProto::kMapType:
      vt.kind = ir::ValueKind::kMap;
      vt.key_dtype = static_cast<DType>(t.map_type().key_type());
      if (t.map_type().value_type().has_tensor_type())
        vt.dtype = static_cast<DType>(t.map_type().value_type().tensor_type().elem_type());
      return vt;
    case ::onnx::TypeProto::kOptionalType:
      vt.kind = ir::ValueKind::kOptional;
      if (t.optional_type().elem_type().has_tensor_type()) tensor = &t.optional_type().elem_type();
      else if (t.optional_type().elem_type().has_sequence_type()) vt.kind = ir::ValueKind::kOptional;
      break;
    default:
      vt.kind = ir::ValueKind::kUnknown;
      return vt;
  }
  if (tensor == nullptr) return vt;
  const auto& tt = tensor->tensor_type();
  vt.dtype = static_cast<DType>(tt.elem_type());
  if (tt.has_shape()) {
    vt.has_shape = true;
    for (const auto& d : tt.shape().dim()) {
      DimInfo di;
      if (d.has_dim_value() && d.dim_value() >= 0) di.value = d.dim_value();
      if (d.has_dim_param()) di.symbol = d.dim_param();
      vt.dims.push_back(di);
    }
  }
  return vt;
}

bool is_onnx_domain(const std::string& domain) {
  return domain.empty() || domain == "ai.onnx.ml" || domain == "ai.onnx.preview.training";
}

bool is_known_onnx_op(const std::string& op_type, const std::string& domain, int64_t opset) {
  if (opreg::find_op_def(op_type, opset, domain) != nullptr) return true;
  // ONNX Runtime's contrib ops that live in the default domain: its
  // transformer optimizer emits LayerNormalization in models older than
  // opset 17 (where ONNX added it) and SimplifiedLayerNormalization (RMS
  // norm) in any; Loom runs such models and its own fusions emit the same.
  return domain.empty() && (op_type == "LayerNormalization" || op_type == "SimplifiedLayerNormalization");
}

Expected<LoadedModel> load_model_bytes(const std::string& bytes, const std::string& model_dir,
                                       const std::string& source, const LoadOptions& options) {
  if (bytes.empty()) return invalid_argument(source + ": empty, not an ONNX model");
  const StreamOpener open = [&bytes] {
    return std::make_unique<google::protobuf::io::ArrayInputStream>(
        bytes.data(), static_cast<int>(std::min<size_t>(bytes.size(), INT32_MAX)));
  };
  return parse_and_convert(open, model_dir, source, options, static_cast<int64_t>(bytes.size()));
}

Expected<LoadedModel> load_model_file(const std::string& path, const LoadOptions& options) {
  std::error_code ec;
  if (!fs::exists(path, ec)) return not_found(path + ": no such file");
  if (fs::is_directory(path, ec)) return invalid_argument(path + ": is a directory, not an ONNX model");
  // A FIFO would block the parser and /dev/zero never ends.
  if (!fs::is_regular_file(path, ec)) return invalid_argument(path + ": not a regular file, not an ONNX model");
  if (fs::file_size(path, ec) == 0 || ec) return invalid_argument(path + ": empty, not an ONNX model");
  // Parsed straight from the file: no copy of the whole file in memory.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return not_found(path + ": cannot open: " + std::strerror(errno));
  const std::unique_ptr<int, void (*)(int*)> closer(new int(fd), [](int* f) {
    ::close(*f);
    delete f;
  });
  const StreamOpener open = [fd]() -> std::unique_ptr<google::protobuf::io::ZeroCopyInputStream> {
    // A failed rewind leaves the stream at the end: the parse then fails.
    (void)::lseek(fd, 0, SEEK_SET);
    return std::make_unique<google::protobuf::io::FileInputStream>(fd);
  };
  fs::path dir = fs::path(path).parent_path();
  if (dir.empty()) dir = ".";
  return parse_and_convert(open, dir.string(), path, options, static_cast<int64_t>(fs::file_size(path, ec)));
}

}  // namespace loom::onnxio
