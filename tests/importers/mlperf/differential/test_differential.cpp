// The differential test against MLCommons' package checker (mlperf_logging at 7bbf792, ruleset
// 5.0.0): every single-defect variant of real v5.0 folders (variants.cpp) goes through
// accelbench's check_package, and its verdict is held against the one MLCommons gave, recorded
// once by scripts/mlcommons-differential.sh in expected.json. No Python runs here.
//   - MLCommons rejects (or crashes: a package it cannot check is no accepted package) ->
//     accelbench must reject.
//   - MLCommons accepts, accelbench rejects -> allowed only for the variants of deliberate.json,
//     each with its reason, which docs/mlperf.md states too.
//   - accelbench gives a verdict on every variant: no exception escapes check_package.
//   - where MLCommons logged RCP figures, accelbench's "rcp" entries give the same submission
//     mean, RCP mean and smallest accepted mean (1e-6 relative; MLCommons prints the submission
//     mean with 4 decimals, exact for these folders' integer sample counts).
#include <catch2/catch.hpp>

#include <cmath>
#include <set>

#include <fmt/format.h>

#include "importers/mlperf/check_package.hpp"
#include "tests/importers/mlperf/differential/variants.hpp"
#include "tests/importers/mlperf/test_helpers.hpp"

using namespace accelbench;
using namespace accelbench::mlperf;
namespace fs = std::filesystem;
namespace md = mlperf_differential;

namespace {

const fs::path k_data = ACCELBENCH_SOURCE_DIR "/tests/importers/mlperf/differential";
const fs::path k_published = ACCELBENCH_SOURCE_DIR "/results/published/mlperf/training_v5.0";

json load_json(const fs::path& p) { return json::parse(mlperf_test::read(p)); }

// The variant's check, or the exception that escaped it.
struct verdict {
  bool valid = false;
  std::vector<std::string> reasons;
  json rcp = json::array();
  std::string escaped; // what() of an exception; empty when check_package returned
};

verdict check(const md::variant& v, const fs::path& dir) {
  verdict out;
  try {
    md::write_variant(v, dir);
    check_options opt;
    opt.round = "5.0";
    const check_result r = check_package(md::org_folder(v, dir), opt);
    out.valid = r.valid;
    out.reasons = r.reasons;
    const json j = r.to_json();
    if (j.contains("rcp"))
      out.rcp = j["rcp"];
    else
      out.rcp = nullptr;
  } catch (const std::exception& e) {
    out.escaped = e.what();
  }
  return out;
}

// o[f], or null when o has no such member (json::value with a json default trips GCC 12's
// -Wmaybe-uninitialized).
const json& member(const json& o, const char* f) {
  static const json none;
  return o.is_object() && o.contains(f) ? o[f] : none;
}

bool close(const json& a, const json& b) {
  if (!a.is_number() || !b.is_number())
    return false;
  const double x = a.get<double>(), y = b.get<double>();
  return std::abs(x - y) <= 1e-6 * std::max({std::abs(x), std::abs(y), 1e-300});
}

// accelbench's RCP entry for the benchmark folder MLCommons named, or the only one there is.
const json* rcp_entry(const json& rcp, const std::string& benchmark) {
  if (!rcp.is_array())
    return nullptr;
  for (const auto& e : rcp)
    if (e.value("benchmark", "") == benchmark ||
        fs::path(e.value("folder", "")).filename() == benchmark)
      return &e;
  return rcp.size() == 1 ? &rcp[0] : nullptr;
}

// Differences between MLCommons' RCP figures and accelbench's, in words (empty: none).
std::vector<std::string> rcp_differences(const json& expected_rcp, const json& rcp) {
  std::vector<std::string> out;
  for (const auto& want : expected_rcp) {
    if (want["submission_mean"].is_null())
      continue;
    const std::string bench = want.value("benchmark", "");
    const json* got = rcp_entry(rcp, bench);
    if (!got) {
      out.push_back(
          fmt::format("no rcp entry for '{}' (MLCommons: {})", bench, want["message"].dump()));
      continue;
    }
    for (const char* f : {"submission_mean", "rcp_mean", "min_mean"})
      if (!close(want[f], member(*got, f)))
        out.push_back(fmt::format("{} {}: MLCommons {}, accelbench {}", bench, f, want[f].dump(),
                                  member(*got, f).dump()));
  }
  return out;
}

std::string first_reasons(const std::vector<std::string>& r) {
  if (r.empty())
    return "(no reasons)";
  return r.size() == 1 ? r[0] : fmt::format("{} (+{} more)", r[0], r.size() - 1);
}

struct tally {
  size_t agree_accept = 0, agree_reject = 0, deliberate = 0;
  std::vector<std::string> failures;
};

// One variant's outcome against the recorded one; failures appended in words.
void compare(const md::variant& v, const json& want, const json& deliberate, const verdict& got,
             tally& t) {
  const std::string mlc = want["verdict"];
  const std::string mlc_says =
      want["errors"].empty() ? mlc : fmt::format("{}: {}", mlc, want["errors"][0].dump());
  if (!got.escaped.empty()) {
    t.failures.push_back(
        fmt::format("{}: no verdict, exception '{}' (MLCommons {})", v.id, got.escaped, mlc_says));
    return;
  }
  if (mlc != "accept" && got.valid)
    t.failures.push_back(
        fmt::format("{}: MLCommons {}; accelbench VALID ({})", v.id, mlc_says, v.defect));
  else if (mlc == "accept" && !got.valid && !deliberate.contains(v.id))
    t.failures.push_back(
        fmt::format("{}: MLCommons accept; accelbench INVALID, not in deliberate.json: {}", v.id,
                    first_reasons(got.reasons)));
  else if (mlc == "accept" && got.valid && deliberate.contains(v.id))
    t.failures.push_back(
        fmt::format("{}: listed in deliberate.json but both accept: remove it", v.id));
  else if (mlc == "accept" && !got.valid)
    ++t.deliberate;
  else if (mlc == "accept")
    ++t.agree_accept;
  else
    ++t.agree_reject;
  if (got.rcp.is_null()) {
    if (!want["rcp"].empty())
      t.failures.push_back(fmt::format("{}: check_result JSON has no \"rcp\" array", v.id));
    return;
  }
  for (const auto& d : rcp_differences(want["rcp"], got.rcp))
    t.failures.push_back(fmt::format("{}: RCP {}", v.id, d));
}

} // namespace

