#include "importers/mlperf/ingest.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>

#include "harness/core/error.hpp"
#include "harness/core/text_input.hpp"
#include "importers/mlperf/folder.hpp"
#include "importers/mlperf/package_params.hpp"
#include "importers/mlperf/power.hpp"
#include "importers/mlperf/rcp.hpp"

namespace accelbench::mlperf {

namespace fs = std::filesystem;

namespace {

// "rel/name" for diagnostics ("name" at the top).
std::string rel_name(const std::string& rel, const fs::path& p) {
  const std::string n = repair_utf8(p.filename().string());
  return rel.empty() || rel == "." ? n : rel + "/" + n;
}

// The entries of `dir` (folder.hpp), sorted, without its links: each is a diagnostic naming it
// and its target, and is skipped (never followed). An entry that cannot be read (no permission)
// is reported by whoever reads it.
std::vector<folder_entry> entries(const fs::path& dir, const std::string& rel,
                                  std::vector<mllog::diagnostic>& diags) {
  std::vector<folder_entry> listed = list_folder(dir), out;
  out.reserve(listed.size());
  for (auto& e : listed) {
    if (e.kind == entry_kind::link)
      diags.push_back({rel_name(rel, e.path), 0, link_refusal(e.path) + "; skipped"});
    else
      out.push_back(std::move(e));
  }
  return out;
}

// Names become run names, uuids and JSON output; one that is not UTF-8 (a folder copied from a
// latin-1 file system) is skipped with a diagnostic rather than stored.
bool usable_name(const fs::path& p, const std::string& rel, std::vector<mllog::diagnostic>& diags) {
  if (valid_utf8(p.filename().string()))
    return true;
  diags.push_back({rel_name(rel, p), 0, "the name is not valid UTF-8; skipped"});
  return false;
}

// result_<i>.txt sorted by i (result_10 after result_9). Entries of any type but links are
// listed: a folder or a FIFO named like a result is reported when it is read, not silently
// skipped.
std::vector<std::pair<long, fs::path>> result_files(const fs::path& dir, const std::string& rel,
                                                    std::vector<mllog::diagnostic>& diags) {
  std::vector<std::pair<long, fs::path>> out;
  for (const auto& e : entries(dir, rel, diags)) {
    const std::string n = e.path.filename().string();
    if (n.size() < 11 || n.rfind("result_", 0) != 0 || e.path.extension() != ".txt")
      continue;
    if (!usable_name(e.path, rel, diags))
      continue;
    const std::string idx = n.substr(7, n.size() - 11);
    char* end = nullptr;
    long i = std::strtol(idx.c_str(), &end, 10);
    out.emplace_back(end && *end == '\0' && !idx.empty() ? i : 1L << 30, e.path);
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<fs::path> subdirs(const fs::path& dir, const std::string& rel,
                              std::vector<mllog::diagnostic>& diags) {
  std::vector<fs::path> out;
  for (const auto& e : entries(dir, rel, diags))
    if (e.kind == entry_kind::folder && usable_name(e.path, rel, diags))
      out.push_back(e.path);
  return out;
}

// Reads and parses one JSON file of a results folder (a system description, scaling.json):
// bounded size and depth, invalid UTF-8 repaired with a diagnostic. Throws input_error.
json read_json(const fs::path& path, const std::string& rel, const std::string& what,
               std::vector<mllog::diagnostic>& diags) {
  return parse_folder_json(mllog::repair_text_lines(read_folder_file(path, what), rel, diags), rel,
                           what, diags);
}

// <org>/systems/*.json. A description that cannot be used is a diagnostic, and `broken` records
// why under the system's name (its runs are then INVALID).
void read_systems(const fs::path& org_dir, const std::string& org, const std::string& round,
                  ingest_result& res, std::map<std::string, std::string>& broken) {
  const std::string rel_dir = org + "/systems";
  if (kind_of(org_dir / "systems") == entry_kind::link) {
    res.diagnostics.push_back({rel_dir, 0, link_refusal(org_dir / "systems") + "; skipped"});
    return;
  }
  for (const auto& e : entries(org_dir / "systems", rel_dir, res.diagnostics)) {
    if (e.path.extension() != ".json" || !usable_name(e.path, rel_dir, res.diagnostics))
      continue;
    const std::string rel = rel_name(rel_dir, e.path);
    const std::string name = e.path.stem().string();
    json j;
    try {
      j = read_json(e.path, rel, "system description", res.diagnostics);
      if (!j.is_object())
        throw input_error("system description is not a JSON object");
    } catch (const input_error& x) {
      res.diagnostics.push_back({rel, 0, x.what()});
      broken[name] = fmt::format("{}: {}", rel, x.what());
      continue;
    }
    system_description s = describe_system(org, name, round, e.path, j);
    for (const auto& p : s.problems)
      res.diagnostics.push_back(
          {rel, 0, p + " (the accelerator count is unknown; the system's runs are INVALID)"});
    res.systems.push_back(std::move(s));
  }
  std::sort(res.systems.begin(), res.systems.end(),
            [](const auto& a, const auto& b) { return a.name < b.name; });
}

// Largest scaling factor accepted. The factor (RCP rules) is the ratio of a submission's epochs
// to converge to the reference's and stays near 1; a factor of 100 would already mean a run a
// hundred times the reference, so anything larger is a broken file, not a penalty.
constexpr double k_max_scaling_factor = 100;

// <bench>/scaling.json, when present, into ctx (else the factor stays 1).
void read_scaling(const fs::path& bench_dir, const std::string& rel_bench, result_context& ctx,
                  std::vector<mllog::diagnostic>& diags) {
  const fs::path scaling = bench_dir / "scaling.json";
  if (kind_of(scaling) == entry_kind::missing) // a link exists, and is refused when read
    return;
  const std::string rel = rel_bench + "/scaling.json";
  try {
    const json j = read_json(scaling, rel, "scaling.json", diags);
    if (j.is_object() && j.contains("scaling_factor") && j["scaling_factor"].is_number()) {
      const double f = j["scaling_factor"].get<double>();
      if (std::isfinite(f) && f > 0 && f <= k_max_scaling_factor) {
        ctx.scaling_factor = f;
        ctx.has_scaling = true;
        return;
      }
    }
    diags.push_back(
        {rel, 0,
         fmt::format("no numeric scaling_factor in (0, {:g}]; using 1", k_max_scaling_factor)});
  } catch (const input_error& x) {
    diags.push_back({rel, 0, fmt::format("{}; using a scaling factor of 1", x.what())});
  }
}

// The RCP check of a closed benchmark folder of a round with RCP data (MLCommons' package
// checker runs it there), recorded on each of its runs as extra.rcp: the score of a folder that
// fails is INVALID (score.cpp), and one that passes faster than the reference mean is scaled by
// the norm factor, as the scaling.json the package checker writes would scale it, when the
// folder publishes no scaling.json of its own. A package_checker_params bypass is honoured as
// the package checker honours it. A folder without the benchmark's number of result files is
// not checked: its score is INVALID for that already, and an olympic mean of too few runs says
// nothing of convergence.
void attach_rcp(std::vector<run>& runs, size_t first, const std::vector<mllog::parsed_log>& logs,
                const fs::path& bench_dir, const result_context& ctx, const std::string& rel_bench,
                const benchmark_table& table, std::vector<mllog::diagnostic>& diags) {
  const auto rounds = rcp_rounds();
  const benchmark_info* info = table.find(ctx.benchmark);
  if (!ctx.system_desc || ctx.system_desc->division != "closed" || !info ||
      logs.size() != static_cast<size_t>(info->required_runs))
    return;
  if (std::find(rounds.begin(), rounds.end(), ctx.round) == rounds.end()) {
    // Said on the runs, never silently skipped: the score is not the one MLCommons would accept.
    const std::string why =
        ctx.round.empty()
            ? "the round is unknown (the path has no training_vX.Y folder; check-package --round "
              "checks it)"
            : fmt::format("round {} has no reference convergence points", ctx.round);
    for (size_t i = first; i < runs.size(); ++i)
      runs[i].extra["rcp_not_checked"] = why;
    return;
  }
  std::vector<const mllog::parsed_log*> ptrs;
  ptrs.reserve(logs.size());
  for (const auto& l : logs)
    ptrs.push_back(&l);
  const bool bypass = package_param(bench_dir.parent_path(), k_rcp_bypass_param) ||
                      package_param(bench_dir, k_rcp_bypass_param);
  rcp_verdict v = check_rcp(ptrs, ctx.round, bypass);
  v.folder = rel_bench;
  json j = v.to_json();
  j["summary"] = v.summary();
  if (!v.pass)
    diags.push_back({rel_bench, 0, v.summary() + " (the folder's score is INVALID)"});
  const bool scale = v.pass && !ctx.has_scaling && v.norm_factor && *v.norm_factor > 1;
  for (size_t i = first; i < runs.size(); ++i) {
    runs[i].extra["rcp"] = j;
    if (scale)
      runs[i].extra["scaling_factor"] = *v.norm_factor;
  }
}

// The folder's own name, also for "DIR/", "." and "..".
std::string folder_name(const fs::path& dir) {
  std::error_code ec;
  fs::path p = fs::absolute(dir, ec).lexically_normal();
  if (p.filename().empty())
    p = p.parent_path();
  return p.filename().string();
}

} // namespace

ingest_result ingest_org(const fs::path& org_dir, const benchmark_table& table) {
  ingest_result res;
  const std::string org = folder_name(org_dir);
  if (!valid_utf8(org))
    throw input_error(
        fmt::format("organisation folder name '{}' is not valid UTF-8", repair_utf8(org)));
  const std::string round = round_from_path(org_dir);
  if (kind_of(org_dir / "results") == entry_kind::link)
    throw input_error(fmt::format("'{}' is {}", (org_dir / "results").string(),
                                  link_refusal(org_dir / "results")));
  if (!is_dir(org_dir / "results"))
    throw input_error(
        fmt::format("'{}' is not an MLPerf organisation folder (no results/)", org_dir.string()));

  std::map<std::string, std::string> broken;
  read_systems(org_dir, org, round, res, broken);

  for (const auto& sys_dir : subdirs(org_dir / "results", org + "/results", res.diagnostics)) {
    const std::string system = sys_dir.filename().string();
    const std::string rel_sys = fmt::format("{}/results/{}", org, system);
    const system_description* desc = nullptr;
    for (const auto& s : res.systems)
      if (s.name == system)
        desc = &s;
    std::string problem;
    if (auto b = broken.find(system); b != broken.end())
      problem = "system description " + b->second;
    else if (desc && !desc->problems.empty())
      problem = fmt::format("system description {}/systems/{}.json: {}", org, system,
                            fmt::join(desc->problems, "; "));
    else if (!desc)
      res.diagnostics.push_back(
          {rel_sys, 0, fmt::format("no system description {}/systems/{}.json", org, system)});
    for (const auto& bench_dir : subdirs(sys_dir, rel_sys, res.diagnostics)) {
      result_context ctx;
      ctx.org = org;
      ctx.system = system;
      ctx.benchmark = bench_dir.filename().string();
      ctx.round = round;
      ctx.system_desc = desc;
      ctx.system_problem = problem;
      const std::string rel_bench = rel_sys + "/" + ctx.benchmark;
      read_scaling(bench_dir, rel_bench, ctx, res.diagnostics);
      const size_t first_run = res.runs.size();
      std::vector<mllog::parsed_log> logs; // the folder's, for its RCP check
      for (const auto& [idx, path] : result_files(bench_dir, rel_bench, res.diagnostics)) {
        ctx.relative_path = rel_bench + "/" + path.filename().string();
        std::string text;
        try {
          text = read_folder_file(path, "MLPerf log");
        } catch (const input_error& e) {
          res.diagnostics.push_back({ctx.relative_path, 0, e.what()});
          continue;
        }
        // run_from_log's steps, the parsed log kept: repaired first, so a latin-1 byte inside an
        // event's string does not lose the event.
        const std::string log_text =
            mllog::repair_text_lines(text, ctx.relative_path, res.diagnostics);
        logs.push_back(mllog::parse_mllog(log_text, ctx.relative_path));
        res.runs.push_back(run_from_parsed_log(logs.back(), log_text, ctx, res.diagnostics, table));
        res.runs.back().extra["run_index"] = idx;
        // Energy from the benchmark's power/ folder, when the submission publishes one.
        attach_energy(res.runs.back(), bench_dir, path.stem().string(), res.diagnostics);
      }
      attach_rcp(res.runs, first_run, logs, bench_dir, ctx, rel_bench, table, res.diagnostics);
    }
  }
  return res;
}

ingest_result ingest(const fs::path& dir, const benchmark_table& table,
                     const org_progress& on_org) {
  // The folder the user named may be a link (their choice); nothing below it is followed.
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    throw input_error(fmt::format("'{}' is not a directory", dir.string()));
  ingest_result all;
  std::vector<fs::path> orgs;
  // Breadth-first: the folder itself, then up to three levels below (rounds / orgs).
  std::vector<fs::path> level = {dir};
  for (int depth = 0; depth <= 3 && !level.empty(); ++depth) {
    std::vector<fs::path> next;
    for (const auto& d : level) {
      if (is_dir(d / "results"))
        orgs.push_back(d);
      else
        for (const auto& s : subdirs(d, d.lexically_relative(dir).string(), all.diagnostics))
          next.push_back(s);
    }
    level = std::move(next);
  }
  if (orgs.empty())
    throw input_error(fmt::format(
        "no MLPerf organisation folder (<org>/results/...) under '{}'{}", dir.string(),
        all.diagnostics.empty() ? "" : " (" + all.diagnostics.front().to_string() + ")"));
  std::sort(orgs.begin(), orgs.end());
  for (size_t i = 0; i < orgs.size(); ++i) {
    const fs::path& o = orgs[i];
    if (on_org)
      on_org(i, orgs.size(), o.lexically_relative(dir).string());
    ingest_result r;
    try {
      r = ingest_org(o, table);
    } catch (const input_error& e) {
      all.diagnostics.push_back({o.lexically_relative(dir).string(), 0, e.what()});
      continue;
    }
    std::move(r.systems.begin(), r.systems.end(), std::back_inserter(all.systems));
    std::move(r.runs.begin(), r.runs.end(), std::back_inserter(all.runs));
    std::move(r.diagnostics.begin(), r.diagnostics.end(), std::back_inserter(all.diagnostics));
  }
  return all;
}

} // namespace accelbench::mlperf
