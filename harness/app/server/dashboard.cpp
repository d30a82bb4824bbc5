#include "harness/app/server/dashboard.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "harness/app/query/comparison.hpp"
#include "harness/app/query/database.hpp"
#include "harness/compare/format.hpp"
#include "harness/core/headline_metric.hpp"
#include "harness/core/text_input.hpp"
#include "harness/core/units.hpp"
#include "reporters/html/html.hpp"
#include "reporters/html/nightly_chart.hpp"
#include "reporters/html/style.hpp"

namespace accelbench::server {

namespace {
// A system the store has no record of: its name only.
store::system_record named_system(const std::string& name) {
  store::system_record rec;
  rec.name = name;
  return rec;
}
} // namespace

namespace {

const std::vector<std::string> k_filters = {"system", "accelerator", "workload", "tag", "since"};

std::string esc(const std::string& s) { return html::escape(repair_utf8(s)); }

// The filters of this request as a query string ("a=1&b=2"), for links between pages.
std::string filter_query(const params& p, const std::vector<std::string>& keys = k_filters) {
  std::string q;
  for (const auto& [k, v] : p)
    if (std::find(keys.begin(), keys.end(), k) != keys.end() && !v.empty())
      q += fmt::format("{}{}={}", q.empty() ? "" : "&", url_encode(k), url_encode(v));
  return q;
}

// Empty filter values (a submitted form with blank fields) are no filter at all.
params without_blanks(const params& p) {
  params out;
  for (const auto& [k, v] : p)
    if (!v.empty())
      out.emplace(k, v);
  return out;
}

std::string value_of(const params& p, const std::string& key) {
  auto it = p.find(key);
  return it == p.end() ? "" : it->second;
}

// The dashboard's own rules, after the kit's stylesheet: the navigation, the filter form, the
// verdict colours.
const char* k_dashboard_css =
    "nav{padding:.6em 0;border-bottom:1px solid var(--bd);margin-bottom:1em}nav "
    "a{margin-right:1.2em}nav a[aria-current]{font-weight:bold}"
    "form{margin:.5em 0 1em}label{margin-right:.8em}input{width:10em}"
    ".regressed{color:#b00;font-weight:bold}.improved{color:#070;font-weight:bold}"
    ".inconclusive{color:#a60}.muted{color:var(--mut)}figure{margin:0 0 1.2em}"
    "figure>figcaption{font-weight:bold;color:var(--fg);max-width:none}";

std::string page_head(const std::string& title, const std::string& path, const params& p) {
  std::ostringstream o;
  const std::string q = filter_query(p);
  auto link = [&](const std::string& to, const std::string& text) {
    return fmt::format("<a href=\"{}{}{}\"{}>{}</a>", to, q.empty() ? "" : "?", esc(q),
                       to == path ? " aria-current=\"page\"" : "", text);
  };
  o << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
    << "<meta http-equiv=\"Content-Security-Policy\" content=\"" << k_dashboard_csp << "\">"
    << "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
    << "<title>accelbench — " << esc(title) << "</title><style>" << html::stylesheet()
    << k_dashboard_css << "</style></head><body data-page=\"" << esc(path) << "\"><main><nav>"
    << link("/", "Fleet") << link("/history", "History") << link("/compare", "Nightly comparisons")
    << "<a href=\"/report\">H100 vs Blackwell report</a></nav><h1>" << esc(title) << "</h1>";
  o << "<form method=\"get\" action=\"" << esc(path) << "\">";
  for (const auto& k : k_filters)
    o << fmt::format("<label>{} <input name=\"{}\" value=\"{}\"{}></label>", k, k,
                     esc(value_of(p, k)), k == "since" ? " type=\"date\"" : "");
  o << "<button type=\"submit\">Filter</button></form>";
  return o.str();
}

const char* k_page_end = "</main></body></html>\n";

// The result cell of a run: its headline figure (harness/core/headline_metric.hpp; the server has
// no registry, so no workload's primary metric) with its unit ("66.5 GFLOP/s"; a figure without a
// unit is named: "0.0249 cv"), every metric in the tooltip.
std::string result_cell(const run& r) {
  const metric* m = headline_metric(r);
  if (m == nullptr)
    return "<td class=\"n\">–</td>";
  std::string all;
  for (const auto& x : r.metrics)
    all += (all.empty() ? "" : "; ") + x.name + " " + format_quantity(x.value, x.unit);
  const std::string shown =
      format_quantity(m->value, m->unit) + (m->unit.empty() ? " " + m->name : "");
  return fmt::format("<td class=\"n result\" title=\"{}\">{}</td>", esc(all), esc(shown));
}

std::string validity(const run& r) {
  if (r.status != run_status::ok)
    return to_string(r.status);
  return r.valid ? "VALID" : "INVALID";
}

// One series as the kit's nightly chart: a point per night with its runs' spread, round ticks
// with units, the change points as dashed red lines with their run in a tooltip.
std::string chart(const json& s) {
  html::nightly_chart c;
  c.title = s.value("config_key", "");
  c.unit = s.value("unit", "");
  c.y_title = "median per night (" + c.unit + ")";
  for (const auto& p : s["points"]) {
    html::night nt;
    nt.date = p["started_at"].get<std::string>().substr(0, 10);
    nt.value = p["value"].get<double>();
    if (p.contains("run_medians"))
      nt.runs = p["run_medians"].get<std::vector<double>>();
    nt.tip = fmt::format("run {} {}: {}", p["run_id"].get<int64_t>(),
                         p["started_at"].get<std::string>(), format_quantity(nt.value, c.unit));
    c.nights.push_back(std::move(nt));
  }
  for (const auto& cp : s["change_points"]) {
    const bool reg = cp["regression"].get<bool>();
    c.marks.push_back(
        {cp["index"].get<size_t>(),
         fmt::format("{} x{:.3f}", reg ? "regression" : "change", cp["magnitude"].get<double>()),
         reg ? "#b00" : "#070",
         fmt::format("{} at run {} ({}): x{:.3f}, p={:.1e}", reg ? "regression" : "change",
                     cp["run_id"].get<int64_t>(), cp["started_at"].get<std::string>(),
                     cp["magnitude"].get<double>(), cp["p_value"].get<double>())});
  }
  return html::nightly_svg(c);
}

// The two most recent tags of a system's runs (by their latest start), newest last.
std::vector<std::string> latest_two_tags(const std::vector<const run*>& runs) {
  std::map<std::string, std::string> latest; // tag -> latest started_at
  for (const run* r : runs)
    for (const auto& t : r->tags)
      latest[t] = std::max(latest[t], r->started_at);
  // Nightly tags when there are any: other tags (a one-off "try1") are not a nightly series.
  std::vector<std::pair<std::string, std::string>> order;
  for (const auto& [t, at] : latest)
    if (t.rfind("nightly", 0) == 0)
      order.emplace_back(at, t);
  if (order.size() < 2) {
    order.clear();
    for (const auto& [t, at] : latest)
      order.emplace_back(at, t);
  }
  std::sort(order.begin(), order.end());
  std::vector<std::string> out;
  for (size_t i = order.size() >= 2 ? order.size() - 2 : 0; i < order.size(); ++i)
    out.push_back(order[i].second);
  return out;
}

} // namespace

std::string url_encode(const std::string& s) {
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~')
      out += (char)c;
    else
      out += fmt::format("%{:02X}", c);
  }
  return out;
}

