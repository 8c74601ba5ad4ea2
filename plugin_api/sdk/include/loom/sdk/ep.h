// Loom plugin SDK: base classes for EPs, EP factories and plugins, and the
// macro that defines a plugin's entry point.
//
// A plugin author derives from Ep (override what the EP offers), from
// EpFactory (devices and EP creation) and lists factories and custom-op
// domains (custom_op.h) in a Plugin. The thunks below fill the C tables and
// convert exceptions into statuses.
#pragma once

#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "loom/sdk/custom_op.h"
#include "loom/sdk/kernel.h"

namespace loom::sdk {

using Options = std::vector<std::pair<std::string, std::string>>;

// Collects capability claims for one get_capability call.
class ClaimSink {
 public:
  explicit ClaimSink(LOOM_ClaimSink* sink) : sink_(sink) {}
  void claim_node(uint64_t node_id, std::string_view reason) {
    throw_if_error(host().claim_nodes(sink_, LOOM_CLAIM_KERNEL, &node_id, 1, to_view(reason)));
  }
  void claim_fused(const std::vector<uint64_t>& node_ids, std::string_view reason) {
    throw_if_error(host().claim_nodes(sink_, LOOM_CLAIM_FUSED, node_ids.data(), node_ids.size(),
                                      to_view(reason)));
  }
  // Says why a node is not claimed (shown in the placement report).
  void decline(uint64_t node_id, std::string_view reason) {
    throw_if_error(host().decline_nodes(sink_, &node_id, 1, to_view(reason)));
  }

 private:
  LOOM_ClaimSink* sink_;
};

// A fused subgraph compiled by an EP (see LOOM_CompiledPartition).
class CompiledPartition {
 public:
  virtual ~CompiledPartition() = default;
  // Per-run state; the default has none.
  virtual void* create_state() { return nullptr; }
  virtual void release_state(void*) {}
  // May run concurrently on different run states.
  virtual void compute(void* run_state, KernelContext& ctx) = 0;
};

class Ep {
 public:
  virtual ~Ep() = default;
  // Kernel EPs return their table; NULL means none.
  virtual const KernelRegistry* kernels() const { return nullptr; }
  // Return true and override claim() to claim nodes or fused sets yourself
  // (EpOf<YourEp> answers this and compiles() from what YourEp overrides).
  virtual bool has_capability() const { return false; }
  virtual void claim(const Graph&, ClaimSink&) {}
  // True when compile() is overridden: only then is the ABI's compile slot
  // filled, so the host refuses a fused claim rather than failing it at
  // compilation. The default assumes an EP that claims also compiles.
  virtual bool compiles() const { return has_capability(); }
  virtual std::unique_ptr<CompiledPartition> compile(const Graph&) {
    throw Error("this EP does not compile fused subgraphs", LOOM_STATUS_NOT_IMPLEMENTED);
  }
  virtual const LOOM_Allocator* allocator() const { return nullptr; }
  virtual const LOOM_DataTransfer* data_transfer() const { return nullptr; }
  // False when the EP's kernels / partitions must not run concurrently: the
  // host then runs one of its steps at a time (LOOM_EP_FLAG_NO_CONCURRENT_RUNS).
  virtual bool supports_concurrent_runs() const { return true; }
  // Asynchronous EPs return a new stream / event (owned by the host, which
  // releases them through their release slot); NULL means the EP runs
  // synchronously (a throw reads as NULL).
  virtual LOOM_Stream* create_stream() { return nullptr; }
  virtual LOOM_Event* create_event() { return nullptr; }
  // Recording of runs (LOOM_EP_FLAG_CAPTURE_RUNS, a CUDA graph): return true
  // to have the host record a run's device work once and replay it; then
  // begin_capture starts recording what is queued on `stream` and
  // end_capture stops and returns the recording (owned by the host), or
  // throws when the work could not be recorded.
  virtual bool captures_runs() const { return false; }
  virtual void begin_capture(LOOM_Stream*) {
    throw Error("this EP does not record runs", LOOM_STATUS_NOT_IMPLEMENTED);
  }
  virtual LOOM_CapturedWork* end_capture(LOOM_Stream*) {
    throw Error("this EP does not record runs", LOOM_STATUS_NOT_IMPLEMENTED);
  }

