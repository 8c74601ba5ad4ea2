// The calibration data set of `loom calibrate`: a folder of samples, each a
// value per model input.
//
//   DIR/<sample>/input_0.pb, input_1.pb ...   ONNX test-data style: a
//                                              TensorProto per input, matched
//                                              by its name field, else by the
//                                              number in the file name
//   DIR/<sample>/<input name>.pb | .npy        matched by file name
//   DIR/<file>.pb | .npy                       one sample per file, for a
//                                              model with a single input
//
// Samples are taken in file-name order. Sub-folders win: a folder that has
// any is read as one sample per sub-folder.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "loom/session.h"
#include "loom/tensor.h"

namespace loom::tools {

// The samples under `dir` (paths of sample folders or files), or an error
// naming the folder when it has none usable for `inputs`.
Expected<std::vector<std::string>> list_calibration_samples(const std::string& dir,
                                                            const std::vector<ValueInfo>& inputs);

// One sample's feeds: every input in `inputs` (tensors only) read from
// `sample`, its element type checked. Errors name the file and input.
Expected<std::map<std::string, Tensor>> read_calibration_sample(const std::string& sample,
                                                                const std::vector<ValueInfo>& inputs);

}  // namespace loom::tools
