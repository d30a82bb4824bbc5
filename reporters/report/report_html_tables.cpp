// The report page's tables: the summary and the families, the pairs in detail and their notes,
// the unpaired runs, provenance, the device catalogue entries and prices used.
#include <fmt/format.h>

#include "reporters/report/report_html_parts.hpp"

namespace accelbench::report::html_page {

void write_summary(std::ostringstream& o, const report_model& r) {
  // ---- summary table
  o << "<h2>Summary</h2>\n";
  write_common_config(o, r);
  o << "<table class=\"sortable\" "
       "id=\"summary\"><thead><tr><th>pair</th><th>family</th><th>workload / "
       "config</th><th>baseline</th><th>candidate</th>"
       "<th>speed-up</th><th>"
    << esc(ci_label(r))
    << "</th><th>verdict</th><th>per accelerator</th><th>in "
       "summary</th><th>flags</th></tr></thead><tbody>\n";
  for (const auto& p : r.pairs) {
    o << "<tr><td data-v=\"" << esc(p.id.substr(1)) << "\"><a href=\"#" << esc(p.id) << "\">"
      << esc(p.id) << "</a></td><td>" << esc(p.family) << "</td><td title=\"" << esc(p.label)
      << "\">" << esc(brief_label(r, p)) << "</td>";
    o << fmt::format("<td>{} {}</td>", esc(p.baseline.display), badge(p.baseline.source));
    o << fmt::format("<td>{} {}</td>", esc(p.candidate.display), badge(p.candidate.source));
    // Green or red only where compare's rule calls the pair improved or regressed.
    const string cls = verdict_class(p);
    if (p.speedup > 0)
      o << fmt::format("<td data-v=\"{}\"{} title=\"{}\">{:.2f}x</td>", exact(p.speedup),
                       cls.empty() ? "" : " class=\"" + cls + "\"", esc(exact(p.speedup)),
                       p.speedup);
    else
      o << "<td data-v=\"\">–</td>";
    if (!(p.speedup > 0) || p.verdict == "not tested") // one figure per side: no CI
      o << "<td data-v=\"\">–</td>";
    else
      o << fmt::format("<td data-v=\"{}\">[{:.2f}, {:.2f}]{}</td>", exact(p.speedup_ci_low),
                       p.speedup_ci_low, p.speedup_ci_high,
                       p.ci_degenerate
                           ? " <span class=\"deg\" title=\"one sample per side\">degenerate</span>"
                           : "");
    o << fmt::format("<td class=\"verdict{}\" title=\"{}\">{}<div class=\"note\">{}</div></td>",
                     cls.empty() ? "" : " " + cls, esc(p.verdict + ": " + p.verdict_reason),
                     esc(p.statement), esc(p.qualifier));
    o << opt_cell(p.per_accelerator_speedup, "x");
    if (p.in_summary)
      o << "<td>yes</td>";
    else {
      o << "<td><span class=\"" << (p.like_for_like ? "warn" : "warn nl4l") << "\">"
        << (p.like_for_like ? "left out" : "not like-for-like") << "</span>";
      for (const auto& why : p.excluded_because)
        o << "<div class=\"note\">" << esc(why) << "</div>";
      o << "</td>";
    }
    o << "<td>";
    write_flags(o, p.flags);
    o << "</td></tr>\n";
  }
  o << "</tbody></table>\n";
}

void write_families(std::ostringstream& o, const report_model& r) {
  if (!r.summaries.empty()) {
    o << "<table class=\"sortable\" id=\"families\"><thead><tr><th>family</th><th>like-for-like "
         "pairs</th><th>baselines (each counted once)</th><th>left out</th>"
         "<th>faster / slower / no difference / inconclusive / not tested</th><th>geomean "
         "speed-up</th><th>geomean per accelerator</th><th>workloads</th></tr></thead><tbody>\n";
    for (const auto& f : r.summaries) {
      string wl;
      for (const auto& w : f.workloads)
        wl += (wl.empty() ? "" : ", ") + w;
      o << "<tr><td>" << esc(f.family) << "</td>" << int_cell(f.pairs) << int_cell(f.baselines)
        << int_cell(f.excluded)
        << fmt::format("<td>{} / {} / {} / {} / {}</td>", f.faster, f.slower, f.no_difference,
                       f.inconclusive, f.not_tested)
        << (f.pairs ? num_cell(f.geomean_speedup) : string("<td data-v=\"\">–</td>"))
        << opt_cell(f.geomean_per_accelerator_speedup) << "<td>" << esc(wl) << "</td></tr>\n";
    }
    o << "</tbody></table>\n";
  }
}

void write_details(std::ostringstream& o, const report_model& r) {
  // ---- details per pair
  o << "<h2>Pairs in detail</h2>\n<table class=\"sortable\" "
       "id=\"details\"><thead><tr><th>pair</th><th>side</th><th>system</th><th>accelerators</"
       "th><th>score ["
    << esc(ci_label(r))
    << "]</th>"
       "<th>per accelerator</th><th>% of peak</th><th>cost / result</th><th>energy / result "
       "(kWh)</th><th>runs</th><th>source</th></tr></thead><tbody>\n";
  for (const auto& p : r.pairs)
    for (const auto* s : {&p.baseline, &p.candidate}) {
      o << "<tr id=\"" << (s == &p.baseline ? esc(p.id) : esc(p.id) + "c") << "\"><td data-v=\""
        << esc(p.id.substr(1)) << "\">" << esc(p.id) << "</td><td>"
        << (s == &p.baseline ? "baseline" : "candidate") << "</td><td>" << esc(s->system)
        << "<div class=\"note\">" << esc(s->accelerator_model) << "</div></td>"
        << int_cell(s->accelerators) << side_cell(*s, ci_label(r)) << per_accelerator_cell(*s);
      if (s->pct_of_peak)
        o << fmt::format(
            "<td data-v=\"{}\" title=\"{}\">{:.1f}%{}</td>", exact(*s->pct_of_peak),
            esc(fmt::format("peak {} TFLOP/s: {}", exact(s->peak_tflops), s->peak_source)),
            *s->pct_of_peak, s->pct_of_peak_kind == "mfu" ? " MFU" : "");
      else
        o << "<td data-v=\"\">–</td>";
      if (s->cost_usd)
        o << fmt::format("<td data-v=\"{}\" title=\"{}\">${} <span class=\"u\">per {}</span></td>",
                         exact(*s->cost_usd), esc(s->cost_source), num(*s->cost_usd),
                         esc(p.result_unit));
      else
        o << "<td data-v=\"\">–</td>";
      if (s->energy_kwh)
        o << fmt::format("<td data-v=\"{}\">{} <span class=\"u\">per {}</span><div "
                         "class=\"note\">method: {}</div></td>",
                         exact(*s->energy_kwh), num(*s->energy_kwh), esc(p.result_unit),
                         esc(s->energy_source.empty() ? "not stated" : s->energy_source));
      else
        o << "<td data-v=\"\">–</td>";
      string rv;
      for (const auto& v : s->run_values)
        rv += (rv.empty() ? "" : ", ") + num(v.value) + (v.used ? "" : "*");
      o << "<td class=\"n\" title=\"" << esc(rv) << "\" data-v=\"" << s->runs << "\">" << s->runs
        << (s->mlperf ? "<div class=\"note\">" + esc(rv) + "</div>" : "") << "</td>";
      o << "<td>" << badge(s->source) << "</td></tr>\n";
    }
  o << "</tbody></table>\n";
}

void write_pair_notes(std::ostringstream& o, const report_model& r) {
  for (const auto& p : r.pairs) {
    if (p.notes.empty() && p.environment_differences.empty())
      continue;
    o << "<h3>" << esc(p.id) << " " << esc(brief_label(r, p)) << "</h3><ul>";
    for (const auto& n : p.notes)
      o << "<li class=\"note\">" << esc(n) << "</li>";
    if (!p.environment_differences.empty()) {
      string d;
      for (const auto& x : p.environment_differences)
        d += (d.empty() ? "" : ", ") + x;
      o << "<li class=\"note\">environment fields that differ: " << esc(d) << "</li>";
    }
    o << "</ul>\n";
  }
}

void write_unpaired(std::ostringstream& o, const report_model& r) {
  // ---- unpaired
  o << "<h2>Unpaired runs</h2>\n";
  if (r.unpaired.empty())
    o << "<p class=\"note\">Every group of runs found a partner.</p>\n";
  else {
    o << "<table class=\"sortable\" "
         "id=\"unpaired\"><thead><tr><th>side</th><th>system</th><th>workload / "
         "config</th><th>runs</th><th>why</th></tr></thead><tbody>\n";
    for (const auto& u : r.unpaired)
      o << "<tr><td>" << esc(u.side) << "</td><td>" << esc(u.system) << "</td><td>" << esc(u.label)
        << "</td>" << int_cell(u.runs) << "<td>" << esc(u.reason) << "</td></tr>\n";
    o << "</tbody></table>\n";
  }
}

void write_provenance(std::ostringstream& o, const report_model& r) {
  // ---- provenance
  o << "<h2>Provenance</h2>\n<table class=\"sortable\" "
       "id=\"provenance\"><thead><tr><th>pair</th><th>side</th><th>source</th><th>where "
       "from</th><th>runs</th></tr></thead><tbody>\n";
  for (const auto& p : r.pairs)
    for (const auto* s : {&p.baseline, &p.candidate}) {
      string where;
      for (const auto& pv : s->provenance) {
        const string line = provenance_line(
            pv, {"source", "url", "code_url", "date", "conditions", "org", "round", "result_file"});
        if (!line.empty() && where.find(line) == string::npos)
          where += "<div>" + line + "</div>";
      }
      if (!s->revisions.empty()) {
        string revs;
        for (const auto& v : s->revisions)
          revs += (revs.empty() ? "" : ", ") + v;
        where += "<div>measured by accelbench, revision <code>" + esc(revs) + "</code></div>";
      }
      string ids;
      for (const auto& u : s->uuids)
        ids += (ids.empty() ? "" : " ") + u;
      o << "<tr><td>" << esc(p.id) << "</td><td>" << (s == &p.baseline ? "baseline" : "candidate")
        << "</td><td>" << badge(s->source) << "</td><td>" << where
        << "</td><td class=\"n\"><span title=\"" << esc(ids) << "\">"
        << count_of(s->uuids.size(), "run", "runs") << "</span></td></tr>\n";
    }
  o << "</tbody></table>\n";
}

void write_devices(std::ostringstream& o, const report_model& r) {
  if (!r.devices.empty()) {
    o << "<h3>Device catalogue entries used</h3><table class=\"sortable\" "
         "id=\"devices\"><thead><tr><th>device</th><th>dense peak TFLOP/s</th><th>HBM "
         "TB/s</th><th>TDP W</th><th>source</th></tr></thead><tbody>\n";
    for (const auto& d : r.devices) {
      string pk;
      for (const auto& [k, v] : d["peak_tflops"].items())
        pk += (pk.empty() ? "" : ", ") + k + " " + num(v.get<double>());
      if (d.value("measured_peak", false))
        pk = "measured per run";
      const json& src = d["source"];
      o << "<tr><td>" << esc(d.value("name", string())) << "</td><td>" << esc(pk) << "</td>"
        << num_cell(d.value("hbm_tb_s", 0.0)) << num_cell(d.value("tdp_w", 0.0)) << "<td>"
        << (src.is_object()
                ? esc(src.value("doc", string())) + " " + link_or_text(src.value("url", string()))
                : string())
        << "</td></tr>\n";
    }
    o << "</tbody></table>\n";
  }
}

void write_prices(std::ostringstream& o, const report_model& r) {
  if (!r.prices.empty()) {
    o << "<h3>Prices used</h3><table id=\"prices\"><thead><tr><th>device</th><th>USD per "
         "accelerator-hour</th><th>source</th></tr></thead><tbody>\n";
    for (const auto& p : r.prices)
      o << "<tr><td>" << esc(p.value("device", string())) << "</td>"
        << num_cell(p.value("usd_per_accelerator_hour", 0.0)) << "<td>"
        << esc(p.value("source", string())) << "</td></tr>\n";
    o << "</tbody></table>\n";
  }
}

} // namespace accelbench::report::html_page
