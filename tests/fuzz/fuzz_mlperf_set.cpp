// The checks check-package runs over one benchmark folder's result files together
// (importers/mlperf): MLCommons' RCP check (rcp.hpp, for every round with reference data, with and
// without the bypass) and its seed checker (seed_check.hpp). The input is the folder's logs, one
// after the other, each ended by a record separator byte (0x1e); at most 12 are read. Each log is
// repaired and parsed as check-package does. Properties: neither check throws (where MLCommons'
// Python stops with an exception, ours gives a failed verdict); a verdict serialises; a failure is
// never marked bypassed, and a pass of "RCP found" or "RCP Interpolation" without the bypass has
// a submission mean at or above the smallest accepted mean.
#include <cmath>
#include <vector>

#include "harness/core/mllog.hpp"
#include "importers/mlperf/rcp.hpp"
#include "importers/mlperf/seed_check.hpp"
#include "tests/fuzz/fuzz_common.hpp"

using namespace accelbench;

namespace {

// The logs of the input: the text between record separators (the last one may lack its own).
std::vector<mllog::parsed_log> logs_of(std::string_view text) {
  std::vector<mllog::parsed_log> out;
  size_t begin = 0;
  while (begin < text.size() && out.size() < 12) {
    size_t end = text.find('\x1e', begin);
    if (end == std::string_view::npos)
      end = text.size();
    const std::string file = "result_" + std::to_string(out.size()) + ".txt";
    std::vector<mllog::diagnostic> repaired;
    const std::string log =
        mllog::repair_text_lines(std::string(text.substr(begin, end - begin)), file, repaired);
    out.push_back(mllog::parse_mllog(log, file));
    begin = end + 1;
  }
  return out;
}

void check_verdict(const mlperf::rcp_verdict& v, bool bypass) {
  fuzz::must_succeed("rcp verdict to JSON", [&] { (void)v.to_json().dump(); });
  fuzz::must_succeed("rcp verdict summary", [&] { (void)v.summary(); });
  if (!v.pass && v.bypassed)
    fuzz::finding("rcp verdict", "failed and bypassed at once: " + v.summary());
  if (v.bypassed && !bypass)
    fuzz::finding("rcp verdict", "bypassed without the bypass: " + v.summary());
  const bool compared = v.message == "RCP found" || v.message == "RCP Interpolation";
  if (v.pass && !v.bypassed && compared &&
      !(v.submission_mean && v.min_mean && *v.submission_mean >= *v.min_mean))
    fuzz::finding("rcp verdict", "passed below the smallest accepted mean: " + v.summary());
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::guarded([&] {
    const std::vector<mllog::parsed_log> logs = logs_of(fuzz::as_text(data, size));
    std::vector<const mllog::parsed_log*> ptrs;
    ptrs.reserve(logs.size());
    for (const auto& l : logs)
      ptrs.push_back(&l);
    for (const std::string& round : mlperf::rcp_rounds())
      for (bool bypass : {false, true}) {
        mlperf::rcp_verdict v;
        fuzz::must_succeed("check_rcp", [&] { v = mlperf::check_rcp(ptrs, round, bypass); });
        check_verdict(v, bypass);
      }
    std::vector<mlperf::file_seeds> seeds;
    seeds.reserve(logs.size());
    fuzz::must_succeed("seed checker", [&] {
      for (const auto& l : logs)
        seeds.push_back(mlperf::read_seeds(l.file, l));
      (void)mlperf::judge_seeds(seeds);
    });
  });
  return 0;
}
