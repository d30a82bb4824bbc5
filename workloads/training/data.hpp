#pragma once
// Training data: a seeded synthetic Markov source whose entropy floor is known exactly, token
// shards in the llm.c format, and a loader that prepares batches on a background thread.
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "harness/core/stats.hpp"

namespace accelbench::training {

// ---------------------------------------------------------------------------------------------
// Synthetic source: a random sparse order-k Markov chain over `vocab` tokens. Each context (the
// last k tokens) has `branching` possible next tokens with Dirichlet(1) probabilities, mixed
// with a uniform distribution of weight `epsilon` (which makes the chain irreducible and
// aperiodic, so its stationary distribution is unique). The conditional entropy follows exactly
// from the stationary distribution (power iteration) and the per-context entropies.
struct markov_params {
  int64_t vocab = 512;
  int64_t order = 1;     // k
  int64_t branching = 4; // successors per context
  double epsilon = 0.01; // uniform mixing weight, (0, 1)
  uint64_t seed = 1;     // fixes the chain (the "dataset")
};

class markov_source {
public:
  // Throws input_error when vocab^order is too large to enumerate (> 2^24 contexts) or a
  // parameter is out of range.
  explicit markov_source(const markov_params& p);

  const markov_params& params() const { return m_p; }
  // H(X_t | X_{t-k..t-1}) under the stationary distribution, nats.
  double conditional_entropy() const { return m_h_cond; }
  // The lowest expected cross-entropy (nats) of any predictor over the `seq` positions of a
  // window whose first k tokens are a stationary draw: positions t < k-1 see less than a full
  // context, so they add H(X_{t+1} | X_0..X_t) from the stationary marginals.
  double entropy_floor(int64_t seq) const;
  const std::vector<double>& stationary() const { return m_pi; }

  // Writes one window of n tokens: the first k from the stationary distribution, then the chain.
  void sample_window(stats::rng& r, int32_t* out, int64_t n) const;
  // P(next = y | context index), for tests.
  double probability(int64_t context, int32_t y) const;
  int64_t contexts() const { return m_contexts; }

private:
  // The steps of the constructor, in order; each reads what the ones before it filled.
  void draw_successors();
  std::vector<double> stationary_distribution() const;
  double conditional_entropy_of(const std::vector<double>& pi) const;
  std::vector<double> prefix_entropies(const std::vector<double>& pi) const;

  markov_params m_p;
  int64_t m_contexts = 0;
  std::vector<int32_t> m_succ; // [contexts, branching]
  std::vector<float> m_prob;   // [contexts, branching], sums to 1 per context
  std::vector<double> m_pi;    // stationary distribution over contexts
  std::vector<double> m_pi_cdf;
  double m_h_cond = 0;
  std::vector<double> m_h_prefix; // H(X_{t+1} | X_0..X_t) for t < k-1
};

// ---------------------------------------------------------------------------------------------
// llm.c token shards: a header of 256 int32 (magic 20240520, version 1, token count, rest 0),
// then `count` uint16 tokens.
constexpr int32_t shard_magic = 20240520;
constexpr int32_t shard_version = 1;

void write_shard(const std::filesystem::path& path, const std::vector<uint16_t>& tokens);
// Throws input_error (one line, naming the file) on a missing file, a wrong magic or version, or
// a file shorter or longer than the header says.
std::vector<uint16_t> read_shard(const std::filesystem::path& path);
// Throws input_error when a token id is >= vocab, naming the file, the id and the vocabulary.
void check_vocabulary(const std::vector<uint16_t>& tokens, int64_t vocab,
                      const std::filesystem::path& path);

// ---------------------------------------------------------------------------------------------
// Where batches come from: each call fills batch x (seq + 1) tokens (inputs are [:, :seq],
// targets [:, 1:]).
class token_source {
public:
  virtual ~token_source() = default;
  virtual void fill(int32_t* out, int64_t batch, int64_t seq) = 0;
};

// Independent stationary windows of the Markov source, from a seeded generator.
class markov_stream : public token_source {
public:
  markov_stream(std::shared_ptr<const markov_source> src, uint64_t seed)
      : m_src(std::move(src)), m_rng(seed) {}
  void fill(int32_t* out, int64_t batch, int64_t seq) override;

private:
  std::shared_ptr<const markov_source> m_src;
  stats::rng m_rng;
};

// Consecutive windows over the tokens of one or more shards (llm.c's DataLoader: windows of
// seq + 1 tokens advancing by seq, wrapping to the first shard at the end).
class shard_stream : public token_source {
public:
  // Reads every shard up front and checks it against the vocabulary.
  shard_stream(const std::vector<std::filesystem::path>& shards, int64_t vocab);
  void fill(int32_t* out, int64_t batch, int64_t seq) override;
  size_t tokens() const { return m_tokens.size(); }

private:
  std::vector<uint16_t> m_tokens;
  size_t m_pos = 0;
};

// The shard files a `data` value names: a file, or a directory's *.bin files whose names contain
// `split` ("train" or "val"; llm.c names them name_train_000001.bin), sorted.
std::vector<std::filesystem::path> list_shards(const std::filesystem::path& p,
                                               const std::string& split);

// ---------------------------------------------------------------------------------------------
// Prefetching loader: a background thread keeps up to `depth` batches ready. Reports its own
// rate (tokens produced per second of producer work) and how long the consumer waited.
class batch_loader {
public:
  batch_loader(std::unique_ptr<token_source> src, int64_t batch, int64_t seq, int depth = 2);
  ~batch_loader();
  batch_loader(const batch_loader&) = delete;
  batch_loader& operator=(const batch_loader&) = delete;

  // The next batch, batch x (seq + 1) tokens; rethrows an error of the producer.
  std::vector<int32_t> next();
  double tokens_per_s() const;
  double wait_s() const { return m_wait_s; }
  int64_t batches_served() const { return m_served; }

private:
  void produce();
  std::unique_ptr<token_source> m_src;
  int64_t m_batch, m_seq;
  size_t m_depth;
  std::deque<std::vector<int32_t>> m_ready;
  std::mutex m_mu;
  std::condition_variable m_cv;
  bool m_stop = false;
  std::exception_ptr m_error;
  std::atomic<int64_t> m_tokens{0};
  std::atomic<double> m_busy_s{0};
  double m_wait_s = 0;
  int64_t m_served = 0;
  std::thread m_thread;
};

} // namespace accelbench::training