TEST_CASE("differential: check-package gives MLCommons' verdict on every variant of real folders",
          "[mlperf][differential]") {
  const json expected = load_json(k_data / "expected.json");
  const json deliberate = load_json(k_data / "deliberate.json");
  const std::vector<md::variant> variants = md::make_variants(k_published);
  REQUIRE(variants.size() >= 150);

  // The recording and the generator describe the same variants.
  std::set<std::string> generated, recorded;
  for (const auto& v : variants)
    generated.insert(v.id);
  for (const auto& [id, _] : expected["variants"].items())
    recorded.insert(id);
  for (const auto& id : generated)
    if (!recorded.count(id))
      FAIL_CHECK(id + ": no recorded verdict (rerun scripts/mlcommons-differential.sh)");
  for (const auto& id : recorded)
    if (!generated.count(id))
      FAIL_CHECK(id + ": recorded but no longer generated");
  for (const auto& [id, reason] : deliberate.items())
    if (!recorded.count(id))
      FAIL_CHECK(id + ": in deliberate.json but no such variant");

  mlperf_test::temp_dir tmp;
  tally t;
  for (const auto& v : variants) {
    if (!expected["variants"].contains(v.id))
      continue;
    compare(v, expected["variants"][v.id], deliberate, check(v, tmp.path), t);
    fs::remove_all(tmp.path / v.id);
  }
  fmt::print("differential: {} variants; agree {} (accept {}, reject {}); deliberately stricter "
             "{}; disagree {}\n",
             variants.size(), t.agree_accept + t.agree_reject, t.agree_accept, t.agree_reject,
             t.deliberate, t.failures.size());
  for (const auto& f : t.failures) {
    fmt::print("  {}\n", f);
    FAIL_CHECK(f);
  }
}

TEST_CASE("differential: the recording names MLCommons' commit, and every deliberate difference "
          "is explained in docs/mlperf.md",
          "[mlperf][differential]") {
  const json expected = load_json(k_data / "expected.json");
  CHECK(expected["mlcommons"]["commit"].get<std::string>().rfind("7bbf792", 0) == 0);
  CHECK(expected["mlcommons"]["ruleset"] == "5.0.0");
  const std::string doc = mlperf_test::read(ACCELBENCH_SOURCE_DIR "/docs/mlperf.md");
  const size_t section = doc.find("## Where check-package is stricter than MLCommons");
  REQUIRE(section != std::string::npos);
  const json deliberate = load_json(k_data / "deliberate.json");
  for (const auto& [id, reason] : deliberate.items()) {
    INFO(id << ": " << reason.dump());
    CHECK(reason.is_string());
    CHECK_FALSE(reason.get<std::string>().empty());
    CHECK(doc.find("`" + id + "`", section) != std::string::npos);
  }
}

TEST_CASE("differential: the variants are the same on every call", "[mlperf][differential]") {
  const auto a = md::make_variants(k_published);
  const auto b = md::make_variants(k_published);
  REQUIRE(a.size() == b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    INFO(a[i].id);
    CHECK(a[i].id == b[i].id);
    CHECK(a[i].pkg.files == b[i].pkg.files);
    CHECK(a[i].pkg.folders == b[i].pkg.folders);
  }
}
