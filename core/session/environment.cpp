#include "loom/environment.h"

#include <filesystem>
#include <mutex>

#include "base/library_dir.h"
#include "base/logging.h"
#include "session/inter_op_pool.h"
#include "plugin_host/plugin_registry.h"

namespace loom {

struct Environment::Impl {
  Config config;
  plugin_host::PluginRegistry registry;
  std::mutex pool_mutex;
  std::shared_ptr<exec::ThreadPool> inter_op;  // made on first use
};

namespace session {

std::shared_ptr<exec::ThreadPool> make_inter_op_pool(const Config& config) {
  exec::ThreadPoolOptions o;
  o.threads = config.inter_op_threads;
  o.spin = std::chrono::microseconds(config.spin_us);
  return std::make_shared<exec::ThreadPool>(o);
}

}  // namespace session

std::shared_ptr<exec::ThreadPool> Environment::shared_inter_op_pool() const {
  std::lock_guard<std::mutex> lock(impl_->pool_mutex);
  if (!impl_->inter_op) impl_->inter_op = session::make_inter_op_pool(impl_->config);
  return impl_->inter_op;
}

Environment::Environment() : impl_(std::make_unique<Impl>()) {}
Environment::~Environment() = default;

std::string Environment::default_plugin_dir() {
  // Plugins sit in <libdir>/loom/plugins next to the core library, both in
  // the build tree (build/lib) and in an install tree.
  const std::filesystem::path dir = core_private_dir();
  return dir.empty() ? "lib/loom/plugins" : (dir / "plugins").string();
}

Expected<std::shared_ptr<Environment>> Environment::create(const Config& config) {
  std::shared_ptr<Environment> env(new Environment());
  env->impl_->config = config;
  log::set_level(config.log_level);
  env->impl_->registry.set_provider_options(config.provider_options);
  // Configured directories come first so their providers shadow bundled ones.
  for (const std::string& dir : config.plugin_dirs) {
    Status st = env->impl_->registry.scan_directory(dir);
    if (!st) return st.with_context("config plugin_dirs");
  }
  const std::string def = default_plugin_dir();
  if (!env->impl_->registry.scan_directory(def))
    log::logger()->warn("default plugin directory '{}' does not exist; only configured directories are scanned", def);
  return env;
}

const Config& Environment::config() const { return impl_->config; }
const std::vector<PluginReport>& Environment::plugin_reports() const { return impl_->registry.reports(); }
plugin_host::PluginRegistry& Environment::registry() const { return impl_->registry; }

std::vector<std::string> Environment::available_providers() const {
  std::vector<std::string> out;
  for (const auto& p : impl_->registry.providers())
    if (!p.devices.empty()) out.push_back(p.name);
  return out;
}

}  // namespace loom
