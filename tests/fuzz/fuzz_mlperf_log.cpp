// The MLPerf log parser as `import --format mlperf` uses it (importers/mlperf/ingest:
// run_from_log, with the compliance checks of check_log), on one result_N.txt. Property: never
// throws (problems are diagnostics and INVALID/failed runs), and the run it makes can be exported
// and read back by our own export format.
#include "harness/core/results_document.hpp"
#include "harness/core/text_input.hpp"
#include "importers/mlperf/ingest.hpp"
#include "tests/fuzz/fuzz_common.hpp"

using namespace accelbench;

namespace {

// The folder name the log would sit in: the benchmark the log says it is, as submitters name it.
std::string benchmark_of(const mllog::parsed_log& log) {
  const mllog::event* e = log.first("submission_benchmark");
  return e && e->value.is_string() ? e->value.get<std::string>() : "llama2_70b_lora";
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(fuzz::as_text(data, size));
  fuzz::guarded([&] {
    mlperf::result_context ctx;
    ctx.org = "Org";
    ctx.system = "sys";
    ctx.round = "5.0";
    ctx.benchmark = benchmark_of(mllog::parse_mllog(text));
    ctx.relative_path = "Org/results/sys/" + ctx.benchmark + "/result_0.txt";
    std::vector<mllog::diagnostic> diags;
    run r;
    fuzz::must_succeed("run_from_log", [&] { r = mlperf::run_from_log(text, ctx, diags); });
    std::string doc;
    fuzz::must_succeed("export of an ingested run", [&] {
      doc = dump_json(results_document({r}, json::array(), json::array()), 2);
    });
    fuzz::must_succeed("re-import of our own export",
                       [&] { read_results_document(doc, "re-export.json", nullptr); });
  });
  return 0;
}
