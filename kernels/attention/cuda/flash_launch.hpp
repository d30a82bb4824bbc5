#pragma once
// Internal to kernels/attention/cuda: the tensor-core flash-attention kernels (flash_tc.cu) as
// flash_native.cu's dispatch sees them, and the shared-memory opt-in both files use.
#include <cstddef>

#include "kernels/attention/attention_shape.hpp"
#include "kernels/attention/attention_tensors.hpp"

namespace accelbench::attention::native {

// Opts `kernel` into `bytes` of dynamic shared memory on the current device, once per device,
// kernel and size (flash_native.cu; counted by smem_opt_ins()).
void allow_smem(const void* kernel, size_t bytes);

namespace tc {
// The head dimensions the tensor-core kernels are built for (64 and 128).
bool supports(const attention_shape& s);
// bf16 or fp16 device tensors (io.type, checked by flash_native.cu's dispatch) in the layouts of
// attention_kernels.hpp.
void forward(const attention_shape& s, const attention_tensors& io, void* stream);
void backward(const attention_shape& s, const attention_tensors& io, float* delta, void* stream);
} // namespace tc

} // namespace accelbench::attention::native