  // The C table for this EP; filled once.
  LOOM_Ep* table() {
    table_.struct_size = LOOM_Ep_STRUCT_SIZE;
    table_.state = this;
    table_.get_capability = has_capability() ? &get_capability_thunk : nullptr;
    table_.get_kernel_table = kernels() != nullptr ? &get_kernel_table_thunk : nullptr;
    table_.compile = compiles() ? &compile_thunk : nullptr;
    table_.get_allocator = &allocator_thunk;
    table_.get_data_transfer = &data_transfer_thunk;
    table_.create_stream = [](void* s) noexcept -> LOOM_Stream* {
      try {
        return from(s)->create_stream();
      } catch (...) {
        return nullptr;
      }
    };
    table_.create_event = [](void* s) noexcept -> LOOM_Event* {
      try {
        return from(s)->create_event();
      } catch (...) {
        return nullptr;
      }
    };
    table_.flags = (supports_concurrent_runs() ? 0 : LOOM_EP_FLAG_NO_CONCURRENT_RUNS) |
                   (captures_runs() ? LOOM_EP_FLAG_CAPTURE_RUNS : 0);
    table_.begin_capture = [](void* s, LOOM_Ep_BeginCapture_Args* a) noexcept -> LOOM_Status* {
      return guarded([&] { from(s)->begin_capture(a->stream); });
    };
    table_.end_capture = [](void* s, LOOM_Ep_EndCapture_Args* a) noexcept -> LOOM_Status* {
      return guarded([&] { a->captured = from(s)->end_capture(a->stream); });
    };
    return &table_;
  }
  static Ep* from(void* state) { return static_cast<Ep*>(state); }

 private:
  static LOOM_Status* get_capability_thunk(void* state, LOOM_Ep_GetCapability_Args* args) noexcept {
    return guarded([&] {
      ClaimSink sink(args->sink);
      from(state)->claim(Graph(args->graph), sink);
    });
  }
  static LOOM_Status* get_kernel_table_thunk(void* state, LOOM_Ep_GetKernelTable_Args* args) noexcept {
    return guarded([&] {
      const KernelRegistry* r = from(state)->kernels();
      args->kernels = r->defs();
      args->kernel_count = r->size();
    });
  }
  static LOOM_Status* compile_thunk(void* state, LOOM_Ep_Compile_Args* args) noexcept {
    return guarded([&] {
      std::unique_ptr<CompiledPartition> p = from(state)->compile(Graph(args->subgraph));
      auto* table = new LOOM_CompiledPartition{};
      table->struct_size = LOOM_CompiledPartition_STRUCT_SIZE;
      table->state = p.release();
      table->create_state = [](void* s, LOOM_CompiledPartition_CreateState_Args* a) noexcept {
        return guarded([&] { a->run_state = static_cast<CompiledPartition*>(s)->create_state(); });
      };
      table->compute = [](void* s, void* run_state, LOOM_KernelContext* ctx) noexcept {
        return guarded([&] {
          KernelContext c(ctx);
          static_cast<CompiledPartition*>(s)->compute(run_state, c);
        });
      };
      table->release_state = [](void* s, void* run_state) noexcept {
        static_cast<CompiledPartition*>(s)->release_state(run_state);
      };
      table->release = [](LOOM_CompiledPartition* t) noexcept {
        delete static_cast<CompiledPartition*>(t->state);
        delete t;
      };
      args->partition = table;
    });
  }
  static const LOOM_Allocator* allocator_thunk(void* state) noexcept { return from(state)->allocator(); }
  static const LOOM_DataTransfer* data_transfer_thunk(void* state) noexcept {
    return from(state)->data_transfer();
  }

