#include "importers/mlperf/check_package.hpp"

#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>

#include "harness/core/error.hpp"
#include "harness/core/text_input.hpp"
#include "importers/mlperf/check_common.hpp"
#include "importers/mlperf/check_log.hpp"
#include "importers/mlperf/folder.hpp"
#include "importers/mlperf/ingest.hpp"
#include "importers/mlperf/package_params.hpp"
#include "importers/mlperf/seed_check.hpp"

namespace accelbench::mlperf {

namespace fs = std::filesystem;

const std::vector<std::string>& required_system_fields() {
  static const std::vector<std::string> fields = {"submitter",
                                                  "division",
                                                  "status",
                                                  "system_name",
                                                  "number_of_nodes",
                                                  "host_processors_per_node",
                                                  "host_processor_model_name",
                                                  "host_processor_core_count",
                                                  "host_processor_vcpu_count",
                                                  "host_processor_frequency",
                                                  "host_processor_caches",
                                                  "host_processor_interconnect",
                                                  "host_memory_capacity",
                                                  "host_storage_type",
                                                  "host_storage_capacity",
                                                  "host_networking",
                                                  "host_networking_topology",
                                                  "host_memory_configuration",
                                                  "accelerators_per_node",
                                                  "accelerator_model_name",
                                                  "accelerator_host_interconnect",
                                                  "accelerator_frequency",
                                                  "accelerator_on-chip_memories",
                                                  "accelerator_memory_configuration",
                                                  "accelerator_memory_capacity",
                                                  "accelerator_interconnect",
                                                  "accelerator_interconnect_topology",
                                                  "cooling",
                                                  "hw_notes",
                                                  "framework",
                                                  "other_software_stack",
                                                  "operating_system",
                                                  "sw_notes"};
  return fields;
}

std::vector<std::string> check_system_description(const json& desc, const std::string& round,
                                                  const benchmark_table& table,
                                                  std::vector<std::string>* warnings) {
  std::vector<std::string> out;
  auto note = [&](std::string w) {
    if (warnings)
      warnings->push_back(std::move(w));
  };
  if (!desc.is_object())
    return {"system description is not a JSON object"};
  // system_desc_checker.py: every required field present (any JSON type) ...
  for (const auto& f : required_system_fields()) {
    if (!desc.contains(f)) {
      out.push_back(fmt::format("missing field '{}'", f));
      continue;
    }
    // Published descriptions mostly keep values as strings, but lists and numbers occur and
    // MLCommons accepts them: noted only.
    const json& v = desc[f];
    if (!v.is_string() && !(f == "other_software_stack" && v.is_object()))
      note(fmt::format("field '{}' is not a string ({}); MLCommons checks only that it is present",
                       f, short_value(v)));
  }
  // ... and, from round 4.0, a status of the allowed list (a list or a number is never in it).
  if (desc.contains("status")) {
    const json& st = desc["status"];
    const bool checked = round.empty() || compare_rounds(normalize_round(round), "4.0") >= 0;
    if (!st.is_string() || !table.status_allowed(st, round)) {
      std::string w =
          fmt::format("field 'status' is {}, must be one of: {}",
                      st.is_string() ? "'" + st.get<std::string>() + "'" : short_value(st),
                      fmt::join(table.allowed_status(), "; "));
      if (checked)
        out.push_back(std::move(w));
      else
        note(w + " (not checked before round 4.0)");
    }
  }
  // Not checked by MLCommons (the package checker treats any division but "closed" as open).
  if (desc.contains("division") && !(desc["division"] == "closed" || desc["division"] == "open"))
    note(fmt::format("field 'division' is {}, expected 'closed' or 'open'",
                     short_value(desc["division"])));
  for (const char* f : {"submitter", "system_name"})
    if (desc.contains(f) && desc[f].is_string() && desc[f].get<std::string>().empty())
      note(fmt::format("field '{}' is empty", f));
  return out;
}

namespace {
json rcp_json(const std::vector<rcp_verdict>& verdicts) {
  json out = json::array();
  for (const auto& v : verdicts)
    out.push_back(v.to_json());
  return out;
}
} // namespace

json check_result::to_json() const {
  return {{"valid", valid},
          {"verdict", valid ? "VALID" : "INVALID"},
          {"reasons", reasons},
          {"warnings", warnings},
          {"round", round},
          {"systems", systems},
          {"result_files", result_files},
          {"rcp", rcp_json(rcp)}};
}

namespace {

bool is_result_file(const std::string& name) {
  return name.size() > 11 && name.rfind("result_", 0) == 0 &&
         name.compare(name.size() - 4, 4, ".txt") == 0;
}

} // namespace

namespace {

// One submission folder as package_checker.py walks it: the folders, the system descriptions,
// then each system's benchmarks, each benchmark's result files, each file's log and seeds. Every
// defect is a reason (INVALID); what MLCommons tolerates is a warning.
class package_checker {
public:
  package_checker(const fs::path& org_dir, const check_options& opt)
      : m_org(org_dir), m_table(opt.table ? *opt.table : benchmark_table::builtin()),
        m_seed_bypass(opt.seed_checker_bypass), m_rcp_bypass(opt.rcp_bypass) {
    m_r.round = normalize_round(opt.round.empty() ? round_from_path(org_dir) : opt.round);
  }

