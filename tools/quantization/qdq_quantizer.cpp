#include "quantization/qdq_quantizer.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <unordered_map>

namespace loom::quant {
namespace {

using ::onnx::NodeProto;
using ::onnx::TensorProto;

struct QuantParams {
  std::vector<float> scale;  // one per tensor, or per channel
  std::vector<int32_t> zero_point;
};

// A weight initializer quantized along `axis` (-1: per tensor), read
// through the DequantizeLinear output `dq`.
struct WeightEntry {
  std::string dq;
  QuantParams params;
  int64_t axis = -1;
};

// ONNX Runtime's compute_scale_zp, in float32 as its numpy code computes it;
// rounding ties to even (numpy's round, Python's round).
void scale_zero_point(float low, float high, int qmin, int qmax, bool symmetric, float* scale, int32_t* zero) {
  float rmin = std::min(low, 0.0f), rmax = std::max(high, 0.0f);
  if (symmetric) {
    const float m = std::max(std::fabs(rmin), std::fabs(rmax));
    rmin = -m;
    rmax = m;
  }
  *scale = rmax != rmin ? (rmax - rmin) / static_cast<float>(qmax - qmin) : 1.0f;
  if (*scale == 0.0f || !std::isfinite(*scale)) *scale = 1.0f;
  const float z = std::nearbyint(static_cast<float>(qmin) - rmin / *scale);
  *zero = static_cast<int32_t>(std::clamp(z, static_cast<float>(qmin), static_cast<float>(qmax)));
}

int32_t quantize_value(float v, float scale, int32_t zero, int64_t qmin, int64_t qmax) {
  const double q = std::nearbyint(static_cast<double>(v / scale)) + zero;
  return static_cast<int32_t>(std::clamp<double>(q, static_cast<double>(qmin), static_cast<double>(qmax)));
}

Expected<std::vector<float>> float_values(const TensorProto& t) {
  if (t.data_location() == TensorProto::EXTERNAL)
    return invalid_argument("initializer '" + t.name() + "' keeps its data outside the model file; load and save "
                            "the model with its data inside first");
  int64_t count = 1;
  for (int64_t d : t.dims()) count *= d;
  std::vector<float> v(static_cast<size_t>(count));
  if (t.has_raw_data()) {
    if (t.raw_data().size() != v.size() * sizeof(float))
      return invalid_argument("initializer '" + t.name() + "': raw data size does not match its shape");
    std::memcpy(v.data(), t.raw_data().data(), t.raw_data().size());
  } else {
    if (t.float_data_size() != count)
      return invalid_argument("initializer '" + t.name() + "': data size does not match its shape");
    std::copy(t.float_data().begin(), t.float_data().end(), v.begin());
  }
  return v;
}

TensorProto scalar_or_vector(const std::string& name, int32_t type, const std::vector<float>& f,
                             const std::vector<int32_t>& i, bool vector) {
  TensorProto t;
  t.set_name(name);
  t.set_data_type(type);
  const size_t n = type == TensorProto::FLOAT ? f.size() : i.size();
  if (vector) t.add_dims(static_cast<int64_t>(n));
  std::string raw;
  for (size_t k = 0; k < n; ++k) {
    if (type == TensorProto::FLOAT) raw.append(reinterpret_cast<const char*>(&f[k]), 4);
    else if (type == TensorProto::INT32) raw.append(reinterpret_cast<const char*>(&i[k]), 4);
    else raw.push_back(static_cast<char>(static_cast<int8_t>(i[k])));
  }
  t.set_raw_data(raw);
  return t;
}

NodeProto make_node(const std::string& op, const std::vector<std::string>& inputs, const std::string& output,
                    const std::string& name, int64_t axis = -1) {
  NodeProto n;
  n.set_op_type(op);
  n.set_name(name);
  for (const std::string& in : inputs) n.add_input(in);
  n.add_output(output);
  if (axis >= 0) {
    auto* a = n.add_attribute();
    a->set_name("axis");
    a->set_type(::onnx::AttributeProto::INT);
    a->set_i(axis);
  }
  return n;
}

int64_t int_attribute(const NodeProto& n, const std::string& name, int64_t fallback) {
  for (const auto& a : n.attribute())
    if (a.name() == name) return a.i();
  return fallback;
}

class QdqRewriter {
 public:
  QdqRewriter(::onnx::ModelProto& model, const std::map<std::string, TensorRange>& ranges, const QdqOptions& options)
      : model_(model), g_(*model.mutable_graph()), ranges_(ranges), options_(options) {}

