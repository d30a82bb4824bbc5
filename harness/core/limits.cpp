#include "harness/core/limits.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "harness/core/model.hpp"
#include "harness/core/text_input.hpp"

namespace accelbench::limits {

namespace {

std::string count_over(std::size_t n, std::size_t limit, const char* what) {
  if (n <= limit)
    return {};
  return fmt::format("{} {}, more than the {} a run may hold", n, what, limit);
}

// A long text as a message shows it: its start, printable, so that the message stays one line.
std::string text_start(const std::string& s) {
  constexpr std::size_t k_shown = 40;
  return printable(s.size() > k_shown ? s.substr(0, k_shown) + "..." : s);
}

std::string length_over(const std::string& s, std::size_t limit, const char* what) {
  if (s.size() <= limit)
    return {};
  return fmt::format("{} '{}' is {} bytes, longer than the {} a {} may be", what, text_start(s),
                     s.size(), limit, what);
}

} // namespace

std::string tag_count_problem(std::size_t tags) { return count_over(tags, k_max_tags, "tags"); }

std::string metric_count_problem(std::size_t metrics) {
  return count_over(metrics, k_max_metrics, "metrics");
}

std::string program_metric_count_problem(std::size_t metrics) {
  if (metrics <= k_max_program_metrics)
    return {};
  return fmt::format("{} metrics, more than the {} a program may report (a run holds {}, {} of "
                     "them kept for accelbench's own figures)",
                     metrics, k_max_program_metrics, k_max_metrics, k_reserved_metrics);
}

std::string sample_count_problem(std::size_t samples) {
  return count_over(samples, k_max_samples, "samples");
}

std::string tag_problem(const std::string& tag) { return length_over(tag, k_max_tag_bytes, "tag"); }

std::string metric_name_problem(const std::string& name) {
  return length_over(name, k_max_metric_name_bytes, "metric name");
}

std::string tags_problem(const std::vector<std::string>& tags) {
  if (std::string why = tag_count_problem(tags.size()); !why.empty())
    return why;
  for (const auto& t : tags)
    if (std::string why = tag_problem(t); !why.empty())
      return why;
  return {};
}

std::string run_problem(const run& r) {
  for (std::string why : {sample_count_problem(r.samples.size()),
                          metric_count_problem(r.metrics.size()), tags_problem(r.tags)})
    if (!why.empty())
      return why;
  for (const auto& m : r.metrics)
    if (std::string why = metric_name_problem(m.name); !why.empty())
      return why;
  return {};
}

bool fail_over_limits(run& r) {
  const std::string why = run_problem(r);
  if (why.empty())
    return false;
  r.mark_failed(why);
  if (r.samples.size() > k_max_samples)
    r.samples.resize(k_max_samples);
  r.metrics.erase_if([](const metric& m) { return !metric_name_problem(m.name).empty(); });
  r.metrics.truncate(k_max_metrics);
  std::erase_if(r.tags, [](const std::string& t) { return !tag_problem(t).empty(); });
  if (r.tags.size() > k_max_tags)
    r.tags.resize(k_max_tags);
  return true;
}

} // namespace accelbench::limits
