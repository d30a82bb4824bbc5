#include "workloads/mlperf/ingest.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <ctime>
#include <set>

#include <fmt/format.h>

#include "harness/core/environment.hpp"
#include "harness/core/error.hpp"
#include "workloads/mlperf/check.hpp"

namespace accelbench::mlperf {

namespace fs = std::filesystem;

// ---------------------------------------------------------------------------------------------
// Name-based UUID: RFC 4122 §4.3 version 5 over SHA-1 (FIPS 180-4), written from the specs.
namespace {

std::array<uint8_t, 20> sha1(std::string_view data) {
  uint32_t h[5] = {0x67452301, 0xEFCDAB89, 0x98BADCFE, 0x10325476, 0xC3D2E1F0};
  std::string msg(data);
  const uint64_t bit_len = static_cast<uint64_t>(data.size()) * 8;
  msg.push_back(static_cast<char>(0x80));
  while (msg.size() % 64 != 56)
    msg.push_back('\0');
  for (int i = 7; i >= 0; --i)
    msg.push_back(static_cast<char>((bit_len >> (i * 8)) & 0xff));
  auto rol = [](uint32_t x, int n) { return (x << n) | (x >> (32 - n)); };
  for (size_t off = 0; off < msg.size(); off += 64) {
    uint32_t w[80];
    for (int i = 0; i < 16; ++i)
      w[i] = (uint32_t(uint8_t(msg[off + 4 * i])) << 24) |
             (uint32_t(uint8_t(msg[off + 4 * i + 1])) << 16) |
             (uint32_t(uint8_t(msg[off + 4 * i + 2])) << 8) |
             uint32_t(uint8_t(msg[off + 4 * i + 3]));
    for (int i = 16; i < 80; ++i)
      w[i] = rol(w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16], 1);
    uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4];
    for (int i = 0; i < 80; ++i) {
      uint32_t f, k;
      if (i < 20)
        f = (b & c) | (~b & d), k = 0x5A827999;
      else if (i < 40)
        f = b ^ c ^ d, k = 0x6ED9EBA1;
      else if (i < 60)
        f = (b & c) | (b & d) | (c & d), k = 0x8F1BBCDC;
      else
        f = b ^ c ^ d, k = 0xCA62C1D6;
      const uint32_t t = rol(a, 5) + f + e + k + w[i];
      e = d, d = c, c = rol(b, 30), b = a, a = t;
    }
    h[0] += a, h[1] += b, h[2] += c, h[3] += d, h[4] += e;
  }
  std::array<uint8_t, 20> out{};
  for (int i = 0; i < 5; ++i)
    for (int j = 0; j < 4; ++j)
      out[4 * i + j] = uint8_t(h[i] >> (24 - 8 * j));
  return out;
}

// The RFC 4122 URL namespace; the name is "accelbench:mlperf:<...>", so the id space is ours.
constexpr uint8_t url_namespace[16] = {0x6b, 0xa7, 0xb8, 0x11, 0x9d, 0xad, 0x11, 0xd1,
                                       0x80, 0xb4, 0x00, 0xc0, 0x4f, 0xd4, 0x30, 0xc8};

} // namespace

std::string name_uuid(std::string_view name) {
  std::string data(reinterpret_cast<const char*>(url_namespace), 16);
  data += "accelbench:mlperf:";
  data += name;
  auto d = sha1(data);
  d[6] = (d[6] & 0x0f) | 0x50; // version 5
  d[8] = (d[8] & 0x3f) | 0x80; // RFC 4122 variant
  std::string s;
  for (int i = 0; i < 16; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10)
      s += '-';
    s += fmt::format("{:02x}", d[i]);
  }
  return s;
}

std::string iso8601_from_ms(int64_t ms) {
  const std::time_t secs = static_cast<std::time_t>(ms / 1000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z", tm.tm_year + 1900, tm.tm_mon + 1,
                     tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, static_cast<int>(ms % 1000));
}

