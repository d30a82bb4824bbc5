#include "harness/store/store.hpp"

#include <algorithm>
#include <cstdlib>

#include "harness/core/ruleset.hpp"
#include "harness/core/text_input.hpp"
#include "harness/store/pg_store.hpp"
#include "harness/store/sqlite_store.hpp"

namespace accelbench::store {

namespace fs = std::filesystem;

bool is_postgres_uri(const std::string& location) {
  return location.rfind("postgresql://", 0) == 0 || location.rfind("postgres://", 0) == 0;
}

store store::open(const fs::path& location, access how) {
  const std::string where = location.string();
  if (is_postgres_uri(where))
    return store(open_postgres(where, how), redact_uri(where));
  return store(open_sqlite(location, how), location);
}

store store::in_memory() { return store(open_sqlite_in_memory(), ":memory:"); }

fs::path store::default_path() {
  if (const char* p = std::getenv("ACCELBENCH_DB"); p && *p)
    return fs::path(p);
  return default_results_dir() / "accelbench.db";
}

// ---------------------------------------------------------------------------------------------
// db copy. Systems first (with their full descriptions), so that a run's insert finds its system
// and does not create a bare one; then the runs in batches of ascending source id, so that the
// destination's ids keep the source's order (and an export orders ties the same way).
copy_result copy_store(store& from, store& to, size_t batch,
                       const std::function<void(const copy_result&)>& progress) {
  copy_result res;
  if (batch == 0)
    batch = 1;
  const int64_t samples_before = to.counts().samples;
  for (const auto& s : from.systems()) {
    to.upsert_system(s);
    ++res.systems;
  }
  const std::vector<int64_t> ids = from.run_ids();
  for (size_t at = 0; at < ids.size(); at += batch) {
    run_filter f;
    f.ids.assign(ids.begin() + (std::ptrdiff_t)at,
                 ids.begin() + (std::ptrdiff_t)std::min(ids.size(), at + batch));
    f.with_samples = true;
    f.with_log = true;
    std::vector<run> runs = from.query(f);
    std::sort(runs.begin(), runs.end(), [](const run& a, const run& b) { return a.id < b.id; });
    for (auto& r : runs)
      r.id = 0;
    res.runs_copied += (int64_t)to.insert_runs(runs);
    res.runs_seen += (int64_t)runs.size();
    if (progress)
      progress(res);
  }
  res.samples_copied = to.counts().samples - samples_before;
  return res;
}

} // namespace accelbench::store
