#pragma once
// Data-parallel training of the CPU model across the ranks of harness/dist (issue 15).
//   Data:       each step draws one global batch of world x B windows from the same seeded
//               stream on every rank; rank r trains on windows [r*B, (r+1)*B) of it (a contiguous
//               slice of each global batch), so N ranks x B see exactly the windows 1 rank x N*B
//               sees, in the same order.
//   Gradients:  the flat gradient buffer is cut into buckets from its end (the gradients backward
//               finishes first); on the last micro batch of a step each bucket's all-reduce (a sum,
//               MPI on host buffers) starts as soon as backward has finished the layers it covers
//               (overlap) or after backward (no overlap); all are waited for and divided by the
//               world size before clipping, so every rank applies the same averaged gradient.
//   Replicas:   the same seed on every rank gives the same initial parameters; parameter_hash
//               checks after the run that they are still identical.
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "harness/dist/dist.hpp"
#include "workloads/training/data.hpp"
#include "workloads/training/trainer.hpp"

namespace accelbench::training {

struct dp_options {
  bool overlap = true;                 // start each bucket's all-reduce during backward
  uint64_t bucket_bytes = 25ull << 20; // PyTorch DDP's default bucket_cap_mb = 25
  int64_t grad_accum = 1;              // micro batches per step: the last one all-reduces
};

// Bucket ranges [begin, end) in floats over n gradients, from the end of the buffer backwards,
// each at most bucket_floats long (the last bucket cut holds the rest).
std::vector<std::pair<size_t, size_t>> gradient_buckets(size_t n, size_t bucket_floats);

// A token source that hands this rank its slice of each global batch (see above).
class rank_slice_source : public token_source {
public:
  rank_slice_source(std::unique_ptr<token_source> global, int world, int rank)
      : m_global(std::move(global)), m_world(world), m_rank(rank) {}
  void fill(int32_t* out, int64_t batch, int64_t seq) override;

private:
  std::unique_ptr<token_source> m_global;
  int m_world, m_rank;
  std::vector<int32_t> m_buf;
};

// The CPU model with its gradients averaged over the world at each step (world size > 1).
class dp_trainable final : public trainable {
public:
  dp_trainable(const model_config& cfg, const llama_options& opt, const dp_options& dp);
  const llama_options& options() const override { return m_inner.options(); }
  size_t num_params() const override { return m_inner.num_params(); }
  void init(uint64_t seed) override { m_inner.init(seed); }
  float forward(const int32_t* inputs, const int32_t* targets) override {
    return m_inner.forward(inputs, targets);
  }
  void zero_grad() override;
  void backward(float loss_scale) override;
  // Waits for the gradient all-reduces and averages them first.
  double clip_grad_norm(double max_norm) override;
  void optimizer_step(double lr, const adamw_config& c) override { m_inner.optimizer_step(lr, c); }
  double replica_mean(double local) override;
  double root_value(double v) override;
  std::string implementation() const override;
  nlohmann::json step_facts() override;
  const float* params() { return m_inner.model().params(); }
  size_t buckets() const { return m_buckets.size(); }

private:
  void start_ready(size_t from_offset); // starts the buckets at or above from_offset
  void finish_sync();
  cpu_trainable m_inner;
  dp_options m_dp;
  std::vector<std::pair<size_t, size_t>> m_buckets; // from the end of the buffer
  std::vector<dist::sum_request> m_pending;
  size_t m_next = 0; // next bucket to start
  int64_t m_micro = 0;
  double m_wait_s = 0, m_comm_span_s = 0;
  bool m_synced = false;
};

// FNV-1a over the bytes of n floats, as 16 hex digits: equal on every rank iff the replicas are.
std::string parameter_hash(const float* p, size_t n);

} // namespace accelbench::training