  check_result run() {
    if (check_folders()) {
      read_systems();
      check_results();
    }
    m_r.valid = m_r.reasons.empty();
    return std::move(m_r);
  }

private:
  void reason(std::string s) { m_r.reasons.push_back(std::move(s)); }
  void warning(std::string s) { m_r.warnings.push_back(std::move(s)); }

  // Folders (dirs) or everything else (files, FIFOs and devices, so that a broken entry is
  // reported when read rather than skipped) in `dir`, sorted. A link is neither: it is a reason
  // of its own, said once, and never followed (folder.hpp).
  std::vector<fs::path> entries(const fs::path& dir, bool dirs) {
    const std::vector<folder_entry> listed = list_folder(dir);
    std::vector<fs::path> out;
    out.reserve(listed.size());
    for (const auto& e : listed) {
      if (e.kind == entry_kind::link) {
        if (m_links.insert(e.path).second)
          reason(fmt::format("{}: {}", e.path.string(), link_refusal(e.path)));
      } else if ((e.kind == entry_kind::folder) == dirs) {
        out.push_back(e.path);
      }
    }
    return out;
  }

  // m_org/NAME must be a folder (not a link to one).
  void need_folder(const std::string& name) {
    const fs::path p = m_org / name;
    if (kind_of(p) == entry_kind::link)
      reason(fmt::format("{}: {}", p.string(), link_refusal(p)));
    else if (!is_dir(p))
      reason(fmt::format("{}: missing {}/ folder", m_org.string(), name));
  }

  // The organisation folder and its systems/ and results/ folders; false when one is missing.
  bool check_folders() {
    std::error_code ec;
    if (!fs::is_directory(m_org, ec)) { // the folder the user named may be a link: their choice
      reason(fmt::format("'{}' is not a directory", m_org.string()));
      return false;
    }
    need_folder("systems");
    need_folder("results");
    if (!is_dir(m_org / "benchmarks"))
      warning(fmt::format("{}: no benchmarks/ folder (implementation code)", m_org.string()));
    return m_r.reasons.empty();
  }