json system_description::to_json() const {
  json j = fields;
  j["derived"] = {{"org", org},
                  {"name", name},
                  {"round", round},
                  {"accelerator_model", accelerator_model},
                  {"accelerators_per_node", accelerators_per_node},
                  {"nodes", nodes},
                  {"total_accelerators", total_accelerators},
                  {"framework", framework},
                  {"software_stack", software_stack}};
  return j;
}

namespace {

int64_t count_field(const json& j, const char* key) {
  if (!j.contains(key))
    return 0;
  const json& v = j[key];
  if (v.is_number_integer())
    return v.get<int64_t>();
  if (v.is_string()) {
    try {
      return std::stoll(v.get<std::string>());
    } catch (...) {
      return 0;
    }
  }
  return 0;
}

std::string string_field(const json& j, const char* key) {
  if (!j.contains(key))
    return {};
  return j[key].is_string() ? j[key].get<std::string>() : j[key].dump();
}

// Keys that describe the run's structure rather than its hyperparameters.
bool structural_key(const std::string& k) {
  static const std::set<std::string> keys = {
      "cache_clear",   "init_start",  "init_stop",  "run_start",
      "run_stop",      "block_start", "block_stop", "epoch_start",
      "epoch_stop",    "eval_start",  "eval_stop",  "eval_accuracy",
      "tracked_stats", "train_loss",  "seed",       "weights_initialization"};
  return keys.count(k) || k.rfind("submission_", 0) == 0;
}

json environment_of(const system_description& s) {
  return {{"source", "mlperf system description"},
          {"system", s.fields},
          {"cpu", {{"model", string_field(s.fields, "host_processor_model_name")}}},
          {"accelerator",
           {{"model", s.accelerator_model},
            {"per_node", s.accelerators_per_node},
            {"nodes", s.nodes},
            {"count", s.total_accelerators}}},
          {"os", string_field(s.fields, "operating_system")},
          {"framework", s.framework},
          {"software_stack", s.software_stack}};
}

} // namespace

