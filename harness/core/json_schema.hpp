#pragma once
// A small JSON Schema (draft 2020-12) validator for the schemas in schemas/. It implements the
// keywords those schemas use: type, properties, required, additionalProperties, patternProperties,
// items, prefixItems-free arrays, enum, const, minimum, maximum, exclusiveMinimum, minLength,
// minItems, maxItems, pattern, $ref (local: #/$defs/...), anyOf, oneOf, allOf.
// Unknown keywords are ignored, as the specification requires of annotations.
#include <filesystem>
#include <string>
#include <vector>

#include "harness/core/model.hpp"

namespace accelbench {

struct schema_violation {
  std::string path;     // JSON pointer into the instance: /runs/3/samples
  std::string message;  // what is wrong
};

class json_schema {
public:
  explicit json_schema(json schema);
  static json_schema load(const std::filesystem::path& file);  // throws input_error
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

// The schema file schemas/<name> under data_root().
json_schema load_builtin_schema(const std::string& name);

} // namespace accelbench
