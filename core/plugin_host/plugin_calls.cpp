#include "plugin_host/plugin_calls.h"

#include "plugin_host/abi_objects.h"

namespace loom::plugin_host {

Expected<void*> create_kernel(const LOOM_KernelDef& def, const LOOM_NodeView* node) {
  LOOM_Kernel_Create_Args args{};
  args.struct_size = LOOM_Kernel_Create_Args_STRUCT_SIZE;
  args.kernel_def_state = def.state;
  args.node = node;
  LOOM_RETURN_IF_ERROR(from_abi(def.create(&args)));
  return args.kernel;
}

Status run_kernel(const LOOM_KernelDef& def, void* kernel, LOOM_KernelContext* ctx) {
  return from_abi(def.compute(kernel, ctx));
}

Status run_partition(const LOOM_CompiledPartition& p, LOOM_KernelContext* ctx) {
  void* state = nullptr;
  if (p.create_state) {
    LOOM_CompiledPartition_CreateState_Args a{};
    a.struct_size = LOOM_CompiledPartition_CreateState_Args_STRUCT_SIZE;
    if (Status st = from_abi(p.create_state(p.state, &a)); !st) return st.with_context("create_state");
    state = a.run_state;
  }
  Status st = from_abi(p.compute(p.state, state, ctx));
  if (p.release_state) p.release_state(p.state, state);
  return st;
}

}  // namespace loom::plugin_host
