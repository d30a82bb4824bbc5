#pragma once
// The datasheet peak of a GPU kernel run: the one table every CUDA backend (GEMM, attention) and
// harness/device read, from the accelerator catalogue (results/devices.json, device_catalogue.hpp),
// matched from the device name (NVL, PCIe and SXM parts apart). The CPU's peak is the FMA probe's
// (kernel_metrics.hpp cpu_probe_peak).
#include <string>

#include "harness/core/dtype.hpp"
#include "harness/core/kernel_metrics.hpp"

namespace accelbench {

// Dense tensor-core peak (TFLOP/s) of `accelerator_model` for `dtype` (dtype.hpp's names); 0 when
// the catalogue has no such device or dtype, or the device's peak is measured (the CPU).
double datasheet_peak_tflops(const std::string& accelerator_model, const std::string& dtype);

// The kernel peak a CUDA kernel run's metrics divide by: the datasheet figure above, recorded as
// extra["peak"] = {tflops, dtype, source}; 0 tflops when none is known (then no pct_of_peak).
kernel_peak datasheet_peak(const std::string& accelerator_model, dtype type);

} // namespace accelbench
