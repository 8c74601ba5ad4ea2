#include "loom/status.h"

namespace loom {

const char* status_code_name(StatusCode code) {
  switch (code) {
    case StatusCode::kOk: return "OK";
    case StatusCode::kFail: return "FAIL";
    case StatusCode::kInvalidArgument: return "INVALID_ARGUMENT";
    case StatusCode::kNotFound: return "NOT_FOUND";
    case StatusCode::kNotImplemented: return "NOT_IMPLEMENTED";
    case StatusCode::kInvalidGraph: return "INVALID_GRAPH";
    case StatusCode::kOutOfMemory: return "OUT_OF_MEMORY";
    case StatusCode::kCancelled: return "CANCELLED";
    case StatusCode::kTimedOut: return "TIMED_OUT";
  }
  return "UNKNOWN";
}

}  // namespace loom
