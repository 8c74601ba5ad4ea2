// A program: one partition compiled for one tuple of input shapes. It holds
// the oneDNN primitives in execution order, the memory descriptor of every
// value, weights packed once from constant inputs, and an arena layout for
// intermediates. Immutable once built; execute() may run concurrently (each
// call borrows its own arena from a pool).
#pragma once

#include <oneapi/dnnl/dnnl.hpp>

#include <functional>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "loom/sdk.h"

namespace loom::onednn {

using ValueId = size_t;
using BufferId = size_t;

// Where a value's bytes live during a run.
enum class BufferKind {
  kInput,   // partition input `index` (host tensor, plain row-major)
  kOutput,  // partition output `index` (allocated through the kernel context)
  kArena,   // intermediate at `offset` in the run's arena
  kPacked,  // owned by the program (packed weights), built once
};

struct Buffer {
  BufferKind kind = BufferKind::kArena;
  size_t index = 0;       // input / output index
  size_t bytes = 0;
  size_t offset = 0;      // arena offset
  int first_step = 0;     // lifetime in steps, for arena reuse
  int last_step = 0;
  dnnl::memory packed;    // kPacked only
};

struct Value {
  dnnl::memory::desc desc;
  std::vector<int64_t> dims;  // logical ONNX dims (desc dims are {1} for scalars)
  BufferId buffer = 0;
};

// A step computed on the host instead of by a oneDNN primitive (work oneDNN
// has no primitive for, e.g. gathers, or primitives run piecewise, as the
// banded depthwise step runs a convolution band by band on its own stream).
// It receives the memories of its
// step's argument values in the order of Step::args, data handles bound for
// this run. Contract: runs on the thread calling Program::execute, after
// every earlier step finished; reads and writes only those memories; may run
// concurrently with itself on other arenas (so captures are read-only);
// errors throw sdk::Error naming the node.
using HostFn = std::function<void(const std::vector<dnnl::memory>& args)>;

struct Step {
  dnnl::primitive primitive;                  // unset for a host step
  std::vector<std::pair<int, ValueId>> args;  // DNNL_ARG_* -> value (host step: position -> value)
  bool uses_scratchpad = false;
  std::string label;  // node label, for errors
  HostFn host;        // set: a host step
  // What the step runs, named in profiles ("<what>: <label>"): the
  // primitive's kind or the host kernel chosen, most general word first
  // ("convolution winograd", "depthwise banded").
  std::string what;
  // OpenMP threads the primitive was created for and runs on; 0: the
  // partition's (EpOptions::threads). A step whose work is too small to
  // split sets 1.
  int threads = 0;
};

// The kind of a oneDNN primitive as profiles name it ("convolution",
// "matmul", "eltwise"...).
std::string primitive_name(const dnnl::primitive& p);

struct ProgramOutput {
  ValueId value;
  std::vector<int64_t> dims;
  int32_t dtype = LOOM_DTYPE_FLOAT;  // LOOM_DTYPE_INT32 for s32 values (e.g. mask_index)
};

class Program {
 public:
  Program(dnnl::engine engine, std::vector<Buffer> buffers, std::vector<Value> values, std::vector<Step> steps,
          std::vector<ProgramOutput> outputs, size_t arena_bytes, size_t scratchpad_bytes);

  // Runs every step; inputs are the partition inputs, outputs allocated here.
  // In a profiled run each step is reported as a part ("<what>: <label>").
  void execute(sdk::KernelContext& ctx) const;

  size_t arena_bytes() const { return arena_bytes_; }
  size_t step_count() const { return steps_.size(); }

 private:
  // Memory objects bound to one arena; inputs/outputs rebound per run.
  struct Arena {
    std::unique_ptr<char, void (*)(void*)> storage{nullptr, nullptr};
    std::vector<dnnl::memory> memories;  // per value
    std::vector<std::unordered_map<int, dnnl::memory>> step_args;
  };
  std::unique_ptr<Arena> make_arena() const;
  std::unique_ptr<Arena> borrow_arena() const;
  void give_back(std::unique_ptr<Arena> arena) const;

  dnnl::engine engine_;
  std::vector<Buffer> buffers_;
  std::vector<Value> values_;
  std::vector<Step> steps_;
  std::vector<ProgramOutput> outputs_;
  size_t arena_bytes_;
  size_t scratchpad_bytes_;
  mutable std::mutex pool_mutex_;
  mutable std::vector<std::unique_ptr<Arena>> pool_;
};

}  // namespace loom::onednn
