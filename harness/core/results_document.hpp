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
// JSON syntax error, the first schema violation, or the first run require_storable_runs refuses.
std::vector<run> read_results_document(const std::string& text, const std::string& origin,
                                       json* systems = nullptr);

// The one check of runs that arrive from outside (import of every format, selector files, a run
// POSTed to the results server), made before any database is opened. It refuses a run over a
// limit of harness/core/limits.hpp (read_results_document refuses one before it reads the rest
// of its document), what the store
// could not hold (a sample index twice in one run), would resolve silently (a metric name twice:
// which value?), gc could not age (a started_at or finished_at that is not UTC
// "YYYY-MM-DDTHH:MM:SS[.fraction]Z": gc compares them as text; empty is allowed, stored as the
// import time), or compare could not divide by (a sample of 0 or less: every sample is a time, a
// rate or another cost compared as a ratio of medians). Returns what is wrong with `r` in a few
// words naming the value, or "" when nothing.
std::string storable_run_problem(const run& r);

// Throws input_error "ORIGIN: run I (uuid U): PROBLEM" for the first of `runs` with a problem;
// I counts from 0, as in the document's /runs/I.
void require_storable_runs(const std::vector<run>& runs, const std::string& origin);

// True when `t` is a UTC date and time as runs store it: "2026-12-02T10:13:01.123Z" (the fraction
// optional, 1 to 9 digits), with a month, day, hour, minute and second that exist.
bool is_utc_timestamp(const std::string& t);

} // namespace accelbench
