// check-package and the ingest checks are no stricter than MLCommons' own package checker and
// result summarizer (mlperf_logging: compliance_checker/training_*/common.yaml,
// system_desc_checker, result_summarizer), while still catching what they catch: tested on the real
// published folders in results/published/mlperf and on small modified copies of them. Also the
// energy of MLPerf power results (power/ folders), read as the result summarizer reads them.
#include <catch2/catch.hpp>

#include <regex>

#include <nlohmann/json.hpp>

#include "importers/mlperf/check_log.hpp"
#include "importers/mlperf/check_package.hpp"
#include "importers/mlperf/ingest.hpp"
#include "importers/mlperf/power.hpp"
#include "importers/mlperf/score.hpp"
#include "test_helpers.hpp"

using namespace accelbench;
using namespace accelbench::mlperf;
namespace fs = std::filesystem;

namespace {

std::string joined(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v)
    out += "  " + s + "\n";
  return out;
}

bool any_contains(const std::vector<std::string>& v, const std::string& part) {
  for (const auto& s : v)
    if (s.find(part) != std::string::npos)
      return true;
  return false;
}

// A copy of one published organisation folder, under its round's name (the round is read from
// the path), that a test may modify.
fs::path copy_org(const mlperf_test::temp_dir& tmp, const std::string& round_org) {
  const fs::path to = tmp.path / round_org;
  fs::create_directories(to.parent_path());
  fs::copy(mlperf_test::shared_data() / round_org, to, fs::copy_options::recursive);
  return to;
}

std::vector<fs::path> result_files(const fs::path& org) {
  std::vector<fs::path> out;
  for (const auto& e : fs::recursive_directory_iterator(org / "results"))
    if (e.is_regular_file() && e.path().filename().string().rfind("result_", 0) == 0)
      out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

// Rewrites every line of `key` in `file` with `fn`.
void edit_key(const fs::path& file, const std::string& key,
              const std::function<std::string(const std::string&)>& fn) {
  std::string text = mlperf_test::read(file), out;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    end = end == std::string::npos ? text.size() : end + 1;
    const std::string line = text.substr(pos, end - pos);
    out += line.find("\"key\": \"" + key + "\"") != std::string::npos ? fn(line) : line;
    pos = end;
  }
  mlperf_test::write(file, out);
}

std::function<std::string(const std::string&)> set_value(const std::string& v) {
  return [v](const std::string& l) {
    return std::regex_replace(l, std::regex("\"value\": [^,]*,"), "\"value\": " + v + ",");
  };
}

void edit_system(const fs::path& org, const std::function<void(nlohmann::json&)>& fn) {
  for (const auto& e : fs::directory_iterator(org / "systems")) {
    auto d = nlohmann::json::parse(mlperf_test::read(e.path()));
    fn(d);
    mlperf_test::write(e.path(), d.dump(4));
  }
}

const std::vector<std::string> k_published = {"training_v4.0/NVIDIA", "training_v5.0/NVIDIA"};

} // namespace

TEST_CASE("MLCommons rules: check-package accepts every published submitter folder",
          "[mlperf][rules]") {
  size_t accepted = 0;
  for (const auto& org : k_published) {
    check_result r = check_package(mlperf_test::shared_data() / org);
    INFO(org << "\n" << joined(r.reasons));
    CHECK(r.valid);
    accepted += r.valid;
  }
  CHECK(accepted == k_published.size());
}

TEST_CASE(
    "MLCommons rules: a cache_clear whose value is null passes, as MLCommons requires only the key",
    "[mlperf][rules]") {
  // common.yaml: cache_clear CHECK "'value' in v". Was INVALID ("cache_clear has no value").
  mlperf_test::temp_dir tmp;
  const fs::path org = copy_org(tmp, "training_v5.0/NVIDIA");
  for (const auto& f : result_files(org))
    edit_key(f, "cache_clear", set_value("null"));
  check_result r = check_package(org);
  INFO(joined(r.reasons));
  CHECK(r.valid);
  // The import agrees: no run is INVALID for it.
  auto res = ingest(org);
  REQUIRE_FALSE(res.runs.empty());
  for (const auto& run : res.runs) {
    INFO(run.extra.value("result_file", std::string()) << ": " << joined(run.invalid_reasons));
    CHECK(run.valid);
  }
  // A missing cache_clear is still an error (AT_LEAST_ONE).
  for (const auto& f : result_files(org))
    edit_key(f, "cache_clear", [](const std::string&) { return std::string(); });
  CHECK_FALSE(check_package(org).valid);
}

