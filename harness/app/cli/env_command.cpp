// accelbench env: the detected CPU, the backends and the measured peak.
#include <iostream>
#include <memory>
#include <vector>

#include <fmt/format.h>

#include "harness/app/cli/command.hpp"
#include "harness/app/cli/options.hpp"
#include "harness/core/build_info.hpp"
#include "harness/core/environment.hpp"
#include "harness/core/error.hpp"
#include "harness/core/peak.hpp"
#include "harness/core/text_input.hpp"

namespace accelbench::cli {

namespace {

// Each dtype's peak and the unit it comes from: "fp32 0.120 TFLOP/s (avx512 fma), bf16 ...".
std::string peak_per_dtype(const cpu_peak& peak) {
  std::string out;
  for (const char* dt : {"fp32", "bf16", "fp16", "int8"}) {
    const peak_unit* u = best_unit(peak, dt);
    const bool legacy = peak.units.empty() && (dt == std::string("fp32") ||
                                               (dt == std::string("bf16") && peak.bf16_tflops > 0));
    if (!u && !legacy)
      continue;
    const std::string rate =
        fmt::format("{} {:.3f} {}", dt, u ? u->tflops : peak_tflops_for(peak, dt),
                    dt == std::string("int8") ? "TOP/s" : "TFLOP/s");
    out += (out.empty() ? "" : ", ") + rate + (u ? " (" + u->unit + ")" : " (" + peak.isa + ")");
  }
  return out;
}

// A row of the table: the measured rate beside the documented one, or why there is none.
std::string unit_line(const peak_unit& u) {
  std::string line = fmt::format("{:<20} {:.3f} measured", u.name(), u.tflops);
  if (const double doc = u.documented_tflops(); doc > 0)
    line += fmt::format(", {:.3f} documented ({:g} FLOP/cycle/core x {} cores x {:.2f} GHz)", doc,
                        u.flop_per_cycle_core, u.cores, u.clock_ghz);
  if (u.clock_ghz > 0 && !(u.documented_tflops() > 0))
    line += fmt::format(", clock {:.2f} GHz", u.clock_ghz);
  if (!u.note.empty())
    line += "; " + u.note;
  if (u.tflops > 0 && !u.trustworthy())
    line += "; above its documented figure: not used as a peak";
  return line;
}

int cmd_env(const registry& reg, bool as_json, bool reprobe) {
  json env = capture_environment();
  auto peak = cached_cpu_peak(reprobe);
  // The backends answer for themselves, those this build did not build with the build's reason.
  const std::vector<backend_status> statuses = reg.backend_statuses();
  json backends = json::array();
  for (const auto& b : statuses)
    backends.push_back({{"name", b.name},
                        {"available", b.available},
                        {"detail", b.detail},
                        {"devices", b.devices}});
  if (as_json) {
    std::cout << dump_json(json{{"environment", env},
                                {"backends", backends},
                                {"peak", peak.to_json()},
                                {"fingerprint", environment_fingerprint(env)}},
                           2)
              << "\n";
    return exit_ok;
  }
  std::cout << fmt::format("accelbench {} (revision {}{})\n", build_info::version(),
                           build_info::git_revision(), build_info::git_dirty() ? ", dirty" : "");
  std::cout << fmt::format("cpu        {} — {} logical cores, {} MHz, {}\n",
                           env["cpu"]["model"].get<std::string>(),
                           env["cpu"]["logical_cores"].get<int>(), env["cpu"]["mhz"].get<double>(),
                           env["cpu"]["isa"].get<std::string>());
  std::cout << fmt::format("memory     {:.1f} GiB total, {:.1f} GiB available\n",
                           env["memory"]["total_bytes"].get<double>() / 1073741824.0,
                           env["memory"]["available_bytes"].get<double>() / 1073741824.0);
  std::cout << fmt::format("os         {} ({})\n", env["os"]["name"].get<std::string>(),
                           env["os"]["kernel"].get<std::string>());
  std::cout << fmt::format("compiler   {} [{}]\n", env["compiler"].get<std::string>(),
                           env["build_type"].get<std::string>());
  for (const auto& [k, v] : env["libraries"].items())
    std::cout << fmt::format("library    {:<9} {}\n", k, v.get<std::string>().substr(0, 100));
  std::cout << fmt::format("peak       {} ({} threads, measured {})\n", peak_per_dtype(peak),
                           peak.threads, peak.measured_at);
  for (const peak_unit& u : peak.units)
    std::cout << fmt::format("  unit     {}\n", unit_line(u));
  if (!peak.amx.empty())
    std::cout << fmt::format("  amx      {}\n", peak.amx);
  if (!peak.note.empty())
    std::cout << fmt::format("           {}\n", peak.note);
  // A loaded probe reads low: say so, since no run gets a % of peak from it.
  if (!peak.quiet())
    std::cout << fmt::format(
        "           not cached, no % of peak from it: {}; run `accelbench env --reprobe` on a "
        "quiet machine\n",
        peak.other_load < 0
            ? std::string("the load while probing is not recorded")
            : fmt::format("other processes used {:.0f}% of the cores while probing (limit {:.0f}%)",
                          100 * peak.other_load, 100 * k_probe_max_other_load));
  for (const auto& b : statuses)
    std::cout << fmt::format("backend    {:<5} {} — {}\n", b.name,
                             b.available ? "available" : "unavailable", b.detail);
  std::cout << fmt::format("fingerprint {}\n", environment_fingerprint(env));
  return exit_ok;
}

} // namespace

command_hook add_env(CLI::App& app, context& ctx) {
  struct options {
    bool as_json = false, reprobe = false;
  };
  auto o = std::make_shared<options>();
  auto* env =
      app.add_subcommand("env", "Show the detected CPU, available backends and the measured peak");
  add_json_flag(env, o->as_json);
  env->add_flag("--reprobe", o->reprobe,
                fmt::format("Run the peak probes again (keeps the higher of the cached and new "
                            "rates; a probe while other processes use over {:.0f}% of the cores "
                            "is not cached)",
                            100 * k_probe_max_other_load));
  return {env, [o, &reg = ctx.reg] { return cmd_env(reg, o->as_json, o->reprobe); }};
}

} // namespace accelbench::cli
