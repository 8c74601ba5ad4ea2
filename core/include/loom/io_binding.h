// IO binding: run a session on buffers the caller already has, in host
// memory or in an execution provider's device memory, and leave outputs on
// the device, so that a run makes no copies the caller did not ask for.
//
//   auto x = session.allocate("test_async", DType::kFloat, {1, 3});  // device buffer
//   session.copy_from_host(input_tensor, x->tensor());
//   IoBinding io;
//   io.bind_input("x", x->tensor());            // read where it is
//   io.bind_output_to_memory("y", "test_async"); // stays on the device
//   session.run(io);
//   std::shared_ptr<DeviceBuffer> y = io.output("y");
//
// A binding is used by one run at a time; the buffers it names must stay
// valid until that run returns.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "loom/status.h"
#include "loom/tensor.h"

namespace loom {

// A tensor viewed in some memory kind ("cpu" for host memory, else an EP's
// memory kind as `loom plugins` lists it). Does not own `data`.
struct DeviceTensor {
  DType dtype = DType::kUndefined;
  Dims dims;
  void* data = nullptr;
  std::string memory = "cpu";
  // element count x element size; -1 when the dims are invalid.
  int64_t byte_size() const;
};

// Memory owned through a session's EP (Session::allocate, or an output left
// on the device): freed by that EP's allocator when the last holder lets go.
// Must not outlive the session that made it.
class DeviceBuffer {
 public:
  DeviceBuffer(DeviceTensor tensor, std::function<void(void*)> free) : tensor_(std::move(tensor)), free_(std::move(free)) {}
  ~DeviceBuffer() {
    if (free_ && tensor_.data != nullptr) free_(tensor_.data);
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  const DeviceTensor& tensor() const { return tensor_; }

 private:
  DeviceTensor tensor_;
  std::function<void(void*)> free_;
};

class IoBinding {
 public:
  // Input from a host tensor (shared for the run, not copied).
  void bind_input(const std::string& name, const Tensor& tensor);
  // Input already in memory `tensor.memory`: steps that read it in that
  // memory read it in place; host steps get a copy.
  void bind_input(const std::string& name, const DeviceTensor& tensor);
  // Output written into `tensor` (pre-allocated; dtype and dims must be what
  // the model produces). In device memory, the producing step writes it
  // there directly when the output is made in that memory.
  void bind_output(const std::string& name, const DeviceTensor& tensor);
  // Output left in memory kind `memory`, allocated by the run; read it with
  // output() afterwards.
  void bind_output_to_memory(const std::string& name, const std::string& memory);
  // After a run: the output bound with bind_output_to_memory (NULL if none).
  std::shared_ptr<DeviceBuffer> output(const std::string& name) const;
  void clear();

  struct Input {
    std::string name;
    Tensor host;          // when bound from a host tensor
    DeviceTensor device;  // otherwise
    bool is_host = true;
  };
  struct Output {
    std::string name;
    DeviceTensor target;  // bind_output: where to write
    bool preallocated = false;
    std::shared_ptr<DeviceBuffer> result;  // bind_output_to_memory: set by the run
  };
  const std::vector<Input>& inputs() const { return inputs_; }
  std::vector<Output>& outputs() { return outputs_; }

 private:
  std::vector<Input> inputs_;
  std::vector<Output> outputs_;
};

}  // namespace loom