TEST_CASE("MLCommons rules: system description values that are lists or numbers are warnings",
          "[mlperf][rules]") {
  // system_desc_checker.py checks that the required fields are present and the status value;
  // the type of the other values is not checked. Was INVALID ("must be a string").
  mlperf_test::temp_dir tmp;
  const fs::path org = copy_org(tmp, "training_v5.0/NVIDIA");
  edit_system(org, [](nlohmann::json& d) {
    d["number_of_nodes"] = std::stoi(d["number_of_nodes"].get<std::string>());
    d["accelerators_per_node"] = std::stoi(d["accelerators_per_node"].get<std::string>());
    d["host_networking_topology"] = nlohmann::json::array({"fat tree", "rail optimised"});
    d["accelerator_frequency"] = 1965;
    d["division"] = "Closed"; // the package checker then treats the system as open: noted only
  });
  check_result r = check_package(org);
  INFO(joined(r.reasons));
  CHECK(r.valid);
  CHECK(any_contains(r.warnings, "field 'number_of_nodes' is not a string"));
  CHECK(any_contains(r.warnings, "field 'host_networking_topology' is not a string"));
  CHECK(any_contains(r.warnings, "field 'division' is \"Closed\""));
  // The import reads the integer counts.
  auto res = ingest(org);
  for (const auto& s : res.systems) {
    INFO(s.name);
    CHECK(s.total_accelerators > 0);
  }
}

TEST_CASE("MLCommons rules: what MLCommons checks in a system description is still an error",
          "[mlperf][rules]") {
  mlperf_test::temp_dir tmp;
  {
    const fs::path org = copy_org(tmp, "training_v5.0/NVIDIA");
    edit_system(org, [](nlohmann::json& d) { d.erase("cooling"); });
    check_result r = check_package(org);
    CHECK_FALSE(r.valid);
    CHECK(any_contains(r.reasons, "missing field 'cooling'"));
  }
  mlperf_test::temp_dir tmp2;
  {
    const fs::path org = copy_org(tmp2, "training_v5.0/NVIDIA");
    // A list is never in the allowed list of statuses.
    edit_system(
        org, [](nlohmann::json& d) { d["status"] = nlohmann::json::array({"Available cloud"}); });
    check_result r = check_package(org);
    CHECK_FALSE(r.valid);
    CHECK(any_contains(r.reasons, "field 'status' is [\"Available cloud\"]"));
  }
  // Before round 4.0 the status is not checked: noted only.
  std::vector<std::string> warnings;
  nlohmann::json d = nlohmann::json::parse(mlperf_test::read(
      mlperf_test::shared_data() / "training_v4.0/NVIDIA/systems/eos_ngc24.04_nemo.json"));
  d["status"] = "somewhere";
  CHECK(check_system_description(d, "3.1", benchmark_table::builtin(), &warnings).empty());
  CHECK(any_contains(warnings, "not checked before round 4.0"));
  CHECK_FALSE(check_system_description(d, "4.1").empty());
}

