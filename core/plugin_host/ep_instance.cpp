#include "plugin_host/ep_instance.h"

#include "plugin_host/abi_objects.h"

namespace loom::plugin_host {

Expected<std::unique_ptr<EpInstance>> EpInstance::create(const Provider& provider, size_t device_index,
                                                         const std::map<std::string, std::string>& options,
                                                         const std::vector<CustomKernel>& custom_kernels) {
  if (device_index >= provider.devices.size())
    return not_found("provider '" + provider.name + "' is unavailable: " +
                     (provider.unavailable_reason.empty() ? "no such device" : provider.unavailable_reason));
  std::vector<LOOM_KeyValue> kv;
  for (const auto& [k, v] : options) kv.push_back({{k.data(), k.size()}, {v.data(), v.size()}});
  LOOM_EpFactory_CreateEp_Args args{};
  args.struct_size = LOOM_EpFactory_CreateEp_Args_STRUCT_SIZE;
  args.device_index = device_index;
  args.options = kv.data();
  args.option_count = kv.size();
  Status st = from_abi(provider.factory->create_ep(provider.factory->state, &args));
  if (!st) return st.with_context("provider '" + provider.name + "': create_ep");
  if (args.ep == nullptr) return fail("provider '" + provider.name + "': create_ep returned no EP");
  std::unique_ptr<EpInstance> e(new EpInstance());
  e->name_ = provider.name;
  e->factory_ = provider.factory;
  e->ep_ = args.ep;
  e->memory_ = provider.devices[device_index].memory;
  LOOM_Ep* ep = e->ep_;
  if (ep->struct_size < LOOM_STRUCT_SIZE(LOOM_Ep, state))
    return fail("provider '" + provider.name + "': EP table too small");
  if (LOOM_HAS_FIELD(ep, LOOM_Ep, flags) && (ep->flags & LOOM_EP_FLAG_NO_CONCURRENT_RUNS))
    e->step_mutex_ = provider.serial_steps;
  if (LOOM_HAS_FIELD(ep, LOOM_Ep, get_kernel_table) && ep->get_kernel_table) {
    LOOM_Ep_GetKernelTable_Args ka{};
    ka.struct_size = LOOM_Ep_GetKernelTable_Args_STRUCT_SIZE;
    st = from_abi(ep->get_kernel_table(ep->state, &ka));
    if (!st) return st.with_context("provider '" + provider.name + "': get_kernel_table");
    if (ka.kernel_count > 0 && ka.kernels == nullptr)
      return fail("provider '" + provider.name + "': get_kernel_table returned a count but no array");
    // The 0.1 layout is the smallest a kernel entry may be; fields appended
    // later are read only where LOOM_HAS_FIELD says the plugin wrote them.
    constexpr size_t kMinKernelDefSize = LOOM_STRUCT_SIZE(LOOM_KernelDef, release);
    for (uint64_t i = 0; i < ka.kernel_count; ++i) {
      const LOOM_KernelDef* d = ka.kernels[i];
      if (d == nullptr || d->struct_size < kMinKernelDefSize || !d->create || !d->compute || !d->release)
        return fail("provider '" + provider.name + "': kernel table entry " + std::to_string(i) +
                    " is incomplete (needs create, compute and release)");
      e->kernels_.push_back(d);
    }
  }
  if (LOOM_HAS_FIELD(ep, LOOM_Ep, get_allocator) && ep->get_allocator) {
    e->allocator_ = ep->get_allocator(ep->state);
    if (e->allocator_ != nullptr && (e->allocator_->struct_size < LOOM_Allocator_STRUCT_SIZE ||
                                     !e->allocator_->alloc || !e->allocator_->free))
      return fail("provider '" + provider.name + "': allocator table is incomplete");
  }
  if (LOOM_HAS_FIELD(ep, LOOM_Ep, get_data_transfer) && ep->get_data_transfer)
    e->transfer_ = ep->get_data_transfer(ep->state);
  if (e->transfer_ != nullptr && (e->transfer_->struct_size < LOOM_DataTransfer_STRUCT_SIZE ||
                                  e->transfer_->can_copy == nullptr || e->transfer_->copy == nullptr))
    return fail("provider '" + provider.name + "': data transfer table is incomplete (needs can_copy and copy)");
  if (LOOM_HAS_FIELD(ep, LOOM_Ep, create_stream) && ep->create_stream) {
    // Probe once: an EP that makes a stream runs asynchronously and must
    // also make events, or the host could not order its work.
    LOOM_ASSIGN_OR_RETURN(LOOM_Stream * probe, e->new_stream());
    if (probe != nullptr) {
      probe->release(probe);
      e->async_ = true;
      LOOM_ASSIGN_OR_RETURN(LOOM_Event * event, e->new_event());
      event->release(event);
    }
  }
  if (!e->uses_host_memory() && (e->allocator_ == nullptr || e->transfer_ == nullptr))
    return fail("provider '" + provider.name + "' uses memory '" + memory_name(e->memory_) +
                "' but provides no allocator or data transfer for it");
  // Custom-op kernels: those for this provider; those for any provider
  // only where a CPU kernel is safe (host memory, no stream to order on).
  for (const CustomKernel& k : custom_kernels)
    if (k.provider == provider.name || (k.provider.empty() && e->uses_host_memory() && !e->async_)) {
      e->kernels_.push_back(k.def);
      e->custom_kernels_.push_back(k.def);
    }
  return e;
}

Expected<LOOM_Stream*> EpInstance::new_stream() const {
  LOOM_Stream* s = ep_->create_stream(ep_->state);
  if (s == nullptr) {
    if (async_) return fail("provider '" + name_ + "': create_stream returned no stream");
    return s;  // probing a synchronous EP
  }
  if (s->struct_size < LOOM_Stream_STRUCT_SIZE || !s->synchronize || !s->release) {
    if (s->struct_size >= LOOM_Stream_STRUCT_SIZE && s->release) s->release(s);
    return fail("provider '" + name_ + "': stream table is incomplete (needs synchronize and release)");
  }
  return s;
}

Expected<LOOM_Event*> EpInstance::new_event() const {
  LOOM_Event* e = LOOM_HAS_FIELD(ep_, LOOM_Ep, create_event) && ep_->create_event ? ep_->create_event(ep_->state)
                                                                                  : nullptr;
  if (e == nullptr) return fail("provider '" + name_ + "' makes streams but no events");
  if (e->struct_size < LOOM_Event_STRUCT_SIZE || !e->record || !e->wait || !e->synchronize || !e->release) {
    if (e->struct_size >= LOOM_Event_STRUCT_SIZE && e->release) e->release(e);
    return fail("provider '" + name_ + "': event table is incomplete (needs record, wait, synchronize, release)");
  }
  return e;
}

EpInstance::~EpInstance() {
  if (ep_ != nullptr) factory_->release_ep(factory_->state, ep_);
}

bool EpInstance::uses_host_memory() const { return same_memory(memory_, host_memory()); }

bool EpInstance::has_capability() const {
  return LOOM_HAS_FIELD(ep_, LOOM_Ep, get_capability) && ep_->get_capability != nullptr;
}

bool EpInstance::captures_runs() const {
  return async_ && LOOM_HAS_FIELD(ep_, LOOM_Ep, end_capture) && (ep_->flags & LOOM_EP_FLAG_CAPTURE_RUNS) &&
         ep_->begin_capture != nullptr && ep_->end_capture != nullptr;
}

Status EpInstance::begin_capture(LOOM_Stream* stream) const {
  LOOM_Ep_BeginCapture_Args a{};
  a.struct_size = LOOM_Ep_BeginCapture_Args_STRUCT_SIZE;
  a.stream = stream;
  return from_abi(ep_->begin_capture(ep_->state, &a)).with_context("provider '" + name_ + "': begin_capture");
}

Expected<LOOM_CapturedWork*> EpInstance::end_capture(LOOM_Stream* stream) const {
  LOOM_Ep_EndCapture_Args a{};
  a.struct_size = LOOM_Ep_EndCapture_Args_STRUCT_SIZE;
  a.stream = stream;
  Status st = from_abi(ep_->end_capture(ep_->state, &a));
  if (!st) {
    if (a.captured != nullptr && a.captured->struct_size >= LOOM_CapturedWork_STRUCT_SIZE && a.captured->release)
      a.captured->release(a.captured);
    return st.with_context("provider '" + name_ + "': end_capture");
  }
  LOOM_CapturedWork* w = a.captured;
  if (w == nullptr) return fail("provider '" + name_ + "': end_capture returned no recording");
  if (w->struct_size < LOOM_CapturedWork_STRUCT_SIZE || !w->replay || !w->release) {
    if (w->struct_size >= LOOM_CapturedWork_STRUCT_SIZE && w->release) w->release(w);
    return fail("provider '" + name_ + "': recording table is incomplete (needs replay and release)");
  }
  return w;
}

bool EpInstance::can_copy(const LOOM_MemoryInfo& src, const LOOM_MemoryInfo& dst) const {
  return transfer_ != nullptr && transfer_->can_copy(transfer_->state, &src, &dst) != 0;
}

Status EpInstance::copy(const LOOM_MemoryInfo& src_memory, const void* src, const LOOM_MemoryInfo& dst_memory,
                        void* dst, uint64_t bytes, LOOM_Stream* stream) const {
  if (!can_copy(src_memory, dst_memory))
    return not_implemented("provider '" + name_ + "' does not copy from '" + memory_name(src_memory) + "' to '" +
                           memory_name(dst_memory) + "' (its data transfer's can_copy says no)");
  LOOM_DataTransfer_Copy_Args args{};
  args.struct_size = LOOM_DataTransfer_Copy_Args_STRUCT_SIZE;
  args.src_memory = &src_memory;
  args.src = src;
  args.dst_memory = &dst_memory;
  args.dst = dst;
  args.bytes = bytes;
  args.stream = stream;
  return from_abi(transfer_->copy(transfer_->state, &args));
}

Status EpInstance::claim(const LOOM_GraphView* view, LOOM_ClaimSink* sink) const {
  if (!has_capability()) return not_implemented("provider '" + name_ + "' has no get_capability slot");
  LOOM_Ep_GetCapability_Args args{};
  args.struct_size = LOOM_Ep_GetCapability_Args_STRUCT_SIZE;
  args.graph = view;
  args.sink = sink;
  return from_abi(ep_->get_capability(ep_->state, &args)).with_context("provider '" + name_ + "': get_capability");
}

Expected<LOOM_CompiledPartition*> EpInstance::compile(const LOOM_GraphView* subgraph) const {
  if (!can_compile()) return not_implemented("provider '" + name_ + "' has no compile slot");
  LOOM_Ep_Compile_Args args{};
  args.struct_size = LOOM_Ep_Compile_Args_STRUCT_SIZE;
  args.subgraph = subgraph;
  LOOM_RETURN_IF_ERROR(from_abi(ep_->compile(ep_->state, &args)).with_context("compile"));
  LOOM_CompiledPartition* p = args.partition;
  if (p == nullptr || p->struct_size < LOOM_CompiledPartition_STRUCT_SIZE || !p->compute || !p->release) {
    if (p != nullptr && p->struct_size >= LOOM_CompiledPartition_STRUCT_SIZE && p->release) p->release(p);
    return fail("compile returned no usable partition");
  }
  return p;
}

bool EpInstance::can_compile() const { return LOOM_HAS_FIELD(ep_, LOOM_Ep, compile) && ep_->compile != nullptr; }

}  // namespace loom::plugin_host