run run_from_log(const std::string& text, const result_context& ctx, std::vector<diagnostic>& diags,
                 const benchmark_table& table) {
  const std::string file = ctx.relative_path.empty() ? "<log>" : ctx.relative_path;
  parsed_log log = parse_mllog(text, file);
  const std::string division =
      ctx.system_desc && !ctx.system_desc->division.empty() ? ctx.system_desc->division : "";
  log_check lc = check_log(log, ctx.benchmark, division, ctx.round, table);
  const benchmark_info* info = table.find(ctx.benchmark);

  run r;
  r.uuid = name_uuid(fmt::format("{}/{}", ctx.round.empty() ? "mlperf-training" : ctx.round, file));
  r.cfg.workload = "mlperf." + (info ? info->name : ctx.benchmark);
  r.cfg.backend = "mlperf";
  r.cfg.values["benchmark"] = info ? info->name : ctx.benchmark;
  std::string div = division;
  if (div.empty())
    if (const event* e = log.first("submission_division"); e && e->value.is_string())
      div = e->value;
  r.cfg.values["division"] = div.empty() ? "closed" : div;
  if (ctx.system_desc)
    r.cfg.values["accelerators"] = std::to_string(ctx.system_desc->total_accelerators);
  r.system = ctx.system;
  r.source = "published";
  r.ruleset = ctx.round.empty() ? "mlperf-training" : "mlperf-training-v" + ctx.round;
  r.sample_unit = "min";
  r.sample_dir = direction::lower_is_better;
  r.mllog = text;
  r.tags = {"mlperf"};
  if (ctx.system_desc) {
    r.environment = environment_of(*ctx.system_desc);
    r.fingerprint = environment_fingerprint(r.environment);
  }

  // Every compliance problem is a diagnostic of the import and a reason the run is INVALID.
  for (const auto& e : lc.errors) {
    diags.push_back(e);
    r.mark_invalid(e.to_string());
  }

  // Time to train (result summarizer): first run_start to first run_stop, in minutes.
  const event* start = log.first("run_start");
  const event* stop = log.first("run_stop");
  json extra = {{"org", ctx.org},
                {"round", ctx.round},
                {"result_file", file},
                {"scaling_factor", ctx.scaling_factor},
                {"has_scaling_json", ctx.has_scaling},
                {"converged", lc.converged},
                {"status", lc.stop_status},
                {"eval_curve", lc.quality.eval_curve},
                {"target", info ? info->quality.to_json() : json(nullptr)},
                {"known_benchmark", info != nullptr}};
  if (!info) {
    diags.push_back(
        {file, 0,
         fmt::format("unknown benchmark '{}': ingested without a quality target", ctx.benchmark)});
  }
  // Seeds: one value when logged once (the published logs do), else the list.
  auto seeds = log.all("seed");
  if (seeds.size() == 1)
    extra["seed"] = seeds[0]->value;
  else if (!seeds.empty()) {
    extra["seed"] = json::array();
    for (const event* e : seeds)
      extra["seed"].push_back(e->value);
  }
  json hp = json::object();
  for (const event& e : log.events)
    if (e.type == event_type::point_in_time && !structural_key(e.key) && !hp.contains(e.key))
      hp[e.key] = e.value;
  extra["hyperparameters"] = hp;
  json sub = json::object();
  for (const event& e : log.events)
    if (e.key.rfind("submission_", 0) == 0 && !sub.contains(e.key.substr(11)))
      sub[e.key.substr(11)] = e.value;
  extra["submission"] = sub;
  if (const event* is = log.first("init_start"); is && log.first("init_stop"))
    extra["init_time_min"] = (log.first("init_stop")->time_ms - is->time_ms) / 60000.0;

  if (!start || !stop) {
    const std::string why = !start ? "log has no run_start" : "log has no run_stop";
    diags.push_back({file, 0, why + " (run recorded as failed)"});
    r.mark_failed(why);
    extra["converged"] = false;
    if (start)
      r.started_at = iso8601_from_ms(start->time_ms);
  } else {
    const double minutes = static_cast<double>(stop->time_ms - start->time_ms) / 60000.0;
    sample s;
    s.index = 0;
    s.value = minutes;
    s.extra = {{"run_start_ms", start->time_ms}, {"run_stop_ms", stop->time_ms}};
    r.samples.push_back(s);
    r.add_metric("time_to_train_min", minutes, "min", direction::lower_is_better);
    r.started_at = iso8601_from_ms(start->time_ms);
    r.finished_at = iso8601_from_ms(stop->time_ms);
  }
  r.extra = std::move(extra);
  return r;
}

