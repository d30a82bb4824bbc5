#include "workloads/collective/collective_workload.hpp"

#include <fmt/format.h>

#include "harness/core/environment.hpp"
#include "harness/core/error.hpp"
#include "harness/core/stats.hpp"
#include "harness/dist/dist.hpp"
#include "harness/measure/measure.hpp"
#include "workloads/collective/collective_backend.hpp"

namespace accelbench::collective {

shape shape_of(const config& cfg) {
  return make_shape(op_from_string(cfg.at("op")), parse_collective_dtype(cfg.at("dtype")),
                    (uint64_t)cfg.get_int("bytes"), dist::size(), cfg.get_bool("inplace"));
}

namespace {

// The bandwidth metrics of nccl-tests from the time per collective (the slowest rank's).
void add_bandwidth_metrics(run& out, const shape& s) {
  std::vector<double> t;
  for (const auto& smp : out.samples)
    t.push_back(smp.value);
  const auto sum = stats::summarize(t);
  const double bytes = (double)s.size_bytes();
  const double algbw = bytes / sum.median / 1e9;
  out.add_metric("time", sum.median, "s", direction::lower_is_better);
  out.add_metric("algbw", algbw, "GB/s", direction::higher_is_better);
  out.add_metric("busbw", algbw * s.bus_factor(), "GB/s", direction::higher_is_better);
  out.add_metric("busbw_ci_low", bytes / sum.ci_high / 1e9 * s.bus_factor(), "GB/s",
                 direction::higher_is_better);
  out.add_metric("busbw_ci_high", bytes / sum.ci_low / 1e9 * s.bus_factor(), "GB/s",
                 direction::higher_is_better);
  out.add_metric("cv", sum.cv, "", direction::lower_is_better);
}

// Checks the output of one fresh collective on every rank; the run is INVALID when any rank's
// output is wrong (the first wrong element is named, with its rank).
void check_on_every_rank(run& out, const shape& s, const void* output) {
  const check_result c = check_output(s, dist::rank(), output);
  const double wrong = dist::sum_all((double)c.wrong);
  const double checked = dist::sum_all((double)c.checked);
  const std::string first = dist::first_nonempty(c.first_wrong);
  out.extra["correctness"] = {
      {"elements_checked", checked},
      {"wrong", wrong},
      {"exact", true},
      {"method", "every element of every rank's output against the value known from the inputs"}};
  if (wrong > 0) {
    out.extra["correctness"]["first_wrong"] = first;
    out.mark_invalid(
        fmt::format("correctness: {} of {} elements wrong ({})", wrong, checked, first));
  }
}

void describe(run& out, const shape& s, const std::string& implementation) {
  out.extra["implementation"] = implementation;
  out.extra["world_size"] = s.ranks;
  out.extra["size_bytes"] = s.size_bytes();
  out.extra["count"] = s.count;
  out.extra["bus_factor"] = s.bus_factor();
  out.extra["bandwidth_definitions"] =
      "nccl-tests: algbw = size / time; busbw = algbw x 2(n-1)/n (allreduce), "
      "(n-1)/n (allgather, reduce_scatter, alltoall), 1 (broadcast, reduce)";
}

class collective_workload : public workload {
public:
  collective_workload()
      : m_backends(built_backends(), unbuilt_backends()),
        m_spec{.name = "collective",
               .family = "kernel",
               .description = "Collective communication across the ranks of the run (MPI on the "
                              "cpu, NCCL on cuda); algbw and busbw as nccl-tests define them",
               .axes = axes(),
               .backends = m_backends.names(),
               .default_ruleset = "kernel-v1",
               .primary_metric = "busbw"} {}
  const workload_spec& spec() const override { return m_spec; }
  std::vector<const backend*> backends() const override { return m_backends.all(); }
  unbuilt_list backends_not_built() const override { return m_backends.unbuilt(); }

  static std::vector<axis> axes() {
    return {
        {"op", axis_type::string, "allreduce", op_names(), 1,
         "the collective (sum for the reductions; root 0)"},
        {"bytes",
         axis_type::integer,
         "1048576",
         {},
         1,
         "size as nccl-tests prints it: the whole buffer (allreduce, broadcast, reduce), the "
         "gathered buffer "
         "(allgather), the input (reduce_scatter), what each rank sends (alltoall)"},
        {"dtype", axis_type::string, "fp32", dtype_names(), 1, "element type"},
        {"inplace", axis_type::boolean, "0", {}, 0, "output in the input buffer"},
    };
  }

  std::string unavailable_reason(const config& cfg) const override {
    const shape s = shape_of(cfg);
    if (s.count == 0)
      return fmt::format("bytes={} holds less than one {} element{} at world size {}",
                         cfg.at("bytes"), to_string(s.type),
                         s.size_bytes() == 0 && s.ranks > 1 && s.kind != op::allreduce ? " per rank"
                                                                                       : "",
                         s.ranks);
    return m_backends.refusal(cfg.backend,
                              [&](const collective_backend& b) { return b.refusal(s); });
  }

  uint64_t estimate_host_bytes(const config& cfg) const override {
    const shape s = shape_of(cfg);
    return (s.send_count() + s.recv_count()) * s.elem;
  }

  void execute(const config& cfg, run& out, run_context& ctx) const override {
    const shape s = shape_of(cfg);
    run_kernel(out, cfg, s, *m_backends.get(cfg.backend).make_kernel(s), ctx);
  }

private:
  void run_kernel(run& out, const config& cfg, const shape& s, collective_kernel& k,
                  run_context& ctx) const {
    describe(out, s, k.implementation());
    if (!measure::measure_into(out, cfg.key(), k, ctx.rules->measurement()))
      return;
    add_bandwidth_metrics(out, s);
    k.reset();
    k.run();
    check_on_every_rank(out, s, k.output());
  }

  backend_set<collective_backend> m_backends;
  workload_spec m_spec;
};

} // namespace

std::unique_ptr<workload> make_collective_workload() {
  return std::make_unique<collective_workload>();
}

void register_collective(registry& reg) {
  // MPI's version is recorded with runs across ranks (environment.distributed.mpi) and in every
  // collective run's implementation, not among the libraries: that would change the fingerprint
  // of every run of one process. NCCL's is the cuda backend's (make_cuda_backend).
  reg.add(make_collective_workload());
}

} // namespace accelbench::collective
