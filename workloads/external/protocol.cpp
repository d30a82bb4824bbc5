#include "workloads/external/protocol.hpp"

#include <cmath>
#include <initializer_list>

#include "harness/core/limits.hpp"

namespace accelbench::external {
namespace {

// A value as it appears in a reason, cut short so that the reason stays one readable line.
std::string shown(const json& v) {
  std::string s = dump_json(v);
  constexpr std::size_t k_max = 80;
  return s.size() > k_max ? s.substr(0, k_max) + "..." : s;
}

// A key or a name from the line as it appears in a reason: printable (a newline in a key would
// split the one-line reason) and cut short like a value.
std::string shown_name(const std::string& name) {
  constexpr std::size_t k_max = 80;
  std::string s = printable(std::string_view(name).substr(0, k_max));
  return name.size() > k_max ? s + "..." : s;
}

// The first key of `obj` that is not in `known`, or "".
std::string unknown_key(const json& obj, std::initializer_list<std::string_view> known) {
  for (const auto& [key, value] : obj.items()) {
    bool found = false;
    for (std::string_view k : known) {
      found = found || key == k;
    }
    if (!found) {
      return key;
    }
  }
  return "";
}

bool finite_number(const json& v) { return v.is_number() && std::isfinite(v.get<double>()); }

// Reads an optional per-sample count (items, flops, bytes): a finite number >= 0. Returns the
// reason it is refused, or "".
std::string read_count(const json& obj, const char* key, std::optional<double>& out) {
  if (!obj.contains(key)) {
    return "";
  }
  const json& v = obj.at(key);
  if (!finite_number(v) || v.get<double>() < 0) {
    return std::string("sample ") + key + " " + shown(v) + " is not a finite number >= 0";
  }
  out = v.get<double>();
  return "";
}

std::string read_sample(const json& obj, sample& s) {
  if (!obj.is_object()) {
    return "sample " + shown(obj) + " is not an object";
  }
  if (std::string k = unknown_key(obj, {"seconds", "items", "flops", "bytes"}); !k.empty()) {
    return "sample has unknown field '" + shown_name(k) + "'";
  }
  if (!obj.contains("seconds")) {
    return "sample has no seconds";
  }
  const json& sec = obj.at("seconds");
  if (!finite_number(sec) || sec.get<double>() <= 0) {
    return "sample seconds " + shown(sec) + " is not a finite number > 0";
  }
  s.seconds = sec.get<double>();
  for (auto [key, out] :
       {std::pair{"items", &s.items}, std::pair{"flops", &s.flops}, std::pair{"bytes", &s.bytes}}) {
    if (std::string why = read_count(obj, key, *out); !why.empty()) {
      return why;
    }
  }
  return "";
}

std::string read_metric(const json& obj, metric& m) {
  if (!obj.is_object()) {
    return "metric " + shown(obj) + " is not an object";
  }
  if (std::string k = unknown_key(obj, {"name", "value", "unit", "direction"}); !k.empty()) {
    return "metric has unknown field '" + shown_name(k) + "'";
  }
  if (!obj.contains("name") || !obj.at("name").is_string() ||
      obj.at("name").get<std::string>().empty()) {
    return "metric has no name (a non-empty string)";
  }
  m.name = obj.at("name").get<std::string>();
  if (!obj.contains("value") || !finite_number(obj.at("value"))) {
    return "metric '" + shown_name(m.name) + "' value " + shown(obj.value("value", json())) +
           " is not a finite number";
  }
  m.value = obj.at("value").get<double>();
  if (!obj.contains("unit") || !obj.at("unit").is_string()) {
    return "metric '" + shown_name(m.name) + "' has no unit (a string, \"\" for none)";
  }
  m.unit = obj.at("unit").get<std::string>();
  json dir = obj.value("direction", json());
  if (dir != "lower" && dir != "higher") {
    return "metric '" + shown_name(m.name) + "' direction " + shown(dir) +
           " is not \"lower\" or \"higher\"";
  }
  m.direction = dir.get<std::string>();
  return "";
}

std::string read_check(const json& obj, check& c) {
  if (!obj.is_object()) {
    return "check " + shown(obj) + " is not an object";
  }
  if (std::string k = unknown_key(obj, {"passed", "reason"}); !k.empty()) {
    return "check has unknown field '" + shown_name(k) + "'";
  }
  if (!obj.contains("passed") || !obj.at("passed").is_boolean()) {
    return "check passed " + shown(obj.value("passed", json())) + " is not true or false";
  }
  c.passed = obj.at("passed").get<bool>();
  json reason = obj.value("reason", json(""));
  if (!reason.is_string()) {
    return "check reason " + shown(reason) + " is not a string";
  }
  c.reason = reason.get<std::string>();
  return "";
}

} // namespace

namespace {

std::string read_hello(const json& v, int64_t nonblank_lines, int& version) {
  if (nonblank_lines != 1) {
    return "the protocol hello " + shown(v) + " comes after other lines (it must be the first)";
  }
  if (!v.is_number_integer() || v.get<int64_t>() != k_protocol_version) {
    return "protocol version " + shown(v) + " is not supported (this accelbench speaks " +
           std::to_string(k_protocol_version) + ")";
  }
  version = k_protocol_version;
  return "";
}

std::string read_extra(const json& v, json& extra) {
  if (!v.is_object()) {
    return "extra " + shown(v) + " is not an object";
  }
  extra.update(v);
  return "";
}

} // namespace

// A run holds at most limits::k_max_samples samples: the line past them is refused before it is
// read (2 million sample lines took 74 s and 680 MB to store).
std::string protocol_parser::one_more_sample(std::size_t samples_so_far) {
  return samples_so_far < limits::k_max_samples ? ""
                                                : limits::sample_count_problem(samples_so_far + 1);
}

// A metric's name within its length, and at most limits::k_max_program_metrics distinct names (a
// name may come again: its values are one metric), which leaves room in the run for accelbench's
// own figures.
std::string protocol_parser::one_more_metric(const std::string& name) {
  if (std::string why = limits::metric_name_problem(name); !why.empty())
    return why;
  if (metric_names_.size() >= limits::k_max_program_metrics && !metric_names_.count(name))
    return limits::program_metric_count_problem(metric_names_.size() + 1);
  metric_names_.insert(name);
  return "";
}

void protocol_parser::refuse(const std::string& why) {
  result_.error = "protocol line " + std::to_string(line_no_) + ": " + why;
}

// One line's object: exactly one key, naming the kind.
bool protocol_parser::read_object(const json& j) {
  if (!j.is_object() || j.size() != 1) {
    refuse(shown(j) + " is not an object with one key (sample, metric, check, extra, protocol)");
    return false;
  }
  // The key and value of the object's one member (not through items(): its proxy is a temporary,
  // and references into it dangle, as AddressSanitizer found).
  const auto member = j.begin();
  const std::string& kind = member.key();
  const json& v = member.value();
  std::string why;
  if (kind == "protocol") {
    why = read_hello(v, result_.lines, result_.version);
  } else if (kind == "sample") {
    sample s;
    why = one_more_sample(result_.samples.size());
    why = why.empty() ? read_sample(v, s) : why;
    result_.samples.push_back(s);
  } else if (kind == "metric") {
    metric m;
    why = read_metric(v, m);
    why = why.empty() ? one_more_metric(m.name) : why;
    result_.metrics.push_back(m);
  } else if (kind == "check") {
    check c;
    why = result_.verdict ? "a second check line (one verdict per run)" : read_check(v, c);
    result_.verdict = c;
  } else if (kind == "extra") {
    why = read_extra(v, result_.extra);
  } else {
    why = "unknown kind '" + shown_name(kind) + "' (sample, metric, check, extra, protocol)";
  }
  if (!why.empty()) {
    refuse(why);
  }
  return why.empty();
}

bool protocol_parser::feed_line(std::string_view line) {
  if (!result_.ok()) {
    return false;
  }
  ++line_no_;
  if (!line.empty() && line.back() == '\r') {
    line.remove_suffix(1);
  }
  if (line.find_first_not_of(" \t") == std::string_view::npos) {
    return true; // blank lines are allowed and not counted
  }
  ++result_.lines;
  if (line.size() > k_max_line_bytes) {
    refuse("longer than " + std::to_string(k_max_line_bytes) + " bytes");
    return false;
  }
  // The rules of every outside JSON (no NUL byte after the object, no key twice, at most 256
  // levels) are text_input's; a syntax error shows the line's start, which the program's author
  // needs more than the parser's column.
  json_problem problem;
  std::string why;
  json j = parse_json_checked(line, problem, why);
  if (problem == json_problem::not_json || problem == json_problem::out_of_range) {
    std::string head(line.substr(0, 80));
    refuse("not valid JSON: '" + printable(head) + (line.size() > 80 ? "...'" : "'"));
    return false;
  }
  if (problem != json_problem::none) {
    refuse(why);
    return false;
  }
  return read_object(j);
}

bool protocol_parser::feed(std::string_view bytes) {
  while (!bytes.empty() && result_.ok()) {
    std::size_t nl = bytes.find('\n');
    if (nl == std::string_view::npos) {
      pending_.append(bytes);
      if (pending_.size() > k_max_line_bytes) {
        std::string line = std::move(pending_);
        pending_.clear();
        feed_line(line);
      }
      return result_.ok();
    }
    pending_.append(bytes.substr(0, nl));
    bytes.remove_prefix(nl + 1);
    std::string line = std::move(pending_);
    pending_.clear();
    feed_line(line);
  }
  return result_.ok();
}

const protocol_result& protocol_parser::finish() {
  if (!pending_.empty()) {
    std::string line = std::move(pending_);
    pending_.clear();
    feed_line(line);
  }
  return result_;
}

protocol_result parse_protocol(std::string_view text) {
  protocol_parser p;
  p.feed(text);
  return p.finish();
}

mllog::parsed_log read_stdout_mllog(std::string_view stdout_text) {
  return mllog::parse_mllog(stdout_text, "<stdout>");
}

} // namespace accelbench::external
