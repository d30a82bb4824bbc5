#pragma once
// The PostgreSQL implementation of the store: the shared store of a fleet, reached through libpq
// with a postgresql:// (or postgres://) connection URI. The same logical schema as SQLite's
// (docs/store.md), with the schema version recorded in the table accelbench_schema (PostgreSQL
// has no user_version), migrations under an advisory lock so that concurrent openers migrate one
// at a time, one transaction per run, and read-only commands in read-only transactions.
// Parameterised SQL only: every value travels as a parameter, never in the SQL text.
#include <memory>
#include <string>

#include "harness/store/store.hpp"

namespace accelbench::store {

// Opens (read_write: creates the schema in an empty database, migrates an older one) the
// PostgreSQL database that `uri` names. Throws storage_error naming redact_uri(uri).
std::unique_ptr<backend> open_postgres(const std::string& uri, access how);

// Migrations up to `target_version` (the schema an older accelbench wrote), for tests that build
// an older database and check that opening it migrates forward; refuses as open_postgres does.
void migrate_postgres(const std::string& uri, int target_version);

// The URI as messages show it: without the password (user:secret@host -> user@host, and no
// password= parameter).
std::string redact_uri(const std::string& uri);

} // namespace accelbench::store
