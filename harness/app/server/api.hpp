#pragma once
// The JSON API of `accelbench serve` (/api/v1), as functions of the store and the request's query
// parameters: no HTTP here (harness/app/server/server.cpp maps requests to these and errors to
// status codes), so each endpoint reuses the CLI's own pieces: selectors
// (harness/app/query/selector), compare and history and their formats (harness/app/query,
// harness/compare), the report (reporters/report) and the results document
// (harness/core/results_document).
#include <map>
#include <string>

#include "harness/app/query/selector.hpp"
#include "harness/core/error.hpp"
#include "harness/core/model.hpp"
#include "harness/store/store.hpp"

namespace accelbench::server {

// A request the server refuses, with its HTTP status (4xx) and a one-line reason.
class api_error : public error {
public:
  api_error(int status, const std::string& what) : error(what), m_status(status) {}
  int status() const { return m_status; }

private:
  int m_status;
};

using params = std::multimap<std::string, std::string>;

// The selector keys of harness/app/query/selector.hpp, accepted as query parameters (repeatable):
// system, accelerator, accelerator~, tag, workload, run, source, since.
// The runs they select (every run when none is given). A malformed value is api_error 400; a
// selector that matches nothing gives no runs.
query::selection select_from(store::store& db, const params& p, bool with_samples);

// GET /api/v1/runs?SELECTOR&limit=N&offset=N&samples=0|1 -> {"total", "offset", "limit", "runs"}.
json list_runs(store::store& db, const params& p);
// GET /api/v1/runs/ID -> the run with its samples; 404 when there is none.
json one_run(store::store& db, const std::string& id_text, const params& p);
// The history's runs and options from the same parameters (the dashboard draws them).
json history_for(store::store& db, const params& p, bool require_workload);

// GET /api/v1/report?baseline=SEL&candidate=SEL&format=json|html (default: H100 vs B200, json).
// A side that matches nothing is a 404, or with `allow_empty` (the dashboard) a side without runs.
struct document {
  std::string body, content_type;
};
document report(store::store& db, const params& p, bool allow_empty = false);

// GET
// /api/v1/history?workload=W[&system=S&tag=T&since=D&set=K=V&min_segment=N&max_pvalue=P&window=N
//   &format=NAME]
//   -> without format: `accelbench history --format json` plus "runs" and "regression", as JSON;
//   with format=NAME (a format of harness/app/query/history_formats.hpp) what `accelbench history
//   --format NAME` writes, in the format's media type.
document history(store::store& db, const params& p);

// GET /api/v1/compare?baseline=SEL&candidate=SEL[&threshold=PCT&alpha=A&strict=1&only_changed=1
//   &format=NAME]
//   -> without format: {"exit_code", "strict", "verdict_counts", "comparison":
//   schemas/compare.schema.json} as JSON; with format=NAME (a compare format of
//   harness/app/query/formats.hpp) what `accelbench compare --format NAME` writes, in the
//   format's media type. only_changed=1 is `compare --only-changed`. exit_code is what
//   `accelbench compare` would exit with.
struct compare_answer {
  document doc;
  int exit_code = 0;
};
compare_answer compare_runs(store::store& db, const params& p);

// POST /api/v1/runs: a results document as `accelbench publish` sends it. Each run must carry its
// uuid; a run already stored (same uuid) is not stored again. `idempotency_key`, when given, must
// be the key publish derives from the body's uuids (check_idempotency_key).
// status 201 when something was stored, 200 when everything was already present (a replay).
// clang-tidy 14 reads this struct's implicit moves as throwing (a json member): they are noexcept.
struct ingest_result { // NOLINT(bugprone-exception-escape)
  int status = 200;
  json body;
};
ingest_result ingest(store::store& db, const std::string& body, const std::string& idempotency_key);

// What the store's keys would refuse, refused before the store sees it (400 naming the run and the
// value): a uuid given twice in one document. Within a run (a repeated sample index or metric...)
// the results document's own check has refused it already, as import does. The store would fail
// the whole transaction on these with a constraint error that is no fault of the database.
void check_storable(const std::vector<run>& runs);

// An Idempotency-Key is optional; when given it must be exactly net::idempotency_key_for(uuids)
// (422 otherwise, naming the expected key; 400 when longer than 256 characters). Every key is
// checked: a key the server did not check would promise a client something it does not keep.
void check_idempotency_key(const std::string& key, const std::vector<std::string>& uuids);

// Content-Type of a JSON body: the media type exactly application/json (case-insensitive), with
// no parameter but an optional charset=utf-8.
bool is_json_media_type(const std::string& content_type);

// GET /api/v1/health: the database answers (a count of runs); throws storage_error when not.
json health(store::store& db);

// Refuses query parameters not in `allowed` (400 naming the first one) and values that are not
// UTF-8; exposed for the dashboard.
void allow_only(const params& p, std::initializer_list<const char*> allowed);

} // namespace accelbench::server
