// The seed checker as MLCommons' package checker applies it (importers/mlperf/seed_check.hpp),
// the package_checker_params bypass, and the package-level warnings MLCommons does not give (a
// seed reused by another system's folder, a system count that is not a whole number). Each
// package case is a copy of the published NVIDIA v5.0 folder with one file edited; the comment
// says what MLCommons' package checker (mlperf_logging 7bbf792, training 5.0.0) printed for the
// same variant.
#include <catch2/catch.hpp>

#include <functional>
#include <regex>

#include "harness/core/mllog.hpp"
#include "importers/mlperf/check_package.hpp"
#include "importers/mlperf/package_params.hpp"
#include "importers/mlperf/seed_check.hpp"
#include "test_helpers.hpp"

using namespace accelbench;
using namespace accelbench::mlperf;
namespace fs = std::filesystem;

namespace {

const char* const k_nyx = "results/nyx_n1_ngc25.04_nemo/llama2_70b_lora";

std::string lines_of(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v)
    out += "  " + s + "\n";
  return out;
}

bool has(const std::vector<std::string>& v, const std::string& part) {
  for (const auto& s : v)
    if (s.find(part) != std::string::npos)
      return true;
  return false;
}

// A copy of the published NVIDIA v5.0 organisation folder that a test may edit.
struct nvidia_copy {
  mlperf_test::temp_dir tmp;
  fs::path org;
  nvidia_copy() : org(tmp.path / "training_v5.0/NVIDIA") {
    fs::create_directories(org.parent_path());
    fs::copy(mlperf_test::shared_data() / "training_v5.0/NVIDIA", org, fs::copy_options::recursive);
  }
  void edit(const std::string& rel, const std::function<std::string(std::string)>& fn) const {
    mlperf_test::write(org / rel, fn(mlperf_test::read(org / rel)));
  }
  check_result check(bool bypass = false) const {
    check_options opt;
    opt.seed_checker_bypass = bypass;
    return check_package(org, opt);
  }
};

std::string nyx_file(int i) { return fmt::format("{}/result_{}.txt", k_nyx, i); }

// `text` with its (first) seed line rewritten by `fn`.
std::function<std::string(std::string)>
on_seed_line(const std::function<std::string(const std::string&)>& fn) {
  return [fn](std::string text) {
    const size_t at = text.find("\"key\": \"seed\"");
    const size_t begin = text.rfind('\n', at) + 1;
    const size_t end = text.find('\n', at);
    return text.replace(begin, end - begin, fn(text.substr(begin, end - begin)));
  };
}

std::function<std::string(std::string)> seed_value(const std::string& v) {
  return on_seed_line([v](const std::string& l) {
    return std::regex_replace(l, std::regex("\"value\": [^,]+,"), "\"value\": " + v + ",");
  });
}

std::string seed_of(const nvidia_copy& c, int i) {
  std::smatch m;
  const std::string text = mlperf_test::read(c.org / nyx_file(i));
  REQUIRE(std::regex_search(text, m, std::regex("\"key\": \"seed\", \"value\": (\\d+)")));
  return m[1];
}

std::string seed_reasons(const check_result& r) {
  return lines_of(r.reasons) + "warnings:\n" + lines_of(r.warnings);
}

} // namespace

TEST_CASE("seed check: the published NVIDIA folder passes with no seed warning", "[mlperf][seed]") {
  // MLCommons: PACKAGE CHECKER FOUND NO ERRORS.
  nvidia_copy c;
  const check_result r = c.check();
  INFO(seed_reasons(r));
  CHECK(r.valid);
  CHECK_FALSE(has(r.warnings, "seed"));
  CHECK_FALSE(has(r.warnings, "not a whole number"));
}

