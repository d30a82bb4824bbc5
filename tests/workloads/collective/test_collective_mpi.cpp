// The collective workload and runs across ranks as a user runs them: accelbench under mpirun with
// two ranks (as root with --oversubscribe, as CI runs), and without a launcher.
#include <catch2/catch.hpp>

#include <signal.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>

#include <fmt/format.h>

#include "harness/core/environment.hpp"
#include "harness/store/store.hpp"
#include "tests/support/cli_helpers.hpp"
#include "tests/support/load_free.hpp"
#include "tests/support/mpi_fixture.hpp"
#include "tests/support/skip.hpp"
#include "workloads/collective/collective_spec.hpp"

using namespace accelbench;
using namespace accelbench::test_mpi;
namespace fs = std::filesystem;

namespace {

// Short, fixed measurements: a fixed iteration count is never judged too short on a loaded machine,
// and the load-free bounds (tests/support/load_free.hpp) keep a slowed run from reaching
// max_time_s: the validity asserted below is the code's, never the machine's load.
const std::string k_quick =
    "--rules kernel-quick --rule iterations=20 --rule repetitions=3 --rule warmup_iterations=1" +
    test_support::k_load_free_rules;

int64_t stored_runs(const std::string& db) {
  if (!fs::exists(db))
    return 0;
  return store::store::open(db, store::access::read_only).count_runs();
}

} // namespace

TEST_CASE("every collective op and dtype, in and out of place, is correct across 2 ranks",
          "[timing]") {
  REQUIRE_MPIRUN();
  test_cli::temp_dir d;
  auto o = options(d);
  std::string ops, dtypes;
  for (const auto& x : collective::op_names())
    ops += (ops.empty() ? "" : ",") + x;
  // Every dtype in the Release build; under the sanitizers (several times slower, and slower still
  // with the slow unwinder) the 16-bit types that travel through our own sum op, and one 64-bit
  // type.
  const std::vector<std::string> types = ACCELBENCH_TEST_SANITIZED
                                             ? std::vector<std::string>{"bf16", "fp16", "int64"}
                                             : collective::dtype_names();
  for (const auto& x : types)
    dtypes += (dtypes.empty() ? "" : ",") + x;
  auto st =
      run_sh(mpirun(2, k_exe + " run collective --sweep op=" + ops + " --sweep dtype=" + dtypes +
                           " --sweep inplace=0,1 --set bytes=1024 " + k_quick + " --db " + d.db() +
                           " --json --quiet"),
             o);
  INFO(test_cli::slurp(o.err));
  REQUIRE_FALSE(st.timed_out);
  REQUIRE(st.rc == 0);
  const json doc = json::parse(test_cli::slurp(o.out)); // rank 0 alone printed
  const auto& runs = doc["runs"];
  REQUIRE(runs.size() == collective::op_names().size() * types.size() * 2);
  for (const auto& r : runs) {
    INFO(r["config"].dump());
    CHECK(r["status"] == "ok");
    CHECK(r["validity"] == "VALID");
    CHECK(r["extra"]["correctness"]["wrong"] == 0);
    CHECK(r["extra"]["correctness"]["elements_checked"].get<double>() > 0);
    CHECK(r["environment"]["distributed"]["world_size"] == 2);
    CHECK(r["environment"]["distributed"]["ranks_per_node"] == 2);
    CHECK(r["environment"]["distributed"]["launcher"] == "mpirun");
    CHECK(r["environment"]["distributed"]["mpi"]["library"].get<std::string>().find("Open MPI") !=
          std::string::npos);
    // busbw = algbw x nccl-tests' factor for the op at 2 ranks; the sample is the slowest rank's.
    double algbw = 0, busbw = 0;
    for (const auto& m : r["metrics"]) {
      if (m["name"] == "algbw")
        algbw = m["value"];
      if (m["name"] == "busbw")
        busbw = m["value"];
    }
    const auto kind = collective::op_from_string(r["config"]["op"]);
    CHECK(busbw == Approx(algbw * collective::bus_factor(kind, 2)));
    for (const auto& s : r["samples"]) {
      REQUIRE(s["extra"]["rank_s"].size() == 2);
      CHECK(s["value"].get<double>() == Approx(std::max(s["extra"]["rank_s"][0].get<double>(),
                                                        s["extra"]["rank_s"][1].get<double>())));
    }
    CHECK(r["extra"]["ranks"]["world_size"] == 2);
  }
  CHECK(stored_runs(d.db()) == (int64_t)runs.size());
  // show RUN prints the spread of the per-rank times.
  auto shown = test_cli::ab("show 1 --db " + d.db());
  CHECK(shown.out.find("per-rank median") != std::string::npos);
  CHECK(shown.out.find("spread") != std::string::npos);
}

