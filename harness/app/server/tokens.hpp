#pragma once
// Bearer tokens of `accelbench serve`: roles, creation and checking. A token is
// "abt_<id>_<64 hex digits>"; the store keeps only a random salt and SHA-256(salt || secret)
// (harness/store/tokens.cpp), so a copy of the database gives no working token. The secret is
// shown once, when created, and never logged.
#include <cstdint>
#include <optional>
#include <string>

#include "harness/store/store.hpp"

namespace accelbench::server {

// read: GET endpoints; write: also POST /api/v1/runs; admin: everything (a superset of write).
enum class role { read, write, admin };
std::string to_string(role r);
// Throws input_error naming the value when it is not read, write or admin.
role role_from_string(const std::string& s);
// Whether a token of role `have` may do what needs `need`.
bool allows(role have, role need);

struct created_token {
  store::token_record record;
  std::string token; // the whole bearer token; shown once
};

// A fresh random secret (OpenSSL RAND_bytes) stored as a salted hash under `name`.
created_token create_token(store::store& db, const std::string& name, role r);

// The role of a valid, unrevoked token, or nullopt (malformed, unknown, revoked, wrong secret).
// The secret is compared in constant time.
std::optional<role> check_token(store::store& db, const std::string& token);

// Lower-case hex SHA-256 of `bytes` (OpenSSL EVP), exposed for tests.
std::string sha256_hex(const std::string& bytes);

} // namespace accelbench::server
