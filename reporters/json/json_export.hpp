#pragma once
// The results document (schemas/results.schema.json): runs with config, environment, raw samples,
// metrics, status and validity, plus the systems they ran on and derived scores.
#include <filesystem>
#include <string>
#include <vector>

#include "harness/core/model.hpp"

namespace accelbench::reporters {

constexpr int k_results_schema_version = 1;

json results_document(const std::vector<run>& runs, const json& systems, const json& scores);

// Reads a results document (our export format); throws input_error naming the position of a
// JSON syntax error or the first schema violation.
std::vector<run> read_results_document(const std::string& text, const std::string& origin,
                                       json* systems = nullptr);

// Writes `text` to `path` atomically (temporary file in the same folder, then rename): a reader
// never sees half a file, and a failure leaves no file behind.
void write_file_atomic(const std::filesystem::path& path, const std::string& text);

} // namespace accelbench::reporters
