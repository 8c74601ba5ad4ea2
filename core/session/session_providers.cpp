// Which EPs a session runs on: the priority list (the session's, the
// config's, or every available provider with the fallback last), each
// created with its options, and the fallback provider appended where the
// policy allows one.
#include <set>

#include "base/logging.h"
#include "plugin_host/plugin_registry.h"
#include "session/session_impl.h"

namespace loom {
namespace {
constexpr const char* kFallbackProvider = "reference";
}  // namespace

Status Session::Impl::create_eps(const SessionOptions& options, size_t* priority_count, int* fallback) {
  const Config& config = env->config();
  auto& registry = env->registry();
  std::vector<std::string> names = !options.providers.empty() ? options.providers : config.providers;
  const bool named = !names.empty();
  if (names.empty()) {
    // Every available provider, the fallback last.
    for (const std::string& n : env->available_providers())
      if (n != kFallbackProvider) names.push_back(n);
    names.push_back(kFallbackProvider);
  }
  std::set<std::string> seen;
  for (const std::string& name : names) {
    if (!seen.insert(name).second) return invalid_argument("provider '" + name + "' is listed twice");
    const plugin_host::Provider* p = registry.find(name);
    std::string why;
    if (p == nullptr) {
      std::string available;
      for (const std::string& a : env->available_providers()) available += (available.empty() ? "" : ", ") + a;
      why = "provider '" + name + "' was not found (available: " + (available.empty() ? "none" : available) + ")";
      for (const PluginReport& r : env->plugin_reports())
        if (!r.loaded) why += "; refused plugin " + r.path + ": " + r.refusal;
    } else {
      auto opts = config.provider_options.count(name) ? config.provider_options.at(name)
                                                      : std::map<std::string, std::string>();
      // Session-wide settings every EP sees unless its own options say otherwise.
      if (config.intra_op_threads > 0 && !opts.count(kIntraOpThreadsOption))
        opts[kIntraOpThreadsOption] = std::to_string(config.intra_op_threads);
      auto ep = plugin_host::EpInstance::create(*p, 0, opts, registry.custom_kernels());
      if (ep) {
        eps.push_back(ep->get());
        ep_storage.push_back(std::move(*ep));
        continue;
      }
      why = ep.status().message();
    }
    // Asked for by name: running without it would give the user another
    // configuration than the one they wrote (silently slower, or on
    // another device), so only an explicit "allow" skips it.
    if (named && config.fallback != FallbackPolicy::kAllow)
      return not_found(why + "; set \"fallback\": \"allow\" to run without it");
    log::logger()->warn("{}: {}; continuing without it (fallback 'allow')", model_name, why);
  }
  *priority_count = eps.size();
  *fallback = -1;
  for (size_t i = 0; i < eps.size(); ++i)
    if (eps[i]->name() == kFallbackProvider) *fallback = static_cast<int>(i);
  if (*fallback < 0 && config.fallback != FallbackPolicy::kDeny) {
    if (const plugin_host::Provider* p = registry.find(kFallbackProvider)) {
      auto ep = plugin_host::EpInstance::create(*p, 0, {}, registry.custom_kernels());
      if (ep) {
        eps.push_back(ep->get());
        ep_storage.push_back(std::move(*ep));
        *fallback = static_cast<int>(eps.size() - 1);
      }
    }
  }
  if (eps.empty()) return not_found("no usable provider: check the plugin directories (see `loom plugins`)");
  return Status::ok();
}

}  // namespace loom