  LOOM_Ep table_{};
};

// Derive an EP from EpOf<YourEp> (instead of Ep) and the table offers
// exactly the slots YourEp overrides: get_capability when it declares
// claim(), compile when it declares compile(). Nothing to keep in sync.
template <class Derived>
class EpOf : public Ep {
 public:
  bool has_capability() const override {
    return !std::is_same_v<decltype(&Derived::claim), decltype(&Ep::claim)>;
  }
  bool compiles() const override { return !std::is_same_v<decltype(&Derived::compile), decltype(&Ep::compile)>; }
};

struct DeviceSpec {
  std::string name;
  std::string memory_name = "cpu";
  int32_t device_id = 0;
  bool host_accessible = true;
};

class EpFactory {
 public:
  explicit EpFactory(std::string name) : name_(std::move(name)) {}
  virtual ~EpFactory() = default;
  // Devices this factory can run on; empty (with a reason) when unavailable.
  virtual std::vector<DeviceSpec> devices() { return {DeviceSpec{"cpu"}}; }
  // The same, knowing the provider's configured options (hosts older than
  // ABI 0.2 pass none). The default ignores them.
  virtual std::vector<DeviceSpec> devices_for(const Options& options) {
    (void)options;
    return devices();
  }
  virtual std::string unavailable_reason() { return {}; }
  virtual std::unique_ptr<Ep> create_ep(size_t device_index, const Options& options) = 0;

  const LOOM_EpFactory* table() {
    table_.struct_size = LOOM_EpFactory_STRUCT_SIZE;
    table_.state = this;
    table_.name = to_view(name_);
    table_.get_devices = &get_devices_thunk;
    table_.create_ep = &create_ep_thunk;
    table_.release_ep = &release_ep_thunk;
    return &table_;
  }

 private:
  static EpFactory* from(void* s) { return static_cast<EpFactory*>(s); }
  static LOOM_Status* get_devices_thunk(void* state, LOOM_EpFactory_GetDevices_Args* args) noexcept {
    return guarded([&] {
      EpFactory* f = from(state);
      if (!f->devices_listed_) {
        f->devices_listed_ = true;
        Options options;
        if (LOOM_HAS_FIELD(args, LOOM_EpFactory_GetDevices_Args, option_count))
          for (uint64_t i = 0; i < args->option_count; ++i)
            options.emplace_back(std::string(from_view(args->options[i].key)),
                                 std::string(from_view(args->options[i].value)));
        f->specs_ = f->devices_for(options);
        f->reason_ = f->unavailable_reason();
        // Sized once: the pointers below point into these vectors.
        f->memory_infos_.resize(f->specs_.size());
        f->device_infos_.resize(f->specs_.size());
        for (size_t i = 0; i < f->specs_.size(); ++i) {
          const DeviceSpec& d = f->specs_[i];
          LOOM_MemoryInfo& mem = f->memory_infos_[i];
          mem.struct_size = LOOM_MemoryInfo_STRUCT_SIZE;
          mem.name = to_view(d.memory_name);
          mem.device_id = d.device_id;
          mem.host_accessible = d.host_accessible ? 1 : 0;
          LOOM_DeviceInfo& info = f->device_infos_[i];
          info.struct_size = LOOM_DeviceInfo_STRUCT_SIZE;
          info.name = to_view(d.name);
          info.memory = &mem;
          f->device_ptrs_.push_back(&info);
        }
      }
      args->devices = f->device_ptrs_.data();
      args->device_count = f->device_ptrs_.size();
      args->unavailable_reason = to_view(f->reason_);
    });
  }
  static LOOM_Status* create_ep_thunk(void* state, LOOM_EpFactory_CreateEp_Args* args) noexcept {
    return guarded([&] {
      Options options;
      for (uint64_t i = 0; i < args->option_count; ++i)
        options.emplace_back(std::string(from_view(args->options[i].key)),
                             std::string(from_view(args->options[i].value)));
      std::unique_ptr<Ep> ep = from(state)->create_ep(static_cast<size_t>(args->device_index), options);
      args->ep = ep.release()->table();
    });
  }
  static void release_ep_thunk(void*, LOOM_Ep* ep) noexcept { delete Ep::from(ep->state); }

