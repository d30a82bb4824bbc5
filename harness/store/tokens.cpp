// The api_tokens table's statements (schema version 4), one home for both stores: the bearer
// tokens of `accelbench serve`, apart from the runs. Hashing and checking secrets is
// harness/app/server/tokens.cpp's job; the store keeps what it is given.
#include <fmt/format.h>

#include "harness/store/sql.hpp"

namespace accelbench::store::detail {

namespace {
const keyed_table k_tokens{"api_tokens", "id, name, role, salt, hash, created_at, revoked_at",
                           "id"};

token_record token_from_row(const row_reader& row) {
  column_cursor c(row);
  return {c.integer(), c.text(), c.text(), c.text(), c.text(), c.text(), c.text_or_empty()};
}
} // namespace

int64_t sql_backend::insert_token(const token_record& t) {
  const dialect& d = runner().sql();
  int64_t id = 0;
  runner().run(fmt::format("INSERT INTO api_tokens (name, role, salt, hash, created_at) VALUES "
                           "({}, {}, {}, {}, {}) RETURNING id",
                           d.param(1), d.param(2), d.param(3), d.param(4), d.param(5)),
               {t.name, t.role, t.salt, t.hash, t.created_at},
               [&](const row_reader& row) { id = row.integer(0); });
  return id;
}

std::optional<token_record> sql_backend::get_token(int64_t id) {
  return last_row(runner(), select_by_key(runner().sql(), k_tokens, id), {id}, token_from_row);
}

std::vector<token_record> sql_backend::tokens() {
  return all_rows(runner(), select_all(k_tokens), {}, token_from_row);
}

// False when there is no such token or it was already revoked.
bool sql_backend::revoke_token(int64_t id, const std::string& revoked_at) {
  const dialect& d = runner().sql();
  return runner().run(fmt::format("UPDATE api_tokens SET revoked_at = {} WHERE id = {} AND "
                                  "revoked_at IS NULL",
                                  d.param(2), d.integer(1)),
                      {id, revoked_at}) == 1;
}

} // namespace accelbench::store::detail
