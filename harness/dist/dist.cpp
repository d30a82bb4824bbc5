#include "harness/dist/dist.hpp"

#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>
#include <memory>

#include <fmt/format.h>

#include "harness/core/error.hpp"
#ifdef ACCELBENCH_HAVE_MPI
#include "harness/dist/dist_mpi.hpp"
#endif

namespace accelbench::dist {

namespace {

struct world_state {
  bool initialised_by_us = false; // MPI_Init was called here (so MPI_Finalize is ours too)
  bool launched = false;          // a launcher started this process
  std::string launcher;
  int rank = 0;
  int size = 1;
};

world_state& world() {
  static world_state w;
  return w;
}

const char* env(const char* name) {
  const char* v = std::getenv(name);
  return v && *v ? v : nullptr;
}

int env_int(const char* name, int fallback) {
  const char* v = env(name);
  if (!v)
    return fallback;
  char* end = nullptr;
  long x = std::strtol(v, &end, 10);
  return end && *end == '\0' && x >= 0 && x < (1L << 30) ? (int)x : fallback;
}

#ifdef ACCELBENCH_HAVE_MPI
void start_mpi(int* argc, char*** argv) {
  int already = 0;
  MPI_Initialized(&already);
  if (!already) {
    int provided = 0;
    // MPI is called from the main thread only (OpenMP threads never call it).
    MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided);
    world().initialised_by_us = true;
  }
  MPI_Comm_rank(MPI_COMM_WORLD, &world().rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world().size);
}
#endif

} // namespace

launch_info detect_launcher() {
  launch_info li;
  // srun first: under Slurm an Open MPI rank learns its OMPI_* variables only in MPI_Init.
  if (env("SLURM_PROCID") && (env("SLURM_STEP_ID") || env("SLURM_STEPID")) && env("SLURM_NTASKS")) {
    li.launcher = "srun";
    li.env_size = env_int("SLURM_STEP_NUM_TASKS", env_int("SLURM_NTASKS", 1));
    li.env_rank = env_int("SLURM_PROCID", 0);
  } else if (env("OMPI_COMM_WORLD_SIZE")) {
    li.launcher = "mpirun";
    li.env_size = env_int("OMPI_COMM_WORLD_SIZE", 1);
    li.env_rank = env_int("OMPI_COMM_WORLD_RANK", 0);
  } else if (env("PMI_SIZE") || env("PMIX_RANK")) {
    li.launcher = "pmi";
    li.env_size = env_int("PMI_SIZE", 1);
    li.env_rank = env_int("PMI_RANK", env_int("PMIX_RANK", 0));
  }
  return li;
}

bool mpi_built() {
#ifdef ACCELBENCH_HAVE_MPI
  return true;
#else
  return false;
#endif
}

void init(int* argc, char*** argv) {
  auto& w = world();
  if (w.launched || w.initialised_by_us)
    return;
  const launch_info li = detect_launcher();
  if (li.launcher.empty())
    return;
  w.launcher = li.launcher;
#ifdef ACCELBENCH_HAVE_MPI
  w.launched = true;
  start_mpi(argc, argv);
#else
  if (li.env_size > 1)
    throw input_error(fmt::format(
        "started as rank {} of {} by {}, but this accelbench was built without MPI "
        "(ACCELBENCH_ENABLE_MPI=OFF or Open MPI not found): every process would run and "
        "store alone; rebuild with MPI or run one process",
        li.env_rank, li.env_size, li.launcher));
#endif
}

void finalize() {
#ifdef ACCELBENCH_HAVE_MPI
  // The job's exit code is agreed by now: a launcher that ends this rank after another rank
  // exited non-zero (Open MPI does) is no longer news worth a message.
  std::signal(SIGTERM, SIG_DFL);
  std::signal(SIGHUP, SIG_DFL);
  auto& w = world();
  if (!w.initialised_by_us)
    return;
  int done = 0;
  MPI_Finalized(&done);
  if (!done)
    MPI_Finalize();
  w.initialised_by_us = false;
#endif
}

void abort_job(int code) {
#ifdef ACCELBENCH_HAVE_MPI
  if (mpi_active())
    MPI_Abort(MPI_COMM_WORLD, code);
#endif
  std::_Exit(code);
}

