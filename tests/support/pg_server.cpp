#include "tests/support/pg_server.hpp"

#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>
#include <vector>

#include <libpq-fe.h>

namespace accelbench::testing {

namespace fs = std::filesystem;

namespace {

constexpr const char* k_port = "5432"; // only names the socket file in our private folder

fs::path bin_dir() {
  if (const char* p = std::getenv("ACCELBENCH_PG_BIN"); p && *p)
    return p;
  return "/usr/lib/postgresql/15/bin";
}

bool executable(const fs::path& p) { return ::access(p.c_str(), X_OK) == 0; }

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Runs argv with stdout and stderr appended to `log`, as uid/gid when `as_other`. The server is
// given a parent-death signal (fast shutdown) so that it never outlives a crashed test.
pid_t spawn(const std::vector<std::string>& argv, const fs::path& log, bool as_other, uid_t uid,
            gid_t gid, bool stop_with_parent) {
  std::vector<char*> args;
  for (const auto& a : argv)
    args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const std::string log_path = log.string();
  const pid_t parent = getpid();
  pid_t pid = fork();
  if (pid < 0)
    throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
  if (pid > 0)
    return pid;
  int fd = ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  if (fd >= 0) {
    dup2(fd, 1);
    dup2(fd, 2);
    ::close(fd);
  }
  int null_in = ::open("/dev/null", O_RDONLY);
  if (null_in >= 0)
    dup2(null_in, 0);
  if (as_other && (setgroups(0, nullptr) != 0 || setgid(gid) != 0 || setuid(uid) != 0))
    _exit(126);
  // After the change of user: a change of credentials clears the parent-death signal.
  if (stop_with_parent && (prctl(PR_SET_PDEATHSIG, SIGINT) != 0 || getppid() != parent))
    _exit(125);
  execv(args[0], args.data());
  _exit(127);
}

int wait_exit(pid_t pid) {
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

} // namespace

std::string pg_unavailable() {
  for (const char* tool : {"initdb", "postgres"})
    if (!executable(bin_dir() / tool))
      return "PostgreSQL binaries not found (" + (bin_dir() / tool).string() +
             "; install postgresql-15 or set ACCELBENCH_PG_BIN)";
  if (geteuid() == 0 && !getpwnam("nobody"))
    return "running as root and no unprivileged user 'nobody' to run PostgreSQL as";
  return {};
}

pg_server::pg_server() {
  if (std::string why = pg_unavailable(); !why.empty())
    throw std::runtime_error(why);
  m_as_other = geteuid() == 0;
  if (m_as_other) {
    const passwd* pw = getpwnam("nobody");
    m_uid = pw->pw_uid;
    m_gid = pw->pw_gid;
  }
  // In /tmp: short enough for a socket path, and reachable by 'nobody' (TMPDIR may not be).
  std::string templ = "/tmp/accelbench-pg-XXXXXX";
  if (!mkdtemp(templ.data()))
    throw std::runtime_error(std::string("mkdtemp: ") + std::strerror(errno));
  m_dir = templ;
  if (m_as_other && chown(m_dir.c_str(), m_uid, m_gid) != 0)
    throw std::runtime_error("chown " + m_dir.string() + ": " + std::strerror(errno));
  const fs::path log = m_dir / "initdb.log";
  pid_t pid = spawn({(bin_dir() / "initdb").string(), "-D", (m_dir / "data").string(), "-U", m_user,
                     "-A", "trust", "-E", "UTF8", "--locale=C", "--no-sync", "--no-instructions"},
                    log, m_as_other, m_uid, m_gid, false);
  if (int rc = wait_exit(pid); rc != 0) {
    std::string text = slurp(log);
    std::error_code ec;
    fs::remove_all(m_dir, ec);
    throw std::runtime_error("initdb failed (exit " + std::to_string(rc) + "): " + text);
  }
  try {
    start();
  } catch (...) {
    std::error_code ec;
    fs::remove_all(m_dir, ec);
    throw;
  }
}

void pg_server::start() {
  const fs::path log = m_dir / "server.log";
  m_pid = spawn({(bin_dir() / "postgres").string(), "-D", (m_dir / "data").string(), "-k",
                 m_dir.string(), "-p", k_port, "-c", "listen_addresses=", "-c", "fsync=off", "-c",
                 "synchronous_commit=off", "-c", "full_page_writes=off", "-c", "max_connections=60",
                 "-c", "shared_buffers=32MB"},
                log, m_as_other, m_uid, m_gid, true);
  const std::string probe = uri("postgres");
  for (auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);;) {
    if (PQping(probe.c_str()) == PQPING_OK)
      return;
    int status = 0;
    if (waitpid(m_pid, &status, WNOHANG) == m_pid) {
      m_pid = -1;
      throw std::runtime_error("postgres exited at start: " + slurp(log));
    }
    if (std::chrono::steady_clock::now() > deadline) {
      stop();
      throw std::runtime_error("postgres did not accept connections within 60 s: " + slurp(log));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

void pg_server::stop() {
  if (m_pid <= 0)
    return;
  kill(m_pid, SIGINT); // fast shutdown: running transactions are rolled back
  for (int i = 0; i < 600; ++i) {
    int status = 0;
    if (waitpid(m_pid, &status, WNOHANG) == m_pid) {
      m_pid = -1;
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  kill(m_pid, SIGKILL);
  wait_exit(m_pid);
  m_pid = -1;
}

pg_server::~pg_server() {
  stop();
  // A file the server's last process wrote while the folder was being removed fails one pass.
  for (int i = 0; i < 20; ++i) {
    std::error_code ec;
    fs::remove_all(m_dir, ec);
    if (!fs::exists(m_dir, ec))
      return;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

std::string pg_server::uri(const std::string& database) const {
  return "postgresql:///" + database + "?host=" + m_dir.string() + "&port=" + k_port +
         "&user=" + m_user;
}

std::string pg_server::sql(const std::string& where, const std::string& statement) const {
  const std::string database = where;
  PGconn* c =
      PQconnectdb(where.rfind("postgresql://", 0) == 0 ? where.c_str() : uri(where).c_str());
  if (PQstatus(c) != CONNECTION_OK) {
    std::string why = PQerrorMessage(c);
    PQfinish(c);
    throw std::runtime_error("test connection to " + database + ": " + why);
  }
  PGresult* r = PQexec(c, statement.c_str());
  ExecStatusType st = PQresultStatus(r);
  std::string out, why;
  if (st == PGRES_TUPLES_OK && PQntuples(r) > 0 && PQnfields(r) > 0)
    out = PQgetvalue(r, 0, 0);
  if (st != PGRES_TUPLES_OK && st != PGRES_COMMAND_OK)
    why = PQresultErrorMessage(r);
  PQclear(r);
  PQfinish(c);
  if (!why.empty())
    throw std::runtime_error("SQL on " + database + " failed: " + why +
                             " in: " + statement.substr(0, 200));
  return out;
}

std::string pg_server::create_database(const std::string& name) {
  sql("postgres", "CREATE DATABASE \"" + name + "\"");
  return uri(name);
}

std::string pg_server::create_schema(const std::string& database, const std::string& schema) {
  if (sql("postgres", "SELECT 1 FROM pg_database WHERE datname = '" + database + "'").empty())
    create_database(database);
  sql(database, "CREATE SCHEMA \"" + schema + "\"");
  return uri(database) + "&options=-csearch_path%3D" + schema;
}

pg_server& shared_pg_server() {
  static std::unique_ptr<pg_server> server = std::make_unique<pg_server>();
  return *server;
}

} // namespace accelbench::testing
