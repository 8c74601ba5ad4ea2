#include "loom/io_binding.h"

#include <algorithm>

namespace loom {

int64_t DeviceTensor::byte_size() const {
  auto count = checked_element_count(dims);
  if (!count) return -1;
  return *count * static_cast<int64_t>(dtype_size(dtype));
}

namespace {

template <class T>
T& entry(std::vector<T>& list, const std::string& name) {
  auto it = std::find_if(list.begin(), list.end(), [&](const T& e) { return e.name == name; });
  if (it != list.end()) return *it = T{name};
  list.push_back(T{name});
  return list.back();
}

}  // namespace

void IoBinding::bind_input(const std::string& name, const Tensor& tensor) {
  Input& in = entry(inputs_, name);
  in.host = tensor;
  in.is_host = true;
}

void IoBinding::bind_input(const std::string& name, const DeviceTensor& tensor) {
  Input& in = entry(inputs_, name);
  in.device = tensor;
  in.is_host = false;
}

void IoBinding::bind_output(const std::string& name, const DeviceTensor& tensor) {
  Output& out = entry(outputs_, name);
  out.target = tensor;
  out.preallocated = true;
}

void IoBinding::bind_output_to_memory(const std::string& name, const std::string& memory) {
  Output& out = entry(outputs_, name);
  out.target.memory = memory;
  out.preallocated = false;
}

std::shared_ptr<DeviceBuffer> IoBinding::output(const std::string& name) const {
  for (const Output& o : outputs_)
    if (o.name == name) return o.result;
  return nullptr;
}

void IoBinding::clear() {
  inputs_.clear();
  outputs_.clear();
}

}  // namespace loom
