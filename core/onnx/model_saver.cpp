#include "onnx/model_saver.h"

#include "onnx/sub_byte.h"

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <set>

#include "onnx/tensor_proto.h"

namespace loom::onnxio {
namespace {

namespace fs = std::filesystem;

constexpr uint64_t kExternalAlignment = 64;
// Protobuf refuses messages of 2 GiB and more.
constexpr uint64_t kMaxProtoBytes = static_cast<uint64_t>(std::numeric_limits<int32_t>::max());
// Room for nodes, names and types when deciding from tensor bytes alone
// whether the model fits inline; the built proto is measured exactly anyway.
constexpr uint64_t kNonTensorHeadroom = uint64_t{64} << 20;

void set_tensor_type(const ir::ValueType& vt, ::onnx::TypeProto_Tensor* tt) {
  tt->set_elem_type(static_cast<int32_t>(vt.dtype));
  if (!vt.has_shape) return;
  auto* shape = tt->mutable_shape();
  for (const DimInfo& d : vt.dims) {
    auto* dim = shape->add_dim();
    if (d.value >= 0) dim->set_dim_value(d.value);
    else if (!d.symbol.empty()) dim->set_dim_param(d.symbol);
  }
}

// Mirrors model_loader's convert_type. False for kinds ONNX cannot express
// here (kUnknown): the value is then written without a type.
bool set_type(const ir::ValueType& vt, ::onnx::TypeProto* tp) {
  switch (vt.kind) {
    case ValueKind::kTensor:
      set_tensor_type(vt, tp->mutable_tensor_type());
      return true;
    case ValueKind::kSequence: {
      auto* elem = tp->mutable_sequence_type()->mutable_elem_type();
      if (vt.key_dtype != DType::kUndefined) {  // a sequence of maps
        auto* m = elem->mutable_map_type();
        m->set_key_type(static_cast<int32_t>(vt.key_dtype));
        m->mutable_value_type()->mutable_tensor_type()->set_elem_type(static_cast<int32_t>(vt.dtype));
      } else if (vt.dtype != DType::kUndefined) {
        set_tensor_type(vt, elem->mutable_tensor_type());
      }
      return true;
    }
    case ValueKind::kMap: {
      auto* m = tp->mutable_map_type();
      m->set_key_type(static_cast<int32_t>(vt.key_dtype));
      m->mutable_value_type()->mutable_tensor_type()->set_elem_type(static_cast<int32_t>(vt.dtype));
      return true;
    }
    case ValueKind::kOptional: {
      // The IR keeps no element type for an optional sequence: its element
      // type is left empty, which loads back the same.
      auto* elem = tp->mutable_optional_type()->mutable_elem_type();
      if (vt.dtype != DType::kUndefined) set_tensor_type(vt, elem->mutable_tensor_type());
      return true;
    }
    default:
      return false;
  }
}

void set_value_info(const ir::Graph& g, const std::string& name, ::onnx::ValueInfoProto* vi) {
  vi->set_name(name);
  if (const auto it = g.value_types.find(name); it != g.value_types.end())
    if (!set_type(it->second, vi->mutable_type())) vi->clear_type();
}

// Sub-byte tensors stay inside the proto, where tensor_to_proto packs them.
bool goes_external(const Tensor& t, size_t threshold) {
  return !t.is_string() && packed_bits(t.dtype()) == 0 && t.byte_size() > 0 && t.byte_size() >= threshold;
}

// Bytes of tensor data that would stay inside the proto with `threshold`.
uint64_t inline_tensor_bytes(const ir::Graph& g, size_t threshold) {
  uint64_t total = 0;
  auto tensor_bytes = [](const Tensor& t) -> uint64_t {
    if (!t.is_string()) return t.byte_size();
    uint64_t n = 0;
    for (const std::string& s : t.strings()) n += s.size() + 2;
    return n;
  };
  for (const auto& [name, t] : g.initializers)
    if (!goes_external(t, threshold)) total += tensor_bytes(t);
  for (const auto& n : g.nodes())
    for (const ir::Attribute& a : n->attributes) {
      if (a.tensor) total += tensor_bytes(*a.tensor);
      for (const Tensor& t : a.tensors) total += tensor_bytes(t);
      if (a.graph) total += inline_tensor_bytes(*a.graph, threshold);
      for (const auto& sg : a.graphs)
        if (sg) total += inline_tensor_bytes(*sg, threshold);
    }
  return total;
}

// Every domain a node uses, anywhere, with the node's opset (so a pass that
// added a node of a new domain still yields a loadable model).
void collect_node_domains(const ir::Graph& g, std::map<std::string, int64_t>* domains) {
  for (const auto& n : g.nodes()) {
    domains->emplace(n->domain, n->opset > 0 ? n->opset : 1);
    for (const ir::Attribute& a : n->attributes) {
      if (a.graph) collect_node_domains(*a.graph, domains);
      for (const auto& sg : a.graphs)
        if (sg) collect_node_domains(*sg, domains);
    }
  }
}

// The `<path>.data` file, opened on the first tensor written to it.
class ExternalDataWriter {
 public:
  ExternalDataWriter(std::string data_path, std::string location)
      : data_path_(std::move(data_path)), location_(std::move(location)) {}

