#include "workloads/attention/attention_check.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <vector>

#include <fmt/format.h>

#include "harness/core/ruleset.hpp"
#include "harness/core/stats.hpp"
#include "workloads/attention/attention_reference.hpp"

namespace accelbench::attention {

check_options check_options_for(const ruleset& rules, const attention_shape& s,
                                const std::string& dtype, uint64_t seed) {
  check_options opt;
  opt.tolerance = rules.tolerance(dtype);
  opt.sample_rows =
      std::max<int64_t>(8, (rules.correctness_samples() + s.head_dim - 1) / s.head_dim);
  opt.seed = seed;
  return opt;
}

namespace {

constexpr double k_infinite_error = std::numeric_limits<double>::infinity();

using labeller = std::function<std::string(size_t)>;

// The error measure documented in the header, over one tensor's compared elements.
check_result compare(const std::vector<double>& got, const std::vector<double>& ref,
                     const labeller& label, double tol, bool sampled) {
  check_result r;
  r.tolerance = tol;
  r.sampled = sampled;
  r.points = int64_t(got.size());
  double ss = 0;
  int64_t n = 0;
  for (double x : ref)
    if (std::isfinite(x)) {
      ss += x * x;
      ++n;
    }
  const double rms = n ? std::sqrt(ss / double(n)) : 0.0;
  size_t worst = 0;
  bool any = false;
  for (size_t e = 0; e < got.size(); ++e) {
    const double x = got[e], y = ref[e];
    double err;
    if (std::isnan(x) || std::isnan(y))
      err = k_infinite_error;
    else if (std::isinf(x) || std::isinf(y))
      err = (x == y) ? 0.0 : k_infinite_error;
    else {
      const double denom = std::max(std::fabs(y), rms);
      err = denom > 0 ? std::fabs(x - y) / denom : std::fabs(x - y);
    }
    if (!any || err > r.max_error) {
      r.max_error = err;
      worst = e;
      any = true;
    }
  }
  if (any)
    r.worst = fmt::format("{} = {:.7g}, reference {:.7g}", label(worst), got[worst], ref[worst]);
  return r;
}

struct layout {
  const attention_shape& s;
  std::string q_label(const char* name, size_t n) const {
    const int64_t D = s.head_dim, H = s.heads, SQ = s.seq_q;
    return fmt::format("{}[b={},i={},h={},d={}]", name, int64_t(n) / (D * H * SQ),
                       int64_t(n) / (D * H) % SQ, int64_t(n) / D % H, int64_t(n) % D);
  }
  std::string k_label(const char* name, size_t n) const {
    const int64_t D = s.head_dim, H = s.kv_heads, SK = s.seq_k;
    return fmt::format("{}[b={},j={},h={},d={}]", name, int64_t(n) / (D * H * SK),
                       int64_t(n) / (D * H) % SK, int64_t(n) / D % H, int64_t(n) % D);
  }
  std::string lse_label(size_t n) const {
    return fmt::format("lse[b={},h={},i={}]", int64_t(n) / (s.heads * s.seq_q),
                       int64_t(n) / s.seq_q % s.heads, int64_t(n) % s.seq_q);
  }
};

std::vector<double> widen(const float* p, int64_t n) { return std::vector<double>(p, p + n); }

bool use_full(const attention_shape& s, const check_options& opt) {
  const double work =
      double(s.batch) * double(s.heads) * double(s.seq_q) * double(s.seq_k) * double(s.head_dim);
  return work <= double(opt.full_limit);
}

// (batch, head, row) triples: the first and last rows of the tensor, then seeded random ones.
struct row_id {
  int64_t b, h, i;
};
std::vector<row_id> sample_rows(int64_t batch, int64_t heads, int64_t rows, int64_t count,
                                uint64_t seed) {
  std::vector<row_id> out{{0, 0, 0}, {batch - 1, heads - 1, rows - 1}};
  stats::rng g(seed);
  while (int64_t(out.size()) < std::max<int64_t>(count, 2))
    out.push_back({int64_t(g.below(size_t(batch))), int64_t(g.below(size_t(heads))),
                   int64_t(g.below(size_t(rows)))});
  return out;
}

// The (batch, kv head) pairs whose key rows the sampled backward check compares: the first and
// the last (layout offsets go wrong at either end). Each costs a forward pass of its query heads,
// so there are two rather than one per sampled row.
struct kv_pair {
  int64_t b, hk;
  bool first, last;
};
std::vector<kv_pair> kv_pairs(int64_t batch, int64_t kv_heads) {
  if (batch == 1 && kv_heads == 1)
    return {{0, 0, true, true}};
  return {{0, 0, true, false}, {batch - 1, kv_heads - 1, false, true}};
}

// `count` key rows of one pair: row 0 of the first pair, the last row of the last pair, then
// seeded random rows.
std::vector<int64_t> key_rows(int64_t seq_k, const kv_pair& p, int64_t count, uint64_t seed) {
  std::vector<int64_t> out;
  if (p.first)
    out.push_back(0);
  if (p.last && (seq_k > 1 || !p.first))
    out.push_back(seq_k - 1);
  stats::rng g(seed ^ (p.first ? 0 : 0x1a57));
  while (int64_t(out.size()) < count)
    out.push_back(int64_t(g.below(size_t(seq_k))));
  return out;
}

} // namespace

std::string check_result::reason() const {
  return fmt::format("max error {:.3g} {} tolerance {:.3g} at {} ({} points, {})", max_error,
                     ok() ? "<=" : ">", tolerance, worst, points,
                     sampled ? "sampled rows" : "full tensors");
}

nlohmann::json check_result::to_json() const {
  return {
      {"max_error", std::isfinite(max_error) ? nlohmann::json(max_error) : nlohmann::json("inf")},
      {"tolerance", tolerance},
      {"points", points},
      {"mode", sampled ? "sampled" : "full"},
      {"worst", worst},
      {"ok", ok()},
      {"error_measure", "|x - ref| / max(|ref|, rms(ref)) against a double reference"}};
}

void check_result::merge(const check_result& other) {
  if (points == 0 || other.max_error > max_error) {
    max_error = other.max_error;
    worst = other.worst;
  }
  tolerance = other.tolerance;
  points += other.points;
  sampled = sampled || other.sampled;
}

check_result check_forward(const attention_shape& s, const float* q, const float* k, const float* v,
                           const float* o, const float* lse, const check_options& opt) {
  check_shape(s);
  layout L{s};
  const int64_t nq = s.batch * s.seq_q * s.heads * s.head_dim;
  const int64_t nl = s.batch * s.heads * s.seq_q;
  check_result res;
  if (use_full(s, opt)) {
    std::vector<double> ro(static_cast<size_t>(nq)), rl(static_cast<size_t>(nl));
    reference_forward(s, q, k, v, ro.data(), rl.data());
    res = compare(
        widen(o, nq), ro, [&](size_t n) { return L.q_label("o", n); }, opt.tolerance, false);
    res.merge(compare(
        widen(lse, nl), rl, [&](size_t n) { return L.lse_label(n); }, opt.tolerance, false));
    return res;
  }
  const int64_t D = s.head_dim;
  std::vector<double> go, ro, gl, rl;
  std::vector<size_t> where_o, where_l;
  std::vector<double> row(static_cast<size_t>(D));
  for (const row_id& r : sample_rows(s.batch, s.heads, s.seq_q, opt.sample_rows, opt.seed)) {
    const double l = reference_forward_row(s, q, k, v, r.b, r.h, r.i, row.data());
    const size_t base = size_t(((r.b * s.seq_q + r.i) * s.heads + r.h) * D);
    for (int64_t d = 0; d < D; ++d) {
      go.push_back(o[base + d]);
      ro.push_back(row[d]);
      where_o.push_back(base + d);
    }
    const size_t li = size_t((r.b * s.heads + r.h) * s.seq_q + r.i);
    gl.push_back(lse[li]);
    rl.push_back(l);
    where_l.push_back(li);
  }
  res = compare(
      go, ro, [&](size_t n) { return L.q_label("o", where_o[n]); }, opt.tolerance, true);
  res.merge(compare(
      gl, rl, [&](size_t n) { return L.lse_label(where_l[n]); }, opt.tolerance, true));
  return res;
}

check_result check_backward(const attention_shape& s, const float* q, const float* k,
                            const float* v, const float* d_o, const float* dq, const float* dk,
                            const float* dv, const check_options& opt) {
  check_shape(s);
  layout L{s};
  const int64_t nq = s.batch * s.seq_q * s.heads * s.head_dim;
  const int64_t nk = s.batch * s.seq_k * s.kv_heads * s.head_dim;
  check_result res;
  if (use_full(s, opt)) {
    std::vector<double> rq(static_cast<size_t>(nq)), rk(static_cast<size_t>(nk)),
        rv(static_cast<size_t>(nk));
    reference_backward(s, q, k, v, d_o, rq.data(), rk.data(), rv.data());
    res = compare(
        widen(dq, nq), rq, [&](size_t n) { return L.q_label("dq", n); }, opt.tolerance, false);
    res.merge(compare(
        widen(dk, nk), rk, [&](size_t n) { return L.k_label("dk", n); }, opt.tolerance, false));
    res.merge(compare(
        widen(dv, nk), rv, [&](size_t n) { return L.k_label("dv", n); }, opt.tolerance, false));
    return res;
  }
  const int64_t D = s.head_dim;
  std::vector<double> row(static_cast<size_t>(D)), row2(static_cast<size_t>(D));
  {
    std::vector<double> got, ref;
    std::vector<size_t> where;
    for (const row_id& r :
         sample_rows(s.batch, s.heads, s.seq_q, opt.sample_rows, opt.seed ^ 0x51)) {
      reference_dq_row(s, q, k, v, d_o, r.b, r.h, r.i, row.data());
      const size_t base = size_t(((r.b * s.seq_q + r.i) * s.heads + r.h) * D);
      for (int64_t d = 0; d < D; ++d) {
        got.push_back(dq[base + d]);
        ref.push_back(row[d]);
        where.push_back(base + d);
      }
    }
    res = compare(
        got, ref, [&](size_t n) { return L.q_label("dq", where[n]); }, opt.tolerance, true);
  }
  {
    std::vector<double> gk, rk, gv, rv;
    std::vector<size_t> where;
    const int64_t G = s.heads / s.kv_heads, SQ = s.seq_q;
    std::vector<double> lse(static_cast<size_t>(G * SQ)), di(static_cast<size_t>(G * SQ));
    const std::vector<kv_pair> pairs = kv_pairs(s.batch, s.kv_heads);
    const int64_t per_pair =
        (std::max<int64_t>(opt.sample_rows, 2) + int64_t(pairs.size()) - 1) / int64_t(pairs.size());
    for (const kv_pair& pair : pairs) {
      // The group's own forward: lse and D_i of every query row that may see a key row.
      for (int64_t g = 0; g < G; ++g)
        reference_row_stats(s, q, k, v, d_o, pair.b, pair.hk * G + g, lse.data() + g * SQ,
                            di.data() + g * SQ);
      for (int64_t j : key_rows(s.seq_k, pair, per_pair, opt.seed ^ 0xd4)) {
        reference_dkv_row(s, q, k, v, d_o, lse.data(), di.data(), pair.b, pair.hk, j, row.data(),
                          row2.data());
        const size_t base = size_t(((pair.b * s.seq_k + j) * s.kv_heads + pair.hk) * D);
        for (int64_t d = 0; d < D; ++d) {
          gk.push_back(dk[base + d]);
          rk.push_back(row[d]);
          gv.push_back(dv[base + d]);
          rv.push_back(row2[d]);
          where.push_back(base + d);
        }
      }
    }
    res.merge(compare(
        gk, rk, [&](size_t n) { return L.k_label("dk", where[n]); }, opt.tolerance, true));
    res.merge(compare(
        gv, rv, [&](size_t n) { return L.k_label("dv", where[n]); }, opt.tolerance, true));
  }
  return res;
}

} // namespace accelbench::attention
