#include "workloads/external/program_runs.hpp"

#include <cstdint>
#include <string_view>

#include <fmt/format.h>

#include "harness/core/mllog.hpp"
#include "harness/core/text_input.hpp"
#include "workloads/external/external_workload.hpp"

namespace accelbench::external {

namespace {

constexpr double k_mib = 1024.0 * 1024.0;

// A bound of the ruleset's "external" section in MiB as bytes, or `fallback` when it has none.
std::uint64_t mib_setting(const json& x, const char* key, std::uint64_t fallback) {
  return x.contains(key) ? static_cast<std::uint64_t>(x.at(key).get<double>() * k_mib) : fallback;
}

} // namespace

program_settings program_settings_of(const ruleset& rules) {
  const measurement_settings m = rules.measurement();
  program_settings s;
  s.warmups = m.warmup_iterations;
  s.repetitions = m.repetitions;
  s.max_time_s = m.max_time_s;
  const json& x = rules.section("external");
  if (x.is_object()) {
    s.timeout_s = x.value("timeout_s", s.timeout_s);
    s.kill_grace_s = x.value("kill_grace_s", s.kill_grace_s);
    s.require_protocol = x.value("require_protocol", s.require_protocol);
    s.limits.memory_bytes = mib_setting(x, "max_memory_mib", s.limits.memory_bytes);
    s.limits.open_files = x.value("max_open_files", s.limits.open_files);
    s.limits.file_bytes = mib_setting(x, "max_file_mib", s.limits.file_bytes);
  }
  return s;
}

std::map<std::string, std::string> program_config(const config& cfg) {
  std::map<std::string, std::string> out = cfg.values;
  out.erase("command");
  out.erase("name");
  out.erase("mode");
  return out;
}

launch launch_of(const config& cfg, const program_settings& s, const run_context& ctx) {
  launch l;
  l.argv = command_argv(cfg.at("command"));
  l.config = program_config(cfg);
  l.timeout_s = s.timeout_s;
  l.kill_grace_s = s.kill_grace_s;
  l.limits = s.limits;
  l.cancel = ctx.cancel;
  return l;
}

invocation invoke(const launch& l, const program_settings& s) {
  invocation i;
  i.outcome = run_process(l);
  i.judged = judge(i.outcome, s.require_protocol);
  return i;
}

json argv_json(const std::vector<std::string>& argv) {
  json out = json::array();
  for (const auto& a : argv)
    out.push_back(repair_utf8(a));
  return out;
}

void record_failure(run& out, const std::string& which, const invocation& i) {
  const std::string why = fmt::format("{} of the program: {}", which, i.judged.reason);
  if (i.judged.status == run_status::failed)
    out.mark_failed(why);
  else
    out.mark_invalid(why);
  out.extra["stderr_tail"] = repair_utf8(i.outcome.stderr_tail);
  out.extra["argv"] = argv_json(i.outcome.argv);
}

std::string mllog_lines(const std::string& text) {
  std::string out;
  size_t from = 0;
  while (from < text.size()) {
    const size_t end = std::min(text.find('\n', from), text.size());
    const std::string_view line(text.data() + from, end - from);
    if (line.find(mllog::mllog_marker) != std::string_view::npos) {
      out += line;
      out += '\n';
    }
    from = end + 1;
  }
  return out;
}

} // namespace accelbench::external
