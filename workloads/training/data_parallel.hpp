#pragma once
// Data-parallel training of train.llama across the ranks of harness/dist, one home
// for both backends: the CPU model summing its buckets with MPI on host buffers (mpi_bucket_sum,
// below), the CUDA model with NCCL on device buffers (cuda/data_parallel_cuda). They differ only
// in where the buffers live and how a bucket is summed (bucket_sum); the plan of buckets, the
// hook that starts them, the averaging, the hash and the run record are shared.
//   Data:       each step draws one global batch of world x B windows from the same seeded
//               stream on every rank; rank r trains on windows [r*B, (r+1)*B) of it (a contiguous
//               slice of each global batch), so N ranks x B see exactly the windows 1 rank x N*B
//               sees, in the same order.
//   Gradients:  the flat gradient buffer is cut into buckets from its end (the gradients backward
//               finishes first); on the last micro batch of a step each bucket's all-reduce (a sum)
//               starts as soon as backward has finished the layers it covers
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

// How one backend sums a bucket of gradients over the world, in place.
class bucket_sum {
public:
  virtual ~bucket_sum() = default;
  // Starts the sum of gradients [begin, end) (floats); returns at once.
  virtual void start(size_t begin, size_t end) = 0;
  // Lets started sums progress while backward computes (MPI has no progress thread).
  virtual void progress() {}
  // Waits for every started sum, then multiplies every gradient by `scale` (1 / world size).
  virtual void finish(float scale) = 0;
  // What sums, for the run record: "MPI on host buffers", "NCCL 2.27.3 on device buffers".
  virtual std::string engine() const = 0;
};

// MPI_Iallreduce (dist::start_sum) on the CPU model's host gradients.
class mpi_bucket_sum final : public bucket_sum {
public:
  mpi_bucket_sum(float* grads, size_t n) : m_grads(grads), m_n(n) {}
  void start(size_t begin, size_t end) override;
  void progress() override;
  void finish(float scale) override;
  std::string engine() const override { return "MPI on host buffers"; }

private:
  float* m_grads;
  size_t m_n;
  std::vector<dist::sum_request> m_pending;
};

// A model (trainable) with its gradients averaged over the world at each step (world size > 1).
class dp_trainable final : public trainable {
public:
  // `sum` works on `inner`'s gradient buffer; it is destroyed first (waiting for what it started).
  dp_trainable(std::unique_ptr<trainable> inner, std::unique_ptr<bucket_sum> sum,
               const dp_options& dp);
  ~dp_trainable() override;
  const llama_options& options() const override { return m_inner->options(); }
  size_t num_params() const override { return m_inner->num_params(); }
  void init(uint64_t seed) override { m_inner->init(seed); }
  float forward(const int32_t* inputs, const int32_t* targets) override {
    return m_inner->forward(inputs, targets);
  }
  void zero_grad() override;
  void backward(float loss_scale) override;
  // Waits for the gradient all-reduces and averages them first.
  double clip_grad_norm(double max_norm) override;
  void optimizer_step(double lr, const adamw_config& c) override { m_inner->optimizer_step(lr, c); }
  void synchronize() override { m_inner->synchronize(); }
  double replica_mean(double local) override;
  double root_value(double v) override;
  std::string implementation() const override;
  nlohmann::json step_facts() override;
  void set_grad_ready(std::function<void(size_t)>) override {} // the hook is this class's own
  const float* host_params(std::vector<float>& buf) override { return m_inner->host_params(buf); }
  size_t buckets() const { return m_buckets.size(); }
  std::string engine() const { return m_sum->engine(); }
  // parameter_hash of this replica's parameters.
  std::string params_hash();

private:
  void start_ready(size_t from_offset); // starts the buckets at or above from_offset
  void finish_sync();
  std::unique_ptr<trainable> m_inner;
  std::unique_ptr<bucket_sum> m_sum; // declared after m_inner: destroyed before it
  dp_options m_dp;
  std::vector<std::pair<size_t, size_t>> m_buckets; // from the end of the buffer
  size_t m_next = 0;                                // next bucket to start
  int64_t m_micro = 0;
  double m_wait_s = 0, m_comm_span_s = 0;
  bool m_synced = false;
};

// FNV-1a over the bytes of n floats, as 16 hex digits: equal on every rank iff the replicas are.
std::string parameter_hash(const float* p, size_t n);

// The CPU model, data parallel with MPI on host buffers.
std::unique_ptr<dp_trainable>
make_cpu_data_parallel(const model_config& cfg, const llama_options& opt, const dp_options& dp);

} // namespace accelbench::training
