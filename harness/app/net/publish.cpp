#include "harness/app/net/publish.hpp"

#include <algorithm>
#include <cstdlib>
#include <set>

#include <fmt/format.h>

#include "harness/core/hash.hpp"
#include "harness/core/results_document.hpp"
#include "harness/core/text_input.hpp"

namespace accelbench::net {

namespace {

// FNV-1a 128 in hex: a stable, dependency-free digest of the uuids for a batch's Idempotency-Key.
std::string fnv1a_128_hex(const std::string& text) {
  const auto [hi, lo] = fnv1a128(text);
  return fmt::format("{:016x}{:016x}", hi, lo);
}

// A short, single-line excerpt of a server's answer for an error message: servers explain
// refusals in the body, but a whole HTML page in a terminal helps no one.
std::string excerpt(const std::string& body, const http_options& o) {
  std::string s;
  for (char c : body.substr(0, 200))
    s += ((unsigned char)c < 0x20 || c == 0x7f) ? ' ' : c;
  if (body.size() > 200)
    s += "...";
  return redact_token(s, o);
}

[[noreturn]] void throw_auth_error(const std::string& what, long status, const http_options& o) {
  const char* v = o.token_env.empty() ? nullptr : std::getenv(o.token_env.c_str());
  std::string hint = o.token_env.empty()
                         ? std::string(" — no token is configured")
                         : fmt::format(" — check the token in ${}{}", o.token_env,
                                       (v && *v) ? "" : " (the variable is not set)");
  throw http_error(fmt::format("{}: authentication failed (HTTP {}){}", what, status, hint),
                   status);
}

json systems_of(const std::vector<const run*>& batch, const json& systems) {
  json out = json::array();
  if (!systems.is_array())
    return out;
  std::set<std::string> names;
  for (const run* r : batch)
    names.insert(r->system);
  for (const auto& s : systems)
    if (s.is_object() && s.contains("name") && s["name"].is_string() &&
        names.count(s["name"].get<std::string>()))
      out.push_back(s);
  return out;
}

// How many runs an accelbench server said it held already ("already_present" of its answer);
// 0 for any other answer (other servers need not answer JSON at all).
std::size_t already_present_in(const std::string& body) {
  const json j = json::parse(body, nullptr, false);
  if (j.is_object() && j.contains("already_present") && j["already_present"].is_number_unsigned())
    return j["already_present"].get<std::size_t>();
  return 0;
}

} // namespace

std::string idempotency_key_for(const std::vector<std::string>& run_uuids) {
  if (run_uuids.size() == 1)
    return "accelbench-run-" + run_uuids.front();
  std::vector<std::string> sorted = run_uuids;
  std::sort(sorted.begin(), sorted.end());
  std::string joined;
  for (const auto& u : sorted)
    joined += u + "\n";
  return "accelbench-batch-" + fnv1a_128_hex(joined);
}

publish_result publish_runs(const std::vector<run>& runs, const json& systems,
                            const publish_options& options) {
  publish_result result;
  if (runs.empty())
    return result;
  // Every URL problem is reported before the first POST, not after half the runs went out.
  check_url(options.url, options.http);
  for (const auto& r : runs)
    if (r.uuid.empty())
      throw input_error(fmt::format("run of {} on {} has no uuid: it cannot be published "
                                    "idempotently",
                                    r.cfg.key(), r.system));
  if (options.batch_size < 1)
    throw input_error("publish batch size must be at least 1, got 0");
  const std::size_t batch = options.batch_size;
  const std::string shown = redact_url(options.url);
  for (std::size_t first = 0; first < runs.size(); first += batch) {
    std::size_t last = std::min(runs.size(), first + batch);
    std::vector<run> part(runs.begin() + first, runs.begin() + last);
    std::vector<const run*> ptrs;
    std::vector<std::string> uuids;
    for (const auto& r : part) {
      ptrs.push_back(&r);
      uuids.push_back(r.uuid);
    }
    http_request req;
    req.url = options.url;
    req.options = options.http;
    req.idempotency_key = idempotency_key_for(uuids);
    req.body = dump_json(results_document(part, systems_of(ptrs, systems), json::array()));
    http_response resp = post_json(req);
    result.attempts += resp.attempts;
    std::string where = fmt::format("publishing to {}", shown);
    if (resp.status == 401 || resp.status == 403)
      throw_auth_error(where, resp.status, options.http);
    if (!resp.ok())
      throw http_error(
          fmt::format("{}: server answered HTTP {} after {} attempt(s){}{}; {} of {} run(s) were "
                      "published before this batch (publishing again is safe: runs carry "
                      "idempotency keys)",
                      where, resp.status, resp.attempts, resp.body.empty() ? "" : ": ",
                      excerpt(resp.body, options.http), result.runs, runs.size()),
          resp.status);
    result.runs += part.size();
    result.already_present += already_present_in(resp.body);
    result.requests += 1;
    result.idempotency_keys.push_back(resp.idempotency_key);
  }
  return result;
}

std::string fetch_url(const std::string& url, const http_options& options) {
  http_request req;
  req.url = url;
  req.options = options;
  http_response resp = get(req);
  std::string where = fmt::format("fetching {}", redact_url(url));
  if (resp.status == 401 || resp.status == 403)
    throw_auth_error(where, resp.status, options);
  if (resp.status == 404)
    throw input_error(fmt::format("{}: not found (HTTP 404)", where));
  if (!resp.ok())
    throw http_error(fmt::format("{}: server answered HTTP {} after {} attempt(s){}{}", where,
                                 resp.status, resp.attempts, resp.body.empty() ? "" : ": ",
                                 excerpt(resp.body, options)),
                     resp.status);
  return resp.body;
}

std::vector<run> import_results_url(const std::string& url, const http_options& options,
                                    json* systems) {
  std::string body = fetch_url(url, options);
  return read_results_document(body, redact_url(url), systems);
}

} // namespace accelbench::net