  Status write(const Tensor& t, ::onnx::TensorProto* proto) {
    if (!out_.is_open()) {
      out_.open(data_path_, std::ios::binary | std::ios::trunc);
      if (!out_) return fail(data_path_ + ": cannot write external data: " + std::strerror(errno));
    }
    const uint64_t pad = (kExternalAlignment - offset_ % kExternalAlignment) % kExternalAlignment;
    static const char zeros[kExternalAlignment] = {};
    out_.write(zeros, static_cast<std::streamsize>(pad));
    offset_ += pad;
    out_.write(static_cast<const char*>(t.data()), static_cast<std::streamsize>(t.byte_size()));
    if (!out_) return fail(data_path_ + ": writing external data failed: " + std::strerror(errno));
    proto->set_data_location(::onnx::TensorProto_DataLocation_EXTERNAL);
    auto add = [&](const char* key, const std::string& value) {
      auto* e = proto->add_external_data();
      e->set_key(key);
      e->set_value(value);
    };
    add("location", location_);
    add("offset", std::to_string(offset_));
    add("length", std::to_string(t.byte_size()));
    offset_ += t.byte_size();
    return Status::ok();
  }

  Status finish() {
    if (!out_.is_open()) return Status::ok();
    out_.close();
    if (!out_) return fail(data_path_ + ": writing external data failed: " + std::strerror(errno));
    return Status::ok();
  }

 private:
  std::string data_path_;
  std::string location_;
  std::ofstream out_;
  uint64_t offset_ = 0;
};

class GraphWriter {
 public:
  GraphWriter(size_t threshold, ExternalDataWriter* external) : threshold_(threshold), external_(external) {}

  Status write(const ir::Graph& g, ::onnx::GraphProto* gp) {
    gp->set_name(g.name);
    for (const auto& [name, t] : g.initializers) {
      ::onnx::TensorProto* tp = gp->add_initializer();
      if (goes_external(t, threshold_)) {
        tp->set_name(name);
        tp->set_data_type(static_cast<int32_t>(t.dtype()));
        for (int64_t d : t.dims()) tp->add_dims(d);
        // Without a writer (a proto for type inference) only the type is kept.
        if (external_ != nullptr)
          LOOM_RETURN_IF_ERROR(external_->write(t, tp).with_context("initializer '" + name + "'"));
      } else {
        *tp = tensor_to_proto(t, name);
      }
    }
    for (const std::string& in : g.inputs) set_value_info(g, in, gp->add_input());
    for (const std::string& out : g.outputs) set_value_info(g, out, gp->add_output());

    std::set<std::string> described(g.inputs.begin(), g.inputs.end());
    described.insert(g.outputs.begin(), g.outputs.end());
    // ONNX wants nodes in topological order; passes append the nodes they
    // add, so the IR's insertion order is not.
    LOOM_ASSIGN_OR_RETURN(std::vector<ir::Node*> order, g.topological_order());
    for (const ir::Node* n : order) {
      LOOM_RETURN_IF_ERROR(write_node(*n, gp->add_node()));
      // Intermediate values with a known type, in node order.
      for (const std::string& o : n->outputs) {
        if (o.empty() || g.is_initializer(o) || !described.insert(o).second) continue;
        const auto it = g.value_types.find(o);
        if (it == g.value_types.end() || it->second.kind == ValueKind::kUnknown) continue;
        set_value_info(g, o, gp->add_value_info());
      }
    }
    return Status::ok();
  }

 private:
  Status write_node(const ir::Node& n, ::onnx::NodeProto* np) {
    np->set_name(n.name);
    np->set_op_type(n.op_type);
    np->set_domain(n.domain);
    for (const std::string& in : n.inputs) np->add_input(in);
    for (const std::string& out : n.outputs) np->add_output(out);
    for (const ir::Attribute& a : n.attributes)
      LOOM_RETURN_IF_ERROR(
          write_attribute(a, np->add_attribute()).with_context("node " + n.label() + " attribute '" + a.name + "'"));
    return Status::ok();
  }

