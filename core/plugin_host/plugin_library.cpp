#include "plugin_host/plugin_library.h"

#include <algorithm>

#include "plugin_host/abi_objects.h"
#include "plugin_host/elf_file.h"

namespace loom::plugin_host {
namespace {

std::string sv(LOOM_StringView v) { return v.size && v.data ? std::string(v.data, v.size) : std::string(); }

// The smallest table that still has every required slot.
constexpr size_t kMinPluginApiSize = LOOM_STRUCT_SIZE(LOOM_PluginApi, get_ep_factories);
constexpr size_t kMinFactorySize = LOOM_STRUCT_SIZE(LOOM_EpFactory, release_ep);

Status refuse(const std::string& why) { return fail(why); }

}  // namespace

std::string PluginLibrary::name() const { return sv(api_->name); }
std::string PluginLibrary::version() const { return sv(api_->version); }

Expected<std::unique_ptr<PluginLibrary>> PluginLibrary::load(const std::string& path, LoadStep* reached) {
  LOOM_ASSIGN_OR_RETURN(std::unique_ptr<PluginLibrary> lib, open(path, reached));
  LOOM_RETURN_IF_ERROR(lib->initialize(reached));
  return lib;
}

int32_t PluginLibrary::score() const {
  return LOOM_HAS_FIELD(api_, LOOM_PluginApi, score) && api_->score != nullptr ? api_->score() : 1;
}

Expected<std::unique_ptr<PluginLibrary>> PluginLibrary::open(const std::string& path, LoadStep* reached) {
  LoadStep ignored;
  LoadStep& step = reached ? *reached : ignored;
  step = LoadStep::kOpen;
  if (Status file = check_elf_file(path); !file) return refuse("cannot load library: " + file.message());
  std::unique_ptr<PluginLibrary> lib(new PluginLibrary());
  lib->path_ = path;
  boost::system::error_code ec;
  // rtld_local keeps one plugin's symbols from satisfying another's.
  lib->library_.load(path, boost::dll::load_mode::rtld_now | boost::dll::load_mode::rtld_local, ec);
  if (ec) {
    std::string why = ec.message();
    const char* dl = dlerror();  // Boost's message is generic; dlerror names the missing dependency
    if (dl) why = dl;
    return refuse("cannot load library: " + why);
  }
  step = LoadStep::kEntry;
  if (!lib->library_.has(LOOM_PLUGIN_ENTRY_SYMBOL))
    return refuse(std::string("missing entry symbol '") + LOOM_PLUGIN_ENTRY_SYMBOL + "' (not a Loom plugin?)");
  auto entry = lib->library_.get<LOOM_Status*(LOOM_PluginEntry_Args*)>(LOOM_PLUGIN_ENTRY_SYMBOL);

  LOOM_PluginEntry_Args args{};
  args.struct_size = LOOM_PluginEntry_Args_STRUCT_SIZE;
  args.host = host_api();
  Status st = from_abi(entry(&args));
  if (!st) return refuse("entry point failed: " + st.message());
  const LOOM_PluginApi* api = args.plugin;
  if (api == nullptr) return refuse("entry point returned no plugin table");
  step = LoadStep::kAbiVersion;
  if (api->struct_size < offsetof(LOOM_PluginApi, abi_minor) + sizeof(uint32_t))
    return refuse("plugin table too small (" + std::to_string(api->struct_size) + " bytes) to hold a version");
  if (api->abi_major != LOOM_ABI_VERSION_MAJOR)
    return refuse("built for ABI " + std::to_string(api->abi_major) + "." + std::to_string(api->abi_minor) +
                  ", this Loom speaks ABI " + std::to_string(LOOM_ABI_VERSION_MAJOR) + "." +
                  std::to_string(LOOM_ABI_VERSION_MINOR) + " (majors must match)");
  step = LoadStep::kPluginTable;
  if (api->struct_size < kMinPluginApiSize)
    return refuse("plugin table too small (" + std::to_string(api->struct_size) + " bytes, need at least " +
                  std::to_string(kMinPluginApiSize) + ")");
  if (api->init == nullptr) return refuse("required slot 'init' is missing");
  if (api->release == nullptr) return refuse("required slot 'release' is missing");
  if (api->get_ep_factories == nullptr) return refuse("required slot 'get_ep_factories' is missing");
  lib->agreed_minor_ = std::min<uint32_t>(api->abi_minor, LOOM_ABI_VERSION_MINOR);
  lib->api_ = api;
  return lib;
}

Status PluginLibrary::initialize(LoadStep* reached) {
  LoadStep ignored;
  LoadStep& step = reached ? *reached : ignored;
  if (initialised_) return Status::ok();
  const LOOM_PluginApi* api = api_;
  step = LoadStep::kInit;
  LOOM_Plugin_Init_Args init{};
  init.struct_size = LOOM_Plugin_Init_Args_STRUCT_SIZE;
  init.agreed_minor = agreed_minor_;
  Status st = from_abi(api->init(&init));
  if (!st) return refuse("init failed: " + st.message());
  initialised_ = true;
  state_ = init.plugin_state;  // from here on the destructor releases it

  step = LoadStep::kFactories;
  LOOM_Plugin_GetEpFactories_Args fargs{};
  fargs.struct_size = LOOM_Plugin_GetEpFactories_Args_STRUCT_SIZE;
  st = from_abi(api->get_ep_factories(state_, &fargs));
  if (!st) return refuse("get_ep_factories failed: " + st.message());
  if (fargs.factory_count > 0 && fargs.factories == nullptr)
    return refuse("get_ep_factories returned a count but no array");
  for (uint64_t i = 0; i < fargs.factory_count; ++i) {
    const LOOM_EpFactory* f = fargs.factories[i];
    if (f == nullptr) return refuse("EP factory " + std::to_string(i) + " is NULL");
    if (f->struct_size < kMinFactorySize)
      return refuse("EP factory " + std::to_string(i) + " table too small");
    if (sv(f->name).empty()) return refuse("EP factory " + std::to_string(i) + " has no name");
    if (!f->get_devices || !f->create_ep || !f->release_ep)
      return refuse("EP factory '" + sv(f->name) + "' lacks a required slot (get_devices, create_ep, release_ep)");
    factories_.push_back(f);
  }
  step = LoadStep::kLoaded;
  return Status::ok();
}

PluginLibrary::~PluginLibrary() {
  if (initialised_ && api_->release != nullptr) api_->release(state_);
  // library_ unloads in its own destructor, after the release above.
}

}  // namespace loom::plugin_host
