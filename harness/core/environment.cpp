#include "harness/core/environment.hpp"

#include <sys/utsname.h>
#include <unistd.h>

#include <fstream>
#include <mutex>
#include <sstream>
#include <thread>

#include <fmt/format.h>

#include "harness/core/build_info.hpp"
#include "harness/core/hash.hpp"
#include "harness/core/text_input.hpp"

namespace accelbench {

namespace {
std::mutex g_lib_mutex;
std::map<std::string, std::string>& known_libs() {
  static std::map<std::string, std::string> m;
  return m;
}
std::map<std::string, std::function<std::string()>>& unread_libs() {
  static std::map<std::string, std::function<std::string()>> m;
  return m;
}
// The versions, the deferred ones read now (once). Called with g_lib_mutex held.
const std::map<std::string, std::string>& libs() {
  auto& unread = unread_libs();
  for (auto& [name, read] : unread) {
    std::string v;
    try {
      v = read();
    } catch (const std::exception&) {
      v.clear(); // a version that cannot be read is not recorded
    }
    if (!v.empty())
      known_libs()[name] = v;
  }
  unread.clear();
  return known_libs();
}

std::string trim(const std::string& s) {
  size_t a = s.find_first_not_of(" \t\r\n");
  size_t b = s.find_last_not_of(" \t\r\n");
  return a == std::string::npos ? "" : s.substr(a, b - a + 1);
}

std::string read_first_line(const char* path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return trim(line);
}
} // namespace

void register_library_version(const std::string& name, const std::string& version) {
  std::lock_guard lock(g_lib_mutex);
  known_libs()[name] = version;
}

void register_library_version(const std::string& name, std::function<std::string()> read) {
  std::lock_guard lock(g_lib_mutex);
  unread_libs()[name] = std::move(read);
}

memory_info read_memory_info() {
  memory_info m;
  std::ifstream in("/proc/meminfo");
  std::string key;
  uint64_t kb;
  std::string unit;
  while (in >> key >> kb) {
    std::getline(in, unit);
    if (key == "MemTotal:")
      m.total_bytes = kb * 1024;
    if (key == "MemAvailable:")
      m.available_bytes = kb * 1024;
  }
  return m;
}

cpu_features detect_cpu_features() {
  cpu_features f;
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init();
  f.avx2 = __builtin_cpu_supports("avx2");
  f.fma = __builtin_cpu_supports("fma");
  f.avx512f = __builtin_cpu_supports("avx512f");
  // GCC 12 knows avx512bf16 as a cpu feature name.
  f.avx512bf16 = __builtin_cpu_supports("avx512bf16");
#endif
  return f;
}

json capture_environment() {
  json env;
  // CPU: model name, logical cores, MHz as /proc/cpuinfo reports them.
  std::string model, mhz;
  {
    std::ifstream in("/proc/cpuinfo");
    std::string line;
    while (std::getline(in, line)) {
      auto colon = line.find(':');
      if (colon == std::string::npos)
        continue;
      std::string k = trim(line.substr(0, colon)), v = trim(line.substr(colon + 1));
      if (k == "model name" && model.empty())
        model = v;
      if (k == "cpu MHz" && mhz.empty())
        mhz = v;
    }
  }
  std::string max_khz = read_first_line("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq");
  auto feat = detect_cpu_features();
  std::string isa = feat.avx512f ? (feat.avx512bf16 ? "avx512+bf16" : "avx512")
                                 : (feat.avx2 ? "avx2" : "baseline");
  env["cpu"] = {{"model", model.empty() ? "unknown" : model},
                {"logical_cores", (int)std::thread::hardware_concurrency()},
                {"mhz", mhz.empty() ? 0.0 : std::stod(mhz)},
                {"max_mhz", max_khz.empty() ? 0.0 : std::stod(max_khz) / 1000.0},
                {"isa", isa}};
  auto mem = read_memory_info();
  env["memory"] = {{"total_bytes", mem.total_bytes}, {"available_bytes", mem.available_bytes}};
  struct utsname u {};
  uname(&u);
  std::string pretty;
  {
    std::ifstream in("/etc/os-release");
    std::string line;
    while (std::getline(in, line))
      if (line.rfind("PRETTY_NAME=", 0) == 0) {
        pretty = line.substr(12);
        if (pretty.size() >= 2 && pretty.front() == '"')
          pretty = pretty.substr(1, pretty.size() - 2);
      }
  }
  env["os"] = {{"name", pretty},
               {"kernel", std::string(u.sysname) + " " + u.release},
               {"machine", u.machine}};
  char host[256] = {0};
  gethostname(host, sizeof host - 1);
  env["hostname"] = host;
  env["compiler"] = build_info::compiler();
  env["compiler_flags"] = build_info::compiler_flags();
  env["build_type"] = build_info::build_type();
  {
    std::lock_guard lock(g_lib_mutex);
    env["libraries"] = libs();
  }
  env["harness"] = {{"version", build_info::version()},
                    {"git_revision", build_info::git_revision()},
                    {"git_dirty", build_info::git_dirty()},
                    {"cuda_built", build_info::cuda_built()}};
  env["accelerator"] = {{"model", "CPU: " + (model.empty() ? std::string("unknown") : model)},
                        {"count", 1}};
  return env;
}

namespace {
// The fields that must match for two runs to be comparable.
std::vector<std::pair<std::string, json::json_pointer>> comparable_fields(const json& env) {
  std::vector<std::pair<std::string, json::json_pointer>> f = {
      {"cpu.model", json::json_pointer("/cpu/model")},
      {"cpu.logical_cores", json::json_pointer("/cpu/logical_cores")},
      {"compiler", json::json_pointer("/compiler")},
      {"build_type", json::json_pointer("/build_type")},
      {"accelerator.model", json::json_pointer("/accelerator/model")},
      {"accelerator.count", json::json_pointer("/accelerator/count")},
  };
  // A run across ranks (harness/dist) is comparable only with runs at the same scale and topology;
  // a run of one process has no such fields, so its fingerprint is what it always was.
  const json::json_pointer world("/distributed/world_size");
  if (env.contains(world) && env.at(world).is_number() && env.at(world).get<double>() > 1) {
    f.emplace_back("distributed.world_size", world);
    f.emplace_back("distributed.ranks_per_node", json::json_pointer("/distributed/ranks_per_node"));
    f.emplace_back("distributed.nodes", json::json_pointer("/distributed/nodes"));
  }
  // Library names come from imported documents too: '~' and '/' are escaped (RFC 6901), or a
  // name like "a~b" would be an invalid pointer (an exception) and "x/y" a different field.
  if (env.contains("libraries") && env["libraries"].is_object())
    for (const auto& [k, v] : env["libraries"].items()) {
      std::string token;
      for (char c : k)
        token += c == '~' ? std::string("~0") : c == '/' ? std::string("~1") : std::string(1, c);
      f.emplace_back("libraries." + k, json::json_pointer("/libraries/" + token));
    }
  return f;
}
} // namespace

namespace {
std::string fingerprint_from(const json& env, uint64_t basis) {
  uint64_t h = basis;
  for (const auto& [name, ptr] : comparable_fields(env)) {
    std::string v = name + "=" + (env.contains(ptr) ? dump_json(env.at(ptr)) : "null") + ";";
    h = fnv1a64(v, h);
  }
  return fmt::format("{:016x}", h);
}
} // namespace

std::string environment_fingerprint(const json& env) {
  return fingerprint_from(env, k_fnv1a64_basis);
}

std::string legacy_environment_fingerprint(const json& env) {
  return fingerprint_from(env, k_fnv1a64_legacy_basis);
}

std::string current_fingerprint(const json& env, const std::string& stored) {
  return stored == legacy_environment_fingerprint(env) ? environment_fingerprint(env) : stored;
}

std::vector<std::string> environment_differences(const json& a, const json& b) {
  std::vector<std::string> out;
  auto fa = comparable_fields(a), fb = comparable_fields(b);
  std::map<std::string, json::json_pointer> all;
  for (auto& [n, p] : fa)
    all.emplace(n, p);
  for (auto& [n, p] : fb)
    all.emplace(n, p);
  for (const auto& [name, ptr] : all) {
    json va = a.contains(ptr) ? a.at(ptr) : json();
    json vb = b.contains(ptr) ? b.at(ptr) : json();
    if (va != vb)
      out.push_back(name);
  }
  return out;
}

} // namespace accelbench