  // System descriptions (system_desc_checker checks every systems/*.json).
  void read_systems() {
    const fs::path systems_dir = m_org / "systems";
    // Folders named *.json too: they are refused when read.
    std::vector<fs::path> system_files = entries(systems_dir, false);
    for (const auto& d : entries(systems_dir, true))
      system_files.push_back(d);
    for (const auto& p : system_files)
      if (p.extension() == ".json")
        read_system(p);
  }
  void read_system(const fs::path& p) {
    // A file that cannot be read or parsed (too large, a folder, nested too deep, not JSON) is a
    // reason for an INVALID verdict, like every other defect of the package: exit 1, not 2.
    json desc;
    try {
      std::vector<mllog::diagnostic> repaired;
      desc = parse_folder_json(
          mllog::repair_text_lines(read_folder_file(p, "system description"), p.string(), repaired),
          p.string(), "system description", repaired);
      for (const auto& d : repaired)
        warning(d.to_string());
    } catch (const input_error& e) {
      reason(fmt::format("{}: {}", p.string(), e.what()));
      return;
    }
    std::vector<std::string> desc_warnings;
    for (const auto& problem : check_system_description(desc, m_r.round, m_table, &desc_warnings))
      reason(fmt::format("{}: {}", p.string(), problem));
    for (const auto& w : desc_warnings)
      warning(fmt::format("{}: {}", p.string(), w));
    // MLCommons reads no count; accelbench's import counts no accelerators for such a system.
    for (const auto& w : system_count_problems(desc))
      warning(fmt::format("{}: {} (MLCommons does not check it; the import counts no accelerators "
                          "for this system)",
                          p.string(), w));
    m_systems[p.stem().string()] = desc;
    ++m_r.systems;
  }

  void check_results() {
    const fs::path results_dir = m_org / "results";
    const auto system_dirs = entries(results_dir, true);
    if (system_dirs.empty())
      reason(fmt::format("{}: no system folders", results_dir.string()));
    for (const auto& sys_dir : system_dirs) {
      const std::string division = division_of(sys_dir);
      for (const auto& bench_dir : entries(sys_dir, true))
        if (const benchmark_info* info = benchmark_to_check(bench_dir))
          check_benchmark(bench_dir, *info, division);
    }
  }

  // The division of a system folder from its description ("closed" when it names none).
  std::string division_of(const fs::path& sys_dir) {
    const std::string system = sys_dir.filename().string();
    auto it = m_systems.find(system);
    if (it == m_systems.end()) {
      reason(fmt::format("{}: no system description systems/{}.json", sys_dir.string(), system));
      return "closed";
    }
    const json& d = it->second;
    if (d.is_object() && d.contains("division") && d["division"].is_string())
      return d["division"];
    return "closed";
  }

  // The benchmark of a folder, or null when package_checker.py skips it (with a warning).
  const benchmark_info* benchmark_to_check(const fs::path& bench_dir) {
    const std::string bench = bench_dir.filename().string();
    const benchmark_info* info = m_table.find(bench);
    if (!info) {
      warning(fmt::format("{}: unknown benchmark '{}', skipped", bench_dir.string(), bench));
      return nullptr;
    }
    if (m_r.round.empty())
      return info;
    const auto* list = m_table.round_benchmarks(m_r.round);
    if (list && std::find(list->begin(), list->end(), bench) == list->end()) {
      warning(fmt::format("{}: '{}' is not a benchmark of round {}, skipped", bench_dir.string(),
                          bench, m_r.round));
      return nullptr;
    }
    return info;
  }

  // The result files of a benchmark folder, sorted; other files are warned about.
  std::vector<fs::path> result_files(const fs::path& bench_dir) {
    std::vector<fs::path> results;
    for (const auto& f : entries(bench_dir, false)) {
      const std::string name = f.filename().string();
      if (is_result_file(name))
        results.push_back(f);
      else if (name != "scaling.json" && name != "package_checker_params")
        warning(
            fmt::format("{}: unexpected file (result files are named result_<i>.txt)", f.string()));
    }
    // A folder named like a result is counted and then refused when read.
    for (const auto& d : entries(bench_dir, true))
      if (is_result_file(d.filename().string()))
        results.push_back(d);
    std::sort(results.begin(), results.end());
    return results;
  }

