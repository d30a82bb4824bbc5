#pragma once
// MLCommons' seed checker (package_checker/seed_checker.py) as its package checker applies it:
// closed division (by the system description), rounds 1.0 and later, each benchmark folder's
// result files together, unless bypassed (--seed-checker-bypass, package_checker_params).
//   - a file with a line mlp_parser fails on (parsed_log::mlp_parser_errors) fails: the checker
//     parses the file itself and gives up on its seeds, so one malformed :::MLLOG line or a
//     truncated file rejects the package even where olympic scoring drops that run;
//   - every seed event needs 'file' and 'lineno' in its metadata, and int() must take its value;
//   - a file that logs no seed fails; the same (file, lineno, seed) in two files fails (the later
//     file, in sorted order, names the earlier one); more than one seed in a file is a warning.
// Warnings MLCommons does not give: one seed in two files of the folder at different lines (the
// checker keys by file and line, yet the two runs share a random stream), and a seed int() turns
// into another number (the seed the run used is not the one checked).
// And a package-level warning MLCommons does not give: a seed reused at the same file and line by
// another system's folder of the same benchmark (seed_reuse).
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "harness/core/mllog.hpp"

namespace accelbench::mlperf {

// One seed as the seed checker keys it: (metadata file, metadata lineno, int(value)).
struct seed_record {
  std::string file;   // metadata "file" as logged (a string, or a value's JSON)
  std::string lineno; // metadata "lineno" as logged
  std::string seed;   // int(value), in decimal
  std::string key;    // equal for two records exactly when Python finds their tuples equal
  int64_t line = 0;   // the event's line in the log
  // The value as logged, where int() makes another number of it (12345.75, true, " 1_0 "); ""
  // for a whole number or a string of its digits.
  std::string changed_by_int;
};

// The seeds of one result file, or why the seed checker cannot read them (`error`, the file's
// path and line in front): then `seeds` is empty, as the checker skips the file.
struct file_seeds {
  std::filesystem::path file;
  std::vector<seed_record> seeds;
  std::string error;
};

// Reads the seeds of `log` (the parsed text of `file`).
file_seeds read_seeds(const std::filesystem::path& file, const mllog::parsed_log& log);

struct seed_verdict {
  std::vector<std::string> reasons;  // the seed checker fails
  std::vector<std::string> warnings; // more than one seed in a file; the two of the header
};

// The seed checker's verdict over one benchmark folder's result files, in the package checker's
// order (sorted by name).
seed_verdict judge_seeds(const std::vector<file_seeds>& files);

// Whether the package checker runs the seed checker on a benchmark folder: closed division and
// round 1.0 or later (an unknown round, "": yes).
bool seed_checker_runs(const std::string& round, const std::string& division);

// Seeds of one benchmark logged again by another system's folder of the organisation: the same
// (file, lineno, seed) means the same random stream, which MLCommons checks only within a folder.
class seed_reuse {
public:
  // Warnings for the seeds of `files`, one system's folder of `benchmark`, that another system's
  // folder logged before; then remembers them.
  std::vector<std::string> add(const std::string& benchmark, const std::string& system,
                               const std::vector<file_seeds>& files);

private:
  struct first_use {
    std::string system;
    std::filesystem::path file;
    int64_t line = 0;
  };
  // benchmark -> record key -> the first use by each system, in the order seen
  std::map<std::string, std::map<std::string, std::vector<first_use>>> m_seen;
};

} // namespace accelbench::mlperf