TEST_CASE("ranks given different command lines: exit 2 on every rank, naming the argument, nothing "
          "stored",
          "[timing]") {
  REQUIRE_MPIRUN();
  test_cli::temp_dir d;
  auto o = options(d);
  // Each rank's exit code goes to a file and the wrapper exits 0: mpirun ends the other ranks as
  // soon as one exits non-zero, so a rank still on its way out (slower under the sanitizers)
  // would otherwise be killed before it could say how it ended.
  auto st =
      run_sh(mpirun(2, "sh -c '" + k_exe +
                           " run collective --set bytes=$((1024 * (OMPI_COMM_WORLD_RANK + 1))) " +
                           k_quick + " --db " + d.db() + "; echo $? > " +
                           (d.path / "rc.").string() + "$OMPI_COMM_WORLD_RANK'"),
             o);
  const std::string err = test_cli::slurp(o.err);
  INFO(err);
  REQUIRE_FALSE(st.timed_out);
  CHECK(st.rc == 0);
  CHECK(test_cli::slurp(d.path / "rc.0") == "2\n");
  CHECK(test_cli::slurp(d.path / "rc.1") == "2\n");
  CHECK(err.find("rank 0 has \"bytes=1024\", rank 1 has \"bytes=2048\"") != std::string::npos);
  CHECK_FALSE(fs::exists(d.db()));
}

TEST_CASE("ranks whose plans differ (the same command, a different rules file): exit 2 naming the "
          "setting",
          "[timing]") {
  REQUIRE_MPIRUN();
  test_cli::temp_dir d;
  auto o = options(d);
  for (int r = 0; r < 2; ++r) {
    const fs::path dir = d.path / fmt::format("r{}", r); // fmt: GCC 12's false -Wrestrict
    fs::create_directories(dir);
    std::ifstream in(std::string(ACCELBENCH_SOURCE_DIR) +
                     "/workloads/gemm/rulesets/kernel-quick.json");
    json rules = json::parse(in);
    rules["measurement"]["repetitions"] = 3 + r;
    std::ofstream(dir / "rules.json") << rules.dump();
  }
  auto st = run_sh(mpirun(2, "sh -c 'cd r$OMPI_COMM_WORLD_RANK && exec " + k_exe +
                                 " run collective --set bytes=1024 --rules rules.json --db " +
                                 d.db() + "'"),
                   o);
  const std::string err = test_cli::slurp(o.err);
  INFO(err);
  REQUIRE_FALSE(st.timed_out);
  CHECK(st.rc == 2);
  CHECK(err.find("the ranks disagree on the config") != std::string::npos);
  CHECK(err.find("/runs/0/ruleset/measurement/repetitions: rank 0 has 3, rank 1 has 4") !=
        std::string::npos);
  CHECK_FALSE(fs::exists(d.db()));
}

TEST_CASE(
    "a rank killed with kill -9 ends the job on every rank in bounded time, nothing half-stored",
    "[timing]") {
  REQUIRE_MPIRUN();
  test_cli::temp_dir d;
  auto o = options(d);
  // Long enough never to finish: the kill comes while samples are being taken.
  const killed_job k = kill_rank_1_during(
      k_exe +
          " run collective --set bytes=4096 --rules kernel-quick --rule "
          "iterations=200000 --rule repetitions=1000 --rule max_time_s=600 --db " +
          d.db(),
      "[1/1] collective", d, o);
  const std::string& err = k.err;
  INFO(err);
  CHECK_FALSE(k.status.timed_out);
  // Bounded: the launcher sees the rank die and ends the others, which takes it about twice
  // k_sigkill_timeout_s (tests/support/mpi_fixture.hpp). The 60 s beyond are a hang guard.
  CHECK(k.seconds_after_kill < 2 * k_sigkill_timeout_s + 60);
  CHECK(k.status.rc != 0);
  // Rank 0 was ended by the launcher and said so; it stored nothing.
  CHECK(err.find("rank 0 of 2: the launcher ended the job") != std::string::npos);
  CHECK(stored_runs(d.db()) == 0);
}