TEST_CASE("MLCommons rules: a timing key repeated with the same value is a warning, and timed as "
          "the summarizer does",
          "[mlperf][rules]") {
  // mlp_compliance.py: EXACTLY_ONE repeated with one value is a warning. Was INVALID ("'run_start'
  // logged 2 times"). The result summarizer then times from the last run_start before the first
  // run_stop.
  mlperf_test::temp_dir tmp;
  const fs::path org = copy_org(tmp, "training_v4.0/NVIDIA");
  const fs::path f = result_files(org).front();
  int64_t start = 0;
  edit_key(f, "run_start", [&](const std::string& l) {
    std::smatch m;
    REQUIRE(std::regex_search(l, m, std::regex("\"time_ms\": (\\d+)")));
    start = std::stoll(m[1]);
    // The same event again, 60 s later.
    return l + std::regex_replace(l, std::regex("\"time_ms\": \\d+"),
                                  "\"time_ms\": " + std::to_string(start + 60000));
  });
  check_result r = check_package(org);
  INFO(joined(r.reasons));
  CHECK(r.valid);
  CHECK(any_contains(r.warnings, "EXACTLY_ONE key 'run_start' logged 2 times (same value)"));
  auto before = ingest(mlperf_test::shared_data() / "training_v4.0/NVIDIA");
  auto after = ingest(org);
  auto minutes_of = [&](const ingest_result& res) {
    for (const auto& run : res.runs)
      if (run.extra.value("result_file", std::string()).find(f.filename().string()) !=
              std::string::npos &&
          run.extra.value("result_file", std::string())
                  .find("eos_ngc24.04_nemo/llama2_70b_lora/") != std::string::npos)
        return run.samples.at(0).value;
    return -1.0;
  };
  REQUIRE(minutes_of(before) > 1);
  CHECK(minutes_of(after) == Approx(minutes_of(before) - 1.0).margin(1e-9));
  // run_start with different values is still an error (in two files: more than olympic scoring
  // tolerates).
  for (const auto& g : {result_files(org)[0], result_files(org)[1]})
    edit_key(g, "run_start", [](const std::string& l) {
      return l + std::regex_replace(l, std::regex("\"value\": null"), "\"value\": 7");
    });
  check_result bad = check_package(org);
  CHECK_FALSE(bad.valid);
  CHECK(any_contains(bad.reasons, "EXACTLY_ONE key 'run_start' logged"));
}

TEST_CASE("MLCommons rules: a run_stop not after run_start is no time to train, in check-package "
          "as in the import",
          "[mlperf][rules]") {
  // MLCommons' checkers pass such a file and its summarizer would score the difference; the
  // import stores the run INVALID. check-package now says the same (time_to_train.hpp): the file
  // does not comply, so olympic scoring drops one, and two reject the package. 1 s back is within
  // the 5 s tolerance of the time-order warning, which used to leave it silent.
  mlperf_test::temp_dir tmp;
  const fs::path org = copy_org(tmp, "training_v4.0/NVIDIA");
  auto stop_at_start = [](const fs::path& file, int64_t offset_ms) {
    int64_t start = -1;
    edit_key(file, "run_start", [&](const std::string& l) {
      std::smatch m;
      REQUIRE(std::regex_search(l, m, std::regex("\"time_ms\": (\\d+)")));
      start = std::stoll(m[1]);
      return l;
    });
    REQUIRE(start > 0);
    edit_key(file, "run_stop", [&](const std::string& l) {
      return std::regex_replace(l, std::regex("\"time_ms\": \\d+"),
                                "\"time_ms\": " + std::to_string(start + offset_ms));
    });
  };
  const std::vector<fs::path> files = result_files(org);
  stop_at_start(files[0], -1000);
  const check_result one = check_package(org);
  INFO(joined(one.reasons));
  CHECK(one.valid);
  CHECK(any_contains(one.warnings, "1 result file does not comply"));
  CHECK(any_contains(one.warnings, "a time to train must be more than 0"));
  const ingest_result imported = ingest(org);
  const std::string rel = fs::relative(files[0], org / "results").generic_string();
  int matched = 0;
  for (const auto& r : imported.runs)
    if (r.extra.value("result_file", std::string()).find(rel) != std::string::npos) {
      ++matched;
      CHECK_FALSE(r.valid);
      CHECK(any_contains(r.invalid_reasons, "a time to train must be more than 0"));
    }
  CHECK(matched == 1);

  stop_at_start(files[1], 0); // a time of exactly 0 is none either
  const check_result two = check_package(org);
  CHECK_FALSE(two.valid);
  CHECK(any_contains(two.reasons, "2 of 10 result files do not comply"));
  CHECK(any_contains(two.reasons, "run_stop is 0 min after run_start"));
}

