#pragma once
// The network options of the commands that talk HTTP(S) (import from a URL, publish), in one
// place: TLS, plain http, the token's variable, timeouts and retries.
#include <cstddef>
#include <string>

#include <CLI/CLI.hpp>

#ifdef ACCELBENCH_HAVE_NET
#include "harness/app/net/http.hpp"
#endif

namespace accelbench::cli {

struct net_cli_options {
  bool insecure = false, allow_http = false;
  std::string token_env = "ACCELBENCH_TOKEN";
  double connect_timeout_s = 10, timeout_s = 60;
  int retries = 5;
  size_t batch_size = 1;
};

#ifdef ACCELBENCH_HAVE_NET
net::http_options http_options_from(const net_cli_options& n);
#endif

// --insecure, --allow-http, --token-env, --connect-timeout, --timeout, --retries.
void add_net_options(CLI::App* a, net_cli_options& n);

} // namespace accelbench::cli
