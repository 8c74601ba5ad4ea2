// What a program is built from: each partition input's element type and
// dims, and the bytes of the inputs a builder reads while building
// (constants, and a Resize's sizes computed at run time). At run time they
// come from the kernel context; at compile time from the subgraph view,
// where only initializers have bytes.
#pragma once

#include <optional>
#include <vector>

#include "loom/sdk.h"
#include "partition_spec.h"

namespace loom::onednn {

struct BuildInput {
  bool exists = false;  // false: an omitted optional input
  int32_t dtype = LOOM_DTYPE_UNDEFINED;
  std::vector<int64_t> dims;
  sdk::ConstTensor bytes;  // empty when they cannot be read while building
};
using BuildInputs = std::vector<BuildInput>;

// This run's inputs, every one readable.
BuildInputs build_inputs_of(const sdk::KernelContext& ctx, size_t count);

// The inputs as compile time knows them: static shapes from inference, the
// initializers' bytes through `graph` (valid during the compile call only).
// nullopt when some input that is not an initializer has no fully known
// shape, or is read as a value that shapes the program (a Resize's sizes):
// the program then waits for the first run.
std::optional<BuildInputs> build_inputs_at_compile(const PartitionSpec& spec, const sdk::Graph& graph);

}  // namespace loom::onednn
