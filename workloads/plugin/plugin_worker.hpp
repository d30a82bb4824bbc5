#pragma once
// A plugin's measurement in a worker process, so that a plugin cannot take accelbench down: the
// worker is forked after the plugin is loaded, in its own process group, and runs the measurement
// into a copy of the run; it sends that run back over a pipe as the results document's JSON of a
// run (model.hpp to_json) and _exits. The parent waits for it with a timeout and turns every bad
// end into a failed run with its reason: killed by a signal (named), exited before sending its
// run (with any code, 0 included), sent a malformed run, ran past the timeout or was interrupted
// (Ctrl-C) — both of which SIGKILL its process group. POSIX (Linux: the worker also dies with
// accelbench, PR_SET_PDEATHSIG).
#include <atomic>
#include <functional>
#include <string>

#include "harness/core/model.hpp"

namespace accelbench::plugin {

struct worker_limits {
  double timeout_s = 600; // the whole worker, fork to exit (plugin.timeout_s); 0: none
  const std::atomic<bool>* cancel = nullptr; // set (Ctrl-C): the worker is killed now
};

// Runs `measure` on a copy of `out` in a worker process and takes back what it measured. A worker
// that ends badly leaves `out` failed with the reason; an exception from `measure` fails the run
// with its message, as the runner would.
void run_in_worker(run& out, const std::function<void(run&)>& measure, const worker_limits& lim);

// What a worker's message `text` carries into `out`: what a measurement writes (samples and their
// unit, metrics, status, validity and reasons, extra, the settings applied). Returns why `text`
// is no run of `out` ("" when it was taken): not JSON, not a run, another run's uuid.
std::string take_worker_run(run& out, const std::string& text);

} // namespace accelbench::plugin