  Status write_attribute(const ir::Attribute& a, ::onnx::AttributeProto* ap) {
    ap->set_name(a.name);
    ap->set_type(static_cast<::onnx::AttributeProto_AttributeType>(a.type));
    switch (a.type) {
      case ir::AttrType::kFloat: ap->set_f(a.f); break;
      case ir::AttrType::kInt: ap->set_i(a.i); break;
      case ir::AttrType::kString: ap->set_s(a.s); break;
      case ir::AttrType::kFloats: for (float v : a.floats) ap->add_floats(v); break;
      case ir::AttrType::kInts: for (int64_t v : a.ints) ap->add_ints(v); break;
      case ir::AttrType::kStrings: for (const std::string& v : a.strings) ap->add_strings(v); break;
      case ir::AttrType::kTensor:
        if (!a.tensor) return invalid_argument("tensor attribute without a tensor");
        *ap->mutable_t() = tensor_to_proto(*a.tensor, "");
        break;
      case ir::AttrType::kTensors:
        for (const Tensor& t : a.tensors) *ap->add_tensors() = tensor_to_proto(t, "");
        break;
      case ir::AttrType::kGraph:
        if (!a.graph) return invalid_argument("graph attribute without a graph");
        return write(*a.graph, ap->mutable_g());
      case ir::AttrType::kGraphs:
        for (const auto& sg : a.graphs) {
          if (!sg) return invalid_argument("graphs attribute with a missing graph");
          LOOM_RETURN_IF_ERROR(write(*sg, ap->add_graphs()));
        }
        break;
      case ir::AttrType::kSparseTensor:
      case ir::AttrType::kTypeProto:
        break;  // the loader keeps these typed but empty; written back the same
      default:
        return invalid_argument("attribute of undefined type " + std::to_string(static_cast<int>(a.type)));
    }
    return Status::ok();
  }

  size_t threshold_;
  ExternalDataWriter* external_;
};

}  // namespace

namespace {

void add_opset_imports(const ir::Graph& graph, ::onnx::ModelProto* model) {
  std::map<std::string, int64_t> opsets = graph.opsets;
  collect_node_domains(graph, &opsets);  // emplace: the graph's own imports win
  for (const auto& [domain, version] : opsets) {
    auto* op = model->add_opset_import();
    op->set_domain(domain);
    op->set_version(version);
  }
}

}  // namespace

Expected<::onnx::ModelProto> model_proto_for_inference(const ir::Graph& graph, size_t data_threshold) {
  ::onnx::ModelProto model;
  model.set_ir_version(8);
  model.set_producer_name("loom");
  add_opset_imports(graph, &model);
  GraphWriter writer(data_threshold, nullptr);
  LOOM_RETURN_IF_ERROR(writer.write(graph, model.mutable_graph()));
  return model;
}

Status save_model(const ir::Graph& graph, const SaveOptions& options, const std::string& path) {
  if (path.empty()) return invalid_argument("save_model: empty output path");
  std::error_code ec;
  if (fs::is_directory(path, ec)) return invalid_argument(path + ": is a directory, cannot write the model there");
  fs::path folder = fs::path(path).parent_path();
  if (folder.empty()) folder = ".";
  if (!fs::is_directory(folder, ec))
    return not_found(path + ": cannot write the model: folder '" + folder.string() + "' does not exist");

  // Lower the threshold only as far as needed to stay under protobuf's limit.
  size_t threshold = options.external_data_threshold;
  for (size_t candidate : {threshold, std::min<size_t>(threshold, 1024), size_t{1}}) {
    threshold = candidate;
    if (inline_tensor_bytes(graph, candidate) + kNonTensorHeadroom <= kMaxProtoBytes) break;
  }

  ::onnx::ModelProto model;
  model.set_ir_version(8);
  model.set_producer_name("loom");
  add_opset_imports(graph, &model);

  const std::string data_path = path + ".data";
  ExternalDataWriter external(data_path, fs::path(data_path).filename().string());
  GraphWriter writer(threshold, &external);
  LOOM_RETURN_IF_ERROR(writer.write(graph, model.mutable_graph()).with_context(path));
  LOOM_RETURN_IF_ERROR(external.finish());

  const uint64_t size = model.ByteSizeLong();
  if (size > kMaxProtoBytes)
    return invalid_argument(path + ": the model needs " + std::to_string(size) +
                            " bytes even with its initializers in external data, over protobuf's 2 GiB limit");
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) return fail(path + ": cannot write the model: " + std::strerror(errno));
  if (!model.SerializeToOstream(&out)) return fail(path + ": writing the model failed");
  out.close();
  if (!out) return fail(path + ": writing the model failed: " + std::strerror(errno));
  return Status::ok();
}

}  // namespace loom::onnxio
