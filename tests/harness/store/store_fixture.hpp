#pragma once
// The store's test cases run against both implementations (tests/harness/store/store_cases.cpp):
// each test program defines fresh_db() for its backend (test_store.cpp: SQLite files,
// test_store_pg.cpp: databases on a PostgreSQL server the test starts itself), and the cases
// reach the database "as another program would" only through this interface.
#include <memory>
#include <string>

#include "harness/core/model.hpp"
#include "harness/store/store.hpp"

namespace accelbench::testing {

class db_under_test {
public:
  virtual ~db_under_test() = default;
  virtual const char* kind() const = 0;          // "sqlite" | "postgresql", as store::kind()
  virtual std::string location() const = 0;      // what --db takes
  virtual std::string shown() const = 0;         // how messages name it
  virtual void create_empty() = 0;               // an empty database with no tables
  virtual void exec(const std::string& sql) = 0; // SQL outside accelbench, as another program
  // The first column of the first row of a query outside accelbench, as text ("" for NULL).
  virtual std::string value(const std::string& sql) = 0;
  virtual void build_version(int v) = 0;   // the schema as the release of version v wrote it
  virtual void set_version(int64_t v) = 0; // record schema version v, nothing else changed
  virtual std::string snapshot() = 0;      // everything a refused or read-only open must not change
};

// A new database of this program's backend (nothing created yet), or null with `why_not` set
// when the backend cannot run here.
std::unique_ptr<db_under_test> fresh_db(std::string& why_not);

// A run with `nsamples` samples, one metric and two tags.
run make_run(const std::string& system, int nsamples, double base = 1.0);

} // namespace accelbench::testing

// Declares `var` as a fresh database, or skips the test case visibly when the backend cannot run.
#define ACCELBENCH_FRESH_DB(var)                                                                   \
  std::string var##_why_not;                                                                       \
  auto var = ::accelbench::testing::fresh_db(var##_why_not);                                       \
  if (!var)                                                                                        \
  ACCELBENCH_SKIP(var##_why_not)
