// The MLPerf system description reader (<org>/systems/<system>.json) as `import --format mlperf`
// and `check-package` read it: ingest_org over a scratch organisation folder whose one system
// description is the input and whose one result is a real published log, then the description
// checks and the package check. Property: a bad description is a diagnostic or a reason for an
// INVALID verdict (or an exit-2 error), never another failure, and the runs made can be exported
// and read back.
#include <filesystem>

#include "harness/core/results_document.hpp"
#include "harness/core/text_input.hpp"
#include "importers/mlperf/check_package.hpp"
#include "importers/mlperf/ingest.hpp"
#include "tests/fuzz/fuzz_common.hpp"

#ifndef ACCELBENCH_SOURCE_DIR
#error "ACCELBENCH_SOURCE_DIR must name the source tree (for the published log used as result)"
#endif

using namespace accelbench;
namespace fs = std::filesystem;

namespace {

// The shortest published log (48 lines): the description is what is fuzzed, the log only gives
// it a run to describe.
const fs::path k_log = fs::path(ACCELBENCH_SOURCE_DIR) /
                       "results/published/mlperf/training_v4.0/NVIDIA/results/"
                       "eos_ngc24.04_nemo/llama2_70b_lora/result_8.txt";

// training_v4.0/Org/{systems/sys.json, results/sys/llama2_70b_lora/result_0.txt}
const fs::path& org_dir() {
  static const fs::path dir = [] {
    fs::path org = fuzz::scratch_dir() / "training_v4.0" / "Org";
    fs::create_directories(org / "systems");
    fs::create_directories(org / "results" / "sys" / "llama2_70b_lora");
    fs::copy_file(k_log, org / "results" / "sys" / "llama2_70b_lora" / "result_0.txt");
    return org;
  }();
  return dir;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text = fuzz::as_text(data, size);
  fuzz::write_file(org_dir() / "systems" / "sys.json", text);
  fuzz::guarded([&] {
    mlperf::ingest_result res = mlperf::ingest_org(org_dir());
    for (const auto& s : res.systems) {
      mlperf::check_system_description(s.fields, "4.0");
      fuzz::must_succeed("system description to JSON", [&] { dump_json(s.to_json()); });
    }
    std::string doc;
    fuzz::must_succeed("export of the ingested runs", [&] {
      doc = dump_json(results_document(res.runs, json::array(), json::array()), 2);
    });
    fuzz::must_succeed("re-import of our own export",
                       [&] { read_results_document(doc, "re-export.json", nullptr); });
    // check-package reads the same description (a one-result package is INVALID).
    dump_json(mlperf::check_package(org_dir()).to_json());
  });
  return 0;
}