std::string page_fleet(store::store& db, const params& raw) {
  allow_only(raw, {"system", "accelerator", "workload", "tag", "since"});
  const params p = without_blanks(raw);
  auto sel = select_from(db, p, false);
  std::ostringstream o;
  o << page_head("Fleet", "/", p);
  struct per_system {
    size_t runs = 0, invalid = 0;
    std::string latest, latest_tag;
    std::set<std::string> workloads;
  };
  std::map<std::string, per_system> by_system;
  for (const auto& r : sel.runs) {
    auto& s = by_system[r.system];
    ++s.runs;
    s.invalid += r.status == run_status::ok && !r.valid;
    s.workloads.insert(r.cfg.workload);
    if (r.started_at >= s.latest) {
      s.latest = r.started_at;
      s.latest_tag = r.tags.empty() ? "" : r.tags.back();
    }
  }
  o << fmt::format("<p data-runs=\"{}\" data-systems=\"{}\">{} run(s) on {} system(s).</p>",
                   sel.runs.size(), by_system.size(), sel.runs.size(), by_system.size());
  o << "<h2>Systems</h2><table><tr><th>system</th><th>accelerator</th><th>source</th><th>runs</"
       "th><th>INVALID</th>"
       "<th>workloads</th><th>latest run</th><th>latest tag</th><th></th></tr>";
  for (const auto& [name, s] : by_system) {
    const auto it = sel.systems.find(name);
    const store::system_record rec = it != sel.systems.end() ? it->second : named_system(name);
    std::string wl;
    for (const auto& w : s.workloads)
      wl += (wl.empty() ? "" : ", ") + w;
    params hp = p;
    hp.erase("system");
    hp.emplace("system", name);
    o << fmt::format("<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</"
                     "td><td>{}</td><td>{}</td>"
                     "<td><a href=\"/history?{}\">history</a> · <a href=\"/compare?{}\">latest "
                     "comparison</a></td></tr>",
                     esc(name), esc(rec.accelerator_model), esc(rec.source), s.runs, s.invalid,
                     esc(wl), esc(s.latest.substr(0, 19)), esc(s.latest_tag), esc(filter_query(hp)),
                     esc(filter_query(hp)));
  }
  o << "</table><h2>Latest "
       "runs</h2><table><tr><th>id</th><th>started</th><th>system</th><th>workload</th>"
       "<th>config</th><th>tags</th><th>status</th><th>result</th></tr>";
  std::vector<const run*> latest;
  for (const auto& r : sel.runs)
    latest.push_back(&r);
  std::sort(latest.begin(), latest.end(), [](const run* a, const run* b) {
    return a->started_at != b->started_at ? a->started_at > b->started_at : a->id > b->id;
  });
  if (latest.size() > 50)
    latest.resize(50);
  for (const run* r : latest) {
    std::string tags;
    for (const auto& t : r->tags)
      tags += (tags.empty() ? "" : ", ") + t;
    o << fmt::format(
        "<tr><td><a "
        "href=\"/api/v1/runs/{}\">{}</a></td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>"
        "<td>{}</td><td>{}</td>{}</tr>",
        r->id, r->id, esc(r->started_at.substr(0, 19)), esc(r->system), esc(r->cfg.workload),
        esc(query::short_config(r->cfg)), esc(tags), esc(validity(*r)), result_cell(*r));
  }
  o << "</table>" << k_page_end;
  return o.str();
}