  Expected<QdqReport> run() {
    LOOM_RETURN_IF_ERROR(check_opset());
    for (int i = 0; i < g_.initializer_size(); ++i) initializers_[g_.initializer(i).name()] = i;
    for (const auto& in : g_.input()) graph_inputs_.insert(in.name());
    for (const auto& out : g_.output()) graph_outputs_.insert(out.name());
    for (int i = 0; i < g_.node_size(); ++i) {
      std::set<std::string> read(g_.node(i).input().begin(), g_.node(i).input().end());
      for (const std::string& v : read) readers_[v].push_back(i);
    }
    const std::set<std::string> types(options_.op_types.begin(), options_.op_types.end());
    std::vector<int> chosen;
    for (int i = 0; i < g_.node_size(); ++i) {
      const NodeProto& n = g_.node(i);
      if (!n.domain().empty() && n.domain() != "ai.onnx") continue;
      if (!types.count(n.op_type()) || options_.exclude_nodes.count(n.name())) continue;
      std::string why = quantizable(n);
      if (why.empty()) chosen.push_back(i);
      else report_.skipped.emplace_back(label(n, i), why);
    }
    for (int i : chosen) LOOM_RETURN_IF_ERROR(plan_node(i));
    LOOM_RETURN_IF_ERROR(emit());
    return report_;
  }

 private:
  static std::string label(const NodeProto& n, int i) {
    return (n.name().empty() ? "#" + std::to_string(i) : n.name()) + " (" + n.op_type() + ")";
  }

  Status check_opset() {
    int64_t opset = 0;
    for (const auto& o : model_.opset_import())
      if (o.domain().empty() || o.domain() == "ai.onnx") opset = o.version();
    const int64_t needed = options_.per_channel ? 13 : 10;
    if (opset < needed)
      return invalid_argument("the model imports ONNX opset " + std::to_string(opset) + "; QDQ quantization " +
                              (options_.per_channel ? "with per-channel weights " : "") + "needs opset " +
                              std::to_string(needed) + " or later (convert the model first)");
    return Status::ok();
  }

  bool is_float_initializer(const std::string& v) const {
    auto it = initializers_.find(v);
    return it != initializers_.end() && g_.initializer(it->second).data_type() == TensorProto::FLOAT;
  }
  // An activation: not an initializer, or an initializer a graph input may override.
  bool is_activation(const std::string& v) const { return !initializers_.count(v) || graph_inputs_.count(v); }

  // Which inputs are weights (quantized as int8 initializers) and which
  // activations (need a range); "" when the node can be quantized.
  std::string quantizable(const NodeProto& n) const {
    const std::string& op = n.op_type();
    if (n.input_size() < 2) return "fewer than two inputs";
    const size_t data_inputs = 2;  // Conv X W, MatMul A B, Gemm A B (biases handled apart)
    for (size_t k = 0; k < data_inputs; ++k) {
      const std::string& v = n.input(static_cast<int>(k));
      if (op == "Conv" && k == 0 && !is_activation(v)) return "data input '" + v + "' is a constant";
      if (is_activation(v)) {
        if (!ranges_.count(v)) return "no calibrated range for input '" + v + "'";
        if (op == "Conv" && k == 1) return "weights '" + v + "' are not an initializer";
      } else if (!is_float_initializer(v)) {
        return "input '" + v + "' is not float";
      }
    }
    if (op == "Conv" && n.input_size() > 2 && !n.input(2).empty() && !is_float_initializer(n.input(2)))
      return "bias '" + n.input(2) + "' is not a float initializer";
    return {};
  }

