// ONNX Runtime's provider names ("CPUExecutionProvider", ...) and their
// options, as existing onnxruntime code passes them, mapped to Loom's
// providers: CPUExecutionProvider is Loom's host providers (cpu_onednn where
// it is available, then reference), CUDAExecutionProvider is cuda (its ORT
// options carried over), DnnlExecutionProvider is cpu_onednn. A provider
// ORT knows but this machine lacks is skipped with ORT's warning; a name
// neither knows is an error.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "loom/config.h"

namespace loom::python {

struct OrtProviderRequest {
  std::string name;  // as given, e.g. "CUDAExecutionProvider"
  std::map<std::string, std::string> options;
};

// True for a name of ONNX Runtime's form ("...ExecutionProvider").
bool is_ort_provider_name(const std::string& name);

// The requests' options onto `config`, before the environment is made from
// it: CUDAExecutionProvider's go to cuda (gpu_mem_limit as the cuda arena's
// limit, arena_extend_strategy as the arena growth); Loom names' as given.
void apply_ort_options(const std::vector<OrtProviderRequest>& requests, Config& config);

// Loom's providers for `requests` (in order, each once; Loom names kept),
// given what is `available`. Warns (Python UserWarning) for a provider ORT
// knows that is absent here; throws ValueError for an unknown name. Empty
// when none is available: the session then takes every available one.
std::vector<std::string> resolve_ort_providers(const std::vector<OrtProviderRequest>& requests,
                                               const std::vector<std::string>& available);

// ONNX Runtime's name for a Loom provider (host providers are
// CPUExecutionProvider), as get_providers() answers sessions created with
// ORT's names.
std::string ort_name_of(const std::string& loom_provider);

}  // namespace loom::python
