// The ranges file that `loom calibrate` writes and the quantizer reads:
//
//   {"version": 1, "method": "entropy",
//    "options": {"moving_average": false, "averaging_constant": 0.01,
//                "symmetric": false, "percentile": 99.999, "num_bins": 128,
//                "num_quantized_bins": 128},
//    "ranges": {"<tensor>": {"low": -1.5, "high": 2.25,
//                            "hist": [...], "bin_edges": [...],
//                            "mean": 0.1, "stddev": 0.7}}}
//
// "hist"/"bin_edges" appear for histogram methods, "mean"/"stddev" for
// distribution. Floats are written with enough digits to read back the
// same float32. num_bins is written as the effective count (never 0).
#pragma once

#include <map>
#include <string>

#include "loom/status.h"
#include "quantization/calibration_options.h"
#include "quantization/tensor_range.h"

namespace loom::quant {

struct RangesFile {
  CalibrationOptions options;
  std::map<std::string, TensorRange> ranges;
};

// The JSON text (pretty-printed, 2-space indent).
std::string ranges_to_json(const CalibrationOptions& options, const std::map<std::string, TensorRange>& ranges);

// Writes ranges_to_json() to `path`, replacing it; kFail naming the path when
// it cannot be written.
Status write_ranges_json(const std::string& path, const CalibrationOptions& options,
                         const std::map<std::string, TensorRange>& ranges);

// Parses a ranges file's text; `source` names it in errors. Refuses
// (kInvalidArgument, "<source>: <key>: <problem>") bad JSON, a missing or
// mistyped "method"/"ranges", an unknown method, options of the wrong type,
// a range whose low/high are missing, not finite or low > high, a
// hist/bin_edges pair that is incomplete, of inconsistent sizes, with
// negative counts or non-ascending edges, and an unknown "version". Options
// absent from the file keep their defaults.
Expected<RangesFile> parse_ranges_json(const std::string& text, const std::string& source);

// Reads and parses `path` (kNotFound when it cannot be opened).
Expected<RangesFile> read_ranges_json(const std::string& path);

}  // namespace loom::quant