  // The per-channel axis of weight input `k` of n, or -1 for per tensor.
  int64_t channel_axis(const NodeProto& n, int k, int64_t rank) const {
    if (!options_.per_channel || rank < 2) return -1;
    if (n.op_type() == "Conv") return 0;
    if (n.op_type() == "MatMul") return k == 1 ? rank - 1 : -1;
    if (n.op_type() == "Gemm") return k == 1 ? (int_attribute(n, "transB", 0) ? 0 : 1) : -1;
    return -1;
  }

  Status plan_node(int i) {
    NodeProto& n = *g_.mutable_node(i);
    const WeightEntry* weights = nullptr;  // the last quantized weight input (Conv's W)
    for (int k = 0; k < 2; ++k) {
      const std::string v = n.input(k);
      if (is_activation(v)) {
        activations_.insert(v);
        continue;
      }
      const TensorProto& w = g_.initializer(initializers_.at(v));
      const int64_t axis = channel_axis(n, k, w.dims_size());
      LOOM_ASSIGN_OR_RETURN(weights, quantize_weight(v, axis));
      n.set_input(k, weights->dq);
    }
    for (const std::string& out : n.output()) {
      const std::string q = quantized_output(out);
      if (ranges_.count(q)) activations_.insert(q);
    }
    if (n.op_type() == "Conv" && n.input_size() > 2 && !n.input(2).empty()) {
      LOOM_ASSIGN_OR_RETURN(std::string dq, quantize_bias(n, *weights));
      n.set_input(2, dq);
    }
    ++report_.quantized_nodes;
    return Status::ok();
  }

  // Where the pair for output `out` goes: after a Relu or Clip that alone
  // reads it (as ONNX Runtime places it), so that the activation runs on
  // the float output and the Q that follows implies it (Loom's
  // quantized_activation_removal then drops it and the op fuses with its Q).
  std::string quantized_output(const std::string& out) const {
    auto readers = readers_.find(out);
    if (readers == readers_.end() || readers->second.size() != 1 || graph_outputs_.count(out)) return out;
    const NodeProto& act = g_.node(readers->second[0]);
    const bool removable = (act.op_type() == "Relu" || act.op_type() == "Clip") &&
                           (act.domain().empty() || act.domain() == "ai.onnx") && act.output_size() == 1 &&
                           act.input(0) == out && ranges_.count(act.output(0));
    return removable ? act.output(0) : out;
  }

  // int8 weights behind a DequantizeLinear (made once per weight and axis).
  Expected<const WeightEntry*> quantize_weight(const std::string& name, int64_t axis) {
    const std::string key = name + "@" + std::to_string(axis);
    if (auto it = weights_.find(key); it != weights_.end()) return &it->second;
    const TensorProto& w = g_.initializer(initializers_.at(name));
    LOOM_ASSIGN_OR_RETURN(std::vector<float> values, float_values(w));
    std::vector<int64_t> dims(w.dims().begin(), w.dims().end());
    // A weight quantized along two axes (shared by different ops) gets two
    // sets of names.
    const std::string base = used_bases_.insert(name).second ? name : name + "_axis" + std::to_string(axis);
    const int64_t channels = axis >= 0 ? dims[static_cast<size_t>(axis)] : 1;
    int64_t inner = 1;
    for (size_t d = static_cast<size_t>(axis >= 0 ? axis + 1 : dims.size()); d < dims.size(); ++d) inner *= dims[d];
    auto channel_of = [&](size_t index) { return axis >= 0 ? static_cast<int64_t>(index / inner) % channels : 0; };
    std::vector<float> lo(static_cast<size_t>(channels), 0.0f), hi(static_cast<size_t>(channels), 0.0f);
    for (size_t e = 0; e < values.size(); ++e) {
      const size_t c = static_cast<size_t>(channel_of(e));
      lo[c] = std::min(lo[c], values[e]);
      hi[c] = std::max(hi[c], values[e]);
    }
    QuantParams p;
    const int qmin = options_.symmetric_weights ? -127 : -128, qmax = 127;
    for (int64_t c = 0; c < channels; ++c) {
      float s;
      int32_t z;
      scale_zero_point(lo[static_cast<size_t>(c)], hi[static_cast<size_t>(c)], qmin, qmax, options_.symmetric_weights,
                       &s, &z);
      p.scale.push_back(s);
      p.zero_point.push_back(z);
    }
    TensorProto q;
    q.set_name(base + "_quantized");
    q.set_data_type(TensorProto::INT8);
    for (int64_t d : dims) q.add_dims(d);
    std::string raw(values.size(), '\0');
    for (size_t e = 0; e < values.size(); ++e) {
      const size_t c = static_cast<size_t>(channel_of(e));
      raw[e] = static_cast<char>(static_cast<int8_t>(quantize_value(values[e], p.scale[c], p.zero_point[c], qmin, qmax)));
    }
    q.set_raw_data(raw);
    WeightEntry entry;
    entry.dq = base + "_DequantizeLinear_Output";
    entry.params = p;
    entry.axis = axis;
    new_initializers_.push_back(std::move(q));
    new_initializers_.push_back(scalar_or_vector(base + "_scale", TensorProto::FLOAT, p.scale, {}, axis >= 0));
    new_initializers_.push_back(scalar_or_vector(base + "_zero_point", TensorProto::INT8, {}, p.zero_point, axis >= 0));
    front_nodes_.push_back(make_node("DequantizeLinear", {base + "_quantized", base + "_scale", base + "_zero_point"},
                                     entry.dq, base + "_DequantizeLinear", axis));
    replaced_initializers_.insert(name);
    ++report_.weights;
    return &(weights_[key] = std::move(entry));
  }

