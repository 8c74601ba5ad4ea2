// Custom-op domains as the host reads them from a plugin
// (LOOM_CustomOpDomain): every rule of the ABI checked, schemas turned into
// onnxio::CustomOpSchema (with the plugin's shape inference wrapped) and
// kernels kept per provider. The plugin registry and `loom plugins --check`
// both read domains through here, so they agree on what is valid.
#pragma once

#include <string>
#include <vector>

#include "loom/plugin_api.h"
#include "loom/status.h"
#include "onnx/op_schemas.h"
#include "plugin_host/plugin_library.h"

namespace loom::plugin_host {

// A custom op's kernel for one provider ("" = every synchronous EP on host
// memory).
struct CustomKernel {
  std::string provider;
  const LOOM_KernelDef* def = nullptr;  // lives as long as the library
  std::string library;
};

struct CustomOpDomain {
  std::string name;
  std::vector<onnxio::CustomOpSchema> ops;
  std::vector<CustomKernel> kernels;
};

// The domains `lib` declares (empty when it has no get_custom_op_domains);
// an error when the call fails or returns a count without an array.
Expected<std::vector<const LOOM_CustomOpDomain*>> custom_op_domains_of(const PluginLibrary& lib);

// Reads domain `index` of library `library`. Each broken rule is appended
// to *problems as one line naming the domain and op or kernel; the domain
// is usable only when none was appended.
CustomOpDomain read_custom_op_domain(const LOOM_CustomOpDomain* d, uint64_t index, const std::string& library,
                                     std::vector<std::string>* problems);

}  // namespace loom::plugin_host
