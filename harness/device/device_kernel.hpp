#pragma once
// A measure::kernel timed on the device: manual timing with CUDA events around the
// iterations, a cold-cache flush that clears L2 with cudaMemsetAsync on one L2-sized buffer
// allocated once, and per-sample SM clock / throttle facts from NVML.
// Plain C++ header: the stream is passed as an opaque pointer (a cudaStream_t).
#include <cstdint>
#include <memory>

#include "harness/measure/measure.hpp"

namespace accelbench::device {

class device_kernel : public measure::kernel {
public:
  explicit device_kernel(int device_index = 0);
  ~device_kernel() override;

  // Enqueues one iteration on `stream` (a cudaStream_t); must not synchronise.
  virtual void enqueue(void* stream) = 0;

  void run() override; // enqueue + synchronise (warm-up, host-timed callers)
  bool manual_timing() const override { return true; }
  double run_timed(int64_t iterations) override;
  // Writes the whole L2-sized buffer: every line of L2 then holds flush data, none of the
  // kernel's operands (the CPU backends stream through 2x LLC for the same reason).
  void flush_cache() override;
  // clock_facts(device_index()): SM clock, throttle reasons and flag from NVML; {} without NVML.
  json sample_extra() override;
  // Steady when the last 5 warm-up iterations agree within 3% and, where NVML reads the SM clock,
  // the last 3 clock readings within 1% (the boost clock has settled).
  bool steady(const std::vector<double>& recent) override;

  void* stream() const; // the cudaStream_t the kernel runs on
  int device_index() const { return m_index; }

private:
  struct impl;
  std::unique_ptr<impl> m_impl;
  int m_index = 0;
};

} // namespace accelbench::device
