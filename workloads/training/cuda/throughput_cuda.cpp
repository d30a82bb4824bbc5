#include "workloads/training/cuda/throughput_cuda.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <vector>

#include "harness/core/elapsed.hpp"
#include "harness/device/device.hpp"

namespace accelbench::training::cuda {

namespace {

using clock_type = std::chrono::steady_clock;
// Page-locked host memory (cudaMallocHost), freed on destruction.
class pinned_tokens {
public:
  explicit pinned_tokens(size_t n) {
    if (n)
      device::check_cuda(cudaMallocHost(reinterpret_cast<void**>(&m_p), n * sizeof(int32_t)),
                         "cudaMallocHost (train.llama tokens)");
  }
  ~pinned_tokens() {
    if (m_p)
      cudaFreeHost(m_p);
  }
  pinned_tokens(const pinned_tokens&) = delete;
  pinned_tokens& operator=(const pinned_tokens&) = delete;
  int32_t* at(size_t offset) const { return m_p + offset; }

private:
  int32_t* m_p = nullptr;
};

// CUDA events, created up front (creating one is not a wait).
class event_list {
public:
  explicit event_list(size_t n) : m_ev(n, nullptr) {
    for (auto& e : m_ev)
      device::check_cuda(cudaEventCreate(&e), "cudaEventCreate");
  }
  ~event_list() {
    for (auto e : m_ev)
      if (e)
        cudaEventDestroy(e);
  }
  event_list(const event_list&) = delete;
  event_list& operator=(const event_list&) = delete;
  void record(size_t i, void* stream) {
    device::check_cuda(cudaEventRecord(m_ev[i], static_cast<cudaStream_t>(stream)),
                       "cudaEventRecord");
  }
  // Seconds from event i to event j, both completed.
  double between(size_t i, size_t j) const {
    float ms = 0;
    device::check_cuda(cudaEventElapsedTime(&ms, m_ev[i], m_ev[j]), "cudaEventElapsedTime");
    return double(ms) / 1e3;
  }

private:
  std::vector<cudaEvent_t> m_ev;
};

// One step's queue: events [start, (forward, backward) per micro batch, optimizer] from `ev0`
// when timed (events null in the warm-up). Returns the host's time taking batches.
struct step_queue {
  llama_cuda& m;
  const train_hparams& hp;
  batch_loader& loader;
  pinned_tokens& pinned;
  int64_t accum;

  double run(int64_t step, event_list* ev, size_t ev0) {
    const int64_t b = m.options().batch, t = m.options().seq, bt = b * t;
    void* s = m.stream();
    double data_s = 0;
    auto mark = [&](size_t k) {
      if (ev)
        ev->record(ev0 + k, s);
    };
    mark(0);
    m.zero_grad();
    for (int64_t micro = 0; micro < accum; micro++) {
      int32_t* in = nullptr;
      int32_t* tg = nullptr;
      if (m.options().with_head) {
        auto t0 = clock_type::now();
        auto w = loader.next();
        in = pinned.at(size_t((step * accum + micro) * 2 * bt));
        tg = in + bt;
        for (int64_t i = 0; i < b; i++)
          for (int64_t j = 0; j < t; j++) {
            in[i * t + j] = w[size_t(i * (t + 1) + j)];
            tg[i * t + j] = w[size_t(i * (t + 1) + j + 1)];
          }
        data_s += seconds_since(t0);
      }
      mark(1 + 2 * size_t(micro));
      m.forward_async(in, tg, 1.0f / float(accum), step);
      mark(2 + 2 * size_t(micro));
      m.backward(1.0f / float(accum));
    }
    mark(1 + 2 * size_t(accum));
    m.step_async(hp.clip_norm, hp.schedule.at(step), hp.adam, step);
    return data_s;
  }
};

// The timed steps' stats from their events (step i's end is step i+1's start).
std::vector<step_stats> read_steps(const event_list& ev, size_t per_step, int64_t accum,
                                   int64_t steps) {
  std::vector<step_stats> out(static_cast<size_t>(steps));
  for (int64_t i = 0; i < steps; i++) {
    const size_t e = size_t(i) * per_step, next = e + per_step, opt = e + 1 + 2 * size_t(accum);
    step_stats& st = out[size_t(i)];
    st.total_s = ev.between(e, next);
    st.optimizer_s = ev.between(opt, next);
    for (int64_t k = 0; k < accum; k++) {
      const size_t f = e + 1 + 2 * size_t(k);
      st.forward_s += ev.between(f, f + 1);
      st.backward_s += ev.between(f + 1, k + 1 < accum ? f + 2 : opt);
    }
  }
  return out;
}

} // namespace

cuda_throughput measure_throughput_cuda(llama_cuda& m, const train_hparams& hp,
                                        const source_factory& data, uint64_t seed,
                                        int64_t warmup_steps, int64_t steps) {
  cuda_throughput r;
  const int64_t accum = std::max<int64_t>(1, hp.grad_accum), total = warmup_steps + steps;
  const int64_t bt = m.options().batch * m.options().seq;
  auto t0 = clock_type::now();
  m.init(seed);
  m.reserve_step_log(total);
  m.synchronize();
  r.result.init_s = seconds_since(t0);
  const bool head = m.options().with_head;
  batch_loader loader(head ? data(seed) : nullptr, m.options().batch, m.options().seq);
  pinned_tokens pinned(head ? size_t(total * accum * 2 * bt) : 0);
  const size_t per_step = 2 + 2 * size_t(accum);
  event_list ev(size_t(steps) * per_step + 1);
  step_queue q{m, hp, loader, pinned, accum};
  for (int64_t s = 0; s < warmup_steps; s++)
    q.run(s, nullptr, 0);
  m.synchronize(); // outside the timed window
  const int64_t waits0 = m.host_waits();
  auto tw = clock_type::now();
  std::vector<double> data_s(static_cast<size_t>(steps));
  std::vector<nlohmann::json> facts(static_cast<size_t>(steps));
  for (int64_t i = 0; i < steps; i++) {
    data_s[size_t(i)] = q.run(warmup_steps + i, &ev, size_t(i) * per_step);
    facts[size_t(i)] = m.step_facts(); // NVML, not a wait: the clock while the queue runs
  }
  ev.record(size_t(steps) * per_step, m.stream());
  r.host_waits_in_timed_steps = m.host_waits() - waits0;
  m.synchronize(); // the end of the timed window
  r.window_s = seconds_since(tw);
  r.result.steps = read_steps(ev, per_step, accum, steps);
  const std::vector<float> log = m.read_step_log();
  for (int64_t i = 0; i < steps; i++) {
    step_stats& st = r.result.steps[size_t(i)];
    const size_t slot = size_t(warmup_steps + i);
    st.loss = log[2 * slot];
    st.grad_norm = log[2 * slot + 1];
    st.lr = hp.schedule.at(warmup_steps + i);
    st.data_s = data_s[size_t(i)];
    st.facts = std::move(facts[size_t(i)]);
  }
  r.result.loader_tokens_per_s = loader.tokens_per_s();
  return r;
}

} // namespace accelbench::training::cuda
