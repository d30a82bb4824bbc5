#include "harness/store/schema.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "harness/core/error.hpp"
#include "harness/core/text_input.hpp"
#include "harness/store/rows.hpp"
#include "harness/store/schema_ddl.hpp"

namespace accelbench::store::detail {

bool schema_facts::has(const std::string& name) const {
  return std::find(objects.begin(), objects.end(), name) != objects.end();
}

std::string name_list(const std::vector<std::string>& names) {
  std::string out;
  for (size_t i = 0; i < names.size() && i < 5; ++i)
    out += (i ? ", " : "") + printable(names[i]);
  if (names.size() > 5)
    out += fmt::format(" and {} more", names.size() - 5);
  return out;
}

namespace {
std::string partial_or_foreign(const schema_facts& s, const std::string& shown,
                               const std::string& detail) {
  return fmt::format(
      "database '{}' has a partial or foreign schema ({}; schema version {}): not an accelbench "
      "database, left unchanged",
      shown, detail, s.version);
}
} // namespace

std::string schema_problem(const schema_facts& s, const std::string& shown) {
  if (!s.foreign_owner.empty())
    return fmt::format("database '{}' is not an accelbench database: {}; left unchanged", shown,
                       s.foreign_owner);
  if (s.empty)
    return {};
  if (!s.not_ours.empty())
    return partial_or_foreign(s, shown, s.not_ours);
  if (!known_version(s.version))
    return unsupported_version(s.version, shown);
  // Every object of the migrations up to its version, and none of the later ones (which a
  // migration would then fail to create).
  for (int64_t i = 0; i < k_schema_version; ++i)
    for (const auto& name : migration_objects(i + 1)) {
      bool wanted = i < s.version;
      if (wanted != s.has(name))
        return partial_or_foreign(
            s, shown, fmt::format("'{}' {}", name, wanted ? "is missing" : "already exists"));
    }
  return {};
}

void refuse_unless_ours(const schema_facts& s, const std::string& shown) {
  if (auto why = schema_problem(s, shown); !why.empty())
    throw storage_error(why);
}

} // namespace accelbench::store::detail
