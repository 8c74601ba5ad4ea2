// check_plugin_on_model (`loom plugins --check PATH.so --model M.onnx`): a
// plugin's kernels against the reference EP on a real model.
//
// The reference EP runs the model unoptimized and shows every value it
// makes. Each node the plugin's provider claims (placed with the plugin
// first, the reference EP behind it) is then cut out as a one-node model
// with its constants, fed the reference's values of its inputs, run on the
// plugin's provider alone and compared with the reference's values of its
// outputs: element type, shape and values within a tolerance. A difference
// is thus pinned on the node that makes it, not on whatever runs after it.
// Last, the whole model with the plugin first (optimized, as users run it)
// is compared output by output, which also covers fused partitions.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>
#include <system_error>

#include "loom/environment.h"
#include "loom/plugin_check.h"
#include "loom/sdk/dtype.h"
#include "loom/session.h"
#include "onnx/model_loader.h"
#include "onnx/model_saver.h"

namespace loom {
namespace {

namespace fs = std::filesystem;

struct Checklist {
  PluginCheckReport& report;
  void add(CheckLevel level, std::string what, std::string detail) {
    report.items.push_back({level, std::move(what), std::move(detail)});
  }
};

// Element i of a numeric tensor as a double (NAN for types it cannot read).
double element(const Tensor& t, int64_t i) {
  const void* p = t.data();
  switch (t.dtype()) {
    case DType::kFloat: return static_cast<const float*>(p)[i];
    case DType::kDouble: return static_cast<const double*>(p)[i];
    case DType::kFloat16: return sdk::Float16::to_float(static_cast<const uint16_t*>(p)[i]);
    case DType::kBFloat16: {
      sdk::BFloat16 b;
      b.bits = static_cast<const uint16_t*>(p)[i];
      return static_cast<float>(b);
    }
    case DType::kInt8: return static_cast<const int8_t*>(p)[i];
    case DType::kUint8: return static_cast<const uint8_t*>(p)[i];
    case DType::kInt16: return static_cast<const int16_t*>(p)[i];
    case DType::kUint16: return static_cast<const uint16_t*>(p)[i];
    case DType::kInt32: return static_cast<const int32_t*>(p)[i];
    case DType::kUint32: return static_cast<const uint32_t*>(p)[i];
    case DType::kInt64: return static_cast<double>(static_cast<const int64_t*>(p)[i]);
    case DType::kUint64: return static_cast<double>(static_cast<const uint64_t*>(p)[i]);
    case DType::kBool: return static_cast<const uint8_t*>(p)[i] != 0;
    default: return NAN;
  }
}

bool is_float(DType t) {
  return t == DType::kFloat || t == DType::kDouble || t == DType::kFloat16 || t == DType::kBFloat16;
}

// "" when `got` matches `want`; else what differs, for the report.
std::string difference(const Tensor& got, const Tensor& want, const ModelCheckOptions& o) {
  if (got.dtype() != want.dtype())
    return "is " + dtype_name(got.dtype()) + ", the reference's " + dtype_name(want.dtype());
  if (got.dims() != want.dims())
    return "has shape " + dims_string(got.dims()) + ", the reference's " + dims_string(want.dims());
  if (got.dtype() == DType::kString) return got.strings() == want.strings() ? "" : "strings differ";
  const bool half = got.dtype() == DType::kFloat16 || got.dtype() == DType::kBFloat16;
  const double atol = half ? std::max(o.atol, 1e-2) : o.atol, rtol = half ? std::max(o.rtol, 1e-2) : o.rtol;
  const bool exact = !is_float(got.dtype());
  int64_t worst = -1;
  double worst_excess = 0, max_abs = 0;
  for (int64_t i = 0; i < got.element_count(); ++i) {
    const double a = element(got, i), b = element(want, i);
    if (std::isnan(a) && std::isnan(b)) continue;
    if (std::isnan(a) != std::isnan(b) || (std::isinf(a) || std::isinf(b) ? a != b : false)) {
      if (worst < 0 || worst_excess < INFINITY) worst = i, worst_excess = INFINITY;
      continue;
    }
    if (std::isinf(a)) continue;
    const double d = std::fabs(a - b);
    max_abs = std::max(max_abs, d);
    const double excess = exact ? d : d - (atol + rtol * std::fabs(b));
    if (excess > 0 && excess > worst_excess) worst = i, worst_excess = excess;
  }
  if (worst < 0) return "";
  std::ostringstream s;
  s << "differs at element " << worst << ": " << element(got, worst) << " where the reference has "
    << element(want, worst) << " (largest difference " << max_abs << "; tolerance " << (exact ? 0 : atol) << " + "
    << (exact ? 0 : rtol) << " x |reference|)";
  return s.str();
}

// A folder of its own under the system's temporary folder, removed with the object.
class ScratchDir {
 public:
  ScratchDir() {
    std::error_code ec;
    const fs::path base = fs::temp_directory_path(ec);
    std::string pattern = ((ec ? fs::path("/tmp") : base) / "loom-plugin-check-XXXXXX").string();
    if (mkdtemp(pattern.data()) != nullptr) path_ = pattern;
  }
  ~ScratchDir() {
    std::error_code ec;
    if (!path_.empty()) fs::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// `node` of `graph` alone: its constant inputs as initializers, its other
// inputs as graph inputs typed like the values `seen` holds for them.
ir::Graph one_node_graph(const ir::Graph& graph, const ir::Node& node, const std::map<std::string, Tensor>& seen) {
  ir::Graph g;
  g.name = "check_" + node.label();
  g.opsets = graph.opsets;
  for (const std::string& in : node.inputs) {
    if (in.empty() || g.value_types.count(in) || g.initializers.count(in)) continue;
    auto c = graph.initializers.find(in);
    if (c != graph.initializers.end() && (!graph.is_graph_input(in) || !seen.count(in))) {
      g.initializers.emplace(in, c->second);
      g.value_types[in] = ir::tensor_type(c->second);
      continue;
    }
    g.inputs.push_back(in);
    g.value_types[in] = ir::tensor_type(seen.at(in));
  }
  ir::Node copy = node;
  for (const std::string& out : copy.outputs)
    if (!out.empty()) g.outputs.push_back(out);
  g.add_node(std::move(copy));
  return g;
}

// A copy of `t` that outlives the run that showed it.
Tensor copy_of(const Tensor& t) {
  if (t.is_string()) return Tensor::from_strings(t.dims(), t.strings());
  auto c = Tensor::from_bytes(t.dtype(), t.dims(), t.data(), t.byte_size());
  return c ? std::move(*c) : Tensor();
}

// A tensor input the reference run knows: a graph input, or a value it showed.
const Tensor* known_value(const std::string& name, const std::map<std::string, Tensor>& seen) {
  auto it = seen.find(name);
  return it != seen.end() ? &it->second : nullptr;
}

// `deny`: nodes the providers do not claim fail the session instead of
// falling back to the reference EP.
Expected<std::shared_ptr<Environment>> environment(const ModelCheckOptions& o, const std::string& plugin_dir,
                                                   std::vector<std::string> providers, bool deny = false) {
  Config c = o.config;
  if (std::find(c.plugin_dirs.begin(), c.plugin_dirs.end(), plugin_dir) == c.plugin_dirs.end())
    c.plugin_dirs.push_back(plugin_dir);
  c.providers = std::move(providers);
  c.fallback = deny ? FallbackPolicy::kDeny : FallbackPolicy::kAllow;
  return Environment::create(c);
}

}  // namespace

PluginCheckReport check_plugin_on_model(const std::string& plugin_path, const ModelCheckOptions& o) {
  PluginCheckReport report;
  report.path = plugin_path;
  Checklist out{report};
  std::error_code ec;
  const fs::path library = fs::canonical(plugin_path, ec);
  if (ec) {
    out.add(CheckLevel::kFail, "plugin", plugin_path + ": " + ec.message());
    return report;
  }
  // The plugin's own providers, as the host loads it from its folder.
  auto probe = environment(o, library.parent_path().string(), {});
  if (!probe) {
    out.add(CheckLevel::kFail, "environment", probe.status().message());
    return report;
  }
  std::vector<std::string> providers;
  for (const PluginReport& r : (*probe)->plugin_reports()) {
    if (fs::canonical(r.path, ec) != library) continue;
    if (!r.loaded) {
      out.add(CheckLevel::kFail, "plugin", "refused by the host: " + r.refusal);
      return report;
    }
    for (const auto& f : r.factories)
      if (!f.devices.empty() && f.name != "reference" &&
          std::find(providers.begin(), providers.end(), f.name) == providers.end())
        providers.push_back(f.name);
  }
  if (providers.empty()) {
    out.add(CheckLevel::kFail, "providers", "the plugin offers no provider with a device here");
    return report;
  }

  // The reference run, unoptimized, showing every value.
  Config plain = o.config;
  plain.optimization_level = OptimizationLevel::kDisabled;
  ModelCheckOptions unoptimized = o;
  unoptimized.config = plain;
  auto ref_env = environment(unoptimized, library.parent_path().string(), {"reference"});
  if (!ref_env) {
    out.add(CheckLevel::kFail, "environment", ref_env.status().message());
    return report;
  }
  auto reference = Session::create(*ref_env, o.model_path);
  if (!reference) {
    out.add(CheckLevel::kFail, "reference session", reference.status().message());
    return report;
  }
  std::map<std::string, Tensor> seen = o.inputs;
  RunOptions watch;
  for (const ValueInfo& v : (*reference)->observable_values()) watch.observed_values.push_back(v.name);
  watch.observe = [&seen](const std::string& name, const Tensor& value) { seen[name] = copy_of(value); };
  auto want = (*reference)->run(o.inputs, {}, watch);
  if (!want) {
    out.add(CheckLevel::kFail, "reference run", want.status().message());
    return report;
  }
  auto loaded = onnxio::load_model_file(o.model_path);
  if (!loaded) {
    out.add(CheckLevel::kFail, "model", loaded.status().message());
    return report;
  }
  const ir::Graph& graph = *loaded->graph;
  std::map<std::string, const ir::Node*> producer;
  for (const auto& n : graph.nodes())
    for (const std::string& v : n->outputs)
      if (!v.empty()) producer[v] = n.get();

  ScratchDir scratch;
  for (const std::string& provider : providers) {
    auto env = environment(unoptimized, library.parent_path().string(), {provider, "reference"});
    if (!env) {
      out.add(CheckLevel::kFail, "'" + provider + "' environment", env.status().message());
      continue;
    }
    auto placed = Session::create(*env, o.model_path);
    if (!placed) {
      out.add(CheckLevel::kFail, "'" + provider + "' session", placed.status().message());
      continue;
    }
    auto alone_env = environment(unoptimized, library.parent_path().string(), {provider}, true);
    int claimed = 0, matched = 0;
    for (const auto& p : (*placed)->placement().nodes) {
      if (p.provider != provider) continue;
      ++claimed;
      const std::string what = "'" + provider + "' node " + (p.node_name.empty() ? p.op_type : "'" + p.node_name + "'") +
                               " (" + p.op_type + ")";
      const std::string first_output = p.outputs.empty() ? "" : p.outputs.front();
      auto it = producer.find(first_output);
      if (it == producer.end()) {
        out.add(CheckLevel::kWarn, what, "not found in the model file; checked through the model's outputs only");
        continue;
      }
      const ir::Node& node = *it->second;
      std::string missing;
      for (const std::string& in : node.inputs)
        if (!in.empty() && !graph.initializers.count(in) && known_value(in, seen) == nullptr) missing = in;
      for (const ir::Attribute& attr : node.attributes)
        if (attr.graph || !attr.graphs.empty()) missing = "(a subgraph)";
      if (!missing.empty() || !alone_env) {
        out.add(CheckLevel::kWarn, what,
                "input " + missing + " is not a tensor the reference run shows; checked through the model's outputs only");
        continue;
      }
      const std::string path = scratch.path() + "/node.onnx";
      onnxio::SaveOptions save;
      save.external_data_threshold = SIZE_MAX;
      if (Status st = onnxio::save_model(one_node_graph(graph, node, seen), save, path); !st) {
        out.add(CheckLevel::kFail, what, "cannot cut the node out: " + st.message());
        continue;
      }
      auto alone = Session::create(*alone_env, path);
      if (!alone) {
        out.add(CheckLevel::kWarn, what, "the provider does not take it on its own: " + alone.status().message());
        continue;
      }
      std::map<std::string, Tensor> feeds;
      for (const ValueInfo& in : (*alone)->inputs()) feeds[in.name] = seen.at(in.name);
      auto got = (*alone)->run(feeds);
      if (!got) {
        out.add(CheckLevel::kFail, what, "run failed: " + got.status().message());
        continue;
      }
      std::string problems;
      const auto& names = (*alone)->outputs();
      for (size_t i = 0; i < names.size() && i < got->size(); ++i) {
        const Tensor* ref = known_value(names[i].name, seen);
        if (ref == nullptr) continue;  // not a tensor the reference showed (e.g. an optional output)
        const std::string d = difference((*got)[i], *ref, o);
        if (!d.empty()) problems += (problems.empty() ? "" : "; ") + ("output '" + names[i].name + "' " + d);
      }
      if (problems.empty()) ++matched;
      else out.add(CheckLevel::kFail, what, problems);
    }
    out.add(claimed == 0 ? CheckLevel::kWarn : CheckLevel::kOk, "'" + provider + "' nodes",
            std::to_string(claimed) + " of " + std::to_string((*placed)->placement().nodes.size()) +
                " node(s) placed on it; " + std::to_string(matched) + " match the reference EP on their own");

    // The whole model as users run it: optimized, the plugin first.
    auto full_env = environment(o, library.parent_path().string(), {provider, "reference"});
    auto full = full_env ? Session::create(*full_env, o.model_path) : Expected<std::unique_ptr<Session>>(full_env.status());
    if (!full) {
      out.add(CheckLevel::kFail, "'" + provider + "' whole model", full.status().message());
      continue;
    }
    auto got = (*full)->run(o.inputs);
    if (!got) {
      out.add(CheckLevel::kFail, "'" + provider + "' whole model", "run failed: " + got.status().message());
      continue;
    }
    std::string problems;
    for (size_t i = 0; i < got->size() && i < want->size(); ++i) {
      const std::string d = difference((*got)[i], (*want)[i], o);
      if (!d.empty()) problems += (problems.empty() ? "" : "; ") + ("output '" + (*full)->outputs()[i].name + "' " + d);
    }
    out.add(problems.empty() ? CheckLevel::kOk : CheckLevel::kFail, "'" + provider + "' whole model",
            problems.empty() ? std::to_string(got->size()) + " output(s) match the reference EP" : problems);
  }
  return report;
}

}  // namespace loom
