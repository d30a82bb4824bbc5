#include "workloads/training/data_parallel.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>

#include <fmt/format.h>

#include "harness/core/elapsed.hpp"
#include "harness/core/hash.hpp"
#include "workloads/training/cpu/cpu_trainable.hpp"

namespace accelbench::training {

namespace {
using clock_type = std::chrono::steady_clock;
} // namespace

std::vector<std::pair<size_t, size_t>> gradient_buckets(size_t n, size_t bucket_floats) {
  std::vector<std::pair<size_t, size_t>> b;
  const size_t cap = std::max<size_t>(1, bucket_floats);
  for (size_t end = n; end > 0;) {
    const size_t begin = end > cap ? end - cap : 0;
    b.emplace_back(begin, end);
    end = begin;
  }
  return b;
}

void rank_slice_source::fill(int32_t* out, int64_t batch, int64_t seq) {
  const size_t window = size_t(seq + 1), mine = size_t(batch) * window;
  m_buf.resize(mine * size_t(m_world));
  m_global->fill(m_buf.data(), batch * m_world, seq);
  std::memcpy(out, m_buf.data() + size_t(m_rank) * mine, mine * sizeof(int32_t));
}

void mpi_bucket_sum::start(size_t begin, size_t end) {
  m_pending.push_back(dist::start_sum(m_grads + begin, end - begin));
}

void mpi_bucket_sum::progress() {
  for (auto& r : m_pending)
    r.test();
}

void mpi_bucket_sum::finish(float scale) {
  for (auto& r : m_pending)
    r.wait();
  m_pending.clear();
  for (size_t i = 0; i < m_n; i++)
    m_grads[i] *= scale;
}

dp_trainable::dp_trainable(std::unique_ptr<trainable> inner, std::unique_ptr<bucket_sum> sum,
                           const dp_options& dp)
    : m_inner(std::move(inner)), m_sum(std::move(sum)), m_dp(dp) {
  m_buckets = gradient_buckets(m_inner->num_params(), size_t(dp.bucket_bytes / sizeof(float)));
  m_dp.grad_accum = std::max<int64_t>(1, dp.grad_accum);
}

dp_trainable::~dp_trainable() { m_sum.reset(); }

std::unique_ptr<dp_trainable>
make_cpu_data_parallel(const model_config& cfg, const llama_options& opt, const dp_options& dp) {
  auto model = std::make_unique<cpu_trainable>(cfg, opt);
  auto sum = std::make_unique<mpi_bucket_sum>(model->model().grads(), model->num_params());
  return std::make_unique<dp_trainable>(std::move(model), std::move(sum), dp);
}

void dp_trainable::zero_grad() {
  finish_sync(); // never leave an all-reduce writing into gradients being zeroed
  m_inner->zero_grad();
  m_micro = 0;
  m_next = 0;
  m_synced = false;
  m_wait_s = m_comm_span_s = 0;
}

void dp_trainable::backward(float loss_scale) {
  const bool last = ++m_micro == m_dp.grad_accum;
  if (last && m_dp.overlap)
    m_inner->set_grad_ready([this](size_t from) { start_ready(from); });
  m_inner->backward(loss_scale);
  m_inner->set_grad_ready({});
}

// Buckets are ordered from the end of the buffer: bucket i is final once backward has finished
// every gradient from its first float on. Started sums are given progress while backward
// computes (Open MPI has no progress thread by default; NCCL's run on their own stream).
void dp_trainable::start_ready(size_t from_offset) {
  auto t0 = clock_type::now();
  while (m_next < m_buckets.size() && m_buckets[m_next].first >= from_offset) {
    auto [b, e] = m_buckets[m_next++];
    m_sum->start(b, e);
  }
  m_sum->progress();
  m_comm_span_s += seconds_since(t0);
}

void dp_trainable::finish_sync() {
  if (m_micro < m_dp.grad_accum || m_synced)
    return;
  start_ready(0); // no overlap: every bucket starts here
  auto t0 = clock_type::now();
  m_sum->finish(1.0f / float(dist::size()));
  m_wait_s = seconds_since(t0);
  m_synced = true;
}

double dp_trainable::clip_grad_norm(double max_norm) {
  finish_sync();
  return m_inner->clip_grad_norm(max_norm);
}

// The mean over the replicas, then rank 0's copy of it: bit-identical on every rank, so every
// rank takes the same decisions from it (divergence, the target).
double dp_trainable::replica_mean(double local) {
  return root_value(dist::sum_all(local) / double(dist::size()));
}

double dp_trainable::root_value(double v) {
  double r = v;
  std::memcpy(&r, dist::broadcast(std::string(reinterpret_cast<const char*>(&v), sizeof v)).data(),
              sizeof r);
  return r;
}

std::string dp_trainable::implementation() const {
  return m_inner->implementation() +
         fmt::format("; data parallel over {} ranks: gradients all-reduced ({}) in "
                     "{} bucket(s) of at most {} bytes, {}",
                     dist::size(), m_sum->engine(), m_buckets.size(), m_dp.bucket_bytes,
                     m_dp.overlap ? "each started as soon as backward finished it"
                                  : "all started after backward");
}

nlohmann::json dp_trainable::step_facts() {
  nlohmann::json f = m_inner->step_facts();
  f["allreduce_wait_s"] = m_wait_s;
  f["allreduce_in_backward_s"] = m_comm_span_s;
  return f;
}

std::string dp_trainable::params_hash() {
  std::vector<float> buf;
  return parameter_hash(m_inner->host_params(buf), m_inner->num_params());
}

std::string parameter_hash(const float* p, size_t n) {
  return fmt::format(
      "{:016x}", fnv1a64(std::string_view(reinterpret_cast<const char*>(p), n * sizeof(float))));
}

} // namespace accelbench::training