// A rank that cannot allocate its buffers (rank 1 alone under `ulimit -v`: MPI fits, 1 GiB of
// send and receive buffers for a 512 MiB all-reduce does not, see test_train_mpi for the sizes)
// is named on every rank: one failed run, no rank left waiting in a collective.
TEST_CASE("a rank that cannot allocate its buffers is reported on every rank, the run failed",
          "[timing]") {
  REQUIRE_MPIRUN();
  SKIP_UNDER_ASAN();
  test_cli::temp_dir d;
  auto o = options(d);
  const std::string cmd =
      k_exe + " run collective --set bytes=536870912 --rules kernel-quick --json --db " + d.db();
  const auto st = run_sh(mpirun_rank1_limited(cmd, 1900000), o);
  const std::string err = test_cli::slurp(o.err);
  INFO(err);
  REQUIRE_FALSE(st.timed_out);
  CHECK(st.rc == 1);
  const json r = json::parse(test_cli::slurp(o.out))["runs"][0];
  CHECK(r["status"] == "failed");
  CHECK(r["status_reason"].get<std::string>().find(
            "rank 1 of 2 could not allocate its collective buffers: out of memory") !=
        std::string::npos);
  CHECK(stored_runs(d.db()) == 1);
}

TEST_CASE("world size 1 without a launcher is unchanged: no topology, no per-rank times, the same "
          "fingerprint",
          "[timing]") {
  test_cli::temp_dir d;
  auto r = test_cli::ab("run gemm --set M=32 --set N=32 --set K=32 " + k_quick + " --db " + d.db() +
                            " --json --quiet",
                        k_no_launcher);
  INFO(r.err);
  REQUIRE(r.rc == 0);
  const json run = json::parse(r.out)["runs"][0];
  // value(): a const json's operator[] on a missing key is undefined (an assertion in this build).
  CHECK_FALSE(run.value("environment", json::object()).contains("distributed"));
  CHECK_FALSE(run.value("extra", json::object()).contains("ranks"));
  for (const auto& s : run.value("samples", json::array())) {
    const json extra = s.value("extra", json());
    CHECK_FALSE((extra.is_object() && extra.contains("rank_s")));
  }
  CHECK(run["fingerprint"] == environment_fingerprint(run["environment"]));
  json two = run["environment"];
  two["distributed"] = {{"world_size", 2}, {"ranks_per_node", 2}, {"nodes", 1}};
  CHECK(environment_fingerprint(two) !=
        run["fingerprint"]); // runs at another scale never compare silently
}

TEST_CASE("collective runs on one process without a launcher (an MPI singleton)", "[timing]") {
  if (!ACCELBENCH_TEST_HAVE_MPI)
    ACCELBENCH_SKIP("this build has no MPI");
  test_cli::temp_dir d;
  auto r = test_cli::ab("run collective --sweep op=allreduce,allgather --set bytes=4096 " +
                            k_quick + " --db " + d.db() + " --json --quiet",
                        k_no_launcher);
  INFO(r.err);
  REQUIRE(r.rc == 0);
  const json doc = json::parse(r.out); // kept alive: the loop below walks into it
  for (const auto& run : doc["runs"]) {
    CHECK(run["validity"] == "VALID");
    CHECK(run["extra"]["world_size"] == 1);
    CHECK(run["extra"]["correctness"]["wrong"] == 0);
    for (const auto& m : run["metrics"])
      if (m["name"] == "busbw")
        CHECK(m["value"] == 0.0); // (n-1)/n at n = 1, as nccl-tests prints
  }
}

TEST_CASE("collective on NCCL across the GPUs of this machine", "[timing]") {
#ifndef ACCELBENCH_TEST_HAVE_NCCL
  ACCELBENCH_SKIP("this build has no NCCL backend (CUDA off, or nccl.h/libnccl not found)");
#else
  REQUIRE_MPIRUN();
  auto env = test_cli::ab("env --json");
  const json e = json::parse(env.out);
  bool gpu = false;
  for (const auto& b : e.value("backends", json::array()))
    if (b.value("name", "") == "cuda")
      gpu = b.value("available", false);
  if (!gpu)
    ACCELBENCH_SKIP("no usable CUDA device");
  test_cli::temp_dir d;
  auto o = options(d);
  std::string ops;
  for (const auto& x : collective::op_names())
    ops += (ops.empty() ? "" : ",") + x;
  auto st = run_sh(mpirun(1, k_exe + " run collective --backend cuda --sweep op=" + ops +
                                 " --sweep dtype=fp32,bf16,int8 --set bytes=1048576 " + k_quick +
                                 " --db " + d.db() + " --json --quiet"),
                   o);
  INFO(test_cli::slurp(o.err));
  REQUIRE(st.rc == 0);
  const json doc = json::parse(test_cli::slurp(o.out)); // kept alive: the loop walks into it
  for (const auto& run : doc["runs"]) {
    CHECK(run["validity"] == "VALID");
    CHECK(run["extra"]["correctness"]["wrong"] == 0);
  }
#endif
}