  void check_benchmark(const fs::path& bench_dir, const benchmark_info& info,
                       const std::string& division) {
    const std::vector<fs::path> results = result_files(bench_dir);
    m_r.result_files += results.size();
    // benchmark_meta.py: the number of result files must be exact.
    if (static_cast<int>(results.size()) != info.required_runs)
      reason(fmt::format("{}: {} result files, {} requires exactly {}", bench_dir.string(),
                         results.size(), info.name, info.required_runs));
    // Per-file compliance; olympic scoring tolerates max_dropped non-compliant files.
    std::vector<std::vector<std::string>> bad;
    m_seed_files.clear();
    m_logs.clear();
    for (const auto& f : results)
      check_result_file(f, bench_dir.filename().string(), division, bad);
    judge_non_compliant(bench_dir, info, results.size(), bad);
    check_seeds(bench_dir, division);
    check_rcp_stage(bench_dir, division);
  }

  void check_result_file(const fs::path& f, const std::string& bench, const std::string& division,
                         std::vector<std::vector<std::string>>& bad) {
    std::string text;
    try {
      text = read_folder_file(f, "MLPerf log");
    } catch (const input_error& e) {
      // Not a log at all (a folder, unreadable, too large): a defect of the package, never the
      // run olympic scoring drops.
      reason(fmt::format("{}: {}", f.string(), e.what()));
      return;
    }
    // Invalid UTF-8 (latin-1 from framework output) is replaced and warned about: the lines
    // still count, as they do when the folder is imported.
    std::vector<mllog::diagnostic> repaired;
    text = mllog::repair_text_lines(text, f.string(), repaired);
    for (const auto& d : repaired)
      warning(d.to_string());
    mllog::parsed_log log = mllog::parse_mllog(text, f.string());
    log_check lc = check_log(log, bench, division, m_r.round, m_table);
    for (const auto& w : lc.warnings)
      warning(w.to_string());
    if (lc.not_converged)
      warning(lc.not_converged->to_string() +
              " (olympic scoring drops it; the RCP check counts it)");
    for (const auto& u : lc.unprocessable)
      reason(u.to_string());
    if (!lc.compliant()) {
      std::vector<std::string> msgs;
      for (const auto& e : lc.errors)
        msgs.push_back(e.to_string());
      bad.push_back(std::move(msgs));
    }
    m_seed_files.push_back(read_seeds(f, log));
    m_logs.push_back(std::move(log));
  }

  // The seed checker where MLCommons runs it (seed_check.hpp), and seeds another system's folder
  // of the benchmark logged too (warnings, in every division).
  void check_seeds(const fs::path& bench_dir, const std::string& division) {
    for (auto& w : m_seed_reuse.add(bench_dir.filename().string(),
                                    bench_dir.parent_path().filename().string(), m_seed_files))
      warning(std::move(w));
    if (!seed_checker_runs(m_r.round, division))
      return;
    if (const std::string why = seed_checker_bypass(bench_dir); !why.empty()) {
      warning(fmt::format("{}: seed checker bypassed ({})", bench_dir.string(), why));
      return;
    }
    seed_verdict v = judge_seeds(m_seed_files);
    for (auto& r : v.reasons)
      reason(std::move(r));
    for (auto& w : v.warnings)
      warning(std::move(w));
  }

  // What bypasses the seed checker for a benchmark folder ("" when nothing does): the option, or
  // package_checker_params in the folder or its system's folder.
  std::string seed_checker_bypass(const fs::path& bench_dir) const {
    if (m_seed_bypass)
      return "--seed-checker-bypass";
    for (const fs::path& folder : {bench_dir.parent_path(), bench_dir})
      if (package_param(folder, k_seed_checker_bypass_param))
        return (folder / k_params_file).string();
    return {};
  }

