#include "plugin_host/plugin_registry.h"

#include <algorithm>
#include <cstring>
#include <filesystem>

#include "base/logging.h"
#include "plugin_host/abi_objects.h"

namespace loom::plugin_host {
namespace {
namespace fs = std::filesystem;
std::string sv(LOOM_StringView v) { return v.size && v.data ? std::string(v.data, v.size) : std::string(); }
}  // namespace

Provider read_provider(const LOOM_EpFactory* f, const PluginLibrary& library,
                       const std::map<std::string, std::string>& options) {
  Provider p;
  p.name = sv(f->name);
  p.factory = f;
  p.library = &library;
  std::vector<LOOM_KeyValue> kv;
  for (const auto& [k, v] : options) kv.push_back({{k.data(), k.size()}, {v.data(), v.size()}});
  LOOM_EpFactory_GetDevices_Args args{};
  args.struct_size = LOOM_EpFactory_GetDevices_Args_STRUCT_SIZE;
  args.options = kv.data();
  args.option_count = kv.size();
  Status st = from_abi(f->get_devices(f->state, &args));
  if (!st) {
    p.unavailable_reason = "get_devices failed: " + st.message();
    return p;
  }
  if (args.device_count > 0 && args.devices == nullptr) {
    p.unavailable_reason = "get_devices returned a count but no array";
    return p;
  }
  for (uint64_t i = 0; i < args.device_count; ++i) {
    const LOOM_DeviceInfo* d = args.devices[i];
    if (d == nullptr || d->struct_size < LOOM_DeviceInfo_STRUCT_SIZE || d->memory == nullptr ||
        d->memory->struct_size < LOOM_MemoryInfo_STRUCT_SIZE) {
      p.unavailable_reason = "device " + std::to_string(i) + " description is missing or too small";
      p.devices.clear();
      return p;
    }
    LOOM_MemoryInfo mem{};
    std::memcpy(&mem, d->memory, LOOM_MemoryInfo_STRUCT_SIZE);
    mem.struct_size = LOOM_MemoryInfo_STRUCT_SIZE;
    p.devices.push_back({sv(d->name), mem});
  }
  if (args.device_count == 0) {
    p.unavailable_reason = sv(args.unavailable_reason);
    if (p.unavailable_reason.empty()) p.unavailable_reason = "no devices";
  }
  return p;
}

PluginRegistry::~PluginRegistry() {
  providers_.clear();
  // Unload in reverse order of loading.
  while (!libraries_.empty()) libraries_.pop_back();
}

Status PluginRegistry::scan_directory(const std::string& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return not_found("plugin directory '" + dir + "' does not exist");
  std::vector<std::string> files;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const fs::path& p = it->path();
    if (p.extension() == ".so" && fs::is_regular_file(p, ec)) files.push_back(p.string());
  }
  if (ec) return fail("cannot read plugin directory '" + dir + "': " + ec.message());
  std::sort(files.begin(), files.end());
  // Open every library first (entry, version, slots: no init), so variant
  // builds of one plugin can be compared before any of them runs.
  std::vector<std::unique_ptr<PluginLibrary>> opened;
  for (const std::string& f : files) {
    auto lib = PluginLibrary::open(f);
    if (!lib) {
      refuse(f, lib.status().message());
      continue;
    }
    opened.push_back(std::move(*lib));
  }
  std::vector<bool> done(opened.size(), false);
  for (size_t i = 0; i < opened.size(); ++i) {
    if (done[i]) continue;
    // The builds of this plugin: same name, in file order.
    std::vector<size_t> variants;
    for (size_t k = i; k < opened.size(); ++k)
      if (!done[k] && opened[k]->name() == opened[i]->name()) variants.push_back(k);
    size_t best = variants.front();
    for (size_t k : variants)
      if (opened[k]->score() > opened[best]->score()) best = k;
    const int32_t best_score = opened[best]->score();
    const std::string name = opened[best]->name();
    const std::string best_file = fs::path(opened[best]->path()).filename().string();
    std::string note;
    if (variants.size() > 1) {
      note = "chosen among " + std::to_string(variants.size()) + " builds of '" + name + "' (score " +
             std::to_string(best_score) + "; others:";
      const char* sep = " ";
      for (size_t k : variants)
        if (k != best) {
          note += sep + fs::path(opened[k]->path()).filename().string() + " score " +
                  std::to_string(opened[k]->score());
          sep = ", ";
        }
      note += ")";
      log::logger()->info("plugin '{}': using {} ({})", name, opened[best]->path(), note);
    }
    for (size_t k : variants) {
      done[k] = true;
      if (k == best) continue;
      refuse(opened[k]->path(),
             "not chosen: " + best_file + " is a better build of plugin '" + name + "' for this machine (score " +
                 std::to_string(best_score) + " vs " + std::to_string(opened[k]->score()) + ")",
             /*quiet=*/true);
      opened[k].reset();
    }
    if (best_score <= 0) {
      refuse(opened[best]->path(),
             "cannot run on this machine (plugin '" + name + "' scored " + std::to_string(best_score) + ")");
      opened[best].reset();
      continue;
    }
    add_library(std::move(opened[best]), note);
  }
  return Status::ok();
}

