#pragma once
// A small JSON Schema (draft 2020-12) validator for the schemas in schemas/. It implements the
// keywords those schemas use: type, properties, required, additionalProperties, patternProperties,
// items, prefixItems-free arrays, enum, const, minimum, maximum, exclusiveMinimum, minLength,
// minItems, maxItems, pattern, $ref (local: #/$defs/...), anyOf, oneOf, allOf.
// Unknown keywords are ignored, as the specification requires of annotations. Stricter than the
// specification where readers need it: an "integer" must fit in int64, and no number anywhere in
// the instance may be infinite.
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "harness/core/model.hpp"

namespace accelbench {

struct schema_violation {
  std::string path;    // JSON pointer into the instance: /runs/3/samples
  std::string message; // what is wrong
};

class json_schema {
public:
  explicit json_schema(json schema);
  static json_schema load(const std::filesystem::path& file); // throws input_error
  // All violations (empty: valid).
  std::vector<schema_violation> validate(const json& instance) const;
  // Throws input_error "<what>: <path>: <message>" on the first violation.
  void require_valid(const json& instance, const std::string& what) const;

private:
  void check(const json& schema, const json& inst, const std::string& path,
             std::vector<schema_violation>& out) const;
  const json& resolve(const std::string& ref) const;
  json m_root;
};

// JSON pointer of the first number in `v` that is not finite (a literal like 1e400 overflows a
// double when parsed and would be written back as null), or nullopt.
std::optional<std::string> first_non_finite_number(const json& v, const std::string& path = "");

// The schema file schemas/<name> under data_root().
json_schema load_builtin_schema(const std::string& name);

} // namespace accelbench
