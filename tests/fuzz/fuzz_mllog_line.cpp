// The MLLOG line parser (importers/mlperf/mllog: one ":::MLLOG {json}" line of a framework log).
// Malformed lines are diagnostics, never exceptions. Property: parse_mllog never throws, and each
// event it accepts, written back by format_event, parses again as exactly that one event.
#include "harness/core/mllog.hpp"
#include "tests/fuzz/fuzz_common.hpp"

using namespace accelbench;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text = fuzz::as_text(data, size);
  fuzz::must_succeed("parse_mllog", [&] {
    mllog::parsed_log log = mllog::parse_mllog(text, "fuzz.txt");
    for (const mllog::event& e : log.events) {
      const std::string line = mllog::format_event(e);
      mllog::parsed_log again = mllog::parse_mllog(line, "again.txt");
      if (again.events.size() != 1 || !again.diagnostics.empty())
        fuzz::finding("format_event wrote a line parse_mllog does not read back", line);
      const mllog::event& b = again.events.front();
      if (b.key != e.key || b.type != e.type || b.time_ms != e.time_ms)
        fuzz::finding("format_event round trip changed the event", line);
    }
  });
  return 0;
}