  std::string name_;
  bool devices_listed_ = false;
  std::vector<DeviceSpec> specs_;
  std::string reason_;
  std::vector<LOOM_MemoryInfo> memory_infos_;
  std::vector<LOOM_DeviceInfo> device_infos_;
  std::vector<const LOOM_DeviceInfo*> device_ptrs_;
  LOOM_EpFactory table_{};
};

// What a plugin offers: EP factories, custom-op domains, or both (a pure
// custom-op library has no factories). Created by the user's create
// function at init.
class Plugin {
 public:
  virtual ~Plugin() = default;
  void add_factory(std::unique_ptr<EpFactory> f) {
    tables_.push_back(f->table());
    factories_.push_back(std::move(f));
  }
  // Publishes a fully declared domain (its table is built here: declare
  // every op and kernel first). Throws Error for an invalid declaration,
  // which fails init with that message.
  void add_custom_op_domain(std::unique_ptr<CustomOpDomain> d) {
    domain_tables_.push_back(d->table());
    domains_.push_back(std::move(d));
  }
  const std::vector<const LOOM_EpFactory*>& factory_tables() const { return tables_; }
  const std::vector<const LOOM_CustomOpDomain*>& custom_op_domain_tables() const { return domain_tables_; }

 private:
  std::vector<std::unique_ptr<EpFactory>> factories_;
  std::vector<const LOOM_EpFactory*> tables_;
  std::vector<std::unique_ptr<CustomOpDomain>> domains_;
  std::vector<const LOOM_CustomOpDomain*> domain_tables_;
};

namespace detail {
template <std::unique_ptr<Plugin> (*Create)()>
struct PluginEntry {
  static LOOM_Status* init(LOOM_Plugin_Init_Args* args) noexcept {
    return guarded([&] {
      agreed_abi_minor_slot() = args->agreed_minor;
      args->plugin_state = Create().release();
    });
  }
  static void release(void* state) noexcept { delete static_cast<Plugin*>(state); }
  static LOOM_Status* factories(void* state, LOOM_Plugin_GetEpFactories_Args* args) noexcept {
    return guarded([&] {
      const auto& t = static_cast<Plugin*>(state)->factory_tables();
      args->factories = t.data();
      args->factory_count = t.size();
    });
  }
  static LOOM_Status* custom_op_domains(void* state, LOOM_Plugin_GetCustomOpDomains_Args* args) noexcept {
    return guarded([&] {
      const auto& t = static_cast<Plugin*>(state)->custom_op_domain_tables();
      args->domains = t.empty() ? nullptr : t.data();
      args->domain_count = t.size();
    });
  }
};
}  // namespace detail

}  // namespace loom::sdk

// Defines the plugin entry symbol. `create` is a function
// `std::unique_ptr<loom::sdk::Plugin>()`; name and version are string literals.
#define LOOM_SDK_DEFINE_PLUGIN(plugin_name, plugin_version, create) \
  LOOM_SDK_DEFINE_PLUGIN_VARIANT(plugin_name, plugin_version, create, nullptr)

// The same for one variant build of a plugin (see LOOM_PluginApi.score):
// `score` is an `int32_t()` function rating this machine for this build.
#define LOOM_SDK_DEFINE_PLUGIN_VARIANT(plugin_name, plugin_version, create, score_fn)           \
  LOOM_EXPORT LOOM_Status* loom_plugin_entry(LOOM_PluginEntry_Args* args) {                     \
    using Entry = ::loom::sdk::detail::PluginEntry<create>;                                     \
    static const LOOM_PluginApi api = {                                                         \
        LOOM_PluginApi_STRUCT_SIZE, nullptr, LOOM_ABI_VERSION_MAJOR, LOOM_ABI_VERSION_MINOR,    \
        {plugin_name, sizeof(plugin_name) - 1}, {plugin_version, sizeof(plugin_version) - 1},   \
        &Entry::init, &Entry::release, &Entry::factories, &Entry::custom_op_domains, score_fn}; \
    ::loom::sdk::host_slot() = args->host;                                                      \
    args->plugin = &api;                                                                        \
    return nullptr;                                                                             \
  }
