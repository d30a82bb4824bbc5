#pragma once
// Which database a front end reads when it is given none, and how a config reads in a listing.
#include <string>

#include "harness/core/model.hpp"

namespace accelbench::query {

// --db (a server's database), else $ACCELBENCH_DB, else the default path.
std::string resolve_db_path(const std::string& db);

// A config's values as "k=v k=v" (tables, the dashboard).
std::string short_config(const config& c);

} // namespace accelbench::query
