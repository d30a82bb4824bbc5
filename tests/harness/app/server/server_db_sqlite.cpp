// test_server's databases: a SQLite file in the test case's own folder.
#include "server_helpers.hpp"

namespace server_test {
fs::path server_db(const fs::path& dir) { return dir / "srv.db"; }
std::string server_db_unavailable() { return ""; }
} // namespace server_test
