#include "workloads/training/data.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <fstream>

#include "harness/core/error.hpp"

namespace accelbench::training {

// ---------------------------------------------------------------------------------------------
// Markov source

namespace {
double entropy_of(const std::vector<double>& p) {
  double h = 0;
  for (double x : p)
    if (x > 0)
      h -= x * std::log(x);
  return h;
}

// Throws input_error naming the first parameter out of range (vocab^order > 2^24 included).
void check_markov_params(const markov_params& p) {
  auto bad = [](const std::string& what) {
    throw input_error("train.llama: synthetic data " + what);
  };
  if (p.vocab < 2 || p.vocab > 65536)
    bad("vocab must be in [2, 65536], got " + std::to_string(p.vocab));
  if (p.order < 1)
    bad("order must be >= 1, got " + std::to_string(p.order));
  if (p.branching < 1 || p.branching > p.vocab)
    bad("branching must be in [1, vocab], got " + std::to_string(p.branching));
  if (!(p.epsilon > 0 && p.epsilon < 1))
    bad("epsilon must be in (0, 1), got " + std::to_string(p.epsilon));
  if (std::pow(double(p.vocab), double(p.order)) > double(1 << 24))
    bad("has vocab^order = " + std::to_string(p.vocab) + "^" + std::to_string(p.order) +
        " contexts, more than 2^24 can be enumerated");
}
} // namespace

markov_source::markov_source(const markov_params& p) : m_p(p) {
  check_markov_params(p);
  m_contexts = int64_t(std::pow(double(p.vocab), double(p.order)) + 0.5);
  draw_successors();
  m_pi = stationary_distribution();
  m_pi_cdf.resize(m_pi.size());
  double acc = 0;
  for (size_t i = 0; i < m_pi.size(); i++)
    m_pi_cdf[i] = (acc += m_pi[i]);
  m_h_cond = conditional_entropy_of(m_pi);
  m_h_prefix = prefix_entropies(m_pi);
}

// Successor sets and Dirichlet(1) probabilities (normalised exponentials).
void markov_source::draw_successors() {
  const int64_t V = m_p.vocab, b = m_p.branching;
  m_succ.resize(size_t(m_contexts * b));
  m_prob.resize(size_t(m_contexts * b));
  stats::rng r(m_p.seed);
  for (int64_t c = 0; c < m_contexts; c++) {
    int32_t* s = &m_succ[size_t(c * b)];
    float* w = &m_prob[size_t(c * b)];
    double sum = 0;
    std::vector<double> e(static_cast<size_t>(b));
    for (int64_t i = 0; i < b; i++) {
      int32_t y;
      do
        y = int32_t(r.below(size_t(V)));
      while (std::find(s, s + i, y) != s + i);
      s[i] = y;
      e[size_t(i)] = -std::log(1.0 - r.uniform());
      sum += e[size_t(i)];
    }
    for (int64_t i = 0; i < b; i++)
      w[i] = float(e[size_t(i)] / sum);
  }
}

// Stationary distribution over contexts by power iteration. The uniform part of a step only
// needs the marginal of the context's last k-1 tokens: pi'(r*V + y) += eps/V * sum_x pi(x, r).
std::vector<double> markov_source::stationary_distribution() const {
  const int64_t V = m_p.vocab, b = m_p.branching;
  const int64_t suffixes = m_contexts / V; // V^(k-1)
  const double eps = m_p.epsilon;
  std::vector<double> pi(size_t(m_contexts), 1.0 / double(m_contexts)), next(pi.size());
  std::vector<double> marg(static_cast<size_t>(suffixes));
  for (int iter = 0; iter < 20000; iter++) {
    std::fill(marg.begin(), marg.end(), 0.0);
    for (int64_t c = 0; c < m_contexts; c++)
      marg[size_t(c % suffixes)] += pi[size_t(c)];
    for (int64_t rr = 0; rr < suffixes; rr++)
      for (int64_t y = 0; y < V; y++)
        next[size_t(rr * V + y)] = eps / double(V) * marg[size_t(rr)];
    for (int64_t c = 0; c < m_contexts; c++) {
      const int64_t base = (c % suffixes) * V;
      const double pc = (1.0 - eps) * pi[size_t(c)];
      for (int64_t i = 0; i < b; i++)
        next[size_t(base + m_succ[size_t(c * b + i)])] += pc * double(m_prob[size_t(c * b + i)]);
    }
    double diff = 0, total = 0;
    for (size_t i = 0; i < pi.size(); i++) {
      diff += std::abs(next[i] - pi[i]);
      total += next[i];
    }
    for (size_t i = 0; i < pi.size(); i++)
      pi[i] = next[i] / total;
    if (diff < 1e-14)
      break;
  }
  return pi;
}

// H(next | context) = sum_c pi(c) H(P(. | c)), P = (1-eps) S + eps/V.
double markov_source::conditional_entropy_of(const std::vector<double>& pi) const {
  const int64_t V = m_p.vocab, b = m_p.branching;
  const double eps = m_p.epsilon;
  const double u = eps / double(V);
  double h = 0;
  for (int64_t c = 0; c < m_contexts; c++) {
    double hc = -double(V - b) * u * std::log(u);
    for (int64_t i = 0; i < b; i++) {
      double q = (1.0 - eps) * double(m_prob[size_t(c * b + i)]) + u;
      hc -= q * std::log(q);
    }
    h += pi[size_t(c)] * hc;
  }
  return h;
}

// Prefix entropies for the first k-1 positions of a window: marginals of the first j tokens.
// H(X_{t+1} | X_0..X_t) = H(first t+2 tokens) - H(first t+1 tokens).
std::vector<double> markov_source::prefix_entropies(const std::vector<double>& pi) const {
  const int64_t V = m_p.vocab, k = m_p.order;
  std::vector<double> hj(size_t(k + 1), 0.0);
  for (int64_t j = 1; j <= k; j++) {
    int64_t div = 1;
    for (int64_t i = j; i < k; i++)
      div *= V;
    std::vector<double> mj(size_t(m_contexts / div), 0.0);
    for (int64_t c = 0; c < m_contexts; c++)
      mj[size_t(c / div)] += pi[size_t(c)];
    hj[size_t(j)] = entropy_of(mj);
  }
  std::vector<double> out;
  for (int64_t t = 0; t + 1 < k; t++)
    out.push_back(hj[size_t(t + 2)] - hj[size_t(t + 1)]);
  return out;
}

double markov_source::entropy_floor(int64_t seq) const {
  double s = 0;
  int64_t n = 0;
  for (int64_t t = 0; t < seq && t < int64_t(m_h_prefix.size()); t++, n++)
    s += m_h_prefix[size_t(t)];
  s += double(seq - n) * m_h_cond;
  return s / double(seq);
}

double markov_source::probability(int64_t context, int32_t y) const {
  const int64_t b = m_p.branching;
  double q = m_p.epsilon / double(m_p.vocab);
  for (int64_t i = 0; i < b; i++)
    if (m_succ[size_t(context * b + i)] == y)
      q += (1.0 - m_p.epsilon) * m_prob[size_t(context * b + i)];
  return q;
}

void markov_source::sample_window(stats::rng& r, int32_t* out, int64_t n) const {
  const int64_t V = m_p.vocab, k = m_p.order, b = m_p.branching, suffixes = m_contexts / V;
  double u = r.uniform();
  int64_t c = int64_t(std::upper_bound(m_pi_cdf.begin(), m_pi_cdf.end(), u) - m_pi_cdf.begin());
  c = std::min(c, m_contexts - 1);
  int64_t rest = c;
  std::vector<int32_t> first(static_cast<size_t>(k));
  for (int64_t i = k - 1; i >= 0; i--) {
    first[size_t(i)] = int32_t(rest % V);
    rest /= V;
  }
  for (int64_t i = 0; i < n; i++) {
    int32_t y;
    if (i < k) {
      y = first[size_t(i)];
    } else {
      if (r.uniform() < m_p.epsilon) {
        y = int32_t(r.below(size_t(V)));
      } else {
        double x = r.uniform(), acc = 0;
        y = m_succ[size_t(c * b + b - 1)];
        for (int64_t j = 0; j < b; j++) {
          acc += m_prob[size_t(c * b + j)];
          if (x < acc) {
            y = m_succ[size_t(c * b + j)];
            break;
          }
        }
      }
      c = (c % suffixes) * V + y;
    }
    out[i] = y;
  }
}

void markov_stream::fill(int32_t* out, int64_t batch, int64_t seq) {
  for (int64_t i = 0; i < batch; i++)
    m_src->sample_window(m_rng, out + i * (seq + 1), seq + 1);
}

// ---------------------------------------------------------------------------------------------
// shards

void write_shard(const std::filesystem::path& path, const std::vector<uint16_t>& tokens) {
  std::ofstream out(path, std::ios::binary);
  if (!out)
    throw input_error("train.llama: cannot write shard " + path.string());
  int32_t header[256] = {};
  header[0] = shard_magic;
  header[1] = shard_version;
  header[2] = int32_t(tokens.size());
  out.write(reinterpret_cast<const char*>(header), sizeof(header));
  out.write(reinterpret_cast<const char*>(tokens.data()), std::streamsize(tokens.size() * 2));
  if (!out)
    throw input_error("train.llama: failed writing shard " + path.string());
}

std::vector<uint16_t> read_shard(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw input_error("train.llama: cannot open shard " + path.string());
  in.seekg(0, std::ios::end);
  const int64_t size = int64_t(in.tellg());
  in.seekg(0);
  int32_t header[256] = {};
  if (size < int64_t(sizeof(header)))
    throw input_error("train.llama: shard " + path.string() + " is truncated: " +
                      std::to_string(size) + " bytes, shorter than the 1024-byte header");
  in.read(reinterpret_cast<char*>(header), sizeof(header));
  if (header[0] != shard_magic)
    throw input_error("train.llama: shard " + path.string() + " has magic " +
                      std::to_string(header[0]) + ", expected " + std::to_string(shard_magic) +
                      " (llm.c token shard)");
  if (header[1] != shard_version)
    throw input_error("train.llama: shard " + path.string() + " has version " +
                      std::to_string(header[1]) + ", expected " + std::to_string(shard_version));
  const int64_t count = header[2];
  const int64_t expect = int64_t(sizeof(header)) + 2 * count;
  if (count < 0 || size != expect)
    throw input_error("train.llama: shard " + path.string() +
                      " is truncated or corrupt: header says " + std::to_string(count) +
                      " tokens (" + std::to_string(expect) + " bytes), the file has " +
                      std::to_string(size) + " bytes");
  std::vector<uint16_t> tokens(static_cast<size_t>(count));
  in.read(reinterpret_cast<char*>(tokens.data()), std::streamsize(count * 2));
  if (!in)
    throw input_error("train.llama: failed reading shard " + path.string());
  return tokens;
}

void check_vocabulary(const std::vector<uint16_t>& tokens, int64_t vocab,
                      const std::filesystem::path& path) {
  auto it = std::max_element(tokens.begin(), tokens.end());
  if (it != tokens.end() && int64_t(*it) >= vocab)
    throw input_error("train.llama: shard " + path.string() + " holds token id " +
                      std::to_string(*it) + " but the model's vocabulary has only " +
                      std::to_string(vocab) + " tokens");
}

shard_stream::shard_stream(const std::vector<std::filesystem::path>& shards, int64_t vocab) {
  if (shards.empty())
    throw input_error("train.llama: no token shards given");
  for (auto& s : shards) {
    auto t = read_shard(s);
    check_vocabulary(t, vocab, s);
    m_tokens.insert(m_tokens.end(), t.begin(), t.end());
  }
}

void shard_stream::fill(int32_t* out, int64_t batch, int64_t seq) {
  const size_t need = size_t(seq + 1);
  if (m_tokens.size() < need)
    throw input_error("train.llama: the shards hold " + std::to_string(m_tokens.size()) +
                      " tokens, fewer than one window of seq + 1 = " + std::to_string(need));
  for (int64_t i = 0; i < batch; i++) {
    if (m_pos + need > m_tokens.size())
      m_pos = 0;
    for (size_t j = 0; j < need; j++)
      out[size_t(i) * need + j] = m_tokens[m_pos + j];
    m_pos += size_t(seq);
  }
}

std::vector<std::filesystem::path> list_shards(const std::filesystem::path& p,
                                               const std::string& split) {
  namespace fs = std::filesystem;
  if (fs::is_regular_file(p))
    return {p};
  if (!fs::is_directory(p))
    throw input_error("train.llama: data '" + p.string() +
                      "' is neither 'synthetic', a shard file nor a directory");
  std::vector<fs::path> out;
  for (auto& e : fs::directory_iterator(p)) {
    auto name = e.path().filename().string();
    if (e.is_regular_file() && e.path().extension() == ".bin" &&
        name.find(split) != std::string::npos)
      out.push_back(e.path());
  }
  std::sort(out.begin(), out.end());
  if (out.empty())
    throw input_error("train.llama: directory " + p.string() + " has no *" + split +
                      "*.bin shards");
  return out;
}

// ---------------------------------------------------------------------------------------------
// loader

batch_loader::batch_loader(std::unique_ptr<token_source> src, int64_t batch, int64_t seq, int depth)
    : m_src(std::move(src)), m_batch(batch), m_seq(seq), m_depth(size_t(std::max(1, depth))) {
  // No source (a blocks-only model reads no tokens): nothing to prefetch.
  if (m_src)
    m_thread = std::thread([this] { produce(); });
}

batch_loader::~batch_loader() {
  {
    std::lock_guard<std::mutex> lock(m_mu);
    m_stop = true;
  }
  m_cv.notify_all();
  if (m_thread.joinable())
    m_thread.join();
}

void batch_loader::produce() {
  try {
    for (;;) {
      {
        std::unique_lock<std::mutex> lock(m_mu);
        m_cv.wait(lock, [&] { return m_stop || m_ready.size() < m_depth; });
        if (m_stop)
          return;
      }
      auto t0 = std::chrono::steady_clock::now();
      std::vector<int32_t> b(size_t(m_batch * (m_seq + 1)));
      m_src->fill(b.data(), m_batch, m_seq);
      double dt = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      m_busy_s.store(m_busy_s.load() + dt);
      m_tokens += m_batch * m_seq;
      {
        std::lock_guard<std::mutex> lock(m_mu);
        m_ready.push_back(std::move(b));
      }
      m_cv.notify_all();
    }
  } catch (...) {
    std::lock_guard<std::mutex> lock(m_mu);
    m_error = std::current_exception();
    m_cv.notify_all();
  }
}

std::vector<int32_t> batch_loader::next() {
  if (!m_src)
    throw error("train.llama: batch_loader::next() without a token source");
  auto t0 = std::chrono::steady_clock::now();
  std::unique_lock<std::mutex> lock(m_mu);
  m_cv.wait(lock, [&] { return !m_ready.empty() || m_error; });
  if (m_ready.empty() && m_error)
    std::rethrow_exception(m_error);
  auto b = std::move(m_ready.front());
  m_ready.pop_front();
  lock.unlock();
  m_cv.notify_all();
  m_wait_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  m_served++;
  return b;
}

double batch_loader::tokens_per_s() const {
  double busy = m_busy_s.load();
  return busy > 0 ? double(m_tokens.load()) / busy : 0.0;
}

} // namespace accelbench::training
