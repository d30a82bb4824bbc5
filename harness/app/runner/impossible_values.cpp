// The rule that every number a run stores is one it can be compared by: the one check between a
// workload's execute and the store, for every run of every workload (run_one).
#include <cmath>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "harness/app/runner/runner.hpp"
#include "harness/core/text_input.hpp"

namespace accelbench::runner {

namespace {

// Where the values dropped from one part of the run were, for one INVALID reason: the first named
// with its value, the rest counted (a program can report a million bad samples).
struct dropped {
  size_t count = 0;
  std::string first;
  void add(std::string where) {
    if (count++ == 0)
      first = std::move(where);
  }
  std::string reason(const std::string& what) const {
    if (count == 1)
      return fmt::format("{} ({}): not stored", first, what);
    return fmt::format("{} and {} more (not {}): not stored", first, count - 1, what);
  }
};

bool non_finite(const json& v) { return v.is_number_float() && !std::isfinite(v.get<double>()); }

// Removes every number that is not finite from `j` (objects and arrays, at any depth), naming
// each by its path under `path` (JSON cannot hold them: an export would write null, which the
// schema refuses where a number belongs). Paths are made only for containers and what is dropped:
// a run's extras can hold curves of thousands of numbers.
void drop_non_finite_json(json& j, const std::string& path, dropped& d) {
  const auto bad = [&](const json& v, const std::string& at) {
    d.add(fmt::format("{} is {}", printable(at), v.get<double>()));
  };
  if (j.is_object()) {
    std::vector<std::string> bad_keys;
    for (auto& [key, value] : j.items()) {
      if (non_finite(value)) {
        bad(value, fmt::format("{}.{}", path, key));
        bad_keys.push_back(key);
      } else if (value.is_structured()) {
        drop_non_finite_json(value, fmt::format("{}.{}", path, key), d);
      }
    }
    for (const auto& key : bad_keys)
      j.erase(key);
    return;
  }
  if (!j.is_array())
    return;
  std::vector<size_t> bad_at;
  for (size_t i = 0; i < j.size(); ++i) {
    if (non_finite(j[i])) {
      bad(j[i], fmt::format("{}[{}]", path, i));
      bad_at.push_back(i);
    } else if (j[i].is_structured()) {
      drop_non_finite_json(j[i], fmt::format("{}[{}]", path, i), d);
    }
  }
  for (size_t k = bad_at.size(); k-- > 0;) // from the back: the indices before stay put
    j.erase(bad_at[k]);
}

// A metric that is not a finite number: dropped, one reason each (a run has a handful).
void drop_non_finite_metrics(run& r) {
  const std::vector<metric> all(r.metrics.begin(), r.metrics.end());
  r.metrics.clear();
  for (const auto& m : all) {
    if (std::isfinite(m.value))
      r.metrics.push_back(m);
    else
      r.mark_invalid(fmt::format("metric {} is {} (not a finite number): not stored",
                                 printable(m.name), m.value));
  }
}

// A sample is a time, a rate or another cost that comparisons divide by: a finite number > 0,
// the rule import applies to runs from outside (harness/core/results_document.hpp).
void drop_impossible_samples(run& r) {
  dropped d;
  std::vector<sample> kept;
  kept.reserve(r.samples.size());
  for (auto& s : r.samples) {
    if (s.value > 0 && std::isfinite(s.value)) {
      kept.push_back(std::move(s));
      continue;
    }
    d.add(fmt::format("sample {} is {} {}", s.index, s.value, printable(r.sample_unit)));
  }
  r.samples = std::move(kept);
  if (d.count > 0)
    r.mark_invalid(d.reason("a finite number > 0"));
}

void drop_non_finite_extras(run& r) {
  dropped d;
  drop_non_finite_json(r.extra, "extra", d);
  for (auto& s : r.samples)
    drop_non_finite_json(s.extra, fmt::format("sample {} extra", s.index), d);
  if (d.count > 0)
    r.mark_invalid(d.reason("a finite number"));
}

} // namespace

void drop_impossible_values(run& r) {
  drop_non_finite_metrics(r);
  drop_impossible_samples(r);
  drop_non_finite_extras(r);
}

} // namespace accelbench::runner
