#include "harness/compare/format.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>

#include "harness/core/text_input.hpp"

namespace accelbench::compare {

namespace {

// Regressions first (what a reader must act on), then what could not be judged, then the rest.
int verdict_rank(verdict v) {
  switch (v) {
  case verdict::regressed:
    return 0;
  case verdict::inconclusive:
    return 1;
  case verdict::improved:
    return 2;
  case verdict::unchanged:
    return 3;
  }
  return 4;
}

std::vector<const pair_result*> ordered(const set_comparison& c) {
  std::vector<const pair_result*> out;
  for (const auto& p : c.pairs)
    out.push_back(&p);
  std::stable_sort(out.begin(), out.end(), [](const pair_result* a, const pair_result* b) {
    return std::make_pair(verdict_rank(a->cmp.result), a->name) <
           std::make_pair(verdict_rank(b->cmp.result), b->name);
  });
  return out;
}

std::string format_number(double v) {
  const double a = std::fabs(v);
  if (a == 0)
    return "0";
  if (a >= 1000)
    return fmt::format("{:.0f}", v);
  if (a >= 100)
    return fmt::format("{:.1f}", v);
  if (a >= 10)
    return fmt::format("{:.2f}", v);
  if (a >= 1)
    return fmt::format("{:.3f}", v);
  return fmt::format("{:.3g}", v);
}

double time_scale(const std::string& unit) {
  if (unit == "s")
    return 1;
  if (unit == "ms")
    return 1e-3;
  if (unit == "us")
    return 1e-6;
  if (unit == "ns")
    return 1e-9;
  return 0;
}

bool ratio_defined(const sample_comparison& c) { return c.ratio > 0 && std::isfinite(c.ratio); }

std::string change_text(const sample_comparison& c) {
  return ratio_defined(c) ? fmt::format("{:+.1f}%", (c.ratio - 1) * 100) : "-";
}

std::string ci_text(const sample_comparison& c) {
  return ratio_defined(c) && c.has_ci
             ? fmt::format("{:+.1f}% .. {:+.1f}%", (c.ratio_ci_low - 1) * 100,
                           (c.ratio_ci_high - 1) * 100)
             : "-";
}

std::string p_text(const sample_comparison& c) {
  if (c.n_baseline == 0 || c.n_candidate == 0)
    return "-";
  return fmt::format("{:.2g}", c.p_value);
}

std::string median_text(double m, size_t n, const std::string& unit) {
  return n == 0 ? "-" : format_value(m, unit);
}

std::string speedup_text(double s) {
  if (!(s > 0))
    return "-";
  return s >= 1 ? fmt::format("{:.3f}x ({:+.1f}% better)", s, (s - 1) * 100)
                : fmt::format("{:.3f}x ({:+.1f}% worse)", s, (s - 1) * 100);
}

std::string counts_line(const set_comparison& c) {
  return fmt::format(
      "{} regressed, {} inconclusive, {} improved, {} unchanged ({} configs compared, "
      "{} only in {}, {} only in {})",
      c.count(verdict::regressed), c.count(verdict::inconclusive), c.count(verdict::improved),
      c.count(verdict::unchanged), c.pairs.size(), c.only_baseline.size(), c.baseline_label,
      c.only_candidate.size(), c.candidate_label);
}

// Display width of UTF-8 text: count code points (every character we emit is one column).
size_t display_width(const std::string& s) {
  size_t w = 0;
  for (unsigned char ch : s)
    if ((ch & 0xC0) != 0x80)
      ++w;
  return w;
}

std::string pad(const std::string& s, size_t width, bool right) {
  const size_t w = display_width(s);
  if (w >= width)
    return s;
  return right ? std::string(width - w, ' ') + s : s + std::string(width - w, ' ');
}

const char* ansi_colour(verdict v) {
  switch (v) {
  case verdict::regressed:
    return "\x1b[1;31m";
  case verdict::improved:
    return "\x1b[32m";
  case verdict::inconclusive:
    return "\x1b[33m";
  case verdict::unchanged:
    return "";
  }
  return "";
}

} // namespace

std::string format_value(double v, const std::string& unit) {
  // Times are scaled to the unit that puts them in [1, 1000): "1.23 ms" reads faster than 0.00123.
  if (const double scale = time_scale(unit); scale > 0) {
    const double s = v * scale;
    const double a = std::fabs(s);
    if (a == 0)
      return "0 s";
    if (a < 1e-6)
      return format_number(s * 1e9) + " ns";
    if (a < 1e-3)
      return format_number(s * 1e6) + " us";
    if (a < 1)
      return format_number(s * 1e3) + " ms";
    return format_number(s) + " s";
  }
  return unit.empty() ? format_number(v) : format_number(v) + " " + unit;
}

// Stored names may hold any bytes (an imported latin-1 log line, a tag from an older version):
// the document declares UTF-8, so invalid sequences become U+FFFD, and so do U+FFFE and U+FFFF,
// which are UTF-8 but not XML characters.
std::string xml_escape(const std::string& raw) {
  const std::string s = repair_utf8(raw);
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    const unsigned char ch = static_cast<unsigned char>(s[i]);
    if (ch == 0xEF && i + 2 < s.size() && static_cast<unsigned char>(s[i + 1]) == 0xBF &&
        (static_cast<unsigned char>(s[i + 2]) == 0xBE ||
         static_cast<unsigned char>(s[i + 2]) == 0xBF)) {
      out += "\xEF\xBF\xBD";
      i += 2;
      continue;
    }
    switch (ch) {
    case '&':
      out += "&amp;";
      break;
    case '<':
      out += "&lt;";
      break;
    case '>':
      out += "&gt;";
      break;
    case '"':
      out += "&quot;";
      break;
    case '\'':
      out += "&apos;";
      break;
    default:
      // XML 1.0 forbids control characters other than tab, LF and CR, even escaped.
      if (ch < 0x20 && ch != '\t' && ch != '\n' && ch != '\r')
        out += '?';
      else
        out += static_cast<char>(ch);
    }
  }
  return out;
}

