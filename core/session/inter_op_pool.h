// The inter-op pool a parallel session runs on, sized from the config
// (threads.inter_op workers, threads.spin_us of polling before sleeping).
#pragma once

#include <memory>

#include "exec/thread_pool.h"
#include "loom/config.h"

namespace loom::session {

std::shared_ptr<exec::ThreadPool> make_inter_op_pool(const Config& config);

}  // namespace loom::session
