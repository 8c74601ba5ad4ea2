#include "calibration_data.h"

#include <algorithm>
#include <filesystem>

#include "loom/tensor_io.h"

namespace loom::tools {
namespace {

namespace fs = std::filesystem;

bool is_tensor_file(const fs::path& p) { return p.extension() == ".pb" || p.extension() == ".npy"; }

Expected<Tensor> read_tensor_file(const fs::path& p, std::string* proto_name) {
  if (p.extension() == ".npy") return read_tensor_npy(p.string());
  LOOM_ASSIGN_OR_RETURN(NamedTensor t, read_tensor_pb(p.string()));
  if (proto_name != nullptr) *proto_name = t.name;
  return t.tensor;
}

std::vector<fs::path> sorted_entries(const fs::path& dir, bool folders) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    if (folders ? e.is_directory(ec) : (e.is_regular_file(ec) && is_tensor_file(e.path()))) out.push_back(e.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

// "input_12" -> 12; -1 for other names.
int input_number(const std::string& stem) {
  const std::string prefix = "input_";
  if (stem.rfind(prefix, 0) != 0 || stem.size() == prefix.size()) return -1;
  const std::string digits = stem.substr(prefix.size());
  if (digits.size() > 6 || digits.find_first_not_of("0123456789") != std::string::npos) return -1;
  return std::stoi(digits);
}

Status check_type(const Tensor& t, const ValueInfo& info, const fs::path& file) {
  if (info.dtype != DType::kUndefined && t.dtype() != info.dtype)
    return invalid_argument(file.string() + ": input '" + info.name + "' must be " + dtype_name(info.dtype) +
                            ", the file holds " + dtype_name(t.dtype()));
  return Status::ok();
}

}  // namespace

Expected<std::vector<std::string>> list_calibration_samples(const std::string& dir,
                                                            const std::vector<ValueInfo>& inputs) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return not_found("--data " + dir + ": no such folder");
  std::vector<std::string> samples;
  for (const fs::path& p : sorted_entries(dir, /*folders=*/true)) samples.push_back(p.string());
  if (!samples.empty()) return samples;
  if (inputs.size() != 1)
    return invalid_argument("--data " + dir + ": no sample folders; loose .pb / .npy files serve models with one "
                            "input only, this one has " + std::to_string(inputs.size()) +
                            " (put each sample's files in a folder of its own)");
  for (const fs::path& p : sorted_entries(dir, /*folders=*/false)) samples.push_back(p.string());
  if (samples.empty()) return invalid_argument("--data " + dir + ": no sample folders and no .pb / .npy files");
  return samples;
}

Expected<std::map<std::string, Tensor>> read_calibration_sample(const std::string& sample,
                                                                const std::vector<ValueInfo>& inputs) {
  std::map<std::string, Tensor> feeds;
  std::error_code ec;
  if (!fs::is_directory(sample, ec)) {  // a loose file: the model's one input
    LOOM_ASSIGN_OR_RETURN(Tensor t, read_tensor_file(sample, nullptr));
    LOOM_RETURN_IF_ERROR(check_type(t, inputs[0], sample));
    feeds[inputs[0].name] = std::move(t);
    return feeds;
  }
  for (const fs::path& file : sorted_entries(sample, /*folders=*/false)) {
    std::string proto_name;
    LOOM_ASSIGN_OR_RETURN(Tensor t, read_tensor_file(file, &proto_name));
    const std::string stem = file.stem().string();
    const ValueInfo* info = nullptr;
    for (const ValueInfo& in : inputs)
      if (in.name == proto_name || in.name == stem) info = &in;
    const int number = input_number(stem);
    if (info == nullptr && number >= 0 && number < static_cast<int>(inputs.size())) info = &inputs[number];
    if (info == nullptr) continue;  // not an input of this model (outputs of test data sets, notes)
    LOOM_RETURN_IF_ERROR(check_type(t, *info, file));
    if (feeds.count(info->name))
      return invalid_argument(sample + ": two files give input '" + info->name + "'");
    feeds[info->name] = std::move(t);
  }
  for (const ValueInfo& in : inputs)
    if (!feeds.count(in.name))
      return invalid_argument(sample + ": no file for input '" + in.name + "' (expected " + in.name + ".pb, " +
                              in.name + ".npy or input_<n>.pb)");
  return feeds;
}

}  // namespace loom::tools
