// The api_tokens table of the store (schema version 4): bearer tokens of `accelbench serve`,
// kept apart from the runs so that a second store backend ports these four queries on their own.
#include <fmt/format.h>

#include "harness/store/store.hpp"

namespace accelbench::store {

namespace {
token_record token_from_row(const statement& st) {
  token_record t;
  t.id = st.col_int(0);
  t.name = st.col_text(1);
  t.role = st.col_text(2);
  t.salt = st.col_text(3);
  t.hash = st.col_text(4);
  t.created_at = st.col_text(5);
  t.revoked_at = st.col_is_null(6) ? "" : st.col_text(6);
  return t;
}
constexpr const char* k_token_columns = "id, name, role, salt, hash, created_at, revoked_at";
} // namespace

int64_t store::insert_token(const token_record& t) {
  statement st(raw(), "INSERT INTO api_tokens (name, role, salt, hash, created_at) VALUES (?1, ?2, ?3, ?4, ?5)");
  st.bind(1, t.name).bind(2, t.role).bind(3, t.salt).bind(4, t.hash).bind(5, t.created_at);
  st.step();
  return sqlite3_last_insert_rowid(raw());
}

std::optional<token_record> store::get_token(int64_t id) {
  statement st(raw(), fmt::format("SELECT {} FROM api_tokens WHERE id = ?1", k_token_columns));
  st.bind(1, id);
  if (!st.step()) return std::nullopt;
  return token_from_row(st);
}

std::vector<token_record> store::tokens() {
  statement st(raw(), fmt::format("SELECT {} FROM api_tokens ORDER BY id", k_token_columns));
  std::vector<token_record> out;
  while (st.step()) out.push_back(token_from_row(st));
  return out;
}

bool store::revoke_token(int64_t id, const std::string& revoked_at) {
  statement st(raw(), "UPDATE api_tokens SET revoked_at = ?2 WHERE id = ?1 AND revoked_at IS NULL");
  st.bind(1, id).bind(2, revoked_at);
  st.step();
  return sqlite3_changes(raw()) == 1;
}

} // namespace accelbench::store
