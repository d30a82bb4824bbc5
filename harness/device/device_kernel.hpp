#pragma once
// A measure::kernel timed on the device: manual timing with CUDA events around the
// iterations, a cold-cache flush that clears L2 with cudaMemsetAsync on a buffer twice the L2
// size allocated once, and per-sample SM clock / throttle facts from NVML.
// Plain C++ header: the stream is passed as an opaque pointer (a cudaStream_t).
#include <cstdint>
#include <memory>

#include "harness/measure/measure.hpp"

namespace accelbench::device {

// Bytes the cold-cache flush writes: twice the L2 size. Writing exactly the L2 size does not
// evict everything (L2 is set-associative and split into partitions, so some sets keep kernel
// lines); the CPU path streams through twice the last-level cache for the same reason.
inline uint64_t flush_bytes(uint64_t l2_bytes) { return 2 * l2_bytes; }

class device_kernel : public measure::kernel {
public:
  explicit device_kernel(int device_index = 0);
  ~device_kernel() override;

  // Enqueues one iteration on `stream` (a cudaStream_t); must not synchronise.
  virtual void enqueue(void* stream) = 0;

  void run() override; // enqueue + synchronise (warm-up, host-timed callers)
  bool manual_timing() const override { return true; }
  double run_timed(int64_t iterations) override;
  // Writes flush_bytes(L2 size): L2 then holds flush data, none of the kernel's operands.
  void flush_cache() override;
  // clock_facts(device_index()): SM clock, throttle reasons and flag from NVML; {} without NVML.
  json sample_extra() override;
  // Steady when measure::batches_settled (the last warm-up batches of >= 1 ms agree) and, where
  // NVML reads the SM clock, the last 3 clock readings within 1% (the boost clock has settled).
  bool steady(const std::vector<measure::warmup_batch>& recent) override;

  void* stream() const; // the cudaStream_t the kernel runs on
  int device_index() const { return m_index; }

private:
  struct impl;
  std::unique_ptr<impl> m_impl;
  int m_index = 0;
};

} // namespace accelbench::device