std::string page_history(store::store& db, const params& raw) {
  allow_only(raw, {"system", "accelerator", "workload", "tag", "since", "set"});
  const params p = without_blanks(raw);
  json h = history_for(db, p, false);
  std::ostringstream o;
  o << page_head("History", "/history", p);
  const auto& series = h["series"];
  size_t cps = 0;
  for (const auto& s : series)
    cps += s["change_points"].size();
  constexpr size_t k_max_charts = 200;
  o << fmt::format(
      "<p data-series=\"{}\" data-change-points=\"{}\">{} series from {} run(s), {} change "
      "point(s){}."
      " Each point is the median of a night's runs, its vertical line their spread; dashed red "
      "lines mark change points (E-divisive means + Welch t-test, at least 5 nights a side). "
      "The value axis spans at least \u00b1{:.0f}% around the median, so that night-to-night "
      "noise is not magnified.</p>",
      series.size(), cps, series.size(), h["runs"].get<size_t>(), cps,
      series.size() > k_max_charts ? fmt::format("; the first {} are drawn", k_max_charts) : "",
      100 * html::k_min_half_span);
  size_t shown = 0;
  for (const auto& s : series) {
    if (shown++ == k_max_charts)
      break;
    o << "<figure><figcaption>" << esc(s["system"].get<std::string>()) << " — "
      << esc(s["config_key"].get<std::string>()) << " <span class=\"muted\">["
      << esc(s["ruleset"].get<std::string>()) << ", " << s["points"].size() << " nights, "
      << esc(s["direction"].get<std::string>()) << " is better]</span></figcaption>" << chart(s);
    if (!s["change_points"].empty()) {
      o << "<ul>";
      for (const auto& cp : s["change_points"])
        o << fmt::format(
            "<li class=\"{}\">{} beginning at run <a href=\"/api/v1/runs/{}\">{}</a> ({}): {} → {} "
            "(x{:.3f}, p={:.1e})</li>",
            cp["regression"].get<bool>() ? "regressed" : "improved",
            cp["regression"].get<bool>() ? "Regression" : "Change", cp["run_id"].get<int64_t>(),
            cp["run_id"].get<int64_t>(), esc(cp["started_at"].get<std::string>().substr(0, 10)),
            esc(format_quantity(cp["mean_before"].get<double>(), s["unit"].get<std::string>())),
            esc(format_quantity(cp["mean_after"].get<double>(), s["unit"].get<std::string>())),
            cp["magnitude"].get<double>(), cp["p_value"].get<double>());
      o << "</ul>";
    }
    o << "</figure>";
  }
  o << k_page_end;
  return o.str();
}