TEST_CASE("seed check: a line mlp_parser cannot parse in one run rejects the package",
          "[mlperf][seed]") {
  nvidia_copy c;
  bool compliance_drops_it = true; // whether check_log finds the line wrong too
  SECTION("a malformed :::MLLOG line") {
    // MLCommons: "Seed checker failed and found the following errors: Error found when querying
    // seeds from .../result_3.txt: Found parsing errors: ..."; PACKAGE CHECKER FOUND ERRORS.
    c.edit(nyx_file(3), [](const std::string& t) { return t + ":::MLLOG {oops\n"; });
  }
  SECTION("a truncated file") {
    // MLCommons: the same seed checker error, then a traceback (JSONDecodeError, in the RCP stage).
    c.edit(nyx_file(3), [](const std::string& t) { return t.substr(0, t.size() - 40); });
  }
  SECTION("the marker again inside a value") {
    // mlp_parser parses from the last ':::MLLOG ' of a line. MLCommons: seed checker "Found
    // parsing errors"; FOUND ERRORS.
    compliance_drops_it = false;
    c.edit(nyx_file(3), [](const std::string& t) {
      return t + ":::MLLOG {\"namespace\": \"\", \"time_ms\": 1745154694826, \"event_type\": "
                 "\"POINT_IN_TIME\", \"key\": \"note\", \"value\": \"x :::MLLOG y\", "
                 "\"metadata\": {\"file\": \"a.py\", \"lineno\": 1}}\n";
    });
  }
  SECTION("a line without metadata") {
    // MLCommons: a traceback, KeyError: 'metadata' (its compliance checker's parser).
    c.edit(nyx_file(3), [](const std::string& t) {
      return t + ":::MLLOG {\"namespace\": \"\", \"time_ms\": 1745154694826, \"event_type\": "
                 "\"POINT_IN_TIME\", \"key\": \"note\", \"value\": 1}\n";
    });
  }
  const check_result r = c.check();
  INFO(seed_reasons(r));
  CHECK_FALSE(r.valid);
  CHECK(has(r.reasons, "result_3.txt"));
  CHECK(has(r.reasons, "mlp_parser cannot parse this line"));
  CHECK(has(r.reasons, "seed checker fails on a file with parsing errors"));
  // The compliance stage alone takes the file as the run olympic scoring drops.
  CHECK(has(r.warnings, "1 result file does not comply") == compliance_drops_it);
}

TEST_CASE("seed check: a seed event without file or lineno fails", "[mlperf][seed]") {
  nvidia_copy c;
  std::string missing;
  SECTION("no lineno") {
    // MLCommons: "Error found when querying seeds from .../result_3.txt: 'lineno'"; FOUND ERRORS.
    c.edit(nyx_file(3), on_seed_line([](const std::string& l) {
             return std::regex_replace(l, std::regex(", \"lineno\": \\d+"), "");
           }));
    missing = "'lineno'";
  }
  SECTION("no file") {
    // MLCommons: "... result_3.txt: 'file'"; FOUND ERRORS.
    c.edit(nyx_file(3), on_seed_line([](const std::string& l) {
             return std::regex_replace(l, std::regex("\"file\": \"[^\"]*\", "), "");
           }));
    missing = "'file'";
  }
  const check_result r = c.check();
  INFO(seed_reasons(r));
  CHECK_FALSE(r.valid);
  CHECK(has(r.reasons, "result_3.txt:"));
  CHECK(has(r.reasons, "seed event has no " + missing + " in its metadata"));
}

TEST_CASE("seed check: int() of the value decides, as in Python", "[mlperf][seed]") {
  struct seed_case {
    std::string value;
    bool valid;
  };
  // MLCommons: 12345.75 (truncated), " 12345 " and true (1): FOUND NO ERRORS; "1.5": "invalid
  // literal for int() with base 10: '1.5'", and "abc": FOUND ERRORS.
  for (const auto& sc : std::vector<seed_case>{{"12345.75", true},
                                               {"\" 12345 \"", true},
                                               {"true", true},
                                               {"\"1.5\"", false},
                                               {"\"abc\"", false}}) {
    nvidia_copy c;
    c.edit(nyx_file(3), seed_value(sc.value));
    const check_result r = c.check();
    INFO(sc.value << "\n" << seed_reasons(r));
    CHECK(r.valid == sc.valid);
    CHECK(has(r.reasons, "is not an integer (int() refuses it)") == !sc.valid);
  }
}

