// A served model's config.json (DIR/<model>/config.json, optional): how the
// server batches and runs it, and the Loom session config its sessions use.
//
//   {
//     "max_batch_size": 8,          // 0 (default): inputs are run as sent, never merged
//     "instance_count": 1,          // sessions of each version, each with its own worker
//     "max_queue_size": 128,        // requests waiting per version; more answer 503
//     "request_timeout_ms": 30000,  // a request not answered by then gets 504 (0: none)
//     "dynamic_batching": {"max_queue_delay_us": 2000},   // present: merge requests
//     "session": {...}              // Loom config keys (README "Configuration"),
//                                   // merged over the server's --config
//   }
//
// Unknown keys and wrong types are errors naming the key, as in Loom's config.
#pragma once

#include <cstdint>
#include <string>

#include "loom/status.h"

namespace loom::serve {

struct ModelConfig {
  int64_t max_batch_size = 0;
  int64_t instance_count = 1;
  int64_t max_queue_size = 128;
  int64_t request_timeout_ms = 30000;
  bool dynamic_batching = false;
  int64_t max_queue_delay_us = 0;
  // The "session" object as JSON text ("{}" when absent).
  std::string session_json = "{}";
};

// Parses config.json text; `source` names it in errors.
Expected<ModelConfig> parse_model_config(const std::string& text, const std::string& source);

// `base` (the server's --config JSON, "{}" when none) with `overlay`'s keys
// merged over it (RFC 7386 merge patch), as JSON text.
Expected<std::string> merge_session_config(const std::string& base, const std::string& overlay);

}  // namespace loom::serve
