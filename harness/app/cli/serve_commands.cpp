// accelbench serve and accelbench token: the command line's one door to harness/app/server (the
// allowed cli -> server include of docs/layers-allowed.txt). Built into the executable only when
// the server is (ACCELBENCH_HAVE_SERVER). `token` prints here, over harness/app/server/tokens.hpp.
#ifdef ACCELBENCH_HAVE_SERVER
#include <iostream>
#include <limits>
#include <memory>

#include <fmt/format.h>

#include "harness/app/cli/command.hpp"
#include "harness/app/cli/commands.hpp"
#include "harness/app/cli/options.hpp"
#include "harness/app/cli/table.hpp"
#include "harness/app/server/server.hpp"
#include "harness/app/server/tokens.hpp"
#include "harness/core/text_input.hpp"

namespace accelbench::cli {

namespace {

struct token_cli_options {
  std::string db, name, role = "read";
  long long id = 0;
  bool json = false;
};

// Prints the token once on stdout.
int cmd_token_create(const token_cli_options& o) {
  require_text(o.name, "--name", false);
  const server::role r = server::role_from_string(o.role);
  auto db = store::store::open(resolve_db_path(o.db), store::access::read_write);
  auto t = server::create_token(db, o.name, r);
  if (o.json)
    std::cout << dump_json(json{{"id", t.record.id},
                                {"name", t.record.name},
                                {"role", t.record.role},
                                {"token", t.token}},
                           2)
              << "\n";
  else
    std::cout << t.token << "\n";
  std::cerr << fmt::format(
      "accelbench: created {} token {} for '{}'; it is shown only now (the database keeps a "
      "salted hash)\n",
      t.record.role, t.record.id, printable(t.record.name));
  return exit_ok;
}

// Ids, names, roles, dates; never secrets.
int cmd_token_list(const token_cli_options& o) {
  auto db = store::store::open(resolve_db_path(o.db), store::access::read_only);
  std::vector<store::token_record> tokens;
  try {
    tokens = db.tokens();
  } catch (const storage_error&) {
    // A database older than schema version 4 opened read-only has no tokens table yet.
  }
  if (o.json) {
    json arr = json::array();
    for (const auto& t : tokens)
      arr.push_back({{"id", t.id},
                     {"name", t.name},
                     {"role", t.role},
                     {"created_at", t.created_at},
                     {"revoked_at", t.revoked_at.empty() ? json(nullptr) : json(t.revoked_at)}});
    std::cout << dump_json(arr, 2) << "\n";
    return exit_ok;
  }
  table t({"id", "name", "role", "created", "revoked"});
  for (const auto& k : tokens)
    t.add({std::to_string(k.id), k.name, k.role, k.created_at.substr(0, 19),
           k.revoked_at.substr(0, 19)});
  t.print(std::cout);
  return exit_ok;
}

int cmd_token_revoke(const token_cli_options& o) {
  auto db = store::store::open(resolve_db_path(o.db), store::access::read_write);
  if (!db.revoke_token(o.id, now_iso8601()))
    throw input_error(fmt::format("no valid token with id {} in {} (see accelbench token list)",
                                  o.id, db.path().string()));
  std::cout << fmt::format("revoked token {}\n", o.id);
  return exit_ok;
}

} // namespace

command_hook add_serve(CLI::App& app, context&) {
  struct options {
    server::serve_options so;
    size_t max_body_mib = 64;
  };
  auto o = std::make_shared<options>();
  auto* srv = app.add_subcommand(
      "serve", "Results server for a fleet: HTTP API (/api/v1) and dashboard over a database");
  add_db_option(srv, o->so.db);
  srv->add_option("--listen", o->so.listen,
                  "ADDR:PORT to listen on (default 127.0.0.1:8080; port 0: any free port)");
  srv->add_flag("--public-read", o->so.public_read,
                "Serve GET endpoints and the dashboard without a token");
  srv->add_option("--cert", o->so.cert, "TLS certificate (PEM): serve HTTPS (with --key)");
  srv->add_option("--key", o->so.key, "TLS private key (PEM)");
  srv->add_option("--cors-origin", o->so.cors_origin,
                  "Allow this origin to call the API from a browser (default: no CORS)")
      ->check(text_value(false));
  srv->add_option("--max-body-mib", o->max_body_mib, "Largest request body in MiB (default 64)")
      ->check(integer_in(1, 256));
  srv->add_option("--threads", o->so.threads,
                  "Requests handled at once, each with its own database connection (default 32)")
      ->check(integer_in(1, 1024));
  // At most 900: cpp-httplib (built on select) answers 500 on a socket numbered 1024 or more.
  srv->add_option("--max-connections", o->so.max_connections,
                  "Open connections in all; more are answered 503 (default 512)")
      ->check(integer_in(1, 900));
  srv->add_option("--max-connections-per-client", o->so.max_connections_per_client,
                  "Open connections of one client address; more are answered 503 (default 32; "
                  "raise it behind a reverse proxy, whose connections all come from one address)")
      ->check(integer_in(1, 900));
  srv->add_option("--header-timeout", o->so.header_timeout_s,
                  "Seconds a client has to send a request's line and headers (default 10)")
      ->check(integer_in(1, 3600));
  srv->add_option("--body-timeout", o->so.body_timeout_s,
                  "Seconds a client has to send a request body, and to read a response (default "
                  "60)")
      ->check(integer_in(1, 3600));
  srv->add_flag("--quiet", o->so.quiet, "No access log on stderr");
  return {srv, [o] {
            o->so.max_body_bytes = o->max_body_mib << 20;
            return server::cmd_serve(o->so);
          }};
}

command_hook add_token(CLI::App& app, context&) {
  auto o = std::make_shared<token_cli_options>();
  auto* tok =
      app.add_subcommand("token", "Bearer tokens of accelbench serve: create, list, revoke");
  tok->require_subcommand(1);
  auto* create = tok->add_subcommand(
      "create", "Create a token (printed once; the database keeps a salted hash)");
  create->add_option("--name", o->name, "Who or what uses it (e.g. ci-h100-07)")
      ->required()
      ->check(text_value(false));
  create->add_option("--role", o->role, "read | write | admin (default read)")
      ->check(CLI::IsMember({"read", "write", "admin"}));
  add_db_option(create, o->db);
  add_json_flag(create, o->json);
  auto* list = tok->add_subcommand("list", "List tokens (never their secrets)");
  add_db_option(list, o->db);
  add_json_flag(list, o->json);
  auto* revoke = tok->add_subcommand("revoke", "Revoke a token by id");
  revoke->add_option("id", o->id, "Token id (accelbench token list)")
      ->required()
      ->check(integer_in(1, std::numeric_limits<int64_t>::max()));
  add_db_option(revoke, o->db);
  return {tok, [o, create, list] {
            if (*create)
              return cmd_token_create(*o);
            if (*list)
              return cmd_token_list(*o);
            return cmd_token_revoke(*o);
          }};
}

} // namespace accelbench::cli
#endif
