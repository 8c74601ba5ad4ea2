#include "opreg/op_registry.h"

#include <algorithm>
#include <map>
#include <memory>
#include <utility>
#include <vector>

#include "opreg/schema_table.h"

namespace loom::opreg {
namespace {

// Loom's table, by (domain, op type), versions in ascending since-version.
// Schemas are finalized once here; a schema that ONNX's rules reject is a
// bug in the table and stops the process at its first lookup, in every
// test run, rather than serving a half-built schema.
class Table {
 public:
  Table() {
    SchemaList all;
    add_attention_schemas(all);
    add_recurrent_state_schemas(all);
    add_normalization_schemas(all);
    add_activation_schemas(all);
    add_bitwise_schemas(all);
    add_tensor_schemas(all);
    add_spatial_schemas(all);
    add_signal_schemas(all);
    add_quantization_schemas(all);
    add_text_schemas(all);
    add_image_schemas(all);
    add_optional_schemas(all);
    add_ml_schemas(all);
    add_contrib_schemas(all);
    for (::onnx::OpSchema& s : all) {
      s.Finalize();
      auto owned = std::make_unique<::onnx::OpSchema>(std::move(s));
      ops_[{owned->domain(), owned->Name()}].push_back(owned.get());
      owned_.push_back(std::move(owned));
    }
    for (auto& [key, versions] : ops_)
      std::sort(versions.begin(), versions.end(), [](const ::onnx::OpSchema* a, const ::onnx::OpSchema* b) {
        return a->SinceVersion() < b->SinceVersion();
      });
  }

  const ::onnx::OpSchema* find(const std::string& op_type, int64_t opset, const std::string& domain) const {
    auto it = ops_.find({domain, op_type});
    if (it == ops_.end()) return nullptr;
    const ::onnx::OpSchema* best = nullptr;
    for (const ::onnx::OpSchema* s : it->second)
      if (s->SinceVersion() <= opset) best = s;
    return best;
  }

  std::vector<const ::onnx::OpSchema*> all() const {
    std::vector<const ::onnx::OpSchema*> out;
    for (const auto& o : owned_) out.push_back(o.get());
    return out;
  }

  bool owns(const ::onnx::OpSchema* s) const {
    for (const auto& o : owned_)
      if (o.get() == s) return true;
    return false;
  }

 private:
  std::map<std::pair<std::string, std::string>, std::vector<const ::onnx::OpSchema*>> ops_;
  std::vector<std::unique_ptr<::onnx::OpSchema>> owned_;
};

const Table& table() {
  static const Table* const t = new Table();  // never destroyed: schemas outlive every session
  return *t;
}

}  // namespace

const ::onnx::OpSchema* find_schema(const std::string& op_type, int64_t opset, const std::string& domain) {
  const std::string d = domain == "ai.onnx" ? std::string() : domain;
  const int version = static_cast<int>(std::clamp<int64_t>(opset, 0, INT32_MAX));
  const ::onnx::OpSchema* onnx = ::onnx::OpSchemaRegistry::Schema(op_type, version, d);
  const ::onnx::OpSchema* loom = table().find(op_type, version, d);
  if (loom == nullptr) return onnx;
  if (onnx == nullptr) return loom;
  return loom->SinceVersion() >= onnx->SinceVersion() ? loom : onnx;
}

std::vector<const ::onnx::OpSchema*> loom_schemas() { return table().all(); }

bool is_loom_schema(const ::onnx::OpSchema* schema) { return schema != nullptr && table().owns(schema); }

const ::onnx::OpSchema* OpRegistry::GetSchema(const std::string& key, const int max_inclusive_version,
                                              const std::string& domain) const {
  return find_schema(key, max_inclusive_version, domain);
}

const OpRegistry& op_registry() {
  static const OpRegistry registry;
  return registry;
}

}  // namespace loom::opreg
