#pragma once
// The results document (schemas/results.schema.json), the serialization of the result model that
// export, import, publish and the results server share: runs with config, environment, raw
// samples, metrics, status and validity, plus the systems they ran on and derived scores.
#include <filesystem>
#include <string>
#include <vector>

#include "harness/core/model.hpp"

namespace accelbench {

constexpr int k_results_schema_version = 1;

json results_document(const std::vector<run>& runs, const json& systems, const json& scores);

// Reads a results document (our export format); throws input_error naming the position of a
// JSON syntax error or the first schema violation.
std::vector<run> read_results_document(const std::string& text, const std::string& origin,
                                       json* systems = nullptr);

} // namespace accelbench
