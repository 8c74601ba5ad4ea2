// Writes an IR graph back out as an ONNX ModelProto (the inverse of
// model_loader.h): what load_model_file reads from the file it writes is the
// same graph — opsets, inputs/outputs with their types, initializers, value
// types of intermediate values, nodes with every attribute kind and nested
// subgraphs (If/Loop/Scan bodies with their own inputs, outputs and
// initializers).
#pragma once

#include <cstddef>
#include <string>

#include <onnx/onnx_pb.h>

#include "ir/graph.h"
#include "loom/status.h"

namespace loom::onnxio {

struct SaveOptions {
  // Initializers (of any graph, subgraphs included) holding at least this
  // many bytes are written to one file `<path>.data` beside the model
  // (location relative to the model's folder, each offset aligned to 64
  // bytes). SIZE_MAX keeps everything inline. String and empty tensors are
  // always inline. When the model would exceed protobuf's 2 GiB limit the
  // threshold is lowered (to 1024 bytes, then to 1) so it does not.
  size_t external_data_threshold = 1024;
};

// Saves `graph` (a top-level graph) to `path` as ir_version 8, producer
// "loom", opset imports from graph.opsets (plus any domain a node uses that
// they lack). Graph inputs that are also initializers stay inputs. An
// existing file at `path` (and at `<path>.data` when external data is
// written) is replaced. Errors name the path: unwritable file or folder,
// a model still over 2 GiB (e.g. huge tensor attributes).
Status save_model(const ir::Graph& graph, const SaveOptions& options, const std::string& path);

// The same model in memory for ONNX type and shape inference: initializers
// of at least `data_threshold` bytes carry their type and dims but no data
// (inference reads the data of small shape-like tensors only).
Expected<::onnx::ModelProto> model_proto_for_inference(const ir::Graph& graph, size_t data_threshold);

}  // namespace loom::onnxio
