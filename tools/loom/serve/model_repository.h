// The model repository, laid out as Triton's:
//
//   DIR/<model>/config.json          optional (model_config.h)
//   DIR/<model>/<version>/model.onnx version: a positive integer
//
// Every version folder with a model.onnx is loaded (instance_count sessions
// each, one scheduler per version); a request without a version gets the
// highest one. Loading, reloading and unloading are whole-model operations
// (the repository API); a model that fails to load stays listed as
// UNAVAILABLE with the reason. Requests hold their version alive, so an
// unload or reload lets in-flight requests finish on the old sessions.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "metrics.h"
#include "model_config.h"
#include "scheduler.h"

namespace loom::serve {

struct ModelVersion {
  std::string name;
  std::string version;  // decimal text, as the protocol carries it
  ModelConfig config;
  ModelSignature signature;
  std::shared_ptr<ModelMetrics> metrics;
  std::unique_ptr<Scheduler> scheduler;
};

struct IndexEntry {
  std::string name, version, state, reason;  // state: READY, UNAVAILABLE
};

class ModelRepository {
 public:
  // `base_config_json`: the server's --config as JSON text ("{}" for none);
  // each model's "session" object is merged over it.
  ModelRepository(std::string root, std::string base_config_json, MetricsRegistry& metrics);
  ~ModelRepository();

  // Loads every model folder; returns how many loaded (failures are in index()).
  int load_all();
  // (Re)loads one model. kNotFound: no such folder; kInvalidArgument: a
  // name that is not a plain folder name; else why it failed to load.
  Status load(const std::string& name);
  // kNotFound when the model is not loaded.
  Status unload(const std::string& name);
  // A ready version; `version` empty: the highest. kNotFound names what is missing.
  Expected<std::shared_ptr<ModelVersion>> find(const std::string& name, const std::string& version) const;
  std::vector<IndexEntry> index() const;
  // Unloads everything, letting queued and running requests finish.
  void shutdown();

 private:
  struct Entry {
    std::map<int64_t, std::shared_ptr<ModelVersion>> versions;
    std::string reason;  // why it is unavailable, when versions is empty
  };
  Expected<std::map<int64_t, std::shared_ptr<ModelVersion>>> load_versions(const std::string& name);

  const std::string root_;
  const std::string base_config_json_;
  MetricsRegistry& metrics_;
  std::mutex load_mu_;     // one load / unload at a time
  mutable std::mutex mu_;  // guards models_
  std::map<std::string, Entry> models_;
};

// True for names safe as one path component: [A-Za-z0-9_.-], not "." / "..".
bool valid_model_name(const std::string& name);

}  // namespace loom::serve