std::string markdown_escape(const std::string& s) {
  std::string out;
  for (char ch : s) {
    if (ch == '|')
      out += "\\|"; // GFM: an escaped pipe does not end the cell, even in code
    else if (ch == '\n' || ch == '\r')
      out += ' ';
    else
      out += ch;
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
std::string format_terminal(const set_comparison& c, const terminal_options& opt) {
  // Names and labels come from the database: control characters are printed as escapes.
  std::string out = fmt::format("accelbench compare: {} -> {} (alpha {:g})\n",
                                printable(c.baseline_label), printable(c.candidate_label), c.alpha);
  const std::vector<std::string> head = {"verdict", "config", "baseline", "candidate",
                                         "change",  "95% CI", "p"};
  const std::vector<bool> right = {false, false, true, true, true, true, true};
  std::vector<std::vector<std::string>> rows;
  std::vector<verdict> verdicts;
  for (const pair_result* p : ordered(c)) {
    const auto& m = p->cmp;
    rows.push_back({to_string(m.result),
                    printable(p->name) + (p->environment_differs ? " (env differs)" : ""),
                    median_text(m.baseline_median, m.n_baseline, p->unit),
                    median_text(m.candidate_median, m.n_candidate, p->unit), change_text(m),
                    ci_text(m), p_text(m)});
    verdicts.push_back(m.result);
  }
  std::vector<size_t> w(head.size());
  for (size_t k = 0; k < head.size(); ++k) {
    w[k] = display_width(head[k]);
    for (const auto& r : rows)
      w[k] = std::max(w[k], display_width(r[k]));
  }
  auto line = [&](const std::vector<std::string>& r, const verdict* v) {
    std::string l;
    for (size_t k = 0; k < r.size(); ++k) {
      std::string cell = pad(r[k], w[k], right[k]);
      if (k == 0 && v && opt.color && *ansi_colour(*v))
        cell = ansi_colour(*v) + cell + "\x1b[0m";
      l += (k ? "  " : "") + cell;
    }
    while (!l.empty() && l.back() == ' ')
      l.pop_back();
    return l + "\n";
  };
  out += line(head, nullptr);
  for (size_t i = 0; i < rows.size(); ++i)
    out += line(rows[i], &verdicts[i]);
  out += printable(counts_line(c)) + "\n";
  for (const auto& s : c.workloads)
    out += fmt::format("geomean speed-up {}: {} over {} configs\n", printable(s.workload),
                       speedup_text(s.geomean_speedup), s.pairs);
  for (const auto& u : c.only_baseline)
    out += fmt::format("only in {}: {}\n", printable(c.baseline_label), printable(u.name));
  for (const auto& u : c.only_candidate)
    out += fmt::format("only in {}: {}\n", printable(c.candidate_label), printable(u.name));
  for (const pair_result* p : ordered(c)) {
    if (p->environment_differs)
      out += fmt::format(
          "environment differs for {}: {}\n", printable(p->name),
          p->environment_differences.empty()
              ? std::string("fingerprint only")
              : printable(fmt::format("{}", fmt::join(p->environment_differences, ", "))));
    for (const auto& n : p->notes)
      out += fmt::format("note for {}: {}\n", printable(p->name), printable(n));
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
std::string format_markdown(const set_comparison& c) {
  const size_t reg = c.count(verdict::regressed);
  std::string out =
      fmt::format("## accelbench compare: `{}` → `{}`\n\n", markdown_escape(c.baseline_label),
                  markdown_escape(c.candidate_label));
  out += fmt::format("{}: {}\n\n", reg > 0 ? "**Regression**" : "**No regression**",
                     markdown_escape(counts_line(c)));
  if (!c.pairs.empty()) {
    out += "| verdict | config | baseline | candidate | change | 95% CI | p |\n";
    out += "|---|---|---:|---:|---:|---:|---:|\n";
    for (const pair_result* p : ordered(c)) {
      const auto& m = p->cmp;
      const std::string v = m.result == verdict::regressed ? "**regressed**" : to_string(m.result);
      out += fmt::format("| {} | `{}`{} | {} | {} | {} | {} | {} |\n", v, markdown_escape(p->name),
                         p->environment_differs ? " ⚠ env" : "",
                         median_text(m.baseline_median, m.n_baseline, p->unit),
                         median_text(m.candidate_median, m.n_candidate, p->unit), change_text(m),
                         ci_text(m), p_text(m));
    }
    out += "\n";
  }
  if (!c.workloads.empty()) {
    out += "| workload | configs | geomean speed-up | regressed | inconclusive | improved | "
           "unchanged |\n";
    out += "|---|---:|---:|---:|---:|---:|---:|\n";
    for (const auto& s : c.workloads)
      out += fmt::format("| {} | {} | {} | {} | {} | {} | {} |\n", markdown_escape(s.workload),
                         s.pairs, speedup_text(s.geomean_speedup), s.regressed, s.inconclusive,
                         s.improved, s.unchanged);
    out += "\n";
  }
  auto list = [&](const std::vector<unpaired_run>& v, const std::string& label) {
    if (v.empty())
      return;
    out += fmt::format("Only in `{}` ({}):\n\n", markdown_escape(label), v.size());
    for (const auto& u : v)
      out += fmt::format("- `{}`\n", markdown_escape(u.name));
    out += "\n";
  };
  list(c.only_baseline, c.baseline_label);
  list(c.only_candidate, c.candidate_label);
  std::string flags;
  for (const pair_result* p : ordered(c)) {
    if (p->environment_differs)
      flags += fmt::format(
          "- `{}`: environment differs ({})\n", markdown_escape(p->name),
          p->environment_differences.empty()
              ? std::string("fingerprint only")
              : printable(fmt::format("{}", fmt::join(p->environment_differences, ", "))));
    for (const auto& n : p->notes)
      flags += fmt::format("- `{}`: {}\n", markdown_escape(p->name), markdown_escape(n));
  }
  if (!flags.empty())
    out += "Flags:\n\n" + flags + "\n";
  return out;
}

// ---------------------------------------------------------------------------------------------
std::string format_junit(const set_comparison& c, const std::string& suite_name) {
  const size_t tests = c.pairs.size() + c.only_baseline.size() + c.only_candidate.size();
  const size_t failures = c.count(verdict::regressed);
  const size_t skipped =
      c.count(verdict::inconclusive) + c.only_baseline.size() + c.only_candidate.size();
  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out += fmt::format("<testsuites name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"0\" "
                     "skipped=\"{}\">\n",
                     xml_escape(suite_name), tests, failures, skipped);
  out += fmt::format("  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"0\" "
                     "skipped=\"{}\">\n",
                     xml_escape(suite_name), tests, failures, skipped);
  out += fmt::format("    <properties>\n      <property name=\"baseline\" value=\"{}\"/>\n"
                     "      <property name=\"candidate\" value=\"{}\"/>\n"
                     "      <property name=\"alpha\" value=\"{:g}\"/>\n    </properties>\n",
                     xml_escape(c.baseline_label), xml_escape(c.candidate_label), c.alpha);
  for (const auto& p : c.pairs) { // sorted by name: a stable order for CI history
    const auto& m = p.cmp;
    const std::string open = fmt::format("    <testcase classname=\"{}\" name=\"{}\"",
                                         xml_escape(p.workload), xml_escape(p.name));
    const std::string numbers =
        fmt::format("{} -> {}, change {} (95% CI {}), p = {}, threshold {:g}%",
                    median_text(m.baseline_median, m.n_baseline, p.unit),
                    median_text(m.candidate_median, m.n_candidate, p.unit), change_text(m),
                    ci_text(m), p_text(m), m.threshold_pct);
    if (m.result == verdict::regressed) {
      out += open + ">\n";
      out +=
          fmt::format("      <failure type=\"regression\" message=\"regressed: {}\">{}</failure>\n",
                      xml_escape(numbers), xml_escape(m.reason));
      out += "    </testcase>\n";
    } else if (m.result == verdict::inconclusive) {
      out += open + ">\n";
      out += fmt::format("      <skipped message=\"inconclusive: {}\"/>\n", xml_escape(m.reason));
      out += "    </testcase>\n";
    } else {
      out += open + ">\n";
      out += fmt::format("      <system-out>{}: {}</system-out>\n", to_string(m.result),
                         xml_escape(numbers));
      out += "    </testcase>\n";
    }
  }
  auto unpaired = [&](const std::vector<unpaired_run>& v, const std::string& label) {
    for (const auto& u : v)
      out += fmt::format("    <testcase classname=\"{}\" name=\"{}\">\n      <skipped "
                         "message=\"only in {}\"/>\n    </testcase>\n",
                         xml_escape(u.workload), xml_escape(u.name), xml_escape(label));
  };
  unpaired(c.only_baseline, c.baseline_label);
  unpaired(c.only_candidate, c.candidate_label);
  out += "  </testsuite>\n</testsuites>\n";
  return out;
}

// ---------------------------------------------------------------------------------------------
namespace {

json number_or_null(double v, bool defined) { return defined ? json(v) : json(nullptr); }

json unpaired_json(const unpaired_run& u) {
  return {{"name", u.name},
          {"key", u.key},
          {"ruleset", u.ruleset},
          {"workload", u.workload},
          {"runs", u.runs}};
}

} // namespace

json to_json(const set_comparison& c) {
  json j;
  j["schema_version"] = compare_schema_version;
  j["kind"] = "accelbench.compare";
  j["baseline"] = c.baseline_label;
  j["candidate"] = c.candidate_label;
  j["alpha"] = c.alpha;
  j["summary"] = {{"pairs", c.pairs.size()},
                  {"regressed", c.count(verdict::regressed)},
                  {"inconclusive", c.count(verdict::inconclusive)},
                  {"improved", c.count(verdict::improved)},
                  {"unchanged", c.count(verdict::unchanged)},
                  {"only_baseline", c.only_baseline.size()},
                  {"only_candidate", c.only_candidate.size()}};
  json pairs = json::array();
  for (const auto& p : c.pairs) {
    const auto& m = p.cmp;
    const bool def = ratio_defined(m);
    auto side = [](size_t n, double med, double lo, double hi, size_t runs) {
      return json{{"n", n}, {"median", med}, {"min", lo}, {"max", hi}, {"runs", runs}};
    };
    pairs.push_back({
        {"name", p.name},
        {"key", p.key},
        {"ruleset", p.ruleset},
        {"workload", p.workload},
        {"backend", p.backend},
        {"unit", p.unit},
        {"direction", to_string(m.dir)},
        {"threshold_pct", m.threshold_pct},
        {"baseline",
         side(m.n_baseline, m.baseline_median, m.baseline_min, m.baseline_max, p.baseline_runs)},
        {"candidate", side(m.n_candidate, m.candidate_median, m.candidate_min, m.candidate_max,
                           p.candidate_runs)},
        {"ratio", number_or_null(m.ratio, def)},
        {"ratio_ci",
         def && m.has_ci ? json::array({m.ratio_ci_low, m.ratio_ci_high}) : json(nullptr)},
        {"speedup", number_or_null(m.speedup(), def)},
        {"u", m.u},
        {"p_value", m.p_value},
        {"exact_p", m.exact_p},
        {"verdict", to_string(m.result)},
        {"reason", m.reason},
        {"environment_differs", p.environment_differs},
        {"environment_differences", p.environment_differences},
        {"notes", p.notes},
    });
  }
  j["pairs"] = std::move(pairs);
  json ob = json::array(), oc = json::array();
  for (const auto& u : c.only_baseline)
    ob.push_back(unpaired_json(u));
  for (const auto& u : c.only_candidate)
    oc.push_back(unpaired_json(u));
  j["only_baseline"] = std::move(ob);
  j["only_candidate"] = std::move(oc);
  json ws = json::array();
  for (const auto& s : c.workloads)
    ws.push_back({{"workload", s.workload},
                  {"pairs", s.pairs},
                  {"geomean_speedup", number_or_null(s.geomean_speedup, s.geomean_speedup > 0)},
                  {"regressed", s.regressed},
                  {"inconclusive", s.inconclusive},
                  {"improved", s.improved},
                  {"unchanged", s.unchanged}});
  j["workloads"] = std::move(ws);
  return j;
}

std::string format_json(const set_comparison& c) { return dump_json(to_json(c), 2) + "\n"; }

// ---------------------------------------------------------------------------------------------
json to_bmf(const set_comparison& c) {
  json j = json::object();
  for (const auto& p : c.pairs) {
    const auto& m = p.cmp;
    if (m.n_candidate == 0)
      continue; // nothing measured: Bencher has no value to track
    std::string measure;
    double scale = 1;
    if (const double ts = time_scale(p.unit); ts > 0 && m.dir == direction::lower_is_better) {
      measure = "latency"; // Bencher's built-in latency measure is in nanoseconds
      scale = ts * 1e9;
    } else if (m.dir == direction::higher_is_better) {
      measure = "throughput";
    } else {
      measure = p.unit.empty() ? "value" : p.unit;
    }
    j[p.name][measure] = {{"value", m.candidate_median * scale},
                          {"lower_value", m.candidate_min * scale},
                          {"upper_value", m.candidate_max * scale}};
  }
  return j;
}

std::string format_bmf(const set_comparison& c) { return dump_json(to_bmf(c), 2) + "\n"; }

} // namespace accelbench::compare
