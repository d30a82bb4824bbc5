#include "harness/app/cli/net_options.hpp"

#include <algorithm>
#include <chrono>
#include <iostream>

#include "harness/app/cli/options.hpp"

namespace accelbench::cli {

#ifdef ACCELBENCH_HAVE_NET
net::http_options http_options_from(const net_cli_options& n) {
  net::http_options h;
  h.token_env = n.token_env;
  h.insecure = n.insecure;
  h.allow_plain_http = n.allow_http;
  h.connect_timeout = std::chrono::milliseconds((int64_t)(n.connect_timeout_s * 1000));
  h.total_timeout = std::chrono::milliseconds((int64_t)(n.timeout_s * 1000));
  h.max_attempts = std::max(1, n.retries);
  h.log = [](const std::string& line) { std::cerr << "accelbench: " << line << "\n"; };
  return h;
}
#endif

void add_net_options(CLI::App* a, net_cli_options& n) {
  a->add_flag("--insecure", n.insecure,
              "Do not verify TLS certificates (prints a warning on every request)");
  a->add_flag("--allow-http", n.allow_http,
              "Allow plain http:// to a non-loopback host (prints a warning)");
  a->add_option("--token-env", n.token_env,
                "Environment variable holding the bearer token (default ACCELBENCH_TOKEN)");
  a->add_option("--connect-timeout", n.connect_timeout_s, "Connect timeout in seconds (default 10)")
      ->check(number_in(0.001, 86400, false, false));
  a->add_option("--timeout", n.timeout_s, "Total timeout per request in seconds (default 60)")
      ->check(number_in(0.001, 86400, false, false));
  a->add_option("--retries", n.retries,
                "Attempts per request on connection errors, 429 and 5xx (default 5)")
      ->check(integer_in(0, 100));
}

} // namespace accelbench::cli
