#pragma once
// The system of the result model: a named machine configuration (accelerator model, count per
// node, nodes), measured or published, with its description. Stored by harness/store, read by
// reporters and importers; nothing here knows of SQLite.
#include <cstdint>
#include <string>

#include "harness/core/model.hpp"

namespace accelbench {

struct system_record {
  std::string name;
  std::string accelerator_model;
  int64_t accelerators_per_node = 1;
  int64_t nodes = 1;
  std::string source = "measured";   // measured | published
  json description = json::object(); // e.g. the MLPerf system JSON
  int64_t total_accelerators() const { return accelerators_per_node * nodes; }
};

// The JSON form of a system (results documents, "systems" array).
json to_json(const system_record& s);
// A system from an outside document: absent fields take their defaults, a field of another type
// is an input_error naming the system and the field.
system_record system_from_json(const json& j);

} // namespace accelbench
