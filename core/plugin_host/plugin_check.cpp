// check_plugin: loading, factories, devices and EP creation go through the
// plugin host's own code (PluginLibrary::load, read_provider,
// EpInstance::create), so a check fails exactly where a session would refuse
// the plugin and with the same message; the checks here add what the host
// only meets later (or never): kernel-table and schema consistency, claim
// slots, copies, trial allocations and stream/event round trips.
#include "loom/plugin_check.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>

#include "plugin_host/abi_objects.h"
#include "plugin_host/ep_instance.h"
#include "plugin_host/custom_op_domain.h"
#include "plugin_host/plugin_library.h"
#include "plugin_host/plugin_registry.h"

namespace loom {

const char* check_level_name(CheckLevel level) {
  switch (level) {
    case CheckLevel::kOk: return "ok";
    case CheckLevel::kWarn: return "warn";
    case CheckLevel::kFail: return "FAIL";
  }
  return "?";
}

size_t PluginCheckReport::failures() const {
  return std::count_if(items.begin(), items.end(), [](const PluginCheckItem& i) { return i.level == CheckLevel::kFail; });
}

size_t PluginCheckReport::warnings() const {
  return std::count_if(items.begin(), items.end(), [](const PluginCheckItem& i) { return i.level == CheckLevel::kWarn; });
}

namespace {

using plugin_host::CustomOpDomain;
using plugin_host::EpInstance;
using plugin_host::LoadStep;
using plugin_host::PluginLibrary;
using plugin_host::Provider;

std::string sv(LOOM_StringView v) { return v.size && v.data ? std::string(v.data, v.size) : std::string(); }
std::string in_quotes(const std::string& s) { return "'" + s + "'"; }
std::string version(uint32_t major, uint32_t minor) { return std::to_string(major) + "." + std::to_string(minor); }
const std::string kHostAbi = version(LOOM_ABI_VERSION_MAJOR, LOOM_ABI_VERSION_MINOR);

class Checklist {
 public:
  explicit Checklist(PluginCheckReport& report) : report_(report) {}
  void ok(std::string what, std::string detail) { add(CheckLevel::kOk, std::move(what), std::move(detail)); }
  void warn(std::string what, std::string detail) { add(CheckLevel::kWarn, std::move(what), std::move(detail)); }
  void fail(std::string what, std::string detail) { add(CheckLevel::kFail, std::move(what), std::move(detail)); }

 private:
  void add(CheckLevel level, std::string what, std::string detail) {
    report_.items.push_back({level, std::move(what), std::move(detail)});
  }
  PluginCheckReport& report_;
};

// Problems of one kind, counted, with the first few examples named.
class Findings {
 public:
  void add(const std::string& kind, const std::string& example) {
    auto& [count, examples] = found_[kind];
    if (++count <= 3) examples.push_back(example);
  }
  bool empty() const { return found_.empty(); }
  // Emits one line per kind at `level`.
  void emit(Checklist& out, CheckLevel level, const std::string& what) const {
    for (const auto& [kind, found] : found_) {
      const auto& [count, examples] = found;
      std::string detail = std::to_string(count) + " " + kind + ": ";
      for (size_t i = 0; i < examples.size(); ++i) detail += (i ? "; " : "") + examples[i];
      if (count > examples.size()) detail += "; ...";
      if (level == CheckLevel::kFail) out.fail(what, detail);
      else out.warn(what, detail);
    }
  }

