// Runs an ONNX model through Loom's C++ API: create an environment (which
// finds the plugins), create a session with a chosen provider order, feed
// zero-filled inputs of the declared shapes, and print where each node ran
// and what came out.
//
//   run_model MODEL.onnx [PROVIDER,PROVIDER,...]
#include <iostream>
#include <sstream>

#include "loom/loom.h"

namespace {

std::vector<std::string> split(const std::string& list) {
  std::vector<std::string> out;
  std::stringstream ss(list);
  for (std::string item; std::getline(ss, item, ',');)
    if (!item.empty()) out.push_back(item);
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: run_model MODEL.onnx [PROVIDER,PROVIDER,...]\n";
    return 2;
  }
  loom::Config config;
  if (argc > 2) config.providers = split(argv[2]);  // e.g. "cpu_onednn,reference"
  auto env = loom::Environment::create(config);
  if (!env) {
    std::cerr << "run_model: " << env.status().message() << "\n";
    return 1;
  }
  auto session = loom::Session::create(*env, argv[1]);
  if (!session) {
    std::cerr << "run_model: " << session.status().message() << "\n";
    return 1;
  }
  std::cout << (*session)->placement().to_string();

  // Zero-filled tensors of the declared shapes; symbolic dims become 1.
  std::map<std::string, loom::Tensor> inputs;
  for (const loom::ValueInfo& in : (*session)->inputs()) {
    if (in.kind != loom::ValueKind::kTensor) {
      std::cerr << "run_model: input '" << in.name << "' is not a tensor; use loom run for such models\n";
      return 1;
    }
    loom::Dims dims;
    for (const loom::DimInfo& d : in.shape) dims.push_back(d.value >= 0 ? d.value : 1);
    auto t = loom::Tensor::zeros(in.dtype, dims);
    if (!t) {
      std::cerr << "run_model: input '" << in.name << "': " << t.status().message() << "\n";
      return 1;
    }
    inputs[in.name] = *t;
  }
  auto outputs = (*session)->run(inputs);
  if (!outputs) {
    std::cerr << "run_model: " << outputs.status().message() << "\n";
    return 1;
  }
  for (size_t i = 0; i < outputs->size(); ++i)
    std::cout << "output " << (*session)->outputs()[i].name << ": " << loom::dtype_name((*outputs)[i].dtype()) << " "
              << loom::dims_string((*outputs)[i].dims()) << "\n";
  return 0;
}
