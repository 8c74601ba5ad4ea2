#include "inference_session.h"

#include <pybind11/stl.h>

#include <algorithm>
#include <set>

#include "environment.h"
#include "errors.h"
#include "gil.h"
#include "io_binding.h"
#include "numpy_convert.h"
#include "ort_providers.h"

namespace loom::python {

namespace py = pybind11;

namespace {

std::string fspath(const py::handle& path) {
  return py::str(py::module_::import("os").attr("fspath")(path));
}

bool contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

std::map<std::string, std::string> string_options(const py::handle& options, const std::string& provider) {
  if (!py::isinstance<py::dict>(options))
    throw py::type_error("options of provider '" + provider + "' must be a dict");
  std::map<std::string, std::string> out;
  for (auto [k, v] : py::reinterpret_borrow<py::dict>(options)) out[py::str(k)] = py::str(v);
  return out;
}

// ONNX Runtime's forms: providers=['a', 'b'] or [('a', {...}), 'b'], with
// provider_options=[{...}, {...}] the same length as providers. Names are
// Loom's or ONNX Runtime's (ort_providers.h); each comes back with its
// options, in order.
std::vector<OrtProviderRequest> provider_requests(const py::object& providers, const py::object& provider_options) {
  if (providers.is_none()) {
    if (!provider_options.is_none()) throw py::value_error("provider_options given without providers");
    return {};
  }
  if (py::isinstance<py::str>(providers)) throw py::type_error("providers must be a list of names, not a str");
  std::vector<py::object> options;
  if (!provider_options.is_none()) {
    for (py::handle o : provider_options) options.push_back(py::reinterpret_borrow<py::object>(o));
    if (options.size() != py::len(providers))
      throw py::value_error("'providers' and 'provider_options' should be the same length if both are given.");
  }
  std::vector<OrtProviderRequest> out;
  std::set<std::string> seen;
  size_t i = 0;
  for (py::handle p : providers) {
    OrtProviderRequest r;
    if (py::isinstance<py::tuple>(p) && py::len(p) == 2) {
      if (!options.empty()) throw py::value_error("provider options given both in providers and in provider_options");
      r.name = p.cast<py::tuple>()[0].cast<std::string>();
      r.options = string_options(p.cast<py::tuple>()[1], r.name);
    } else {
      r.name = p.cast<std::string>();
      if (!options.empty()) r.options = string_options(options[i], r.name);
    }
    if (!seen.insert(r.name).second) throw py::value_error("provider '" + r.name + "' is listed twice");
    out.push_back(std::move(r));
    ++i;
  }
  return out;
}

py::list shape_of(const ValueInfo& v) {
  py::list shape;
  if (v.kind != ValueKind::kTensor && v.kind != ValueKind::kOptional) return shape;
  for (const DimInfo& d : v.shape) {
    if (d.value >= 0) shape.append(d.value);
    else if (!d.symbol.empty()) shape.append(d.symbol);
    else shape.append(py::none());
  }
  return shape;
}

}  // namespace

RunOptions run_options_of(const py::object& run_options) {
  if (run_options.is_none()) return {};
  return run_options.cast<const PyRunOptions&>().run_options();
}

PyInferenceSession::PyInferenceSession(const py::object& path_or_bytes, const py::object& sess_options,
                                       const py::object& providers, const py::object& provider_options,
                                       const py::object& config) {
  if (!sess_options.is_none()) options_ = sess_options.cast<PySessionOptions>();
  Config cfg;
  if (!config.is_none()) cfg = value_or_throw(Config::from_json_file(fspath(config)));
  check(cfg.apply_environment());
  options_.apply(cfg);
  const std::vector<OrtProviderRequest> requests = provider_requests(providers, provider_options);
  apply_ort_options(requests, cfg);
  SessionOptions so = options_.session_options();
  profiling_ = so.profiling || cfg.profiling_enabled;

  const bool from_bytes = py::isinstance<py::bytes>(path_or_bytes);
  const std::string model = from_bytes ? path_or_bytes.cast<std::string>() : fspath(path_or_bytes);
  env_ = value_or_throw(without_gil([&] { return environment_for(cfg, options_.custom_op_libraries); }));
  if (!requests.empty()) {
    cfg.providers = resolve_ort_providers(requests, env_->available_providers());
    so.providers = cfg.providers;
  }
  for (const OrtProviderRequest& r : requests) ort_names_ = ort_names_ || is_ort_provider_name(r.name);
  auto session = value_or_throw(without_gil([&] {
    return from_bytes ? Session::create_from_bytes(env_, model, so) : Session::create(env_, model, so);
  }));
  session_ = std::shared_ptr<const Session>(std::move(session));

  // The providers the session asked, as Session::create picks them: the
  // configured ones (else every available one), then the fallback.
  const std::vector<std::string> available = env_->available_providers();
  std::vector<std::string> names = cfg.providers;
  if (names.empty()) {
    for (const std::string& a : available)
      if (a != "reference") names.push_back(a);
    names.push_back("reference");
  }
  for (const std::string& n : names)
    if (contains(available, n)) providers_.push_back(n);
  if (cfg.fallback != FallbackPolicy::kDeny && !contains(providers_, "reference") && contains(available, "reference"))
    providers_.push_back("reference");
}

std::vector<std::string> PyInferenceSession::providers() const {
  if (!ort_names_) return providers_;
  std::vector<std::string> out;
  for (const std::string& p : providers_) {
    const std::string name = ort_name_of(p);
    if (!contains(out, name)) out.push_back(name);
  }
  return out;
}

const ValueInfo* PyInferenceSession::input_info(const std::string& name) const {
  for (const ValueInfo& v : session_->inputs())
    if (v.name == name) return &v;
  return nullptr;
}

py::list PyInferenceSession::run(const py::object& output_names, const py::dict& input_feed,
                                 const py::object& run_options) const {
  std::vector<std::string> names;
  if (!output_names.is_none()) {
    if (py::isinstance<py::str>(output_names)) throw py::type_error("output_names must be a list of names, not a str");
    names = output_names.cast<std::vector<std::string>>();
  }
  std::map<std::string, Value> inputs;
  for (auto [key, value] : input_feed) {
    if (!py::isinstance<py::str>(key)) throw py::type_error("input_feed keys must be input names (str)");
    const std::string name = key.cast<std::string>();
    inputs.emplace(name, to_value(value, name, input_info(name)));
  }
  const RunOptions ro = run_options_of(run_options);
  auto values = value_or_throw(without_gil([&] { return session_->run_values(inputs, names, ro); }));
  py::list out;
  for (Value& v : values) out.append(to_python(std::move(v)));
  return out;
}

std::string PyInferenceSession::end_profiling() const {
  if (!profiling_) return "";  // as ONNX Runtime: profiling was off
  return value_or_throw(without_gil([&] { return session_->end_profiling(); }));
}

void register_inference_session(py::module_& m) {
  py::class_<ValueInfo>(m, "NodeArg", "A model input or output: name, type ('tensor(float)') and shape.")
      .def_readonly("name", &ValueInfo::name)
      .def_property_readonly("type", [](const ValueInfo& v) { return type_string(v.kind, v.dtype, v.key_dtype); })
      .def_property_readonly("shape", &shape_of,
                             "Dims as int, str for a symbolic dim, None for an unknown one; [] when unknown")
      .def("__repr__", [](const ValueInfo& v) {
        return "NodeArg(name='" + v.name + "', type='" + type_string(v.kind, v.dtype, v.key_dtype) + "', shape=" +
               std::string(py::repr(shape_of(v))) + ")";
      });

  py::class_<ModelMetadata>(m, "ModelMetadata", "What the model file says about itself (ONNX Runtime's get_modelmeta).")
      .def_readonly("producer_name", &ModelMetadata::producer_name)
      .def_readonly("producer_version", &ModelMetadata::producer_version)
      .def_readonly("graph_name", &ModelMetadata::graph_name)
      .def_readonly("graph_description", &ModelMetadata::graph_description)
      .def_readonly("domain", &ModelMetadata::domain)
      .def_readonly("description", &ModelMetadata::description)
      .def_readonly("version", &ModelMetadata::version)
      .def_readonly("custom_metadata_map", &ModelMetadata::custom_metadata_map)
      .def("__repr__", [](const ModelMetadata& md) {
        return "ModelMetadata(producer_name='" + md.producer_name + "', graph_name='" + md.graph_name +
               "', version=" + std::to_string(md.version) + ")";
      });

  py::class_<PyInferenceSession, std::shared_ptr<PyInferenceSession>>(m, "InferenceSession")
      .def(py::init<const py::object&, const py::object&, const py::object&, const py::object&, const py::object&>(),
           py::arg("path_or_bytes"), py::arg("sess_options") = py::none(), py::arg("providers") = py::none(),
           py::arg("provider_options") = py::none(), py::arg("config") = py::none(),
           "Loads, optimizes, partitions and plans a model (a path or the model's bytes). `providers` is the "
           "priority order (names, or (name, options) pairs); `config` a Loom JSON configuration file.")
      .def("get_inputs", [](const PyInferenceSession& s) { return s.session().inputs(); })
      .def("get_outputs", [](const PyInferenceSession& s) { return s.session().outputs(); })
      .def("get_overridable_initializers",
           [](const PyInferenceSession& s) { return s.session().overridable_initializers(); })
      .def("get_modelmeta", [](const PyInferenceSession& s) { return s.session().metadata(); },
           "Producer, graph name, domain, description, version and the custom metadata map of the model file.")
      .def("get_providers", &PyInferenceSession::providers,
           "The providers the session uses, in priority order: in ONNX Runtime's names when it was created "
           "with them (CPUExecutionProvider for Loom's host providers)")
      .def("get_provider_options", &PyInferenceSession::provider_options)
      .def("get_session_options", &PyInferenceSession::options)
      .def("run", &PyInferenceSession::run, py::arg("output_names"), py::arg("input_feed"),
           py::arg("run_options") = py::none(),
           "Runs the model on `input_feed` ({name: array}); returns the outputs named in `output_names` "
           "(None: all) as a list. Releases the GIL while running.")
      .def("io_binding", [](const std::shared_ptr<PyInferenceSession>& s) { return PyIoBinding(s); })
      .def("run_with_iobinding", &run_with_iobinding, py::arg("iobinding"), py::arg("run_options") = py::none())
      .def("end_profiling", &PyInferenceSession::end_profiling,
           "Writes the profile (Chrome-trace JSON) and returns its path; '' when profiling is off.")
      .def("get_placement", [](const PyInferenceSession& s) { return s.session().placement(); },
           "Which provider runs each node, and why.")
      .def("describe_plan", [](const PyInferenceSession& s) { return s.session().describe_plan(); })
      .def("get_memory_stats", [](const PyInferenceSession& s) {
        py::list out;
        for (const MemoryStats& st : s.session().memory_stats()) {
          py::dict d;
          d["memory"] = st.memory;
          d["planned_peak_bytes"] = st.planned_peak_bytes;
          d["limit_bytes"] = st.limit_bytes;
          d["reserved_bytes"] = st.reserved_bytes;
          d["in_use_bytes"] = st.in_use_bytes;
          d["peak_in_use_bytes"] = st.peak_in_use_bytes;
          d["peak_reserved_bytes"] = st.peak_reserved_bytes;
          d["allocations"] = st.allocations;
          d["failed_allocations"] = st.failed_allocations;
          out.append(d);
        }
        return out;
      });
}

}  // namespace loom::python
