// accelbench publish: POST stored results (our export format) to an HTTP(S) endpoint.
#include <iostream>
#include <memory>

#include <fmt/format.h>

#include "harness/app/cli/command.hpp"
#include "harness/app/cli/commands.hpp"
#include "harness/app/cli/net_options.hpp"
#include "harness/app/cli/options.hpp"
#include "harness/app/net/http.hpp"
#include "harness/app/net/publish.hpp"
#include "harness/app/query/selector.hpp"
#include "harness/core/error.hpp"

namespace accelbench::cli {

namespace {

struct publish_options {
  std::string db, url, selector;
  net_cli_options net;
};

int cmd_publish(const publish_options& o) {
  const std::string &db_path = o.db, &url = o.url, &sel = o.selector;
  const net_cli_options& n = o.net;
  auto db = store::store::open(resolve_db_path(db_path), store::access::read_only);
  std::vector<run> runs;
  std::map<std::string, store::system_record> sysmap;
  if (sel.empty()) {
    store::run_filter f;
    f.with_log = true;
    runs = db.query(f);
    for (const auto& s : db.systems())
      sysmap[s.name] = s;
  } else {
    auto selection = query::select_runs(db, sel);
    runs = std::move(selection.runs);
    sysmap = std::move(selection.systems);
  }
  if (runs.empty())
    throw input_error(fmt::format("nothing to publish: {} holds no runs", db.path().string()));
  json systems = json::array();
  for (const auto& [name, s] : sysmap)
    systems.push_back(store::to_json(s));
  net::publish_options po;
  po.url = url;
  po.http = http_options_from(n);
  po.batch_size = std::max<size_t>(1, n.batch_size);
  auto res = net::publish_runs(runs, systems, po);
  std::cout << fmt::format(
      "published {} run(s) to {} in {} request(s) ({} attempt(s)){}\n", res.runs,
      net::redact_url(url), res.requests, res.attempts,
      res.already_present > 0
          ? fmt::format("; {} of them the server held already, stored once", res.already_present)
          : "");
  return exit_ok;
}

} // namespace

command_hook add_publish(CLI::App& app, context&) {
  auto o = std::make_shared<publish_options>();
  auto* pub = app.add_subcommand("publish",
                                 "POST stored results (our export format) to an HTTP(S) endpoint");
  pub->add_option("--url", o->url,
                  "Endpoint URL (https; http only to loopback or with --allow-http)")
      ->required();
  pub->add_option("selector", o->selector, "Which runs (selector as in compare; default: all)");
  add_db_option(pub, o->db);
  pub->add_option("--batch-size", o->net.batch_size, "Runs per POST (default 1)")
      ->check(integer_in(1, 100000));
  add_net_options(pub, o->net);
  return {pub, [o] { return cmd_publish(*o); }};
}

} // namespace accelbench::cli