  // The Conv bias as int32 with scale input_scale * weight_scale.
  Expected<std::string> quantize_bias(const NodeProto& n, const WeightEntry& w) {
    const std::string& name = n.input(2);
    float x_scale;
    int32_t x_zero;
    activation_params(ranges_.at(n.input(0)), &x_scale, &x_zero);
    const TensorProto& b = g_.initializer(initializers_.at(name));
    LOOM_ASSIGN_OR_RETURN(std::vector<float> values, float_values(b));
    const bool per_channel = w.axis >= 0;
    if (per_channel && values.size() != w.params.scale.size())
      return invalid_argument("Conv bias '" + name + "' has " + std::to_string(values.size()) + " values for " +
                              std::to_string(w.params.scale.size()) + " output channels");
    std::vector<float> scale;
    std::vector<int32_t> q, zero;
    for (size_t c = 0; c < values.size(); ++c) {
      const float s = x_scale * w.params.scale[per_channel ? c : 0];
      scale.push_back(s);
      q.push_back(quantize_value(values[c], s, 0, -2147483647LL, 2147483647LL));
      zero.push_back(0);
    }
    if (!per_channel) {  // one scale: the same for every element
      scale.resize(1);
      zero.resize(1);
    }
    // A bias shared by Convs with different input or weight scales gets
    // one int32 copy per Conv.
    const std::string base = used_bases_.insert(name).second ? name : name + "_for_" + n.output(0);
    TensorProto qb = scalar_or_vector(base + "_quantized", TensorProto::INT32, {}, q, true);
    qb.clear_dims();
    for (int64_t d : b.dims()) qb.add_dims(d);
    const std::string dq = base + "_DequantizeLinear_Output";
    new_initializers_.push_back(std::move(qb));
    new_initializers_.push_back(scalar_or_vector(base + "_scale", TensorProto::FLOAT, scale, {}, per_channel));
    new_initializers_.push_back(scalar_or_vector(base + "_zero_point", TensorProto::INT32, {}, zero, per_channel));
    front_nodes_.push_back(make_node("DequantizeLinear", {base + "_quantized", base + "_scale", base + "_zero_point"},
                                     dq, base + "_DequantizeLinear", per_channel ? 0 : -1));
    replaced_initializers_.insert(name);
    ++report_.biases;
    return dq;
  }

  void activation_params(const TensorRange& r, float* scale, int32_t* zero) const {
    if (options_.int8_activations) scale_zero_point(r.low, r.high, -128, 127, false, scale, zero);
    else scale_zero_point(r.low, r.high, 0, 255, false, scale, zero);
  }