TEST_CASE("seed check: no seed, a seed twice, two seeds in a file", "[mlperf][seed]") {
  nvidia_copy c;
  SECTION("no seed") {
    // MLCommons: "Result file .../result_3.txt logs no seed."; FOUND ERRORS.
    c.edit(nyx_file(3), [](const std::string& t) {
      return std::regex_replace(t, std::regex("[^\n]*\"key\": \"seed\"[^\n]*\n"), "");
    });
    const check_result r = c.check();
    INFO(seed_reasons(r));
    CHECK_FALSE(r.valid);
    CHECK(has(r.reasons, "result_3.txt: logs no seed"));
  }
  SECTION("the same seed at the same file and line in two runs") {
    // MLCommons: "Result file .../result_4.txt logs seed S on /workspace/ft-llm/train.py:393.
    // However, result file .../result_3.txt already logs the same seed on the same line.";
    // FOUND ERRORS.
    const std::string s = seed_of(c, 3);
    c.edit(nyx_file(4), seed_value(s));
    const check_result r = c.check();
    INFO(seed_reasons(r));
    CHECK_FALSE(r.valid);
    CHECK(has(r.reasons, "result_4.txt:"));
    CHECK(has(r.reasons, "seed " + s +
                             " logged at /workspace/ft-llm/train.py:393 was already logged there "
                             "by result_3.txt"));
  }
  SECTION("two seeds in one run") {
    // MLCommons: a Python warning only; FOUND NO ERRORS.
    c.edit(nyx_file(3), [](std::string t) {
      const size_t at = t.find("\"key\": \"seed\"");
      const size_t begin = t.rfind('\n', at) + 1, end = t.find('\n', at) + 1;
      std::string second = t.substr(begin, end - begin);
      second = std::regex_replace(second, std::regex("\"lineno\": 393"), "\"lineno\": 394");
      return t.insert(end, second);
    });
    const check_result r = c.check();
    INFO(seed_reasons(r));
    CHECK(r.valid);
    CHECK(has(r.warnings, "result_3.txt: logs 2 seeds"));
  }
}

TEST_CASE("seed check: what the checker lets pass about a seed's value is a warning",
          "[mlperf][seed]") {
  nvidia_copy c;
  SECTION("one seed in two runs, logged at different lines") {
    // MLCommons keys by (file, lineno, seed): FOUND NO ERRORS (tinycorp's retinanet logs its seed
    // at line 395 in one run and 393 in the others, so a copied seed passes there).
    const std::string s = seed_of(c, 3);
    c.edit(nyx_file(4), [&](std::string t) {
      t = seed_value(s)(std::move(t));
      return std::regex_replace(t, std::regex("\"lineno\": 393"), "\"lineno\": 395");
    });
    const check_result r = c.check();
    INFO(seed_reasons(r));
    CHECK(r.valid);
    CHECK(has(r.warnings, "result_4.txt:"));
    CHECK(has(r.warnings, fmt::format("seed {} (at /workspace/ft-llm/train.py:395) is the seed "
                                      "result_3.txt logged at /workspace/ft-llm/train.py:393",
                                      s)));
  }
  SECTION("a seed int() changes; a string of its digits or a whole float is no warning") {
    c.edit(nyx_file(3), seed_value("12345.75"));
    c.edit(nyx_file(4), seed_value("\"54321\""));
    c.edit(nyx_file(5), seed_value("777.0"));
    const check_result r = c.check();
    INFO(seed_reasons(r));
    CHECK(r.valid);
    CHECK(has(r.warnings, "result_3.txt:"));
    CHECK(has(r.warnings, "seed 12345.75 is not a whole number; MLCommons' seed checker takes "
                          "int() of it, 12345"));
    CHECK_FALSE(has(r.warnings, "54321"));
    CHECK_FALSE(has(r.warnings, "seed 777"));
  }
}

TEST_CASE("seed check: a string time_ms that float() reads is a line mlp_parser takes",
          "[mlperf][seed]") {
  // MLCommons: FOUND NO ERRORS (float("1745...") reads it).
  nvidia_copy c;
  c.edit(nyx_file(3), on_seed_line([](const std::string& l) {
           return std::regex_replace(l, std::regex("\"time_ms\": (\\d+)"), "\"time_ms\": \"$1\"");
         }));
  const check_result r = c.check();
  INFO(seed_reasons(r));
  CHECK(r.valid);
  CHECK_FALSE(has(r.warnings, "does not comply"));
}

TEST_CASE("seed check: bypassed by package_checker_params or the option", "[mlperf][seed]") {
  nvidia_copy c;
  c.edit(nyx_file(4), seed_value(seed_of(c, 3))); // a duplicate the checker would reject
  SECTION("the word as the file's last line, no newline") {
    // MLCommons: FOUND NO ERRORS ("Bypassing Seed Checker").
    mlperf_test::write(c.org / k_nyx / "package_checker_params", "seed-checker-bypass");
    const check_result r = c.check();
    INFO(seed_reasons(r));
    CHECK(r.valid);
    CHECK(has(r.warnings, "seed checker bypassed (" + (c.org / k_nyx).string()));
    // The file is the package checker's: not an unexpected file.
    CHECK_FALSE(has(r.warnings, "unexpected file"));
  }
  SECTION("in the system's folder") {
    // MLCommons: FOUND NO ERRORS ("Bypassing Seed Checker").
    mlperf_test::write(c.org / "results/nyx_n1_ngc25.04_nemo/package_checker_params",
                       "rcp-bypass\nseed-checker-bypass");
    const check_result r = c.check();
    INFO(seed_reasons(r));
    CHECK(r.valid);
  }
  SECTION("with a newline it is no bypass") {
    // readlines() keeps the '\n'. MLCommons: the seed checker's duplicate error; FOUND ERRORS.
    mlperf_test::write(c.org / k_nyx / "package_checker_params", "seed-checker-bypass\n");
    const check_result r = c.check();
    INFO(seed_reasons(r));
    CHECK_FALSE(r.valid);
    CHECK(has(r.reasons, "was already logged there by result_3.txt"));
  }
  SECTION("--seed-checker-bypass") {
    const check_result r = c.check(true);
    INFO(seed_reasons(r));
    CHECK(r.valid);
    CHECK(has(r.warnings, "seed checker bypassed (--seed-checker-bypass)"));
  }
}

