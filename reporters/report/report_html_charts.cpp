// The report page's charts: speed-up per pair, throughput vs problem size, the roofline, the eval
// curves and the samples of each pair (drawn by the HTML kit, reporters/html/chart.hpp).
#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "reporters/report/report_html_parts.hpp"

namespace accelbench::report::html_page {

namespace {

// One device's roofs over [x0, x1]: attainable TFLOP/s = min(peak, bandwidth x intensity), the
// bandwidth in TB/s times FLOP per byte giving TFLOP/s. Without a bandwidth only the flat roof.
series roof_of(const string& name, double peak, double bw, double x0, double x1) {
  series roof{name, "#7f7f7f", {}, true, {}, true};
  if (bw <= 0 || peak / bw <= x0)
    roof.pts = {{x0, peak}, {x1, peak}};
  else if (peak / bw >= x1)
    roof.pts = {{x0, bw * x0}, {x1, bw * x1}};
  else
    roof.pts = {{x0, bw * x0}, {peak / bw, peak}, {x1, peak}};
  return roof;
}

// Roofline proper: each kernel side whose runs record their bytes, at its arithmetic intensity,
// under the compute and memory roofs of its device.
void write_intensity_roofline(std::ostringstream& o, const report_model& r) {
  series base{"baseline", k_base_color, {}, false, {}, true};
  series cand{"candidate", k_cand_color, {}, false, {}, true};
  std::map<std::pair<double, double>, string> roofs; // (peak, bandwidth) -> device
  double x0 = 1e300, x1 = 0;
  for (const auto& p : r.pairs)
    for (const auto* s : {&p.baseline, &p.candidate}) {
      if (!s->intensity || s->peak_tflops <= 0 || s->value <= 0 || s->quantity != "tflops")
        continue;
      series& into = s == &p.candidate ? cand : base;
      into.pts.emplace_back(*s->intensity, s->value);
      into.titles.push_back(fmt::format(
          "{} {}: {} FLOP/byte, {} TFLOP/s (roof {} TFLOP/s)", p.id, s->display,
          exact(*s->intensity), exact(s->value),
          exact(std::min(s->peak_tflops, s->bandwidth_tb_s > 0 ? s->bandwidth_tb_s * *s->intensity
                                                               : s->peak_tflops))));
      roofs.emplace(std::make_pair(s->peak_tflops, s->bandwidth_tb_s),
                    s->device_name.empty() ? s->display : s->device_name);
      x0 = std::min(x0, *s->intensity), x1 = std::max(x1, *s->intensity);
    }
  if (roofs.empty())
    return;
  x0 /= 8, x1 *= 8;
  std::vector<series> ss;
  ss.reserve(roofs.size() + 2);
  for (const auto& [pb, device] : roofs)
    ss.push_back(roof_of(
        fmt::format("roof: {} ({} TFLOP/s, {})", device, exact(pb.first),
                    pb.second > 0 ? exact(pb.second) + " TB/s" : string("memory roof unknown")),
        pb.first, pb.second, x0, x1));
  ss.push_back(base);
  ss.push_back(cand);
  o << xy_chart(
      "Roofline: attainable TFLOP/s vs arithmetic intensity",
      "arithmetic intensity (FLOP per byte, log)", "TFLOP/s (log)", ss, true, true,
      "Roofs (grey): min(peak compute, memory bandwidth x intensity) of each device from "
      "the device catalogue. Bytes are the least traffic of the kernel (each operand read "
      "once, the output written once), so a point's intensity is an upper bound and its "
      "distance to the roof a lower bound of what is left.");
}

} // namespace

void write_speedup_chart(std::ostringstream& o, const report_model& r) {
  // ---- charts
  o << "<h2>Charts</h2>\n";
  {
    std::vector<bar> bars;
    for (const auto& p : r.pairs)
      if (p.speedup > 0)
        bars.push_back(
            {p.id + " " + brief_label(r, p) + " (" + p.candidate.display + " vs " +
                 p.baseline.display + ")",
             fmt::format("{}: speed-up {} ({} [{}, {}]): {}", p.id, exact(p.speedup), ci_label(r),
                         exact(p.speedup_ci_low), exact(p.speedup_ci_high), p.statement),
             p.verdict == "improved"    ? k_cand_color
             : p.verdict == "regressed" ? k_base_color
                                        : k_neutral_color,
             p.speedup, p.speedup_ci_low, p.speedup_ci_high});
    o << bar_chart("Speed-up per pair (candidate vs baseline), " + ci_label(r) + " whiskers",
                   "speed-up (log scale): bars start at 1\u00d7 (no change) and run right when the "
                   "candidate is better, left when worse",
                   bars, 1.0, true, ci_label(r));
  }
}

void write_throughput_charts(std::ostringstream& o, const report_model& r) {
  // Throughput vs problem size (kernel pairs), per side.
  {
    std::map<string, std::pair<series, series>> by_workload;
    for (const auto& p : r.pairs) {
      if (p.family != "kernel")
        continue;
      auto& [b, c] = by_workload[p.workload];
      b.name = "baseline: " + p.baseline.display;
      b.color = k_base_color;
      c.name = "candidate: " + p.candidate.display;
      c.color = k_cand_color;
      for (const auto& pt : p.baseline.size_points) {
        b.pts.push_back(pt);
        b.titles.push_back(fmt::format("{} {}: {} FLOP per iteration, {} TFLOP/s", p.id,
                                       p.baseline.display, exact(pt.first), exact(pt.second)));
      }
      for (const auto& pt : p.candidate.size_points) {
        c.pts.push_back(pt);
        c.titles.push_back(fmt::format("{} {}: {} FLOP per iteration, {} TFLOP/s", p.id,
                                       p.candidate.display, exact(pt.first), exact(pt.second)));
      }
    }
    for (auto& [w, bc] : by_workload)
      o << xy_chart("Throughput vs problem size: " + w, "FLOP per iteration (log)", "TFLOP/s",
                    {bc.first, bc.second}, true, false);
  }
}

void write_roofline(std::ostringstream& o, const report_model& r) {
  write_intensity_roofline(o, r);
  // Achieved vs the compute roof of each side's device (kernels) or MFU (training).
  {
    std::vector<bar> bars;
    for (const auto& p : r.pairs)
      for (const auto* s : {&p.baseline, &p.candidate})
        if (s->pct_of_peak) {
          const bool cand = s == &p.candidate;
          bars.push_back(
              {fmt::format("{} {} {}", p.id, cand ? "cand" : "base", s->display),
               fmt::format("{}: {} = {}% of peak {} TFLOP/s ({})", s->display,
                           s->pct_of_peak_kind == "mfu" ? "MFU" : "achieved",
                           exact(*s->pct_of_peak), exact(s->peak_tflops), s->peak_source),
               cand ? k_cand_color : k_base_color, *s->pct_of_peak, 0, 0});
        }
    o << bar_chart("Achieved TFLOP/s or MFU as % of the device peak",
                   "% of peak (dashed line = 100%)", bars, 100.0, false);
  }
}

void write_eval_curves(std::ostringstream& o, const report_model& r) {
  // Training loss / eval metric vs time (eval curves of the runs).
  {
    for (const auto& p : r.pairs) {
      std::vector<series> ss;
      string xl, yl;
      for (const auto* s : {&p.baseline, &p.candidate})
        for (const auto& c : s->eval_curves) {
          series se;
          se.legend = &c == &s->eval_curves.front();
          se.name = (s == &p.baseline ? "baseline " : "candidate ") + s->display;
          se.color = s == &p.baseline ? k_base_color : k_cand_color;
          se.line = true;
          for (const auto& pt : c["points"]) {
            se.pts.emplace_back(pt[0].get<double>(), pt[1].get<double>());
            se.titles.push_back(fmt::format("{} run {}: {} = {}, {} = {}", s->display,
                                            c.value("run", string()), c.value("x", string()),
                                            exact(pt[0].get<double>()), c.value("y", string()),
                                            exact(pt[1].get<double>())));
          }
          xl = c.value("x", string());
          yl = c.value("y", string());
          ss.push_back(std::move(se));
        }
      if (!ss.empty())
        o << xy_chart(p.id + " " + p.label + ": eval curve per run", xl, yl, ss, false, false,
                      "Each line is one run's evaluations (from run.extra.eval_curve).");
    }
  }
}

// Sample distributions (strip plots), first 12 pairs.
void write_strip_plots(std::ostringstream& o, const report_model& r) {
  size_t shown = 0;
  for (const auto& p : r.pairs) {
    if (shown >= 12)
      break;
    if (p.baseline.sample_values.size() + p.candidate.sample_values.size() < 3 ||
        p.baseline.unit != p.candidate.unit)
      continue;
    const strip a{"baseline", p.baseline.display, k_base_color, p.baseline.unit,
                  &p.baseline.sample_values};
    const strip b{"candidate", p.candidate.display, k_cand_color, p.candidate.unit,
                  &p.candidate.sample_values};
    o << strip_chart(p.id + " samples: " + brief_label(r, p), a, b);
    ++shown;
  }
}

} // namespace accelbench::report::html_page
