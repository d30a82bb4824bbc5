#pragma once
// Whether an opened database is an accelbench database this program can use, decided once for
// both stores over neutral facts each backend reads in its own way (SQLite: user_version,
// application_id and sqlite_master; PostgreSQL: the accelbench_schema table and pg_class).
// Internal to harness/store.
#include <cstdint>
#include <string>
#include <vector>

namespace accelbench::store::detail {

struct schema_facts {
  int64_t version = 0;
  std::vector<std::string> objects; // tables, indexes, views...; not the database's own
  bool empty = false;               // nothing created yet: a write command may create the schema
  // Why another program owns it ("its application_id 0x1 belongs to another program"), or "".
  std::string foreign_owner;
  // Why it holds no accelbench schema ("it holds a, b and no accelbench runs table"), or "".
  std::string not_ours;
  bool has(const std::string& name) const;
};

// Why the database cannot be used as an accelbench database, or "" when it can. `shown`: the
// database as messages name it (printable).
std::string schema_problem(const schema_facts& s, const std::string& shown);
void refuse_unless_ours(const schema_facts& s, const std::string& shown);
// The first five names, printable, and how many more.
std::string name_list(const std::vector<std::string>& names);

} // namespace accelbench::store::detail
