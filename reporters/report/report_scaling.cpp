// Data-parallel scaling in the report: measured scaling efficiency of training runs at
// several world sizes, and a projection of throughput at larger world sizes from the measured
// compute time per step and the measured all-reduce cost (an alpha-beta model with overlap),
// with the projection's error on the world sizes that were measured. A projection is always
// labelled as one.
#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "harness/core/stats.hpp"
#include "reporters/report/report.hpp"
#include "reporters/report/report_parts.hpp"

namespace accelbench::report {

const char* const k_dp_projection_formula =
    "PROJECTION (alpha-beta model with overlap, not a measurement): step(N) = t_c + exposed(N); "
    "t_c = the one-rank step time (compute), t_b = its backward part; the gradient (G bytes) is "
    "all-reduced in k buckets as a ring: t_ar(N) = k * 2(N-1) * alpha + 2(N-1)/N * G / busbw, "
    "alpha = the measured all-reduce time at the smallest size / (2(n-1)) at the n ranks it was "
    "measured on, busbw = the measured bus bandwidth at the size nearest the bucket size (ring "
    "bus bandwidth does not depend on N); with overlap exposed(N) = max(t_ar(N) / k, t_ar(N) - "
    "t_b) (buckets hide behind backward, the last cannot), without exposed(N) = t_ar(N); "
    "tokens/s(N) = N * tokens per rank step / step(N); efficiency(N) = t_c / step(N)";

namespace {

const metric* find(const run& r, const char* name) { return r.find_metric(name); }
double metric_or(const run& r, const char* name, double fallback = 0) {
  const metric* m = find(r, name);
  return m ? m->value : fallback;
}

int64_t world_size_of(const run& r) {
  const json& e = r.environment;
  if (e.is_object() && e.contains("distributed") && e["distributed"].is_object())
    return e["distributed"].value("world_size", int64_t{1});
  return 1;
}

// The per-rank config: the world-size-only settings set apart.
std::string family_key(const run& r) {
  std::string k = r.cfg.workload + "/" + r.cfg.backend + "/";
  for (const auto& [name, v] : r.cfg.values)
    if (name != "baseline" && name != "steps" && name != "overlap" && name != "bucket_kib")
      k.append(name).append("=").append(v).append(",");
  return k;
}

bool is_dp_training(const run& r) {
  return r.cfg.workload == "train.llama" && r.status == run_status::ok && r.source == "measured" &&
         r.cfg.values.count("mode") && r.cfg.values.at("mode") == "throughput" &&
         find(r, "tokens_per_s");
}

bool is_allreduce(const run& r) {
  return r.cfg.workload == "collective" && r.status == run_status::ok && r.cfg.values.count("op") &&
         r.cfg.values.at("op") == "allreduce" && world_size_of(r) > 1 && find(r, "busbw") &&
         find(r, "time");
}

struct family {
  std::string system, key, workload;
  std::map<std::pair<int64_t, std::string>, std::vector<const run*>> at; // (N, overlap)
};

double median_of(const std::vector<const run*>& rs, const char* name) {
  std::vector<double> v;
  v.reserve(rs.size());
  for (const run* r : rs)
    v.push_back(metric_or(*r, name));
  return stats::median(v);
}

std::vector<double> in_job_values(const std::vector<const run*>& rs, const char* name) {
  std::vector<double> v;
  for (const run* r : rs)
    if (const metric* m = find(*r, name))
      v.push_back(m->value);
  return v;
}

// The one-rank tokens/s: a world-size-1 run of the family, else the in-job baselines.
double one_rank_tps(const family& f, std::string& reference) {
  for (const auto& [k, rs] : f.at)
    if (k.first == 1) {
      reference = "world-size-1 run(s) of the family";
      return median_of(rs, "tokens_per_s");
    }
  std::vector<double> b;
  for (const auto& [k, rs] : f.at)
    for (double v : in_job_values(rs, "baseline_tokens_per_s"))
      b.push_back(v);
  if (b.empty())
    return 0;
  reference = "rank 0 alone in the same job (baseline=1)";
  return stats::median(b);
}

dp_measured_point measured_point(const std::pair<int64_t, std::string>& k,
                                 const std::vector<const run*>& rs, double one,
                                 const std::string& reference) {
  dp_measured_point p;
  p.world_size = k.first;
  p.overlap = k.second;
  p.runs = rs.size();
  p.tokens_per_s = median_of(rs, "tokens_per_s");
  if (one > 0) {
    p.efficiency = p.tokens_per_s / (double(p.world_size) * one);
    p.reference = reference;
  }
  auto in_job = in_job_values(rs, "scaling_efficiency");
  if (!in_job.empty())
    p.in_job_efficiency = stats::median(in_job) / 100.0;
  return p;
}

} // namespace

namespace {

// Bytes per step the family all-reduces and its bucket size, from a data-parallel run's record
// (or the parameter count of any run of the family).
void gradient_facts(const family& f, dp_scaling_series& s) {
  for (const auto& [k, rs] : f.at)
    for (const run* r : rs) {
      const json& dp = r->extra.contains("data_parallel") ? r->extra["data_parallel"] : json();
      if (dp.is_object() && dp.contains("gradient_bytes")) {
        s.gradient_bytes = dp["gradient_bytes"].get<double>();
        s.bucket_bytes = dp.value("bucket_bytes", 25.0 * 1048576);
        return;
      }
      if (r->extra.contains("parameters") && s.gradient_bytes == 0) {
        s.gradient_bytes = 4.0 * r->extra["parameters"].get<double>();
        s.bucket_bytes = 1024.0 * double(r->cfg.values.count("bucket_kib")
                                             ? std::stoll(r->cfg.values.at("bucket_kib"))
                                             : 25600);
      }
    }
}

double tokens_per_rank_step(const run& r) {
  return r.extra.value("tokens_per_step", 0.0) / double(world_size_of(r));
}

// The compute time per step (t_c) and its backward part (t_b) from the one-rank figure.
void compute_facts(const family& f, double one, dp_scaling_series& s) {
  const run* any = f.at.begin()->second.front();
  if (one > 0)
    s.compute_s = tokens_per_rank_step(*any) / one;
  const std::vector<const run*>* ref = &f.at.begin()->second; // world size 1 sorts first
  std::vector<double> b;
  for (const run* r : *ref)
    if (const metric* m = find(*r, "backward_ms"))
      b.push_back(m->value / 1e3);
  s.backward_s = b.empty() ? 0.0 : stats::median(b);
}

// alpha and busbw from the system's measured all-reduce runs.
void collective_facts(const std::vector<const run*>& coll, const std::string& system,
                      dp_scaling_series& s) {
  const run* smallest = nullptr;
  const run* nearest = nullptr;
  const double want = std::max(1.0, std::min(s.gradient_bytes, s.bucket_bytes));
  auto bytes = [](const run* r) { return double(std::stoll(r->cfg.values.at("bytes"))); };
  for (const run* r : coll) {
    if (r->system != system)
      continue;
    if (!smallest || bytes(r) < bytes(smallest))
      smallest = r;
    if (!nearest || std::abs(std::log(bytes(r) / want)) < std::abs(std::log(bytes(nearest) / want)))
      nearest = r;
  }
  if (!smallest)
    return;
  s.alpha_from_ranks = world_size_of(*smallest);
  s.alpha_s = metric_or(*smallest, "time") / (2.0 * double(s.alpha_from_ranks - 1));
  s.busbw_gb_s = metric_or(*nearest, "busbw");
  s.busbw_at_bytes = int64_t(bytes(nearest));
}

} // namespace

// The model of k_dp_projection_formula at world size n.
dp_projected_point project_at(const dp_scaling_series& s, int64_t n, bool overlap,
                              double rank_tokens) {
  dp_projected_point p;
  p.world_size = n;
  const double nn = double(n);
  if (n > 1)
    p.allreduce_s = double(s.buckets) * 2.0 * (nn - 1) * s.alpha_s +
                    2.0 * (nn - 1) / nn * s.gradient_bytes / (s.busbw_gb_s * 1e9);
  p.exposed_s = overlap ? std::max(p.allreduce_s / double(s.buckets), p.allreduce_s - s.backward_s)
                        : p.allreduce_s;
  p.step_s = s.compute_s + p.exposed_s;
  p.tokens_per_s = nn * rank_tokens / p.step_s;
  p.efficiency = s.compute_s / p.step_s;
  return p;
}

namespace {

// The projection's inputs, its points at the measured world sizes (its error there) and at
// powers of two up to 1024; projection_missing says which input is absent.
void project(const family& f, const std::vector<const run*>& coll, double one,
             dp_scaling_series& s) {
  gradient_facts(f, s);
  compute_facts(f, one, s);
  collective_facts(coll, f.system, s);
  if (s.compute_s <= 0)
    s.projection_missing = "no one-rank tokens/s (a world-size-1 run or --set baseline=1)";
  else if (s.gradient_bytes <= 0)
    s.projection_missing = "no gradient size recorded";
  else if (s.busbw_gb_s <= 0)
    s.projection_missing = "no all-reduce measurement on system " + f.system +
                           " (accelbench run collective --sweep bytes=... under mpirun)";
  if (!s.projection_missing.empty())
    return;
  s.buckets = std::max<int64_t>(1, int64_t(std::ceil(s.gradient_bytes / s.bucket_bytes)));
  s.overlap = false;
  for (const auto& m : s.measured)
    s.overlap |= m.overlap != "0";
  const double rank_tokens = tokens_per_rank_step(*f.at.begin()->second.front());
  for (auto& m : s.measured) {
    if (m.world_size < 2)
      continue;
    auto p = project_at(s, m.world_size, m.overlap != "0", rank_tokens);
    m.projected_tokens_per_s = p.tokens_per_s;
    m.projection_error_pct = 100.0 * (p.tokens_per_s - m.tokens_per_s) / m.tokens_per_s;
  }
  for (int64_t n = 1; n <= 1024; n *= 2)
    s.projection.push_back(project_at(s, n, s.overlap, rank_tokens));
}

std::vector<family> families(const std::vector<const run*>& runs) {
  std::map<std::pair<std::string, std::string>, family> by;
  for (const run* r : runs) {
    if (!is_dp_training(*r))
      continue;
    auto& f = by[{r->system, family_key(*r)}];
    f.system = r->system;
    f.key = family_key(*r);
    f.workload = r->cfg.workload;
    const int64_t n = world_size_of(*r);
    f.at[{n, n > 1 ? r->cfg.values.count("overlap") ? r->cfg.values.at("overlap") : "1" : ""}]
        .push_back(r);
  }
  std::vector<family> out;
  out.reserve(by.size());
  for (auto& [k, f] : by)
    out.push_back(std::move(f));
  return out;
}

} // namespace

std::vector<dp_scaling_series> build_dp_scaling(const std::vector<const run*>& runs) {
  std::vector<const run*> coll;
  for (const run* r : runs)
    if (is_allreduce(*r))
      coll.push_back(r);
  std::vector<dp_scaling_series> out;
  for (const auto& f : families(runs)) {
    dp_scaling_series s;
    s.workload = f.workload;
    s.system = f.system;
    s.key = f.key;
    s.label = f.key;
    std::string reference;
    const double one = one_rank_tps(f, reference);
    std::set<int64_t> sizes;
    bool in_job = false;
    for (const auto& [k, rs] : f.at) {
      s.measured.push_back(measured_point(k, rs, one, reference));
      sizes.insert(k.first);
      in_job |= s.measured.back().in_job_efficiency.has_value();
    }
    if (sizes.size() < 2 && !in_job)
      continue;
    project(f, coll, one, s);
    out.push_back(std::move(s));
  }
  return out;
}

json dp_scaling_json(const std::vector<dp_scaling_series>& all) {
  json out = json::array();
  for (const auto& s : all) {
    json measured = json::array(), projection = json::array();
    for (const auto& m : s.measured)
      measured.push_back(
          {{"world_size", m.world_size},
           {"overlap", m.overlap},
           {"runs", m.runs},
           {"tokens_per_s", m.tokens_per_s},
           {"efficiency", m.efficiency},
           {"reference", m.reference},
           {"in_job_efficiency", detail::optional_number(m.in_job_efficiency)},
           {"projected_tokens_per_s", detail::optional_number(m.projected_tokens_per_s)},
           {"projection_error_pct", detail::optional_number(m.projection_error_pct)}});
    for (const auto& p : s.projection)
      projection.push_back({{"world_size", p.world_size},
                            {"allreduce_s", p.allreduce_s},
                            {"exposed_s", p.exposed_s},
                            {"step_s", p.step_s},
                            {"tokens_per_s", p.tokens_per_s},
                            {"efficiency", p.efficiency}});
    out.push_back({{"workload", s.workload},
                   {"system", s.system},
                   {"key", s.key},
                   {"measured", measured},
                   {"projection",
                    {{"label", "projection"},
                     {"formula", k_dp_projection_formula},
                     {"missing", s.projection_missing},
                     {"compute_s", s.compute_s},
                     {"backward_s", s.backward_s},
                     {"gradient_bytes", s.gradient_bytes},
                     {"bucket_bytes", s.bucket_bytes},
                     {"buckets", s.buckets},
                     {"overlap", s.overlap},
                     {"alpha_s", s.alpha_s},
                     {"alpha_from_ranks", s.alpha_from_ranks},
                     {"busbw_gb_s", s.busbw_gb_s},
                     {"busbw_at_bytes", s.busbw_at_bytes},
                     {"points", projection}}}});
  }
  return out;
}

namespace {

std::string pct(double v) { return fmt::format("{:.1f}%", 100.0 * v); }
std::string pct_opt(const std::optional<double>& v, double scale = 100.0) {
  return v ? fmt::format("{:.1f}%", scale * *v) : "&ndash;";
}

std::string measured_table(const dp_scaling_series& s) {
  std::ostringstream o;
  o << "<table class=\"sortable\"><thead><tr><th>world size</th><th>overlap</th><th>runs</th>"
       "<th>tokens/s (global)</th><th>scaling efficiency</th><th>in-job efficiency "
       "(baseline=1)</th><th>projection tokens/s</th><th>projection error</th></tr></thead>"
       "<tbody>\n";
  for (const auto& m : s.measured)
    o << "<tr><td>" << m.world_size << "</td><td>" << html_escape(m.overlap) << "</td><td>"
      << m.runs << "</td><td>" << fmt::format("{:.6g}", m.tokens_per_s) << "</td><td title=\""
      << html_escape(m.reference) << "\">" << (m.efficiency > 0 ? pct(m.efficiency) : "&ndash;")
      << "</td><td>" << pct_opt(m.in_job_efficiency) << "</td><td>"
      << (m.projected_tokens_per_s ? fmt::format("{:.6g} (projection)", *m.projected_tokens_per_s)
                                   : "&ndash;")
      << "</td><td>" << pct_opt(m.projection_error_pct, 1.0) << "</td></tr>\n";
  o << "</tbody></table>\n";
  return o.str();
}

std::string projection_table(const dp_scaling_series& s) {
  std::ostringstream o;
  if (!s.projection_missing.empty())
    return "<p>No projection: " + html_escape(s.projection_missing) + ".</p>\n";
  o << fmt::format(
      "<p class=\"projection\">Projection inputs: t_c {:.4g} s, t_b {:.4g} s, G {:.4g} "
      "bytes in {} bucket(s), alpha {:.3g} s (from {} ranks), busbw {:.4g} GB/s at "
      "{} bytes, overlap {}.</p>\n",
      s.compute_s, s.backward_s, s.gradient_bytes, s.buckets, s.alpha_s, s.alpha_from_ranks,
      s.busbw_gb_s, s.busbw_at_bytes, s.overlap ? "on" : "off");
  o << "<table class=\"sortable projection\"><thead><tr><th>world size</th><th>all-reduce s "
       "(projection)</th><th>exposed s (projection)</th><th>step s (projection)</th><th>tokens/s "
       "(projection)</th><th>efficiency (projection)</th></tr></thead><tbody>\n";
  for (const auto& p : s.projection)
    o << fmt::format("<tr><td>{}</td><td>{:.4g}</td><td>{:.4g}</td><td>{:.4g}</td><td>{:.6g}"
                     "</td><td>{}</td></tr>\n",
                     p.world_size, p.allreduce_s, p.exposed_s, p.step_s, p.tokens_per_s,
                     pct(p.efficiency));
  o << "</tbody></table>\n";
  return o.str();
}

} // namespace

std::string dp_scaling_html(const std::vector<dp_scaling_series>& all) {
  if (all.empty())
    return {};
  std::ostringstream o;
  o << "<h2 id=\"dp-scaling\">Data-parallel scaling (measured) and projection</h2>\n"
       "<p>Scaling efficiency = global tokens/s / (N x one-rank tokens/s), measured. The "
       "projection columns are a model, not measurements.</p>\n<p class=\"projection\">"
    << html_escape(k_dp_projection_formula) << "</p>\n";
  for (const auto& s : all) {
    o << "<h3>" << html_escape(s.workload) << " on " << html_escape(s.system) << ": <code>"
      << html_escape(s.key) << "</code></h3>\n";
    o << measured_table(s) << projection_table(s);
  }
  return o.str();
}

} // namespace accelbench::report