  // The RCP checker where MLCommons runs it (closed division, a round with reference data):
  // a failure is a reason, a pass scaled by a norm factor > 1 or let through by the bypass a
  // warning, and every verdict is recorded in the result's "rcp" array.
  void check_rcp_stage(const fs::path& bench_dir, const std::string& division) {
    if (division != "closed")
      return;
    if (!rcp_round_known(bench_dir))
      return;
    const std::string bypass = rcp_bypass(bench_dir);
    std::vector<const mllog::parsed_log*> logs;
    logs.reserve(m_logs.size());
    for (const auto& l : m_logs)
      logs.push_back(&l);
    rcp_verdict v = check_rcp(logs, m_r.round, !bypass.empty());
    v.folder = bench_dir.string();
    const std::string where = bench_dir.string();
    if (!v.pass)
      reason(fmt::format("{}: {}", where, v.summary()));
    else if (v.bypassed)
      warning(fmt::format("{}: {}, by {}: the submission committee reviews it", where, v.summary(),
                          bypass));
    else if (v.norm_factor && *v.norm_factor > 1)
      warning(fmt::format("{}: {}: the score is scaled by {:.4f} (MLCommons' package checker "
                          "writes it to scaling.json; accelbench writes nothing into the package)",
                          where, v.summary(), *v.norm_factor));
    m_r.rcp.push_back(std::move(v));
  }

  // Whether the round has RCP data; a warning says why no RCP check was done when it has none.
  bool rcp_round_known(const fs::path& bench_dir) {
    const auto rounds = rcp_rounds();
    if (!m_r.round.empty() && std::find(rounds.begin(), rounds.end(), m_r.round) != rounds.end())
      return true;
    warning(fmt::format("{}: no RCP check: {} (reference convergence points are built in for "
                        "rounds {})",
                        bench_dir.string(),
                        m_r.round.empty() ? "the round is unknown (give --round)"
                                          : "round " + m_r.round + " has no RCP data",
                        fmt::join(rounds, ", ")));
    return false;
  }

  // What bypasses a failed RCP check for a benchmark folder ("" when nothing does): the option,
  // or package_checker_params in the system's folder or the benchmark's.
  std::string rcp_bypass(const fs::path& bench_dir) {
    std::string by = m_rcp_bypass ? "--rcp-bypass" : "";
    for (const fs::path& folder : {bench_dir.parent_path(), bench_dir}) {
      if (by.empty() && package_param(folder, k_rcp_bypass_param))
        by = (folder / k_params_file).string();
      else if (package_param_line_with_break(folder, k_rcp_bypass_param))
        warning(fmt::format("{}: the line '{}' ends in a line break, so it bypasses nothing: "
                            "MLCommons' package checker compares each line with its break, and "
                            "only a last line without one matches",
                            (folder / k_params_file).string(), k_rcp_bypass_param));
    }
    return by;
  }

  // Up to max_dropped non-compliant files are the runs olympic scoring drops (warnings); more
  // make the benchmark INVALID, with every file's errors.
  void judge_non_compliant(const fs::path& bench_dir, const benchmark_info& info, size_t files,
                           const std::vector<std::vector<std::string>>& bad) {
    const size_t allowed = static_cast<size_t>(info.max_dropped);
    if (bad.size() > allowed) {
      reason(fmt::format("{}: {} of {} result files do not comply (at most {} tolerated under "
                         "olympic scoring)",
                         bench_dir.string(), bad.size(), files, allowed));
      for (const auto& msgs : bad)
        for (const auto& m : msgs)
          reason(m);
      return;
    }
    for (const auto& msgs : bad) {
      warning(fmt::format("{}: 1 result file does not comply, accepted under olympic scoring as "
                          "the dropped run",
                          bench_dir.string()));
      for (const auto& m : msgs)
        warning(m);
    }
  }

  const fs::path m_org;
  const benchmark_table& m_table;
  check_result m_r;
  std::map<std::string, json> m_systems;
  std::set<fs::path> m_links; // the links already given as reasons
  const bool m_seed_bypass;
  const bool m_rcp_bypass;
  std::vector<mllog::parsed_log> m_logs; // the result files of the benchmark folder being checked
  std::vector<file_seeds> m_seed_files;  // the seeds of the benchmark folder being checked
  seed_reuse m_seed_reuse;               // the seeds of every benchmark folder checked so far
};

} // namespace

check_result check_package(const fs::path& org_dir, const check_options& opt) {
  return package_checker(org_dir, opt).run();
}

} // namespace accelbench::mlperf
