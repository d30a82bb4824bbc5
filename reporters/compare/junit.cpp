// JUnit XML: one test case per config, for CI test reports.
#include <fmt/format.h>

#include "harness/core/text_input.hpp"
#include "reporters/compare/formats.hpp"
#include "reporters/compare/listing.hpp"

namespace accelbench::compare {

namespace {

// JUnit's timestamp is xs:dateTime without a zone (the Ant/Jenkins schema); ours are UTC, which
// the suite's properties say. "2026-12-02T10:13:01.123Z" -> "2026-12-02T10:13:01".
std::string junit_timestamp(const std::string& iso) { return iso.substr(0, 19); }

std::string suite_timestamp(const set_comparison& c) {
  std::string first;
  for (const auto& p : c.pairs)
    if (!p.candidate_started_at.empty() && (first.empty() || p.candidate_started_at < first))
      first = p.candidate_started_at;
  return junit_timestamp(first);
}

std::string suite_hostname(const set_comparison& c) {
  for (const auto& p : c.pairs)
    if (!p.candidate_host.empty())
      return p.candidate_host;
  return "unknown";
}

double suite_time(const set_comparison& c) {
  double t = 0;
  for (const auto& p : c.pairs)
    t += p.candidate_wall_s;
  return t;
}

std::string junit_testcase(const pair_result& p) {
  const auto& m = p.cmp;
  std::string out = fmt::format("    <testcase classname=\"{}\" name=\"{}\" time=\"{:.3f}\">\n",
                                xml_escape(p.workload), xml_escape(p.name), p.candidate_wall_s);
  const std::string method = method_text(m);
  const std::string numbers = fmt::format(
      "{} -> {}, change {} ({} {}), p = {}{}, threshold {:g}%",
      median_text(m.baseline_median, m.n_baseline, p.unit),
      median_text(m.candidate_median, m.n_candidate, p.unit), change_text(m), ci_label(m.alpha),
      ci_text(m), p_text(m), method.empty() ? "" : " (" + method + ")", m.threshold_pct);
  if (m.result == verdict::regressed)
    out +=
        fmt::format("      <failure type=\"regression\" message=\"regressed: {}\">{}</failure>\n",
                    xml_escape(numbers), xml_escape(reason_text(m)));
  else if (m.result == verdict::inconclusive || m.result == verdict::skipped)
    out += fmt::format("      <skipped message=\"{}: {}\"/>\n", to_string(m.result),
                       xml_escape(reason_text(m)));
  else
    out += fmt::format("      <system-out>{}: {}</system-out>\n", to_string(m.result),
                       xml_escape(numbers));
  return out + "    </testcase>\n";
}

} // namespace

// Every pair is a test case, --only-changed or not: CI test reports track cases across builds.
std::string format_junit(const set_comparison& c, const std::string& suite_name) {
  const size_t tests = c.pairs.size() + c.only_baseline.size() + c.only_candidate.size();
  const size_t failures = c.count(verdict::regressed);
  const size_t skipped = c.count(verdict::inconclusive) + c.count(verdict::skipped) +
                         c.only_baseline.size() + c.only_candidate.size();
  const std::string counts =
      fmt::format("tests=\"{}\" failures=\"{}\" errors=\"0\" skipped=\"{}\" time=\"{:.3f}\"", tests,
                  failures, skipped, suite_time(c));
  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out += fmt::format("<testsuites name=\"{}\" {}>\n", xml_escape(suite_name), counts);
  const std::string ts = suite_timestamp(c);
  out += fmt::format("  <testsuite name=\"{}\" {}{} hostname=\"{}\">\n", xml_escape(suite_name),
                     counts, ts.empty() ? "" : fmt::format(" timestamp=\"{}\"", xml_escape(ts)),
                     xml_escape(suite_hostname(c)));
  out += fmt::format("    <properties>\n      <property name=\"baseline\" value=\"{}\"/>\n"
                     "      <property name=\"candidate\" value=\"{}\"/>\n"
                     "      <property name=\"alpha\" value=\"{:g}\"/>\n"
                     "      <property name=\"timestamp_zone\" value=\"UTC\"/>\n",
                     xml_escape(c.baseline_label), xml_escape(c.candidate_label), c.alpha);
  for (const auto& n : c.notes)
    out += fmt::format("      <property name=\"note\" value=\"{}\"/>\n", xml_escape(n));
  out += "    </properties>\n";
  for (const auto& p : c.pairs) // sorted by name: a stable order for CI history
    out += junit_testcase(p);
  auto unpaired = [&](const std::vector<unpaired_run>& v, const std::string& label) {
    for (const auto& u : v)
      out += fmt::format("    <testcase classname=\"{}\" name=\"{}\" time=\"0\">\n      <skipped "
                         "message=\"only in {}\"/>\n    </testcase>\n",
                         xml_escape(u.workload), xml_escape(u.name), xml_escape(label));
  };
  unpaired(c.only_baseline, c.baseline_label);
  unpaired(c.only_candidate, c.candidate_label);
  out += "  </testsuite>\n</testsuites>\n";
  return out;
}

} // namespace accelbench::compare
