#pragma once
// The MLLOG reader and writer live in harness/core/mllog.hpp (one module, shared with
// workloads/training); the mlperf module names its types and functions without the prefix.
#include "harness/core/mllog.hpp"

namespace accelbench::mlperf {

using mllog::diagnostic;
using mllog::event;
using mllog::event_type;
using mllog::format_event;
using mllog::k_max_log_bytes;
using mllog::k_max_time_ms;
using mllog::mllog_marker;
using mllog::parse_mllog;
using mllog::parse_mllog_file;
using mllog::parsed_log;
using mllog::read_text_file;
using mllog::repair_text_lines;
using mllog::to_string;

} // namespace accelbench::mlperf
