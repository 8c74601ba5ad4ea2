#include "program.h"

#include <chrono>
#include <cstdlib>

#include "thread_count.h"

namespace loom::onednn {
namespace {

constexpr size_t kArenaAlignment = 64;

}  // namespace

Program::Program(dnnl::engine engine, std::vector<Buffer> buffers, std::vector<Value> values,
                 std::vector<Step> steps, std::vector<ProgramOutput> outputs, size_t arena_bytes,
                 size_t scratchpad_bytes)
    : engine_(std::move(engine)),
      buffers_(std::move(buffers)),
      values_(std::move(values)),
      steps_(std::move(steps)),
      outputs_(std::move(outputs)),
      arena_bytes_(arena_bytes),
      scratchpad_bytes_(scratchpad_bytes) {}

std::unique_ptr<Program::Arena> Program::make_arena() const {
  auto arena = std::make_unique<Arena>();
  const size_t bytes = (arena_bytes_ + kArenaAlignment - 1) / kArenaAlignment * kArenaAlignment;
  if (bytes > 0) {
    arena->storage = {static_cast<char*>(std::aligned_alloc(kArenaAlignment, bytes)), &std::free};
    if (!arena->storage) throw sdk::Error("cpu_onednn: cannot allocate a " + std::to_string(bytes) + "-byte arena",
                                          LOOM_STATUS_OUT_OF_MEMORY);
  }
  char* base = arena->storage.get();
  arena->memories.reserve(values_.size());
  for (const Value& v : values_) {
    const Buffer& b = buffers_[v.buffer];
    switch (b.kind) {
      case BufferKind::kArena: arena->memories.emplace_back(v.desc, engine_, base + b.offset); break;
      case BufferKind::kPacked: arena->memories.emplace_back(v.desc, engine_, b.packed.get_data_handle()); break;
      default: arena->memories.emplace_back(v.desc, engine_, static_cast<void*>(nullptr)); break;  // bound per run
    }
  }
  // The scratchpad sits at offset 0; steps run one after another so they share it.
  dnnl::memory scratch;
  if (scratchpad_bytes_ > 0) {
    dnnl::memory::desc d({static_cast<int64_t>(scratchpad_bytes_)}, dnnl::memory::data_type::u8,
                         dnnl::memory::format_tag::a);
    scratch = dnnl::memory(d, engine_, base);
  }
  for (const Step& s : steps_) {
    std::unordered_map<int, dnnl::memory> args;
    if (s.host) {  // host steps read arena->memories directly
      arena->step_args.push_back(std::move(args));
      continue;
    }
    for (auto [arg, value] : s.args) args.emplace(arg, arena->memories[value]);
    if (s.uses_scratchpad) args.emplace(DNNL_ARG_SCRATCHPAD, scratch);
    arena->step_args.push_back(std::move(args));
  }
  return arena;
}

std::unique_ptr<Program::Arena> Program::borrow_arena() const {
  {
    std::lock_guard<std::mutex> lock(pool_mutex_);
    if (!pool_.empty()) {
      auto a = std::move(pool_.back());
      pool_.pop_back();
      return a;
    }
  }
  return make_arena();
}

void Program::give_back(std::unique_ptr<Arena> arena) const {
  std::lock_guard<std::mutex> lock(pool_mutex_);
  pool_.push_back(std::move(arena));
}

std::string primitive_name(const dnnl::primitive& p) {
  using K = dnnl::primitive::kind;
  switch (p.get_kind()) {
    case K::reorder: return "reorder";
    case K::shuffle: return "shuffle";
    case K::concat: return "concat";
    case K::sum: return "sum";
    case K::convolution: return "convolution";
    case K::deconvolution: return "deconvolution";
    case K::eltwise: return "eltwise";
    case K::softmax: return "softmax";
    case K::pooling: return "pooling";
    case K::lrn: return "lrn";
    case K::batch_normalization: return "batch_normalization";
    case K::layer_normalization: return "layer_normalization";
    case K::inner_product: return "inner_product";
    case K::binary: return "binary";
    case K::logsoftmax: return "logsoftmax";
    case K::matmul: return "matmul";
    case K::resampling: return "resampling";
    case K::pooling_v2: return "pooling";
    case K::reduction: return "reduction";
    case K::prelu: return "prelu";
    case K::softmax_v2: return "softmax";
    default: return "primitive";
  }
}

void Program::execute(sdk::KernelContext& ctx) const {
  std::unique_ptr<Arena> arena = borrow_arena();
  // Bind this run's input and output tensors. A dnnl::memory shares its
  // handle with every copy, so the per-step argument maps see the rebinding.
  std::vector<void*> output_data(outputs_.size(), nullptr);
  for (size_t i = 0; i < outputs_.size(); ++i)
    output_data[i] = ctx.output(i, outputs_[i].dims, outputs_[i].dtype).raw_mutable_data();
  for (size_t v = 0; v < values_.size(); ++v) {
    const Buffer& b = buffers_[values_[v].buffer];
    if (b.kind == BufferKind::kInput)
      arena->memories[v].set_data_handle(const_cast<void*>(ctx.input(b.index).raw_data()));
    else if (b.kind == BufferKind::kOutput)
      arena->memories[v].set_data_handle(output_data[b.index]);
  }
  try {
    dnnl::stream stream(engine_);
    std::vector<dnnl::memory> host_args;
    const bool profiled = ctx.profiling();
    for (size_t i = 0; i < steps_.size(); ++i) {
      const Step& step = steps_[i];
      const auto start = profiled ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point{};
      if (!step.host) {
        const ThreadCount threads(step.threads);
        step.primitive.execute(stream, arena->step_args[i]);
        if (profiled) stream.wait();  // the part ends when the primitive has
      } else {
        stream.wait();  // a host step reads what earlier primitives wrote
        host_args.clear();
        for (const auto& a : step.args) host_args.push_back(arena->memories[a.second]);
        step.host(host_args);
      }
      if (profiled) ctx.profile_part(step.what + ": " + step.label, start, std::chrono::steady_clock::now());
    }
    stream.wait();
  } catch (const dnnl::error& e) {
    give_back(std::move(arena));
    throw sdk::Error(std::string("cpu_onednn: oneDNN execution failed: ") + e.what());
  } catch (...) {
    give_back(std::move(arena));  // a host step's error (sdk::Error naming the node)
    throw;
  }
  give_back(std::move(arena));
}

}  // namespace loom::onednn
