#include "workloads/plugin/plugin_workload.hpp"

#include <cmath>

#include <fmt/format.h>

#include "harness/core/dtype.hpp"
#include "harness/core/error.hpp"
#include "harness/core/hash.hpp"
#include "harness/core/kernel_metrics.hpp"
#include "harness/core/text_input.hpp"
#include "harness/dist/dist.hpp"
#include "harness/measure/kernel_run.hpp"
#include "workloads/plugin/plugin_kernel.hpp"
#include "workloads/plugin/plugin_worker.hpp"
#ifdef ACCELBENCH_HAVE_DEVICE
#include "harness/device/device.hpp"
#endif

namespace accelbench::plugin {

namespace {

constexpr size_t k_err_size = 512;

// A config as the plugin reads it: parallel arrays of names and values (cfg outlives it).
class c_config {
public:
  explicit c_config(const config& cfg) {
    for (const auto& [k, v] : cfg.values) {
      m_names.push_back(k.c_str());
      m_values.push_back(v.c_str());
    }
    m_view = {m_names.size(), m_names.data(), m_values.data()};
  }
  const accelbench_plugin_config* get() const { return &m_view; }

private:
  std::vector<const char*> m_names, m_values;
  accelbench_plugin_config m_view{};
};

// The plugin's message: its first line, at most k_err_size bytes, printable.
std::string message_of(const char* err) {
  std::string s(err, strnlen(err, k_err_size));
  if (auto nl = s.find('\n'); nl != std::string::npos)
    s.resize(nl);
  return printable(s.empty() ? "(no message)" : s);
}

kernel_peak peak_of(const accelbench_plugin_v1& api) {
  if (std::string(api.device) == "cpu" && api.dtype)
    return cpu_probe_peak(parse_dtype(api.dtype));
  kernel_peak none;
  none.unusable = api.dtype ? "a cuda plugin has no datasheet peak" : "the plugin names no dtype";
  return none;
}

void describe(run& r, const loaded_plugin& p, const accelbench_plugin_work& w) {
  r.extra["implementation"] = fmt::format("plugin {}", p.api->name);
  r.extra["plugin"] = {{"path", p.path}, {"api_version", p.api->head.api_version}};
  r.extra["flops_per_iteration"] = w.flops;
  r.extra["bytes_per_iteration"] = w.bytes;
  r.extra["items_per_iteration"] = w.items;
}

// GB/s and items/s at the median time, beside the kernel metrics, when the plugin counts them.
void add_rate_metrics(run& r, const accelbench_plugin_work& w) {
  const metric* t = r.find_metric("time");
  if (!t || t->value <= 0)
    return;
  if (w.bytes > 0)
    r.add_metric("gb_per_s", w.bytes / t->value / 1e9, "GB/s", direction::higher_is_better);
  if (w.items > 0)
    r.add_metric("items_per_s", w.items / t->value, "items/s", direction::higher_is_better);
}

void check_outputs(run& r, const accelbench_plugin_v1& api, void* state) {
  if (!api.check)
    return;
  char err[k_err_size] = {};
  const bool ok = api.check(state, err, sizeof err) == 0;
  r.extra["correctness"] = {{"passed", ok}, {"checked_by", "plugin"}};
  if (!ok) {
    r.extra["correctness"]["detail"] = message_of(err);
    r.mark_invalid("plugin check failed: " + message_of(err));
  }
}

// The plugin's work per iteration, refused at the boundary unless every field is a finite number
// >= 0: a negative or NaN count would give a negative or NaN throughput (and a CI upside down).
std::string bad_work(const accelbench_plugin_work& w) {
  const std::pair<const char*, double> fields[] = {
      {"flops", w.flops}, {"bytes", w.bytes}, {"items", w.items}};
  for (const auto& [name, value] : fields)
    if (!std::isfinite(value) || value < 0)
      return fmt::format("plugin work: {} = {} per iteration is not a finite number >= 0", name,
                         value);
  return "";
}

// plugin.timeout_s of the ruleset (docs/plugins.md): the bound on one worker, 600 s when the
// ruleset has none; the ruleset schema checks it (a number >= 0, 0: none).
double timeout_of(const ruleset& rules) {
  constexpr double k_default_timeout_s = 600;
  const json& p = rules.section("plugin");
  return p.is_object() ? p.value("timeout_s", k_default_timeout_s) : k_default_timeout_s;
}

// Where a worker process cannot be used, the plugin runs in accelbench's own: a cuda plugin
// (CUDA cannot be used in a child forked after the parent initialised it, which the device check
// before every cuda run does) and a run across ranks (MPI cannot be used in a forked child).
bool in_worker(const accelbench_plugin_v1& api) {
  return std::string(api.device) != "cuda" && !dist::distributed();
}

std::unique_ptr<measure::kernel> kernel_for(const accelbench_plugin_v1& api, void* state) {
  if (std::string(api.device) == "cuda")
    return make_cuda_kernel(api, state);
  return std::make_unique<plugin_kernel>(api, state);
}

class plugin_workload : public workload {
public:
  explicit plugin_workload(const loaded_plugin& p) : m_p(p), m_spec(spec_of(p)) {}
  const workload_spec& spec() const override { return m_spec; }

