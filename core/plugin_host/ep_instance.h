// An EP instance created for one session from a provider's factory, with its
// kernel table, allocator and data transfer looked up once.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "plugin_host/plugin_registry.h"

namespace loom::plugin_host {

class EpInstance {
 public:
  // `custom_kernels`: the custom-op kernels of the environment; those for
  // this provider (and, on a synchronous host-memory EP, those for any) are
  // added to its kernel table.
  static Expected<std::unique_ptr<EpInstance>> create(const Provider& provider, size_t device_index,
                                                      const std::map<std::string, std::string>& options,
                                                      const std::vector<CustomKernel>& custom_kernels = {});
  ~EpInstance();

  const std::string& name() const { return name_; }
  LOOM_Ep* ep() const { return ep_; }
  // Kernel table: the EP's own, then the custom-op kernels it was given.
  const std::vector<const LOOM_KernelDef*>& kernels() const { return kernels_; }
  // The custom-op kernels alone (a capability EP is offered the custom
  // nodes it did not claim through them).
  const std::vector<const LOOM_KernelDef*>& custom_kernels() const { return custom_kernels_; }
  // True when the EP itself has a kernel table.
  bool has_own_kernels() const { return kernels_.size() > custom_kernels_.size(); }
  const LOOM_MemoryInfo& memory() const { return memory_; }
  bool uses_host_memory() const;
  const LOOM_Allocator* allocator() const { return allocator_; }
  const LOOM_DataTransfer* data_transfer() const { return transfer_; }
  // The EP's data transfer says it copies from `src` to `dst` memory (false
  // without a data transfer).
  bool can_copy(const LOOM_MemoryInfo& src, const LOOM_MemoryInfo& dst) const;
  // Copies `bytes` through the EP's data transfer, queued on `stream` (NULL:
  // complete when the call returns). Refused when can_copy says no.
  Status copy(const LOOM_MemoryInfo& src_memory, const void* src, const LOOM_MemoryInfo& dst_memory, void* dst,
              uint64_t bytes, LOOM_Stream* stream) const;
  bool has_capability() const;
  bool can_compile() const;
  // get_capability over `view`: the EP's claims and declines go to `sink`.
  Status claim(const LOOM_GraphView* view, LOOM_ClaimSink* sink) const;
  // compile of the fused `subgraph`: a partition with the slots the host
  // calls (compute, release), owned by the caller.
  Expected<LOOM_CompiledPartition*> compile(const LOOM_GraphView* subgraph) const;
  // Set when the EP declared LOOM_EP_FLAG_NO_CONCURRENT_RUNS: the executor
  // holds it around each of the EP's steps. Shared by the instances of one
  // provider (one device library), so it serialises across sessions too.
  std::recursive_mutex* step_mutex() const { return step_mutex_.get(); }
  // True when the EP runs asynchronously: its create_stream returned a
  // stream when probed at creation (it must then also make events).
  bool is_async() const { return async_; }
  // A new stream / event of an asynchronous EP, checked for the slots the
  // host calls; the caller releases it through its release slot.
  Expected<LOOM_Stream*> new_stream() const;
  Expected<LOOM_Event*> new_event() const;
  // True when the EP asks for its runs to be recorded and replayed
  // (LOOM_EP_FLAG_CAPTURE_RUNS with both capture slots set).
  bool captures_runs() const;
  // Starts recording `stream`'s work; stops and returns the recording
  // (checked for the slots the host calls; the caller releases it).
  Status begin_capture(LOOM_Stream* stream) const;
  Expected<LOOM_CapturedWork*> end_capture(LOOM_Stream* stream) const;

 private:
  EpInstance() = default;
  std::string name_;
  const LOOM_EpFactory* factory_ = nullptr;
  LOOM_Ep* ep_ = nullptr;
  std::vector<const LOOM_KernelDef*> kernels_;
  std::vector<const LOOM_KernelDef*> custom_kernels_;
  LOOM_MemoryInfo memory_{};
  const LOOM_Allocator* allocator_ = nullptr;
  const LOOM_DataTransfer* transfer_ = nullptr;
  std::shared_ptr<std::recursive_mutex> step_mutex_;
  bool async_ = false;
};

}  // namespace loom::plugin_host