  // The pair for activation `t`: T -> Q -> DQ, read by every node but Q.
  std::vector<NodeProto> qdq_pair(const std::string& t) {
    float s;
    int32_t z;
    activation_params(ranges_.at(t), &s, &z);
    const int32_t zero_type = options_.int8_activations ? TensorProto::INT8 : TensorProto::UINT8;
    new_initializers_.push_back(scalar_or_vector(t + "_scale", TensorProto::FLOAT, {s}, {}, false));
    new_initializers_.push_back(scalar_or_vector(t + "_zero_point", zero_type, {}, {z}, false));
    ++report_.activations;
    return {make_node("QuantizeLinear", {t, t + "_scale", t + "_zero_point"}, t + "_QuantizeLinear_Output",
                      t + "_QuantizeLinear"),
            make_node("DequantizeLinear", {t + "_QuantizeLinear_Output", t + "_scale", t + "_zero_point"},
                      t + "_DequantizeLinear_Output", t + "_DequantizeLinear")};
  }

  // Rebuilds the node list in topological order: weight DQs and the pairs of
  // graph inputs first, then each node followed by the pairs of what it
  // makes; every reader of a quantized activation reads its DQ output.
  Status emit() {
    google::protobuf::RepeatedPtrField<NodeProto> nodes;
    auto add = [&](NodeProto n) { *nodes.Add() = std::move(n); };
    for (NodeProto& n : front_nodes_) add(std::move(n));
    std::set<std::string> made;
    for (const std::string& t : activations_)
      if (graph_inputs_.count(t) || initializers_.count(t))
        for (NodeProto& n : qdq_pair(t)) add(std::move(n)), made.insert(t);
    for (const NodeProto& n : g_.node()) {
      NodeProto copy = n;
      for (int k = 0; k < copy.input_size(); ++k)
        if (activations_.count(copy.input(k))) copy.set_input(k, copy.input(k) + "_DequantizeLinear_Output");
      const std::vector<std::string> outputs(copy.output().begin(), copy.output().end());
      add(std::move(copy));
      for (const std::string& o : outputs)
        if (activations_.count(o) && !made.count(o))
          for (NodeProto& qdq : qdq_pair(o)) add(std::move(qdq)), made.insert(o);
    }
    g_.mutable_node()->Swap(&nodes);
    // Float initializers nothing reads any more go (subgraphs' reads of
    // outer values included); the new ones join.
    std::set<std::string> read;
    collect_reads(g_, &read);
    for (const auto& o : g_.output()) read.insert(o.name());
    google::protobuf::RepeatedPtrField<TensorProto> kept;
    for (TensorProto& t : *g_.mutable_initializer())
      if (!replaced_initializers_.count(t.name()) || read.count(t.name()) || graph_inputs_.count(t.name()))
        *kept.Add() = std::move(t);
    g_.mutable_initializer()->Swap(&kept);
    for (TensorProto& t : new_initializers_) *g_.add_initializer() = std::move(t);
    return Status::ok();
  }

  static void collect_reads(const ::onnx::GraphProto& g, std::set<std::string>* read) {
    for (const NodeProto& n : g.node()) {
      for (const std::string& in : n.input()) read->insert(in);
      for (const auto& a : n.attribute()) {
        if (a.has_g()) collect_reads(a.g(), read);
        for (const auto& sub : a.graphs()) collect_reads(sub, read);
      }
    }
  }

  ::onnx::ModelProto& model_;
  ::onnx::GraphProto& g_;
  const std::map<std::string, TensorRange>& ranges_;
  const QdqOptions& options_;
  QdqReport report_;
  std::unordered_map<std::string, int> initializers_;
  std::set<std::string> graph_inputs_, graph_outputs_;
  std::unordered_map<std::string, std::vector<int>> readers_;  // node indices reading a value (top-level inputs)
  std::set<std::string> activations_;
  std::map<std::string, WeightEntry> weights_;
  std::set<std::string> replaced_initializers_;
  std::set<std::string> used_bases_;
  std::vector<TensorProto> new_initializers_;
  std::vector<NodeProto> front_nodes_;
};

}  // namespace

Expected<QdqReport> quantize_qdq(::onnx::ModelProto& model, const std::map<std::string, TensorRange>& ranges,
                                 const QdqOptions& options) {
  if (!model.has_graph()) return invalid_argument("not an ONNX model (no graph)");
  return QdqRewriter(model, ranges, options).run();
}

}  // namespace loom::quant