int rank() { return world().rank; }
int size() { return world().size; }
bool distributed() { return world().size > 1; }
bool is_root() { return world().rank == 0; }

bool mpi_active() {
#ifdef ACCELBENCH_HAVE_MPI
  int init = 0, fin = 0;
  MPI_Initialized(&init);
  MPI_Finalized(&fin);
  return init && !fin;
#else
  return false;
#endif
}

void require_mpi() {
#ifdef ACCELBENCH_HAVE_MPI
  if (mpi_active())
    return;
  // A singleton world (Open MPI supports MPI_Init without a launcher): world size 1.
  start_mpi(nullptr, nullptr);
#else
  throw backend_error(
      "this accelbench was built without MPI (ACCELBENCH_ENABLE_MPI=OFF or Open MPI not found)");
#endif
}

#ifdef ACCELBENCH_HAVE_MPI
MPI_Comm world_comm() { return MPI_COMM_WORLD; }
#endif

void barrier() {
#ifdef ACCELBENCH_HAVE_MPI
  if (distributed())
    MPI_Barrier(MPI_COMM_WORLD);
#endif
}

void idle_barrier() {
#ifdef ACCELBENCH_HAVE_MPI
  if (!distributed())
    return;
  MPI_Request req;
  MPI_Ibarrier(MPI_COMM_WORLD, &req);
  for (int done = 0;;) {
    MPI_Test(&req, &done, MPI_STATUS_IGNORE);
    if (done)
      return;
    usleep(1000);
  }
#endif
}

double max_all(double v) {
#ifdef ACCELBENCH_HAVE_MPI
  if (distributed())
    MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
#endif
  return v;
}

double sum_all(double v) {
#ifdef ACCELBENCH_HAVE_MPI
  if (distributed())
    MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
#endif
  return v;
}

