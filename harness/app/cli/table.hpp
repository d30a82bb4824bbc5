#pragma once
// Aligned text tables for the terminal (stdout), and the command line's texts of a run's config.
#include <ostream>
#include <string>
#include <vector>

#include "harness/app/query/text_table.hpp"
#include "harness/core/model.hpp"

namespace accelbench::cli {

// The aligned table (harness/app/query/text_table.hpp: history's table format, which the server
// answers too, prints with it).
using table = query::text_table;
using query::display_width;

// Text cut to at most `width` code points, ending in "…" when cut: at the last space, comma or
// '=' boundary in the second half of the kept text, else between code points (never mid-character).
std::string clip(const std::string& s, size_t width);

// A run's config as it ran. The stored config keeps what was asked, since its key matches runs
// across systems; where an axis's value stands for "the default" (0), the workload records in
// run.extra.resolved the value it used. One entry per config key, in key order; `effective` is
// `requested` where the run recorded nothing else.
struct setting {
  std::string key, requested, effective;
  bool resolved() const { return effective != requested; }
};
std::vector<setting> effective_config(const run& r);

// One setting as the tables print it: "seq=128", or "seq=0→128" where the run resolved what was
// asked to another value. The arrow keeps both in 2 or 3 more columns than the value alone: the
// requested value (the stored key, what compare matches) and what ran, without a legend.
std::string setting_text(const setting& s);

// The whole config as the tables print it: "k=v k=v", each resolved setting as above.
std::string effective_config_text(const run& r);

} // namespace accelbench::cli
