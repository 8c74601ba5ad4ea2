#include "model_repository.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "datatype.h"

namespace loom::serve {
namespace fs = std::filesystem;

bool valid_model_name(const std::string& name) {
  if (name.empty() || name.size() > 255 || name == "." || name == "..") return false;
  for (char c : name)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-')) return false;
  return true;
}

namespace {

Expected<std::string> read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return not_found(path.string() + ": cannot open");
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// Version folders: positive decimal integers holding a model.onnx.
std::map<int64_t, fs::path> version_folders(const fs::path& dir) {
  std::map<int64_t, fs::path> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string v = e.path().filename().string();
    if (v.empty() || v.size() > 18 || v.find_first_not_of("0123456789") != std::string::npos) continue;
    const int64_t n = std::stoll(v);
    if (n > 0 && fs::is_regular_file(e.path() / "model.onnx", ec)) out[n] = e.path() / "model.onnx";
  }
  return out;
}

// The protocol carries tensors only, of the datatypes it names; batching
// needs dim 0 of every input and output left free.
Status check_servable(const ModelSignature& sig, const ModelConfig& config) {
  for (const auto* list : {&sig.inputs, &sig.outputs}) {
    const char* what = list == &sig.inputs ? "input" : "output";
    for (const ValueInfo& v : *list) {
      if (v.kind != ValueKind::kTensor)
        return invalid_argument(std::string(what) + " '" + v.name + "' is not a tensor; the protocol carries tensors");
      if (protocol_datatype(v.dtype).empty())
        return invalid_argument(std::string(what) + " '" + v.name + "' has element type " + dtype_name(v.dtype) +
                                ", which the protocol has no datatype for");
      if (config.max_batch_size > 0 && v.has_shape) {
        if (v.shape.empty())
          return invalid_argument("max_batch_size " + std::to_string(config.max_batch_size) + " needs a batch dim 0, but " +
                                  what + " '" + v.name + "' is a scalar");
        if (v.shape[0].value >= 0)
          return invalid_argument("max_batch_size " + std::to_string(config.max_batch_size) +
                                  " needs dim 0 of every input and output free, but " + what + " '" + v.name +
                                  "' fixes it at " + std::to_string(v.shape[0].value));
      }
    }
  }
  return Status::ok();
}

}  // namespace

ModelRepository::ModelRepository(std::string root, std::string base_config_json, MetricsRegistry& metrics)
    : root_(std::move(root)), base_config_json_(std::move(base_config_json)), metrics_(metrics) {}

ModelRepository::~ModelRepository() { shutdown(); }

int ModelRepository::load_all() {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(root_, ec))
    if (e.is_directory(ec) && valid_model_name(e.path().filename().string()))
      names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  int loaded = 0;
  for (const std::string& n : names) loaded += load(n).is_ok() ? 1 : 0;
  return loaded;
}

Expected<std::map<int64_t, std::shared_ptr<ModelVersion>>> ModelRepository::load_versions(const std::string& name) {
  const fs::path dir = fs::path(root_) / name;
  ModelConfig config;
  std::error_code ec;
  if (fs::exists(dir / "config.json", ec)) {
    LOOM_ASSIGN_OR_RETURN(std::string text, read_file(dir / "config.json"));
    LOOM_ASSIGN_OR_RETURN(config, parse_model_config(text, (dir / "config.json").string()));
  }
  const auto folders = version_folders(dir);
  if (folders.empty()) return not_found(dir.string() + ": no version folder (1, 2, ...) with a model.onnx");
  LOOM_ASSIGN_OR_RETURN(std::string session_json, merge_session_config(base_config_json_, config.session_json));
  LOOM_ASSIGN_OR_RETURN(Config loom_config, Config::from_json_string(session_json, (dir / "config.json").string()));
  LOOM_RETURN_IF_ERROR(loom_config.apply_environment());
  LOOM_ASSIGN_OR_RETURN(std::shared_ptr<Environment> env, Environment::create(loom_config));

  std::map<int64_t, std::shared_ptr<ModelVersion>> versions;
  for (const auto& [number, path] : folders) {
    std::vector<std::unique_ptr<Session>> sessions;
    for (int64_t i = 0; i < config.instance_count; ++i) {
      auto s = Session::create(env, path.string());
      if (!s) return s.status();  // names the file
      sessions.push_back(std::move(s).value());
    }
    auto v = std::make_shared<ModelVersion>();
    v->name = name;
    v->version = std::to_string(number);
    v->config = config;
    v->signature = {sessions[0]->inputs(), sessions[0]->outputs()};
    LOOM_RETURN_IF_ERROR(check_servable(v->signature, config).with_context(path.string()));
    v->metrics = metrics_.model(name, v->version);
    v->scheduler = std::make_unique<Scheduler>(std::move(sessions), v->signature, config, v->metrics);
    versions[number] = std::move(v);
  }
  return versions;
}

Status ModelRepository::load(const std::string& name) {
  if (!valid_model_name(name)) return invalid_argument("'" + name + "' is not a valid model name");
  std::lock_guard<std::mutex> load_lock(load_mu_);
  std::error_code ec;
  if (!fs::is_directory(fs::path(root_) / name, ec)) return not_found("no model '" + name + "' in the repository");
  auto loaded = load_versions(name);
  std::map<int64_t, std::shared_ptr<ModelVersion>> old;
  Status result;
  {
    std::lock_guard<std::mutex> lock(mu_);
    Entry& e = models_[name];
    old.swap(e.versions);
    if (loaded) {
      e.versions = std::move(loaded).value();
      e.reason.clear();
    } else {
      e.reason = loaded.status().message();
      result = loaded.status();
    }
  }
  // `old` goes here: each version's scheduler drains once the last request
  // holding it lets go.
  return result;
}

Status ModelRepository::unload(const std::string& name) {
  std::lock_guard<std::mutex> load_lock(load_mu_);
  std::map<int64_t, std::shared_ptr<ModelVersion>> old;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = models_.find(name);
    if (it == models_.end() || it->second.versions.empty()) return not_found("model '" + name + "' is not loaded");
    old.swap(it->second.versions);
    it->second.reason = "unloaded";
  }
  return Status::ok();
}

Expected<std::shared_ptr<ModelVersion>> ModelRepository::find(const std::string& name, const std::string& version) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = models_.find(name);
  if (it == models_.end()) return not_found("unknown model '" + name + "'");
  const auto& versions = it->second.versions;
  if (versions.empty()) return not_found("model '" + name + "' is not ready: " + it->second.reason);
  if (version.empty()) return versions.rbegin()->second;
  for (const auto& [n, v] : versions)
    if (v->version == version) return v;
  return not_found("unknown version '" + version + "' of model '" + name + "'");
}

std::vector<IndexEntry> ModelRepository::index() const {
  std::vector<IndexEntry> out;
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& [name, e] : models_) {
    if (e.versions.empty()) out.push_back({name, "", "UNAVAILABLE", e.reason});
    for (const auto& [n, v] : e.versions) out.push_back({name, v->version, "READY", ""});
  }
  return out;
}

void ModelRepository::shutdown() {
  std::map<std::string, Entry> all;
  {
    std::lock_guard<std::mutex> lock(mu_);
    all.swap(models_);
  }
  for (auto& [name, e] : all)
    for (auto& [n, v] : e.versions) v->scheduler->shutdown();
}

}  // namespace loom::serve
