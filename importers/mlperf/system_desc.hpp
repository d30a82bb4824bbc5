#pragma once
// An MLPerf system description (<org>/systems/<system>.json) as the import reads it: the
// accelerator counts it states, checked against sane bounds, and the environment its runs get.
#include <filesystem>
#include <string>
#include <vector>

#include "harness/core/model.hpp"

namespace accelbench::mlperf {

struct system_description {
  std::string org;   // organisation folder name
  std::string name;  // system folder / file stem
  std::string round; // "5.0" ("" when the path names none)
  std::filesystem::path file;
  json fields = json::object(); // the whole JSON document, as published
  std::string accelerator_model;
  int64_t accelerators_per_node = 0;
  int64_t nodes = 0;
  int64_t total_accelerators = 0; // nodes x accelerators_per_node
  std::string framework;
  json software_stack = json::object(); // other_software_stack
  std::string division, status;
  // Why the accelerator count above is unknown (0): a count field missing, not a whole number,
  // or outside the sane bounds (system_desc.cpp). Runs of this system are stored INVALID with
  // these.
  std::vector<std::string> problems;
  json to_json() const; // fields plus the derived values under "derived"
};

// The counts of a system description (number_of_nodes, accelerators_per_node,
// host_processors_per_node) that are present but not whole numbers in their sane range, one line
// each as the import words it ("number_of_nodes \"abc\" is not a whole number from 1 to
// 1000000"): the rule the import counts accelerators by (it counts none for such a system).
std::vector<std::string> system_count_problems(const json& fields);

// The description of `fields` (a JSON object) read from `file`: its counts derived, with the
// problems that leave them unknown.
system_description describe_system(const std::string& org, const std::string& name,
                                   const std::string& round, const std::filesystem::path& file,
                                   const json& fields);

// The environment a run of system `s` is stored with (cpu, accelerators, os, framework).
json environment_of(const system_description& s);

} // namespace accelbench::mlperf
