#include "environment.h"

#include <pybind11/stl.h>

#include <map>
#include <mutex>

#include "errors.h"
#include "gil.h"
#include "plugin_host/plugin_registry.h"

namespace loom::python {

namespace py = pybind11;

namespace {

Status load_custom_op_library(Environment& env, const std::string& path) {
  const size_t before = env.plugin_reports().size();
  env.registry().load_library(path);
  const auto& reports = env.plugin_reports();
  if (reports.size() == before) return fail("custom-op library '" + path + "' was not loaded");
  const PluginReport& r = reports.back();
  if (!r.loaded) return fail("custom-op library '" + path + "' was refused: " + r.refusal);
  for (const auto& d : r.custom_op_domains)
    if (!d.refusal.empty())
      return fail("custom-op library '" + path + "': domain '" + d.name + "' was refused: " + d.refusal);
  return Status::ok();
}

std::string join(const std::vector<std::string>& v, const char* sep) {
  std::string out;
  for (const std::string& s : v) out += (out.empty() ? "" : sep) + s;
  return out;
}

}  // namespace

Expected<Config> default_config() {
  Config config;
  LOOM_RETURN_IF_ERROR(config.apply_environment());
  return config;
}

Expected<std::shared_ptr<Environment>> environment_for(const Config& config,
                                                       const std::vector<std::string>& custom_op_libraries) {
  static std::mutex mutex;
  static std::map<std::string, std::weak_ptr<Environment>> cache;
  const std::string key = config.to_json() + "\n" + join(custom_op_libraries, "\n");
  std::lock_guard<std::mutex> lock(mutex);
  if (auto it = cache.find(key); it != cache.end()) {
    if (auto env = it->second.lock()) return env;
  }
  LOOM_ASSIGN_OR_RETURN(std::shared_ptr<Environment> env, Environment::create(config));
  for (const std::string& lib : custom_op_libraries) LOOM_RETURN_IF_ERROR(load_custom_op_library(*env, lib));
  for (auto it = cache.begin(); it != cache.end();) it = it->second.expired() ? cache.erase(it) : std::next(it);
  cache[key] = env;
  return env;
}

void register_environment(py::module_& m) {
  using Device = PluginReport::Device;
  using Factory = PluginReport::Factory;
  using Domain = PluginReport::CustomOpDomain;
  py::class_<Device>(m, "PluginDevice")
      .def_readonly("name", &Device::name)
      .def_readonly("memory", &Device::memory)
      .def_readonly("host_accessible", &Device::host_accessible)
      .def("__repr__", [](const Device& d) { return "PluginDevice(name='" + d.name + "', memory='" + d.memory + "')"; });
  py::class_<Factory>(m, "PluginProvider")
      .def_readonly("name", &Factory::name)
      .def_readonly("devices", &Factory::devices)
      .def_readonly("unavailable_reason", &Factory::unavailable_reason)
      .def("__repr__", [](const Factory& f) {
        return "PluginProvider(name='" + f.name + "', devices=" + std::to_string(f.devices.size()) + ")";
      });
  py::class_<Domain>(m, "CustomOpDomain")
      .def_readonly("name", &Domain::name)
      .def_readonly("ops", &Domain::ops)
      .def_readonly("kernels", &Domain::kernels)
      .def_readonly("refusal", &Domain::refusal)
      .def("__repr__", [](const Domain& d) { return "CustomOpDomain(name='" + d.name + "', ops=[" + join(d.ops, ", ") + "])"; });
  py::class_<PluginReport>(m, "PluginInfo", "One library the plugin host found: loaded, or refused with the reason.")
      .def_readonly("path", &PluginReport::path)
      .def_readonly("loaded", &PluginReport::loaded)
      .def_readonly("refusal", &PluginReport::refusal)
      .def_readonly("name", &PluginReport::name)
      .def_readonly("version", &PluginReport::version)
      .def_readonly("abi", &PluginReport::abi)
      .def_readonly("variant", &PluginReport::variant)
      .def_readonly("providers", &PluginReport::factories)
      .def_readonly("custom_op_domains", &PluginReport::custom_op_domains)
      .def("__repr__", [](const PluginReport& r) {
        return r.loaded ? "PluginInfo(name='" + r.name + "', version='" + r.version + "', path='" + r.path + "')"
                        : "PluginInfo(path='" + r.path + "', refused='" + r.refusal + "')";
      });

  m.def(
      "get_available_providers",
      [](const std::vector<std::string>& plugin_dirs) {
        Config config = value_or_throw(default_config());
        config.plugin_dirs.insert(config.plugin_dirs.begin(), plugin_dirs.begin(), plugin_dirs.end());
        auto env = value_or_throw(without_gil([&] { return environment_for(config, {}); }));
        return env->available_providers();
      },
      py::arg("plugin_dirs") = std::vector<std::string>{},
      "Providers usable here (loaded, with a device), in discovery order.");
  m.def(
      "get_plugins",
      [](const std::vector<std::string>& plugin_dirs, const std::vector<std::string>& custom_op_libraries) {
        Config config = value_or_throw(default_config());
        config.plugin_dirs.insert(config.plugin_dirs.begin(), plugin_dirs.begin(), plugin_dirs.end());
        auto env = value_or_throw(without_gil([&] {
          auto e = Environment::create(config);
          if (e.has_value())
            for (const std::string& lib : custom_op_libraries) (*e)->registry().load_library(lib);
          return e;
        }));
        return env->plugin_reports();
      },
      py::arg("plugin_dirs") = std::vector<std::string>{},
      py::arg("custom_op_libraries") = std::vector<std::string>{},
      "Every plugin library found (default directory, LOOM_PLUGIN_PATH, plugin_dirs), loaded or refused, "
      "with the reason.");
}

}  // namespace loom::python