  void validate(const config& cfg) const override {
    if (!m_p.api->validate)
      return;
    char err[k_err_size] = {};
    if (m_p.api->validate(c_config(cfg).get(), err, sizeof err) != 0)
      throw input_error(fmt::format("{}: {}", m_spec.name, message_of(err)));
  }

  std::string unavailable_reason(const config& cfg) const override {
    if (std::string(m_p.api->device) != "cuda")
      return {};
#ifdef ACCELBENCH_HAVE_DEVICE
    std::string why;
    return device::cuda_available(&why) ? std::string() : "no usable CUDA device: " + why;
#else
    return "this accelbench was built without CUDA";
#endif
  }

  void execute(const config& cfg, run& out, run_context& ctx) const override {
    if (!in_worker(*m_p.api))
      return measure(cfg, out, ctx);
    run_in_worker(out, [&](run& r) { measure(cfg, r, ctx); }, {timeout_of(*ctx.rules), ctx.cancel});
    keep_peak(out);
  }

private:
  // The CPU peak a worker resolved (maybe probing for a second) dies with it: resolved here too,
  // after a measured run's samples as in process, it is this process's from then on, and the
  // workers forked after it inherit it instead of probing once per run.
  void keep_peak(const run& out) const {
    if (out.status == run_status::ok)
      (void)peak_of(*m_p.api);
  }

  // What runs in the worker: setup, work, the kernel-run sequence of the built-in kernels, check.
  void measure(const config& cfg, run& out, const run_context& ctx) const;

  loaded_plugin m_p;
  workload_spec m_spec;
};

void plugin_workload::measure(const config& cfg, run& out, const run_context& ctx) const {
  const accelbench_plugin_v1& api = *m_p.api;
  const std::string key = cfg.key();
  char err[k_err_size] = {};
  void* state = api.setup(c_config(cfg).get(), seed_of(ctx.seed, key), err, sizeof err);
  if (!state)
    return out.mark_failed("plugin setup failed: " + message_of(err));
  const std::unique_ptr<void, void (*)(void*)> owned(state, api.teardown);
  accelbench_plugin_work w{};
  api.work(state, &w);
  if (const std::string why = bad_work(w); !why.empty())
    return out.mark_failed(why);
  auto k = kernel_for(api, state);
  if (!k)
    return out.mark_failed("this accelbench was built without CUDA");
  measure::kernel_run_steps steps;
  steps.flops = w.flops;
  steps.peak = [&] { return peak_of(api); };
  steps.describe = [&](run& r) { describe(r, m_p, w); };
  steps.check = [&](run& r) {
    add_rate_metrics(r, w);
    check_outputs(r, api, state);
  };
  try {
    measure::run_checked_kernel(out, key, *k, ctx, steps);
  } catch (const run_failed& e) {
    out.mark_failed(std::string("plugin run failed: ") + e.what());
  }
}

} // namespace

void throw_run_failed(char* err, size_t err_size) {
  err[err_size - 1] = '\0';
  throw run_failed(message_of(err));
}

void call_run(const accelbench_plugin_v1& api, void* state, int64_t iterations, void* stream) {
  char err[k_err_size] = {};
  if (api.run(state, iterations, stream, err, sizeof err) != 0)
    throw_run_failed(err, sizeof err);
}

#ifndef ACCELBENCH_HAVE_DEVICE
std::unique_ptr<measure::kernel> make_cuda_kernel(const accelbench_plugin_v1&, void*) {
  return nullptr;
}
#endif

std::unique_ptr<workload> make_plugin_workload(const loaded_plugin& p) {
  return std::make_unique<plugin_workload>(p);
}

void register_plugins(registry& reg, const std::vector<std::string>& paths) {
  for (const auto& path : paths) {
    const loaded_plugin p = load_plugin(path);
    if (reg.find(p.api->name))
      throw input_error(printable(fmt::format(
          "plugin {}: workload name {} is already taken (a built-in or an earlier --plugin)", path,
          p.api->name)));
    reg.add(make_plugin_workload(p));
  }
}

} // namespace accelbench::plugin
