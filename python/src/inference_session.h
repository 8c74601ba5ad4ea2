// loom.InferenceSession: ONNX Runtime's InferenceSession over loom::Session.
// run() and run_with_iobinding() convert the inputs with the GIL held, run
// without it (several Python threads may run one session at once, as
// Session::run allows), then convert the outputs.
#pragma once

#include <pybind11/pybind11.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "loom/session.h"
#include "session_options.h"

namespace loom::python {

class PyInferenceSession {
 public:
  PyInferenceSession(const pybind11::object& path_or_bytes, const pybind11::object& sess_options,
                     const pybind11::object& providers, const pybind11::object& provider_options,
                     const pybind11::object& config);

  const Session& session() const { return *session_; }
  const std::shared_ptr<const Session>& shared_session() const { return session_; }

  pybind11::list run(const pybind11::object& output_names, const pybind11::dict& input_feed,
                     const pybind11::object& run_options) const;
  std::string end_profiling() const;
  std::vector<std::string> providers() const;
  const std::map<std::string, std::map<std::string, std::string>>& provider_options() const {
    return env_->config().provider_options;
  }
  const PySessionOptions& options() const { return options_; }
  const ValueInfo* input_info(const std::string& name) const;

 private:
  std::shared_ptr<Environment> env_;
  std::shared_ptr<const Session> session_;
  PySessionOptions options_;
  std::vector<std::string> providers_;  // in priority order, the fallback last
  bool ort_names_ = false;              // created with ONNX Runtime's provider names
  bool profiling_ = false;
};

// The RunOptions of an optional loom.RunOptions argument.
RunOptions run_options_of(const pybind11::object& run_options);

void register_inference_session(pybind11::module_& m);

}  // namespace loom::python
