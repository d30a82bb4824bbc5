// Selectors (harness/app/query/selector: the SEL of report, compare, publish, history) against a
// database holding the published reference runs. Property: the runs are selected, or the
// selector is refused with an exit-2 error (malformed, or matching nothing); SQL-looking text is
// inert (the database is unchanged, checked by counting its rows).
#include <fstream>
#include <sstream>

#include "harness/app/query/selector.hpp"
#include "harness/core/results_document.hpp"
#include "tests/fuzz/fuzz_common.hpp"

#ifndef ACCELBENCH_SOURCE_DIR
#error "ACCELBENCH_SOURCE_DIR must name the source tree (for the published runs)"
#endif

using namespace accelbench;
namespace fs = std::filesystem;

namespace {

// Rows of runs, systems and tags together: a selector that wrote anything would change it.
int64_t row_count(store::store& db) {
  store::table_counts c = db.counts();
  return c.runs + c.systems + c.tags;
}

struct seeded_db {
  store::store db;
  int64_t rows;
};

seeded_db& database() {
  static seeded_db s = [] {
    store::store db = store::store::open(fuzz::scratch_dir() / "selector.db");
    for (const char* name : {"kernels.json", "training.json"}) {
      std::ifstream in(fs::path(ACCELBENCH_SOURCE_DIR) / "results/published" / name);
      std::stringstream ss;
      ss << in.rdbuf();
      json systems;
      std::vector<run> runs = read_results_document(ss.str(), name, &systems);
      for (const auto& sys : systems)
        db.upsert_system(store::system_from_json(sys));
      db.insert_runs(runs);
    }
    int64_t n = row_count(db);
    return seeded_db{std::move(db), n};
  }();
  return s;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string sel(fuzz::as_text(data, size));
  seeded_db& s = database();
  fuzz::guarded([&] { query::parse_selector(sel); });
  fuzz::guarded([&] { query::select_runs(s.db, sel, false); });
  if (row_count(s.db) != s.rows)
    fuzz::finding("a selector changed the database", sel);
  return 0;
}