TEST_CASE("package warnings: a seed another system's folder of the benchmark logged",
          "[mlperf][seed]") {
  // tyche's llama31_405b seed line copied into eos-dfw's result_0. MLCommons: FOUND NO ERRORS
  // (it compares seeds within a folder only).
  nvidia_copy c;
  const std::string tyche = "results/tyche_ngpu512_ngc25.04_nemo/llama31_405b/result_0.txt";
  const std::string eos = "results/eos-dfw_n64_ngc25.01_nemo/llama31_405b/result_0.txt";
  const std::string text = mlperf_test::read(c.org / tyche);
  const size_t at = text.find("\"key\": \"seed\"");
  const size_t begin = text.rfind('\n', at) + 1;
  const std::string line = text.substr(begin, text.find('\n', at) - begin);
  c.edit(eos, on_seed_line([&](const std::string&) { return std::string(line); }));
  const check_result r = c.check();
  INFO(seed_reasons(r));
  CHECK(r.valid);
  CHECK(has(r.warnings, (c.org / tyche).string() + ":"));
  CHECK(has(r.warnings,
            "is logged there by another system's llama31_405b too, " + (c.org / eos).string()));
}

TEST_CASE("package warnings: a system count that is not a whole number", "[mlperf][seed]") {
  // MLCommons: FOUND NO ERRORS (system_desc_checker checks that the field is present).
  nvidia_copy c;
  c.edit("systems/nyx_n1_ngc25.04_nemo.json", [](const std::string& t) {
    return std::regex_replace(t, std::regex("\"number_of_nodes\": \"1\""),
                              "\"number_of_nodes\": \"abc\"");
  });
  const check_result r = c.check();
  INFO(seed_reasons(r));
  CHECK(r.valid);
  CHECK(has(r.warnings, "nyx_n1_ngc25.04_nemo.json: number_of_nodes \"abc\" is not a whole "
                        "number from 1 to 1000000"));
}

TEST_CASE("mlp_parser's bad lines beside the reader's own", "[mlperf][seed][mllog]") {
  auto line = [](const std::string& body) { return ":::MLLOG " + body + "\n"; };
  const std::string meta = "\"metadata\": {\"file\": \"a.py\", \"lineno\": 1}";
  const std::string good =
      "{\"namespace\": \"\", \"time_ms\": 5, \"event_type\": \"POINT_IN_TIME\", "
      "\"key\": \"seed\", \"value\": 7, " +
      meta + "}";
  SECTION("taken by both") {
    const mllog::parsed_log log = mllog::parse_mllog("[1,0]<stdout>:" + line(good));
    CHECK(log.events.size() == 1);
    CHECK(log.diagnostics.empty());
    CHECK(log.mlp_parser_errors.empty());
  }
  SECTION("mlp_parser takes what this reader refuses: no event_type, a key that is a number") {
    const mllog::parsed_log log =
        mllog::parse_mllog(line("{\"time_ms\": 5, \"key\": \"x\", \"value\": 1, " + meta + "}") +
                           line("{\"time_ms\": 5, \"event_type\": \"POINT_IN_TIME\", \"key\": 3, "
                                "\"value\": 1, " +
                                meta + "}"));
    CHECK(log.diagnostics.size() == 2);
    CHECK(log.mlp_parser_errors.empty());
  }
  SECTION("a string time_ms float() reads is taken by both") {
    const mllog::parsed_log log = mllog::parse_mllog(
        line(std::regex_replace(good, std::regex("\"time_ms\": 5"), "\"time_ms\": \" 1_000.5 \"")));
    REQUIRE(log.events.size() == 1);
    CHECK(log.events[0].time_ms == 1000);
    CHECK(log.mlp_parser_errors.empty());
    const mllog::parsed_log bad = mllog::parse_mllog(
        line(std::regex_replace(good, std::regex("\"time_ms\": 5"), "\"time_ms\": \"1__0\"")));
    CHECK(bad.events.empty());
    CHECK(bad.mlp_parser_errors.size() == 1);
  }
  SECTION("refused by both, or by mlp_parser alone") {
    const mllog::parsed_log log = mllog::parse_mllog(
        line("{oops") +
        line("{\"time_ms\": 5, \"event_type\": \"POINT_IN_TIME\", \"key\": \"x\", \"value\": 1}") +
        line("{\"time_ms\": null, \"key\": \"x\", \"value\": 1, " + meta + "}") +
        line(std::regex_replace(good, std::regex("\"value\": 7"), "\"value\": \":::MLLOG \"")));
    CHECK(log.mlp_parser_errors.size() == 4);
    CHECK(log.mlp_parser_errors[0].line == 1);
    CHECK(log.mlp_parser_errors[3].line == 4);
    CHECK(log.events.size() == 2); // the line without metadata and the marker's value are kept
  }
  SECTION("a lone carriage return ends mlp_parser's line") {
    const mllog::parsed_log log =
        mllog::parse_mllog("junk\r" + line(good) + line(good + "\r:::MLLOG {oops"));
    CHECK(log.mlp_parser_errors.size() == 1);
    CHECK(log.mlp_parser_errors[0].line == 2);
  }
}