bool any(bool v) {
#ifdef ACCELBENCH_HAVE_MPI
  if (distributed()) {
    int x = v ? 1 : 0;
    MPI_Allreduce(MPI_IN_PLACE, &x, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
    return x != 0;
  }
#endif
  return v;
}

std::vector<double> gather_all(double v) {
  std::vector<double> out((size_t)size(), v);
#ifdef ACCELBENCH_HAVE_MPI
  if (distributed())
    MPI_Allgather(&v, 1, MPI_DOUBLE, out.data(), 1, MPI_DOUBLE, MPI_COMM_WORLD);
#endif
  return out;
}

std::string broadcast(const std::string& from_root) {
  std::string s = from_root;
#ifdef ACCELBENCH_HAVE_MPI
  if (distributed()) {
    unsigned long long n = s.size();
    MPI_Bcast(&n, 1, MPI_UNSIGNED_LONG_LONG, 0, MPI_COMM_WORLD);
    s.resize((size_t)n);
    // MPI counts are int: large texts go in pieces.
    for (size_t off = 0; off < s.size(); off += 1 << 30) {
      int len = (int)std::min<size_t>(s.size() - off, 1 << 30);
      MPI_Bcast(s.data() + off, len, MPI_CHAR, 0, MPI_COMM_WORLD);
    }
  }
#endif
  return s;
}

int broadcast(int from_root) {
  int v = from_root;
#ifdef ACCELBENCH_HAVE_MPI
  if (distributed())
    MPI_Bcast(&v, 1, MPI_INT, 0, MPI_COMM_WORLD);
#endif
  return v;
}

struct sum_request::state {
#ifdef ACCELBENCH_HAVE_MPI
  MPI_Request req = MPI_REQUEST_NULL;
#endif
};

sum_request::sum_request() = default;
sum_request::sum_request(sum_request&&) noexcept = default;
sum_request& sum_request::operator=(sum_request&& o) noexcept {
  if (this != &o) {
    wait();
    m = std::move(o.m);
  }
  return *this;
}
sum_request::~sum_request() { wait(); }

bool sum_request::test() {
#ifdef ACCELBENCH_HAVE_MPI
  if (m && m->req != MPI_REQUEST_NULL) {
    int done = 0;
    MPI_Test(&m->req, &done, MPI_STATUS_IGNORE);
    return done != 0;
  }
#endif
  return true;
}

void sum_request::wait() {
#ifdef ACCELBENCH_HAVE_MPI
  if (m && m->req != MPI_REQUEST_NULL)
    MPI_Wait(&m->req, MPI_STATUS_IGNORE);
#endif
}

sum_request start_sum(float* data, size_t n) {
  sum_request r;
#ifdef ACCELBENCH_HAVE_MPI
  if (distributed() && n > 0) {
    if (n > size_t(std::numeric_limits<int>::max()))
      throw error(fmt::format("dist: a sum of {} floats exceeds MPI's int count", n));
    r.m = std::make_unique<sum_request::state>();
    MPI_Iallreduce(MPI_IN_PLACE, data, int(n), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD, &r.m->req);
  }
#else
  (void)data;
  (void)n;
#endif
  return r;
}

std::string first_nonempty(const std::string& text) {
#ifdef ACCELBENCH_HAVE_MPI
  if (distributed()) {
    int who = text.empty() ? size() : rank();
    MPI_Allreduce(MPI_IN_PLACE, &who, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (who == size())
      return {};
    unsigned long long n = who == rank() ? text.size() : 0;
    MPI_Bcast(&n, 1, MPI_UNSIGNED_LONG_LONG, who, MPI_COMM_WORLD);
    std::string s = who == rank() ? text : std::string((size_t)n, '\0');
    MPI_Bcast(s.data(), (int)std::min<unsigned long long>(n, 1 << 30), MPI_CHAR, who,
              MPI_COMM_WORLD);
    return s;
  }
#endif
  return text;
}

json topology() {
#ifdef ACCELBENCH_HAVE_MPI
  const auto& w = world();
  if (!mpi_active() || (!w.launched && w.size == 1))
    return nullptr;
  char host[256] = {0};
  gethostname(host, sizeof host - 1);
  std::vector<char> all((size_t)w.size * sizeof host);
  MPI_Allgather(host, sizeof host, MPI_CHAR, all.data(), sizeof host, MPI_CHAR, MPI_COMM_WORLD);
  std::map<std::string, std::vector<int>> by_host;
  std::vector<std::string> order;
  for (int r = 0; r < w.size; ++r) {
    std::string h(all.data() + (size_t)r * sizeof host,
                  strnlen(all.data() + (size_t)r * sizeof host, sizeof host));
    if (!by_host.count(h))
      order.push_back(h);
    by_host[h].push_back(r);
  }
  int most = 0, fewest = w.size;
  json hosts = json::array();
  for (const auto& h : order) {
    const auto& ranks = by_host[h];
    most = std::max(most, (int)ranks.size());
    fewest = std::min(fewest, (int)ranks.size());
    hosts.push_back({{"host", h}, {"ranks", ranks}});
  }
  char lib[MPI_MAX_LIBRARY_VERSION_STRING] = {0};
  int len = 0;
  MPI_Get_library_version(lib, &len);
  std::string library(lib, strnlen(lib, (size_t)std::max(0, len)));
  if (auto nl = library.find_first_of("\r\n"); nl != std::string::npos)
    library.resize(nl);
  while (!library.empty() && (library.back() == ' ' || library.back() == ','))
    library.pop_back();
  int major = 0, minor = 0;
  MPI_Get_version(&major, &minor);
  json t = {{"world_size", w.size},
            {"ranks_per_node", most},
            {"nodes", (int)order.size()},
            {"hosts", hosts},
            {"launcher", w.launcher.empty() ? "none (singleton)" : w.launcher},
            {"mpi", {{"library", library}, {"standard", fmt::format("{}.{}", major, minor)}}}};
  if (most != fewest)
    t["ranks_per_node_min"] = fewest;
  return t;
#else
  return nullptr;
#endif
}

namespace {
char g_term_message[160];
size_t g_term_len = 0;

void on_launcher_termination(int) {
  (void)!::write(STDERR_FILENO, g_term_message, g_term_len);
  ::_exit(1);
}
} // namespace

void exit_1_on_launcher_termination() {
  if (!distributed())
    return;
  auto msg = fmt::format(
      "accelbench: rank {} of {}: the launcher ended the job (a rank died or was killed); "
      "nothing more is stored, exiting 1\n",
      rank(), size());
  g_term_len = std::min(msg.size(), sizeof g_term_message);
  std::memcpy(g_term_message, msg.data(), g_term_len);
  struct sigaction sa {};
  sa.sa_handler = on_launcher_termination;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGHUP, &sa, nullptr);
}

} // namespace accelbench::dist
