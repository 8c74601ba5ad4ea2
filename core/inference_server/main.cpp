// loom-inference-server: runs ONNX's shape inference for Loom in a process
// of its own (opreg/onnx_inference/isolated_inference.h). Loom starts it with its end of a
// socket at descriptor 3; it is not meant to be run by hand.
#include <sys/socket.h>
#include <sys/stat.h>

#include <cstdio>

#include "opreg/onnx_inference/inference_protocol.h"
#include "opreg/op_registry.h"

int main() {
  using loom::onnxio::inference_protocol::kServerSocketFd;
  struct stat st {};
  if (::fstat(kServerSocketFd, &st) != 0 || !S_ISSOCK(st.st_mode)) {
    std::fprintf(stderr,
                 "loom-inference-server: Loom starts this program with a socket at descriptor %d; "
                 "it is not meant to be run by hand\n",
                 kServerSocketFd);
    return 2;
  }
  // ONNX registers its schemas (and Loom's table is built) at the first
  // lookup: done before the first request arrives, while the caller is
  // still reading its model.
  const ::onnx::ISchemaRegistry* registry = &loom::opreg::op_registry();
  (void)loom::opreg::find_schema("Relu", 14, "");
  loom::onnxio::inference_protocol::serve(kServerSocketFd, registry);
}
