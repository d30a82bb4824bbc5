#pragma once
// A real PostgreSQL server for tests, started by the test itself: initdb into a private temporary
// folder, postgres listening only on a Unix socket in that folder (no TCP port, so parallel test
// programs never collide), stopped and removed when the object is destroyed. PostgreSQL refuses
// to run as root (as CI runs): then the server runs as the unprivileged user 'nobody' and the
// folder is handed to it. If the test process dies without stopping it, the server is told to
// stop anyway (it is started with a parent-death signal).
//
// One server per test program (shared_pg_server()); each test case takes a fresh database of
// its own with create_database(). The binaries come from ACCELBENCH_PG_BIN, else
// /usr/lib/postgresql/15/bin (Debian's postgresql-15); without them, unavailable() says why and
// the test skips visibly (ACCELBENCH_SKIP, exit 77).
#include <sys/types.h>

#include <filesystem>
#include <memory>
#include <string>

namespace accelbench::testing {

class pg_server {
public:
  // Starts the server; throws std::runtime_error with initdb's or postgres's log on failure.
  pg_server();
  ~pg_server();
  pg_server(const pg_server&) = delete;
  pg_server& operator=(const pg_server&) = delete;

  // A new empty database; returns its connection URI (postgresql:///NAME?host=SOCKET_DIR&...).
  std::string create_database(const std::string& name);
  // A new empty schema (namespace) in `database`, created when missing; returns a URI whose
  // connections see only that schema (search_path). Much cheaper than a database per test case.
  std::string create_schema(const std::string& database, const std::string& schema);
  // The URI of an existing database on this server.
  std::string uri(const std::string& database) const;
  // Runs SQL on `where` (a database name, or a URI from create_database or create_schema) as its
  // owner, with a plain libpq connection as another program would; returns the first column of
  // the first row, or "" when there is none. Throws on error.
  std::string sql(const std::string& where, const std::string& statement) const;
  // Stops (fast shutdown) and starts the server again on the same data and socket.
  void stop();
  void start();
  const std::filesystem::path& socket_dir() const { return m_dir; }

private:
  std::filesystem::path m_dir; // the temporary folder: data/, the socket, server.log
  std::string m_user = "accelbench";
  uid_t m_uid = 0;
  gid_t m_gid = 0;
  bool m_as_other = false;
  pid_t m_pid = -1;
};

// Why no server can be started here ("" when one can): missing binaries, no unprivileged user.
std::string pg_unavailable();

// The one server of this test program, started on first use and stopped at exit.
pg_server& shared_pg_server();

} // namespace accelbench::testing
