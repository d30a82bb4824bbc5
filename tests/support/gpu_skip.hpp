#pragma once
// GPU test cases start with ACCELBENCH_REQUIRE_GPU(): without a usable device they are reported
// by CTest as skipped, with the CUDA runtime's reason (tests/support/skip.hpp).
#include <string>

#include "harness/device/device.hpp"
#include "tests/support/skip.hpp"

#define ACCELBENCH_REQUIRE_GPU()                                                                   \
  do {                                                                                             \
    std::string accelbench_gpu_why_;                                                               \
    if (!::accelbench::device::cuda_available(&accelbench_gpu_why_))                               \
      ACCELBENCH_SKIP("no usable CUDA device: " << accelbench_gpu_why_);                           \
  } while (0)