namespace {

// The comparison's pairs, regressions first, at most 100 rows (the rest are in /api/v1/compare).
void write_compare_table(std::ostringstream& o, const compare::set_comparison& c) {
  std::vector<const compare::pair_result*> pairs;
  for (const auto& pr : c.pairs)
    pairs.push_back(&pr);
  auto rank = [](compare::verdict v) {
    return v == compare::verdict::regressed      ? 0
           : v == compare::verdict::improved     ? 1
           : v == compare::verdict::inconclusive ? 2
                                                 : 3;
  };
  std::stable_sort(pairs.begin(), pairs.end(), [&](const auto* a, const auto* b) {
    return rank(a->cmp.result) < rank(b->cmp.result);
  });
  o << "<table><tr><th>config</th><th>verdict</th><th>ratio</th><th>" << compare::ci_label(c.alpha)
    << "</th><th>p</th><th>sees ≥</th><th>why</th></tr>";
  for (size_t i = 0; i < pairs.size() && i < 100; ++i) {
    const auto& pr = *pairs[i];
    const std::string v = compare::to_string(pr.cmp.result);
    o << fmt::format(
        "<tr><td>{}</td><td "
        "class=\"{}\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
        esc(pr.name), v, v, pr.cmp.ratio > 0 ? fmt::format("{:.3f}", pr.cmp.ratio) : "—",
        pr.cmp.tested && pr.cmp.has_ci
            ? fmt::format("[{:.3f}, {:.3f}]", pr.cmp.ratio_ci_low, pr.cmp.ratio_ci_high)
            : "—",
        pr.cmp.tested ? fmt::format("{:.2g}", pr.cmp.p_value) : "—",
        pr.cmp.detectable_pct > 0 ? fmt::format("{:.1f}%", pr.cmp.detectable_pct) : "—",
        esc(compare::reason_text(pr.cmp)));
  }
  o << "</table>";
  if (pairs.size() > 100)
    o << fmt::format("<p class=\"muted\">{} more pair(s) in /api/v1/compare</p>",
                     pairs.size() - 100);
}

// One system's section: its two latest tags compared as `accelbench compare` would. Returns
// whether a comparison was made (false: fewer than two tags, or a name a selector cannot hold).
bool write_system_comparison(std::ostringstream& o, store::store& db, const params& p,
                             const std::string& system, const std::vector<const run*>& runs) {
  auto tags = latest_two_tags(runs);
  if (tags.size() < 2)
    return false;
  std::string extra;
  for (const auto& k : {"workload", "since"})
    if (auto it = p.find(k); it != p.end() && it->second.find('&') == std::string::npos)
      extra += fmt::format("&{}={}", k, it->second);
  query::compare_options co;
  co.baseline = fmt::format("system={}&tag={}{}", system, tags[0], extra);
  co.candidate = fmt::format("system={}&tag={}{}", system, tags[1], extra);
  co.history = &db;
  o << "<section><h2>" << esc(system) << ": " << esc(tags[0]) << " → " << esc(tags[1]) << "</h2>";
  if (system.find('&') != std::string::npos || tags[0].find('&') != std::string::npos ||
      tags[1].find('&') != std::string::npos) {
    o << "<p class=\"muted\">a name with '&amp;' cannot be written as a selector</p></section>";
    return false;
  }
  compare::set_comparison c;
  try {
    c = query::compare_selections(query::select_runs(db, co.baseline, true, false),
                                  query::select_runs(db, co.candidate, true, false), co);
  } catch (const input_error& e) {
    o << "<p class=\"muted\">" << esc(e.what()) << "</p></section>";
    return false;
  }
  o << fmt::format(
      "<p data-pairs=\"{}\">{} pair(s): <span class=\"regressed\">{} regressed</span>, <span "
      "class=\"improved\">{} improved</span>, {} unchanged, <span class=\"inconclusive\">{} "
      "inconclusive</span>.</p>",
      c.pairs.size(), c.pairs.size(), c.count(compare::verdict::regressed),
      c.count(compare::verdict::improved), c.count(compare::verdict::unchanged),
      c.count(compare::verdict::inconclusive));
  write_compare_table(o, c);
  o << "</section>";
  return true;
}

} // namespace

