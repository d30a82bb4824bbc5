#pragma once
// Publishing results to a results server, and importing them from one.
// Wire format: our export format (harness/core/results_document, schemas/results.schema.json), so
// what a server receives is exactly what `accelbench export` writes and `accelbench import` reads.
#include <cstddef>
#include <string>
#include <vector>

#include "harness/app/net/http.hpp"
#include "harness/core/model.hpp"

namespace accelbench::net {

struct publish_options {
  std::string url;   // endpoint receiving POSTed results documents
  http_options http; // token, TLS, timeouts, retries
  // Runs per POSTed document. 1 (the default): every run is its own document whose
  // Idempotency-Key is derived from that run's uuid alone, so publishing an overlapping
  // selection again, or retrying after a partial failure, never duplicates a run on a server
  // that honours the key. Larger batches save requests; their key covers the batch's uuids.
  std::size_t batch_size = 1;
};

struct publish_result {
  std::size_t runs = 0; // runs accepted by the server (2xx)
  std::size_t already_present =
      0;                    // of them, runs the server said it held already (accelbench serve)
  std::size_t requests = 0; // documents POSTed and accepted
  int attempts = 0;         // HTTP attempts, retries included
  std::vector<std::string> idempotency_keys; // one per request, in order
};

// POSTs `runs` (with the entries of `systems` — an array of system objects — that they name) as
// results documents. Throws http_error on the first batch the server does not accept (the message
// says how many runs were published before it); 401/403 give "authentication failed (HTTP 401) —
// check the token in $NAME" and never the token. Nothing is sent when `runs` is empty.
publish_result publish_runs(const std::vector<run>& runs, const json& systems,
                            const publish_options& options);

// The Idempotency-Key of a batch: "accelbench-run-<uuid>" for one run, otherwise
// "accelbench-batch-<FNV-1a 128 of the sorted uuids>" (order-independent).
std::string idempotency_key_for(const std::vector<std::string>& run_uuids);

// GETs an http(s) URL and returns the body. file:// and other schemes are refused with
// input_error (a local file is read as a path by the caller); 401/403 → http_error naming the
// token's variable; any other non-2xx → http_error with the status.
std::string fetch_url(const std::string& url, const http_options& options);

// fetch_url then read_results_document (harness/core): a body that is not JSON or not our schema
// throws input_error with the line and column (or the schema path), naming the URL.
std::vector<run> import_results_url(const std::string& url, const http_options& options,
                                    json* systems = nullptr);

} // namespace accelbench::net
