// The collective workload's cpu backend: MPI on host buffers.
#include "harness/dist/dist.hpp"
#include "workloads/collective/collective_backend.hpp"
#include "workloads/collective/cpu/collective_mpi.hpp"

namespace accelbench::collective {

namespace {

class cpu_backend : public collective_backend {
public:
  std::string name() const override { return "cpu"; }
  backend_status status() const override { return cpu_backend_status(); }
  std::string refusal(const shape& s) const override { return mpi_unavailable_reason(s); }
  // Buffers are allocated before any collective; a rank that cannot is named on every rank.
  std::unique_ptr<collective_kernel> make_kernel(const shape& s) const override {
    return dist::on_every_rank("allocate its collective buffers",
                               [&] { return make_mpi_collective(s); });
  }
};

} // namespace

std::unique_ptr<backend> make_cpu_backend() { return std::make_unique<cpu_backend>(); }

} // namespace accelbench::collective
