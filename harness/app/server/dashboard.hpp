#pragma once
// The dashboard of `accelbench serve`: self-contained HTML pages (inline CSS and SVG, no script,
// no external asset; a Content-Security-Policy of default-src 'none'), built from the same API
// functions as /api/v1 (harness/app/server/api.hpp). Every stored name is HTML-escaped; filters are
// GET forms whose values go back into the query string percent-encoded.
//   /          the fleet: systems and accelerators with their run counts and latest runs
//   /history   per-config charts of the nightly series with the change points marked
//   /compare   the latest nightly comparison of each system (its two latest tags) with verdicts
//   /report    the A-vs-B report page (default H100 vs B200) of reporters/report, without its
//              script (static tables; an empty report when a side matches nothing)
// Filters on every page: system, accelerator, workload, tag, since (date).
#include <string>

#include "harness/app/server/api.hpp"

namespace accelbench::server {

std::string page_fleet(store::store& db, const params& p);
std::string page_history(store::store& db, const params& p);
std::string page_compare(store::store& db, const params& p);
std::string page_report(store::store& db, const params& p);

// The Content-Security-Policy sent with the dashboard pages.
inline constexpr const char* k_dashboard_csp =
    "default-src 'none'; style-src 'unsafe-inline'; img-src data:; form-action 'self'; base-uri "
    "'none'; "
    "frame-ancestors 'none'";

// Percent-encoding of a query-string value (RFC 3986 unreserved characters kept), for tests.
std::string url_encode(const std::string& s);

} // namespace accelbench::server