 private:
  std::map<std::string, std::pair<size_t, std::vector<std::string>>> found_;
};

bool is_known_dtype(int32_t t) { return t >= LOOM_DTYPE_FLOAT && t <= LOOM_DTYPE_INT2; }

std::string kernel_name(const LOOM_KernelDef& d, size_t index) {
  std::string domain = sv(d.domain);
  return "entry " + std::to_string(index) + " (" + (domain.empty() ? "" : domain + "::") + sv(d.op_type) + " " +
         std::to_string(d.since_version) + "-" +
         (d.end_version == LOOM_OPSET_OPEN_END ? std::string("") : std::to_string(d.end_version)) + ")";
}

// param -> allowed dtypes, for entries whose constraints are well formed.
using TypeMap = std::map<std::string, std::set<int32_t>>;

// Two entries overlap in types unless some parameter both constrain allows
// disjoint sets (a parameter only one of them constrains matches anything).
bool types_overlap(const TypeMap& a, const TypeMap& b) {
  for (const auto& [param, types] : a) {
    auto it = b.find(param);
    if (it == b.end()) continue;
    bool shared = std::any_of(types.begin(), types.end(), [&](int32_t t) { return it->second.count(t) > 0; });
    if (!shared) return false;
  }
  return true;
}

void check_kernel_table(Checklist& out, const std::string& ep, const EpInstance& e, uint32_t plugin_minor) {
  const std::string what = ep + " kernel table";
  const LOOM_Ep* raw = e.ep();
  if (!(LOOM_HAS_FIELD(raw, LOOM_Ep, get_kernel_table) && raw->get_kernel_table)) {
    out.ok(what, "none (no get_kernel_table slot)");
    return;
  }
  const auto& kernels = e.kernels();
  Findings failures, warnings;
  std::vector<TypeMap> types(kernels.size());
  for (size_t i = 0; i < kernels.size(); ++i) {
    const LOOM_KernelDef& d = *kernels[i];
    const std::string name = kernel_name(d, i);
    if (sv(d.op_type).empty()) failures.add("entries with an empty op_type", name);
    if (d.since_version < 1) failures.add("entries with since_version < 1", name);
    else if (d.end_version < d.since_version) failures.add("entries with end_version < since_version", name);
    if (d.constraint_count > 0 && d.constraints == nullptr) {
      failures.add("entries with a constraint count but no constraint array", name);
      continue;
    }
    for (uint64_t c = 0; c < d.constraint_count; ++c) {
      const LOOM_TypeConstraint* tc = d.constraints[c];
      const std::string cname = name + " constraint " + std::to_string(c);
      if (tc == nullptr || tc->struct_size < LOOM_TypeConstraint_STRUCT_SIZE) {
        failures.add("type constraints missing or too small", cname);
        continue;
      }
      const std::string param = sv(tc->param);
      if (param.empty()) failures.add("type constraints with an empty param", cname);
      if (tc->dtype_count > 0 && tc->dtypes == nullptr) {
        failures.add("type constraints with a dtype count but no array", cname);
        continue;
      }
      if (tc->dtype_count == 0) warnings.add("type constraints allowing no dtype (never match)", cname);
      if (types[i].count(param)) warnings.add("entries constraining one param twice", name + " param '" + param + "'");
      auto& allowed = types[i][param];
      for (uint64_t k = 0; k < tc->dtype_count; ++k) {
        int32_t t = tc->dtypes[k];
        allowed.insert(t);
        if (is_known_dtype(t)) continue;
        // A newer plugin may name a dtype appended after this host's minor.
        std::string ex = cname + " ('" + param + "': " + std::to_string(t) + ")";
        if (plugin_minor > LOOM_ABI_VERSION_MINOR) warnings.add("dtypes unknown to this host (newer plugin)", ex);
        else failures.add("type constraints naming unknown LOOM_DTYPE_* values", ex);
      }
    }
  }
  // Entries serving the same (domain, op_type) with overlapping opsets and types.
  std::map<std::pair<std::string, std::string>, std::vector<size_t>> by_op;
  for (size_t i = 0; i < kernels.size(); ++i) by_op[{sv(kernels[i]->domain), sv(kernels[i]->op_type)}].push_back(i);
  for (const auto& [op, entries] : by_op) {
    for (size_t x = 0; x < entries.size(); ++x) {
      for (size_t y = x + 1; y < entries.size(); ++y) {
        const LOOM_KernelDef& a = *kernels[entries[x]];
        const LOOM_KernelDef& b = *kernels[entries[y]];
        bool opsets = a.since_version <= b.end_version && b.since_version <= a.end_version;
        if (opsets && types_overlap(types[entries[x]], types[entries[y]]))
          warnings.add("pairs of entries serve the same (domain, op, opset) with overlapping types (the first wins)",
                       kernel_name(a, entries[x]) + " and " + kernel_name(b, entries[y]));
      }
    }
  }
  if (failures.empty() && warnings.empty())
    out.ok(what, std::to_string(kernels.size()) +
                     " kernels; every entry has create/compute/release; opset ranges valid; type constraints name "
                     "known dtypes; no overlapping entries");
  else if (failures.empty())
    out.ok(what, std::to_string(kernels.size()) + " kernels; every entry has create/compute/release");
  failures.emit(out, CheckLevel::kFail, what);
  warnings.emit(out, CheckLevel::kWarn, what);
}

void check_claims(Checklist& out, const std::string& ep, const EpInstance& e) {
  const std::string what = ep + " claim slots";
  const bool table = !e.kernels().empty();
  std::string detail = std::string("get_capability: ") + (e.has_capability() ? "yes" : "no") +
                       "; compile: " + (e.can_compile() ? "yes" : "no") +
                       "; kernel table: " + (table ? std::to_string(e.kernels().size()) + " kernels" : "empty");
  if (!e.has_capability() && !table)
    out.warn(what, detail + ": with neither get_capability nor kernels the EP can never claim a node");
  else  // compile without get_capability is not flagged: the SDK fills every slot
    out.ok(what, detail);
}

void check_memory(Checklist& out, const std::string& ep, const EpInstance& e) {
  const std::string what = ep + " allocator / data transfer";
  const std::string mem = plugin_host::memory_name(e.memory());
  if (e.uses_host_memory()) {
    std::string detail = "host memory";
    if (e.allocator() == nullptr && e.data_transfer() == nullptr) detail += ", none needed";
    if (e.allocator() != nullptr) detail += "; allocator provided";
    if (e.data_transfer() != nullptr) detail += "; data transfer provided";
    out.ok(what, detail);
    return;
  }
  // EpInstance::create already refused device memory without both tables,
  // and an allocator without alloc/free.
  const LOOM_DataTransfer* t = e.data_transfer();
  if (t->struct_size < LOOM_DataTransfer_STRUCT_SIZE || !t->can_copy || !t->copy) {
    out.fail(what, "memory '" + mem + "': data transfer table is incomplete (needs can_copy and copy)");
    return;
  }
  const LOOM_MemoryInfo& host = plugin_host::host_memory();
  bool to_device = t->can_copy(t->state, &host, &e.memory()) != 0;
  bool to_host = t->can_copy(t->state, &e.memory(), &host) != 0;
  const LOOM_Allocator* a = e.allocator();
  void* probe = a->alloc(a->state, 256, 64);
  if (probe != nullptr) a->free(a->state, probe);
  std::string detail = "memory '" + mem + "': allocator (alloc/free) and data transfer (can_copy/copy)";
  if (!to_device || !to_host)
    out.fail(what, detail + ", but can_copy says no copy " + (!to_device ? "from host to " + mem : mem + " to host"));
  else if (probe == nullptr)
    out.warn(what, detail + ", but a trial allocation of 256 bytes returned NULL");
  else
    out.ok(what, detail + "; copies to and from host; trial allocation ok");
}

void check_streams(Checklist& out, const std::string& ep, const EpInstance& e) {
  const std::string what = ep + " streams";
  const LOOM_Ep* raw = e.ep();
  if (!(LOOM_HAS_FIELD(raw, LOOM_Ep, create_stream) && raw->create_stream)) {
    out.ok(what, "synchronous EP (no create_stream)");
    return;
  }
  if (!e.is_async()) {
    out.ok(what, "synchronous EP (create_stream returned NULL)");
    return;
  }
  // create() probed a stream and an event; here they are used once.
  auto stream = e.new_stream();
  if (!stream) return out.fail(what, stream.status().message());
  LOOM_Stream* s = *stream;
  auto event = e.new_event();
  if (!event) {
    s->release(s);
    return out.fail(what, event.status().message());
  }
  LOOM_Event* ev = *event;
  std::string problem;
  if (Status st = plugin_host::from_abi(s->synchronize(s->state)); !st) problem = "stream synchronize failed: " + st.message();
  else if (Status st = plugin_host::from_abi(ev->record(ev->state, s)); !st) problem = "event record failed: " + st.message();
  else if (Status st = plugin_host::from_abi(ev->synchronize(ev->state)); !st)
    problem = "event synchronize failed: " + st.message();
  const bool timing = ev->elapsed_us != nullptr;
  ev->release(ev);
  s->release(s);
  if (!problem.empty()) return out.fail(what, problem);
  out.ok(what, std::string("asynchronous EP: stream synchronize, event record/synchronize work; device timing: ") +
                   (timing ? "yes" : "no"));
}

void check_custom_ops(Checklist& out, const PluginLibrary& lib) {
  const std::string what = "custom-op schemas";
  auto domains = plugin_host::custom_op_domains_of(lib);
  if (!domains) return out.fail(what, domains.status().message());
  if (domains->empty()) return out.ok(what, "none");
  // Read exactly as the plugin registry reads them, so a domain passes here
  // exactly when a session could use it.
  std::vector<std::string> problems;
  std::set<std::string> names;
  std::string summary;
  size_t ops = 0, kernels = 0;
  for (uint64_t i = 0; i < domains->size(); ++i) {
    CustomOpDomain d = plugin_host::read_custom_op_domain((*domains)[i], i, lib.name(), &problems);
    if (!d.name.empty() && !names.insert(d.name).second)
      problems.push_back("domain '" + d.name + "' is listed twice (the second would be refused)");
    ops += d.ops.size();
    kernels += d.kernels.size();
    std::string list;
    for (const onnxio::CustomOpSchema& op : d.ops)
      list += (list.empty() ? "" : ", ") + op.op_type + (op.declared ? "" : " [arity only]");
    if (!d.name.empty()) summary += (summary.empty() ? "" : "; ") + d.name + " (" + list + ")";
  }
  for (const std::string& p : problems) out.fail(what, p);
  if (problems.empty())
    out.ok(what, std::to_string(domains->size()) + " domain(s), " + std::to_string(ops) + " op(s), " +
                     std::to_string(kernels) + " kernel(s): " + summary);
}

std::string describe_device(const Provider::Device& d) {
  return (d.name.empty() ? "(unnamed)" : d.name) + " (memory " + plugin_host::memory_name(d.memory) +
         (d.memory.host_accessible ? ", host-accessible" : ", not host-accessible") + ")";
}

// The names the loading steps get in the checklist.
const char* step_name(LoadStep step) {
  switch (step) {
    case LoadStep::kOpen: return "library";
    case LoadStep::kEntry: return "entry symbol";
    case LoadStep::kAbiVersion: return "ABI";
    case LoadStep::kPluginTable: return "plugin table";
    case LoadStep::kInit: return "init";
    case LoadStep::kFactories: return "EP factories";
    case LoadStep::kLoaded: return "loaded";
  }
  return "?";
}

// Returns how many EPs were created (all released again on return).
size_t check_loaded(Checklist& out, PluginLibrary& lib) {
  const LOOM_PluginApi& api = lib.api();
  out.ok("library", "opened, dependencies resolved");
  out.ok("entry symbol", LOOM_PLUGIN_ENTRY_SYMBOL);
  out.ok("ABI", version(api.abi_major, api.abi_minor) + " (host " + kHostAbi + "; agreed minor " +
                    std::to_string(lib.agreed_minor()) + ")" +
                    (api.abi_minor > LOOM_ABI_VERSION_MINOR ? "; slots newer than the host's minor are ignored" : ""));
  const bool custom = LOOM_HAS_FIELD(&api, LOOM_PluginApi, get_custom_op_domains) && api.get_custom_op_domains;
  out.ok("plugin table", std::to_string(api.struct_size) + " bytes; init, release, get_ep_factories (custom-op domains: " +
                             (custom ? "yes" : "none") + ")");
  const std::string name = lib.name();
  if (name.empty()) out.warn("plugin", "initialised, but it has no name (version '" + lib.version() + "')");
  else out.ok("plugin", in_quotes(name) + " version " + (lib.version().empty() ? "(none)" : lib.version()) + " initialised");

  if (lib.factories().empty()) {
    if (custom) out.ok("EP factories", "none (a custom-op library)");
    else out.warn("EP factories", "none, and no custom-op domains: the plugin offers nothing");
  }
  // EPs are kept until every check is done, then released before the library.
  std::vector<std::unique_ptr<EpInstance>> eps;
  std::set<std::string> names;
  for (const LOOM_EpFactory* f : lib.factories()) {
    Provider p = plugin_host::read_provider(f, lib);
    const std::string what = "factory " + in_quotes(p.name);
    if (!names.insert(p.name).second) out.warn(what, "another factory of this plugin has the same name; only the first is used");
    if (p.devices.empty()) {
      out.warn(what, "unavailable: " + p.unavailable_reason);
      continue;
    }
    std::string devices;
    for (const auto& d : p.devices) devices += (devices.empty() ? "" : ", ") + describe_device(d);
    out.ok(what, std::to_string(p.devices.size()) + " device(s): " + devices);
    for (size_t i = 0; i < p.devices.size(); ++i) {
      std::string ep = "EP " + in_quotes(p.name) + (p.devices.size() > 1 ? " device " + std::to_string(i) : "");
      auto e = EpInstance::create(p, i, {});
      if (!e) {
        out.fail(ep, "create on device " + std::to_string(i) + " (options: none): " + e.status().message());
        continue;
      }
      const LOOM_Ep* raw = (*e)->ep();
      out.ok(ep, "created on device " + std::to_string(i) + " (options: none); table " + std::to_string(raw->struct_size) +
                     " bytes" + ((*e)->step_mutex() ? "; flags: no-concurrent-runs" : ""));
      check_kernel_table(out, ep, **e, api.abi_minor);
      check_claims(out, ep, **e);
      check_memory(out, ep, **e);
      check_streams(out, ep, **e);
      eps.push_back(std::move(*e));
    }
  }
  check_custom_ops(out, lib);
  return eps.size();  // released here, before the library
}

}  // namespace

PluginCheckReport check_plugin(const std::string& path) {
  PluginCheckReport report;
  report.path = path;
  Checklist out(report);
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) {
    out.fail("library", path + ": no such file");
    return report;
  }
  LoadStep reached = LoadStep::kOpen;
  auto lib = PluginLibrary::load(path, &reached);
  if (!lib) {
    // The steps before the one that refused passed; the refusal is the host's.
    if (reached > LoadStep::kOpen) out.ok("library", "opened, dependencies resolved");
    if (reached > LoadStep::kEntry) out.ok("entry symbol", LOOM_PLUGIN_ENTRY_SYMBOL);
    if (reached > LoadStep::kAbiVersion) out.ok("ABI", "major " + std::to_string(LOOM_ABI_VERSION_MAJOR) + " matches the host's (" + kHostAbi + ")");
    if (reached > LoadStep::kPluginTable) out.ok("plugin table", "required slots init, release, get_ep_factories present");
    if (reached > LoadStep::kInit) out.ok("init", "succeeded");
    out.fail(step_name(reached), lib.status().message());
    return report;
  }
  const size_t eps = check_loaded(out, **lib);
  lib->reset();  // releases the plugin state, then unloads
  out.ok("release", std::to_string(eps) + " EP(s) released through release_ep; plugin state released; library unloaded");
  return report;
}

}  // namespace loom
