#include "harness/app/query/database.hpp"

#include "harness/store/store.hpp"

namespace accelbench::query {

std::string resolve_db_path(const std::string& db) {
  if (!db.empty())
    return db;
  return store::store::default_path().string();
}

std::string short_config(const config& c) {
  std::string s;
  for (const auto& [k, v] : c.values) {
    if (!s.empty())
      s += ' ';
    s += k;
    s += '=';
    s += v;
  }
  return s;
}

} // namespace accelbench::query
