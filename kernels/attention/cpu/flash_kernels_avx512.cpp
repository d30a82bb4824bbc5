// AVX-512 variant of the fused attention kernels (compiled with -mavx512f -mavx512bw
// -mavx512vl -mavx512dq -mfma by CMake for this file only; chosen at run time).
#include "kernels/attention/cpu/flash_isa_avx512.hpp"
#include "kernels/attention/cpu/flash_kernels.hpp"

#include "kernels/attention/cpu/flash_kernels.inl"

namespace accelbench::attention::detail {
const kernel_variant variant_avx512 = {"avx512", &forward_entry, &backward_entry};
} // namespace accelbench::attention::detail