namespace {

// result_<i>.txt sorted by i (result_10 after result_9).
std::vector<std::pair<long, fs::path>> result_files(const fs::path& dir) {
  std::vector<std::pair<long, fs::path>> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    if (!e.is_regular_file())
      continue;
    const std::string n = e.path().filename().string();
    if (n.rfind("result_", 0) != 0 || e.path().extension() != ".txt")
      continue;
    const std::string idx = n.substr(7, n.size() - 11);
    char* end = nullptr;
    long i = std::strtol(idx.c_str(), &end, 10);
    out.emplace_back(end && *end == '\0' && !idx.empty() ? i : 1L << 30, e.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<fs::path> subdirs(const fs::path& dir) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (e.is_directory())
      out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

} // namespace

ingest_result ingest_org(const fs::path& org_dir, const benchmark_table& table) {
  ingest_result res;
  const std::string org = org_dir.filename().string();
  const std::string round = round_from_path(org_dir);
  if (!fs::is_directory(org_dir / "results"))
    throw input_error(
        fmt::format("'{}' is not an MLPerf organisation folder (no results/)", org_dir.string()));

  std::error_code ec;
  for (const auto& e : fs::directory_iterator(org_dir / "systems", ec)) {
    if (!e.is_regular_file() || e.path().extension() != ".json")
      continue;
    const std::string rel = fmt::format("{}/systems/{}", org, e.path().filename().string());
    json j = json::parse(read_text_file(e.path()), nullptr, false);
    if (j.is_discarded() || !j.is_object()) {
      res.diagnostics.push_back({rel, 0, "system description is not a JSON object"});
      continue;
    }
    system_description s;
    s.org = org;
    s.name = e.path().stem().string();
    s.round = round;
    s.file = e.path();
    s.fields = j;
    s.accelerator_model = string_field(j, "accelerator_model_name");
    s.accelerators_per_node = count_field(j, "accelerators_per_node");
    s.nodes = count_field(j, "number_of_nodes");
    // result_summarizer: number_of_nodes x max(accelerators_per_node, 1).
    s.total_accelerators = s.nodes * std::max<int64_t>(s.accelerators_per_node, 1);
    s.framework = string_field(j, "framework");
    if (j.contains("other_software_stack"))
      s.software_stack = j["other_software_stack"];
    s.division = string_field(j, "division");
    s.status = string_field(j, "status");
    res.systems.push_back(std::move(s));
  }
  std::sort(res.systems.begin(), res.systems.end(),
            [](const auto& a, const auto& b) { return a.name < b.name; });

  for (const auto& sys_dir : subdirs(org_dir / "results")) {
    const std::string system = sys_dir.filename().string();
    const system_description* desc = nullptr;
    for (const auto& s : res.systems)
      if (s.name == system)
        desc = &s;
    if (!desc)
      res.diagnostics.push_back(
          {fmt::format("{}/results/{}", org, system), 0,
           fmt::format("no system description {}/systems/{}.json", org, system)});
    for (const auto& bench_dir : subdirs(sys_dir)) {
      result_context ctx;
      ctx.org = org;
      ctx.system = system;
      ctx.benchmark = bench_dir.filename().string();
      ctx.round = round;
      ctx.system_desc = desc;
      const fs::path scaling = bench_dir / "scaling.json";
      if (fs::exists(scaling)) {
        json j = json::parse(read_text_file(scaling), nullptr, false);
        if (!j.is_discarded() && j.is_object() && j.contains("scaling_factor") &&
            j["scaling_factor"].is_number() && j["scaling_factor"].get<double>() > 0) {
          ctx.scaling_factor = j["scaling_factor"].get<double>();
          ctx.has_scaling = true;
        } else {
          res.diagnostics.push_back(
              {fmt::format("{}/results/{}/{}/scaling.json", org, system, ctx.benchmark), 0,
               "no positive numeric scaling_factor; using 1"});
        }
      }
      for (const auto& [idx, path] : result_files(bench_dir)) {
        ctx.relative_path = fmt::format("{}/results/{}/{}/{}", org, system, ctx.benchmark,
                                        path.filename().string());
        std::string text;
        try {
          text = read_text_file(path);
        } catch (const input_error& e) {
          res.diagnostics.push_back({ctx.relative_path, 0, e.what()});
          continue;
        }
        res.runs.push_back(run_from_log(text, ctx, res.diagnostics, table));
        res.runs.back().extra["run_index"] = idx;
      }
    }
  }
  return res;
}

ingest_result ingest(const fs::path& dir, const benchmark_table& table) {
  if (!fs::is_directory(dir))
    throw input_error(fmt::format("'{}' is not a directory", dir.string()));
  std::vector<fs::path> orgs;
  // Breadth-first: the folder itself, then up to three levels below (rounds / orgs).
  std::vector<fs::path> level = {dir};
  for (int depth = 0; depth <= 3 && !level.empty(); ++depth) {
    std::vector<fs::path> next;
    for (const auto& d : level) {
      if (fs::is_directory(d / "results"))
        orgs.push_back(d);
      else
        for (const auto& s : subdirs(d))
          next.push_back(s);
    }
    level = std::move(next);
  }
  if (orgs.empty())
    throw input_error(
        fmt::format("no MLPerf organisation folder (<org>/results/...) under '{}'", dir.string()));
  std::sort(orgs.begin(), orgs.end());
  ingest_result all;
  for (const auto& o : orgs) {
    ingest_result r = ingest_org(o, table);
    std::move(r.systems.begin(), r.systems.end(), std::back_inserter(all.systems));
    std::move(r.runs.begin(), r.runs.end(), std::back_inserter(all.runs));
    std::move(r.diagnostics.begin(), r.diagnostics.end(), std::back_inserter(all.diagnostics));
  }
  return all;
}

} // namespace accelbench::mlperf