TEST_CASE("MLCommons rules: a base learning rate not above 0 is a warning", "[mlperf][rules]") {
  // MLCommons: FOUND NO ERRORS for a negated opt_base_learning_rate in every AMD llama2_70b_lora
  // run (the differential variant amd_lora.lr_negative.all).
  mlperf_test::temp_dir tmp;
  const fs::path org = copy_org(tmp, "training_v4.0/NVIDIA");
  const fs::path f = result_files(org).front();
  edit_key(f, "opt_base_learning_rate", [](const std::string& l) {
    return std::regex_replace(l, std::regex("\"value\": ([0-9.e-]+)"), "\"value\": -$1");
  });
  const check_result r = check_package(org);
  INFO(joined(r.reasons));
  CHECK(r.valid);
  CHECK(any_contains(r.warnings, "opt_base_learning_rate -"));
  CHECK(any_contains(r.warnings, "is not above 0: no optimizer trains with it"));
  CHECK_FALSE(any_contains(check_package(copy_org(tmp, "training_v5.0/NVIDIA")).warnings,
                           "opt_base_learning_rate"));
}

TEST_CASE("MLCommons rules: null train_samples passes (value != ''), an empty string does not",
          "[mlperf][rules]") {
  mlperf_test::temp_dir tmp;
  const fs::path org = copy_org(tmp, "training_v5.0/NVIDIA");
  const auto files = result_files(org);
  edit_key(files.front(), "train_samples", set_value("null"));
  check_result r = check_package(org);
  INFO(joined(r.reasons));
  CHECK(r.valid);
  CHECK(any_contains(r.warnings, "'train_samples' has a null value"));
  // An empty string fails in two files: more than olympic scoring tolerates in one benchmark.
  for (size_t i = 0; i < 2; ++i)
    edit_key(files[i], "train_samples", set_value("\"\""));
  check_result bad = check_package(org);
  CHECK_FALSE(bad.valid);
  CHECK(any_contains(bad.reasons, "'train_samples' has an empty value"));
}

TEST_CASE("MLCommons rules: submission_org is required except in round 5.0, whose rules dropped it",
          "[mlperf][rules]") {
  mlperf_test::temp_dir tmp;
  const fs::path v5 = copy_org(tmp, "training_v5.0/NVIDIA");
  for (const auto& f : result_files(v5))
    edit_key(f, "submission_org", [](const std::string&) { return std::string(); });
  check_result r5 = check_package(v5);
  INFO(joined(r5.reasons));
  CHECK(r5.valid);
  CHECK(any_contains(r5.warnings,
                     "'submission_org' is not logged (round 5.0's rules do not require it)"));
  const fs::path v4 = copy_org(tmp, "training_v4.0/NVIDIA");
  for (const auto& f : result_files(v4))
    edit_key(f, "submission_org", [](const std::string&) { return std::string(); });
  check_result r4 = check_package(v4);
  CHECK_FALSE(r4.valid);
  CHECK(any_contains(r4.reasons, "required key 'submission_org' (EXACTLY_ONE) is not logged"));
}

// ---------------------------------------------------------------------------------------------
// Energy from power logs. The published folders here have no power/ results, so the fixture is a
// copy of a real folder with power logs written in the documented format
// (mlperf_logging/mllog/examples/power/README.md): node_<k>.txt per node, sw_<k>.txt per switch.

namespace {

std::string power_line(int64_t t, const std::string& key, const std::string& value,
                       const std::string& type) {
  return fmt::format(
      ":::MLLOG {{\"namespace\": \"\", \"time_ms\": {}, \"event_type\": \"{}\", \"key\": \"{}\", "
      "\"value\": {}, \"metadata\": {{\"host\": \"node_0\"}}}}\n",
      t, type, key, value);
}

// A node log: start at t0, one reading of `watts` every second for `seconds`, stop, efficiency.
std::string node_log(int64_t t0, double watts, int seconds, double eff = 1.0,
                     bool with_stop = true) {
  std::string s = power_line(t0, "power_measurement_start", "null", "INTERVAL_START");
  s += power_line(t0, "conversion_eff", fmt::format("{}", eff), "POINT_IN_TIME");
  for (int i = 1; i <= seconds; ++i)
    s += power_line(t0 + 1000 * i, "power_reading", fmt::format("{}", watts), "POINT_IN_TIME");
  if (with_stop)
    s += power_line(t0 + 1000 * seconds, "power_measurement_stop", "null", "INTERVAL_END");
  return s;
}

} // namespace