void PluginRegistry::refuse(const std::string& path, const std::string& why, bool quiet) {
  PluginReport report;
  report.path = path;
  report.refusal = why;
  if (!quiet) log::logger()->warn("plugin '{}' refused: {}", path, why);
  reports_.push_back(std::move(report));
}

void PluginRegistry::load_library(const std::string& path) {
  auto lib = PluginLibrary::open(path);
  if (!lib) return refuse(path, lib.status().message());
  if ((*lib)->score() <= 0)
    return refuse(path, "cannot run on this machine (plugin '" + (*lib)->name() + "' scored " +
                            std::to_string((*lib)->score()) + ")");
  add_library(std::move(*lib), "");
}

void PluginRegistry::add_library(std::unique_ptr<PluginLibrary> lib, const std::string& variant_note) {
  const std::string path = lib->path();
  if (Status st = lib->initialize(); !st) return refuse(path, st.message());
  PluginReport report;
  report.path = path;
  PluginLibrary& l = *lib;
  report.loaded = true;
  report.name = l.name();
  report.version = l.version();
  report.abi = std::to_string(l.api().abi_major) + "." + std::to_string(l.api().abi_minor);
  report.variant = variant_note;
  for (const LOOM_EpFactory* f : l.factories()) {
    auto configured = provider_options_.find(sv(f->name));
    Provider p = read_provider(f, l, configured != provider_options_.end() ? configured->second
                                                                           : std::map<std::string, std::string>());
    PluginReport::Factory rf;
    rf.name = p.name;
    for (const Provider::Device& d : p.devices)
      rf.devices.push_back({d.name, memory_name(d.memory), d.memory.host_accessible != 0});
    if (const Provider* existing = find(p.name)) {
      p.unavailable_reason = "provider name already taken by " + existing->library->path();
      rf.unavailable_reason = p.unavailable_reason;
      report.factories.push_back(std::move(rf));
      continue;
    }
    rf.unavailable_reason = p.unavailable_reason;
    report.factories.push_back(std::move(rf));
    providers_.push_back(std::move(p));
  }
  add_custom_op_domains(l, report);
  libraries_.push_back(std::move(lib));
  reports_.push_back(std::move(report));
}

void PluginRegistry::add_custom_op_domains(const PluginLibrary& lib, PluginReport& report) {
  auto domains = custom_op_domains_of(lib);
  if (!domains) {
    PluginReport::CustomOpDomain r;
    r.refusal = domains.status().message();
    log::logger()->warn("plugin '{}': custom-op domains refused: {}", lib.path(), r.refusal);
    report.custom_op_domains.push_back(std::move(r));
    return;
  }
  for (uint64_t i = 0; i < domains->size(); ++i) {
    std::vector<std::string> problems;
    CustomOpDomain d = read_custom_op_domain((*domains)[i], i, lib.name(), &problems);
    PluginReport::CustomOpDomain r;
    r.name = d.name;
    r.kernels = d.kernels.size();
    for (const onnxio::CustomOpSchema& op : d.ops)
      r.ops.push_back(op.op_type + (op.since_version > 1 ? "@" + std::to_string(op.since_version) : ""));
    if (problems.empty() && op_schemas_->has_custom_domain(d.name))
      problems.push_back("domain '" + d.name + "' is already declared by another plugin");
    for (const std::string& p : problems) r.refusal += (r.refusal.empty() ? "" : "; ") + p;
    if (problems.empty()) {
      for (onnxio::CustomOpSchema& op : d.ops)
        if (Status st = op_schemas_->add(std::move(op)); !st) r.refusal = st.message();  // vetted above: not expected
      custom_kernels_.insert(custom_kernels_.end(), d.kernels.begin(), d.kernels.end());
    } else {
      log::logger()->warn("plugin '{}': custom-op domain refused: {}", lib.path(), r.refusal);
    }
    report.custom_op_domains.push_back(std::move(r));
  }
}

const Provider* PluginRegistry::find(const std::string& name) const {
  for (const Provider& p : providers_)
    if (p.name == name) return &p;
  return nullptr;
}

}  // namespace loom::plugin_host
