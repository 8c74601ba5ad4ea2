// `loom quantize`: a float model and the ranges `loom calibrate` wrote become
// a QDQ model (quantization/qdq_quantizer.h), valid ONNX.
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>

#include "commands.h"
#include "quantization/qdq_quantizer.h"
#include "quantization/ranges_json.h"

namespace loom::tools {
namespace {

namespace fs = std::filesystem;

const char* kName = "quantize";

Expected<::onnx::ModelProto> read_model(const std::string& path) {
  std::error_code ec;
  const auto size = fs::file_size(path, ec);
  if (ec) return not_found(path + ": no such model file");
  if (size > static_cast<uintmax_t>(std::numeric_limits<int>::max()))
    return invalid_argument(path + ": 2 GiB or more; keep large tensors in external data");
  std::ifstream in(path, std::ios::binary);
  ::onnx::ModelProto model;
  if (!in || !model.ParseFromIstream(&in)) return invalid_argument(path + ": not a valid ONNX model");
  return model;
}

Status write_model(const ::onnx::ModelProto& model, const std::string& path) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out || !model.SerializeToOstream(&out)) return fail(path + ": cannot write the model");
  out.close();
  if (!out) return fail(path + ": write failed");
  return Status::ok();
}

int quantize_main(const ParsedArgs& args) {
  auto model_path = args.value("model");
  auto ranges_path = args.value("ranges");
  auto out_path = args.value("out");
  if (!model_path || !ranges_path || !out_path)
    return report_usage_error(quantize_command().spec, "--model, --ranges and --out are required");
  quant::QdqOptions options;
  options.per_channel = args.has("per-channel");
  options.symmetric_weights = !args.has("asymmetric-weights");
  if (auto t = args.value("activation-type")) {
    if (*t != "uint8" && *t != "int8")
      return report_usage_error(quantize_command().spec, "--activation-type: uint8 or int8, got '" + *t + "'");
    options.int8_activations = *t == "int8";
  }
  if (auto v = args.value("op-types")) options.op_types = split_list(*v);
  if (auto v = args.value("exclude")) {
    for (const std::string& n : split_list(*v)) options.exclude_nodes.insert(n);
  }

  auto ranges = quant::read_ranges_json(*ranges_path);
  if (!ranges) return report_failure(kName, ranges.status().message());
  auto model = read_model(*model_path);
  if (!model) return report_failure(kName, model.status().message());
  auto report = quant::quantize_qdq(*model, ranges->ranges, options);
  if (!report) return report_failure(kName, *model_path + ": " + report.status().message());
  if (Status st = write_model(*model, *out_path); !st) return report_failure(kName, st.message());
  if (!args.has("quiet")) {
    std::cout << "quantized " << report->quantized_nodes << " nodes: " << report->activations
              << " activations (QuantizeLinear/DequantizeLinear), " << report->weights << " int8 weights"
              << (options.per_channel ? " per channel" : "") << ", " << report->biases << " int32 biases\n";
    for (const auto& [node, why] : report->skipped) std::cout << "  left in float: " << node << ": " << why << "\n";
    std::cout << "written to " << *out_path << "\n";
  }
  return kExitOk;
}

}  // namespace

Command quantize_command() {
  return Command{
      CommandSpec{
          "quantize",
          "Write a QDQ (QuantizeLinear/DequantizeLinear) int8 model from a float model and calibrated ranges.",
          "--model M.onnx --ranges ranges.json --out M_int8.onnx [--per-channel] [options]",
          {
              {"model", "M.onnx", "the float model (required)"},
              {"ranges", "F.json", "ranges from `loom calibrate` (required)"},
              {"out", "M_int8.onnx", "where to write the quantized model (required)"},
              {"per-channel", "", "one weight scale per output channel (needs opset 13)"},
              {"symmetric-weights", "", "symmetric int8 weights, zero point 0 (the default)"},
              {"asymmetric-weights", "", "int8 weights with their own zero point"},
              {"activation-type", "T", "uint8 (default) or int8 activations"},
              {"op-types", "A,B", "ops to quantize (default: Conv,MatMul,Gemm)"},
              {"exclude", "N1,N2", "node names to leave in float"},
              {"quiet", "", "print nothing on success"},
          }},
      quantize_main};
}

}  // namespace loom::tools