TEST_CASE("MLPerf power: node and switch logs give the result summarizer's energy",
          "[mlperf][power]") {
  // 600 W for 100 s of measurement, over a 50 s run: 600 x 50 = 30 kJ (the measured mean power
  // times the time to train); a conversion efficiency scales it.
  mllog::parsed_log node = mllog::parse_mllog(node_log(1000, 600, 100), "node_0.txt");
  std::string why;
  auto j = node_energy_j(node, 50000, &why);
  REQUIRE(j);
  CHECK(*j == Approx(30000));
  CHECK(*node_energy_j(mllog::parse_mllog(node_log(1000, 600, 100, 0.9), "n"), 50000) ==
        Approx(27000));
  // No stop: the last reading is taken as the stop (the summarizer warns and does the same).
  CHECK(*node_energy_j(mllog::parse_mllog(node_log(1000, 600, 100, 1.0, false), "n"), 50000) ==
        Approx(30000));
  // No start: unusable.
  CHECK_FALSE(node_energy_j(
      mllog::parse_mllog(power_line(5, "power_reading", "5", "POINT_IN_TIME"), "n"), 1000, &why));
  CHECK(why.find("power_measurement_start") != std::string::npos);
  // A switch: its estimate (W) over the run.
  mllog::parsed_log sw =
      mllog::parse_mllog(power_line(1, "conversion_eff", "0.5", "POINT_IN_TIME") +
                             power_line(2, "interconnect_power_est", "200", "POINT_IN_TIME"),
                         "sw_0.txt");
  CHECK(switch_energy_j(sw, 50000) == Approx(0.5 * 200 * 50));
}

TEST_CASE("MLPerf power: the import reads power/ folders and the score averages the runs it counts",
          "[mlperf][power]") {
  mlperf_test::temp_dir tmp;
  const fs::path org = copy_org(tmp, "training_v4.0/NVIDIA");
  const fs::path bench = org / "results/eos_ngc24.04_nemo/llama2_70b_lora";
  // Each run: 8 nodes at (1000 + 10 i) W and one switch at 300 W.
  for (int i = 0; i < 10; ++i)
    for (int k = 0; k < 8; ++k) {
      mlperf_test::write(bench / fmt::format("power/result_{}/node_{}.txt", i, k),
                         node_log(0, 1000 + 10 * i, 30));
      if (k == 0)
        mlperf_test::write(bench / fmt::format("power/result_{}/sw_0.txt", i),
                           power_line(0, "interconnect_power_est", "300", "POINT_IN_TIME"));
    }
  auto res = ingest(org);
  REQUIRE(res.runs.size() == 10);
  for (const auto& d : res.diagnostics)
    INFO(d.to_string());
  std::map<std::string, double> expected;
  for (const auto& run : res.runs) {
    const metric* e = run.find_metric("energy_j");
    REQUIRE(e);
    const int i = run.extra["run_index"].get<int>();
    const double seconds = run.samples.at(0).value * 60;
    CHECK(e->value == Approx((8 * (1000 + 10 * i) + 300) * seconds).epsilon(1e-9));
    expected[run.uuid] = e->value;
  }
  score_result s = score(res.runs);
  REQUIRE(s.valid);
  REQUIRE(s.runs_used.size() == 8);
  double sum = 0;
  for (const auto& id : s.runs_used)
    sum += expected[id];
  auto joules = energy_score_j(res.runs, s);
  REQUIRE(joules);
  CHECK(*joules == Approx(sum / 8 * s.scaling_factor));
  // check-package still accepts the folder (a power/ folder is not an unexpected file).
  CHECK(check_package(org).valid);
  // A run whose power logs are missing: no energy for the benchmark, and the import says so.
  fs::remove_all(bench / "power/result_3");
  auto res2 = ingest(org);
  bool said = false;
  for (const auto& d : res2.diagnostics)
    said = said || d.message.find("no power logs for result_3") != std::string::npos;
  CHECK(said);
  score_result s2 = score(res2.runs);
  bool used3 = false;
  for (const auto& run : res2.runs)
    if (run.extra["run_index"] == 3)
      used3 = std::find(s2.runs_used.begin(), s2.runs_used.end(), run.uuid) != s2.runs_used.end();
  if (used3)
    CHECK_FALSE(energy_score_j(res2.runs, s2));
}
