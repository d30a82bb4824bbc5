// Shape catalogues (`accelbench run WORKLOAD --shapes FILE`): the catalogue document, its
// parameters and configs, planned as a real run would for the workload the catalogue names.
// Property: planned, or refused with an exit-2 error.
#include "harness/core/text_input.hpp"
#include "tests/fuzz/fuzz_common.hpp"
#include "tests/fuzz/fuzz_plan.hpp"

using namespace accelbench;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::filesystem::path file = fuzz::scratch_dir() / "catalogue.json";
  const std::string_view text = fuzz::as_text(data, size);
  fuzz::write_file(file, text);
  // The workload the catalogue is for (a catalogue for another workload is refused early, which
  // would leave the rest of the document unexplored).
  std::string workload = "gemm";
  json doc = parse_json_lenient(text);
  if (doc.is_object() && doc.contains("workload") && doc["workload"].is_string() &&
      fuzz::workloads().find(doc["workload"].get<std::string>()))
    workload = doc["workload"].get<std::string>();
  fuzz::guarded([&] {
    cli::run_options o;
    o.workload = workload;
    o.shapes = file.string();
    fuzz::plan(o);
  });
  return 0;
}