std::string page_compare(store::store& db, const params& raw) {
  allow_only(raw, {"system", "accelerator", "workload", "tag", "since"});
  const params p = without_blanks(raw);
  params scope = p;
  scope.erase("tag"); // the comparison picks its own two tags per system
  auto sel = select_from(db, scope, false);
  std::map<std::string, std::vector<const run*>> by_system;
  for (const auto& r : sel.runs)
    by_system[r.system].push_back(&r);
  std::ostringstream o;
  o << page_head("Latest nightly comparison per system", "/compare", p);
  o << "<p>For each system, its two most recent tags (nightly-* when it has them): the older is "
       "the baseline. Verdicts "
       "as <code>accelbench compare</code>: regressed/improved need a significant Mann-Whitney U "
       "test, a bootstrap CI "
       "excluding 1 and the minimum effect.</p>";
  size_t compared = 0;
  for (const auto& [system, runs] : by_system)
    compared += write_system_comparison(o, db, p, system, runs);
  if (compared == 0)
    o << "<p data-compared=\"0\">No system has two tags to compare.</p>";
  o << k_page_end;
  return o.str();
}

namespace {

// The report of reporters/report as a dashboard page: its script only sorts tables and its JSON
// data block repeats /api/v1/report, so both go, and the page is served under the dashboard's
// policy (no script may run) instead of the file's own, which allows inline script.
std::string without_scripts(std::string html) {
  for (size_t at = html.find("<script"); at != std::string::npos; at = html.find("<script", at)) {
    const size_t end = html.find("</script>", at);
    html.erase(at, end == std::string::npos ? std::string::npos : end + 9 - at);
  }
  const std::string meta = "<meta http-equiv=\"Content-Security-Policy\" content=\"";
  if (const size_t at = html.find(meta); at != std::string::npos) {
    const size_t from = at + meta.size(), to = html.find('"', from);
    if (to != std::string::npos)
      html.replace(from, to - from, k_dashboard_csp);
  }
  return html;
}

} // namespace

std::string page_report(store::store& db, const params& raw) {
  params p = without_blanks(raw);
  p.erase("format");
  p.emplace("format", "html");
  return without_scripts(report(db, p, true).body);
}

} // namespace accelbench::server