TEST_CASE("int() of a seed and the seed checker's keys", "[mlperf][seed]") {
  auto seeds_of = [](const std::string& value, const std::string& lineno = "1") {
    const mllog::parsed_log log = mllog::parse_mllog(
        ":::MLLOG {\"time_ms\": 5, \"event_type\": \"POINT_IN_TIME\", \"key\": \"seed\", "
        "\"value\": " +
            value + ", \"metadata\": {\"file\": \"a.py\", \"lineno\": " + lineno + "}}\n",
        "r.txt");
    return read_seeds("r.txt", log);
  };
  for (const auto& [value, seed] : std::vector<std::pair<std::string, std::string>>{
           {"42", "42"},
           {"-7.9", "-7"},
           {"0.5", "0"},
           {"\"\\t 0042\\n\"", "42"},
           {"\"1_000\"", "1000"},
           {"\"-0\"", "0"},
           {"false", "0"},
           {"1e20", "100000000000000000000"},
           {"18446744073709551615", "18446744073709551615"}}) {
    INFO(value);
    const file_seeds f = seeds_of(value);
    REQUIRE(f.error.empty());
    REQUIRE(f.seeds.size() == 1);
    CHECK(f.seeds[0].seed == seed);
  }
  for (const std::string value :
       {"\"1.5\"", "\"abc\"", "\"\"", "\"1__0\"", "\"_1\"", "null", "[1]", "{}"}) {
    INFO(value);
    CHECK_THAT(seeds_of(value).error, Catch::Contains("is not an integer"));
  }
  // Python's tuples: lineno 5 and 5.0 are equal, 5 and "5" are not.
  auto duplicate = [&](const std::string& a, const std::string& b) {
    file_seeds x = seeds_of("1", a), y = seeds_of("1", b);
    y.file = "s.txt";
    return !judge_seeds({x, y}).reasons.empty();
  };
  CHECK(duplicate("5", "5.0"));
  CHECK(duplicate("1", "true"));
  CHECK_FALSE(duplicate("5", "\"5\""));
  CHECK_THAT(seeds_of("1", "[5]").error, Catch::Contains("is a list or an object"));
}

TEST_CASE("package_checker_params is read as readlines() gives its lines", "[mlperf][seed]") {
  mlperf_test::temp_dir tmp;
  auto with = [&](const std::string& text) {
    mlperf_test::write(tmp.path / "package_checker_params", text);
    return package_param(tmp.path, k_seed_checker_bypass_param);
  };
  CHECK(with("seed-checker-bypass"));
  CHECK(with("rcp-bypass\nseed-checker-bypass"));
  CHECK_FALSE(with("seed-checker-bypass\n"));
  CHECK_FALSE(with("seed-checker-bypass\r\n"));
  CHECK_FALSE(with("seed-checker-bypass\r"));
  CHECK_FALSE(with(" seed-checker-bypass"));
  CHECK_FALSE(with("seed-checker-bypass\nrcp-bypass"));
  CHECK(package_param(tmp.path, k_rcp_bypass_param));
  fs::remove(tmp.path / "package_checker_params");
  CHECK_FALSE(package_param(tmp.path, k_seed_checker_bypass_param));
}
