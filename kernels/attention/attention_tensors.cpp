#include "kernels/attention/attention_tensors.hpp"

#include <span>
#include <string>

#include "harness/core/error.hpp"

namespace accelbench::attention {

void require_dtype(std::string_view kernel, dtype t, std::initializer_list<dtype> supported) {
  for (dtype d : supported)
    if (d == t)
      return;
  throw backend_error(std::string(kernel) + ": dtype '" + to_string(t) + "' is not supported (" +
                      dtype_names(std::span<const dtype>(supported.begin(), supported.size())) +
                      ")");
}

} // namespace accelbench::attention
