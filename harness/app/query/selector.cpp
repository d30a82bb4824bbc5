#include "harness/app/query/selector.hpp"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "harness/core/device_catalogue.hpp"
#include "harness/core/error.hpp"
#include "harness/core/results_document.hpp"
#include "harness/core/text_input.hpp"

namespace accelbench::query {

namespace fs = std::filesystem;

namespace {

int digits(const std::string& v, size_t at, size_t n) {
  int x = 0;
  for (size_t i = at; i < at + n; ++i) {
    if (i >= v.size() || !std::isdigit(static_cast<unsigned char>(v[i])))
      return -1;
    x = x * 10 + (v[i] - '0');
  }
  return x;
}

// YYYY-MM-DD with a real month and day, optionally followed by THH:MM[:SS[.fff]][Z] as stored.
bool is_date(const std::string& v) {
  const int y = digits(v, 0, 4), m = digits(v, 5, 2), d = digits(v, 8, 2);
  if (y < 0 || m < 1 || m > 12 || d < 1 || v.size() < 10 || v[4] != '-' || v[7] != '-')
    return false;
  static const int days[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  const bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
  if (d > days[m - 1] || (m == 2 && d == 29 && !leap))
    return false;
  if (v.size() == 10)
    return true;
  const int hh = digits(v, 11, 2), mm = digits(v, 14, 2);
  if (v[10] != 'T' || hh < 0 || hh > 23 || mm < 0 || mm > 59 || v.size() < 16 || v[13] != ':')
    return false;
  size_t i = 16;
  if (i < v.size() && v[i] == ':') {
    const int ss = digits(v, 17, 2);
    if (ss < 0 || ss > 60)
      return false;
    i = 19;
    if (i < v.size() && v[i] == '.') {
      ++i;
      if (digits(v, i, 1) < 0)
        return false;
      while (i < v.size() && std::isdigit(static_cast<unsigned char>(v[i])))
        ++i;
    }
  }
  if (i < v.size() && v[i] == 'Z')
    ++i;
  return i == v.size();
}

// The bound the store compares start times with (started_at < bound) for until=VALUE: the first
// instant after the day, minute or second VALUE names, at VALUE's own precision, so that
// until=2026-12-02 keeps the whole of that day, as since=2026-12-02 keeps it from its start.
// A fraction of a second is refused: stored times have milliseconds, and "up to the end of
// .5 s" is nobody's question.
std::string until_bound(const std::string& sel, const std::string& v) {
  require_date(v, fmt::format("selector '{}': until", sel));
  const std::string t = v.back() == 'Z' ? v.substr(0, v.size() - 1) : v; // stored times are UTC
  if (t.find('.') != std::string::npos)
    throw input_error(fmt::format("selector '{}': until '{}' has a fraction of a second (until= "
                                  "takes YYYY-MM-DD, YYYY-MM-DDTHH:MM or YYYY-MM-DDTHH:MM:SS)",
                                  sel, v));
  using namespace std::chrono;
  const sys_days day{year{digits(t, 0, 4)} / digits(t, 5, 2) / digits(t, 8, 2)};
  if (t.size() == 10) {
    const year_month_day next{day + days{1}};
    return fmt::format("{:04}-{:02}-{:02}", int(next.year()), unsigned(next.month()),
                       unsigned(next.day()));
  }
  const bool to_minute = t.size() == 16;
  sys_seconds at = day + hours{digits(t, 11, 2)} + minutes{digits(t, 14, 2)};
  at += to_minute ? seconds{60} : seconds{digits(t, 17, 2) + 1};
  const sys_days next_day = floor<days>(at);
  const year_month_day ymd{next_day};
  const hh_mm_ss tod{at - next_day};
  std::string out =
      fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}", int(ymd.year()), unsigned(ymd.month()),
                  unsigned(ymd.day()), tod.hours().count(), tod.minutes().count());
  return to_minute ? out : out + fmt::format(":{:02}", tod.seconds().count());
}

// The name tokens family=NAME stands for: the patterns of the catalogue's devices of that family
// (results/devices.json, the one list of which model is in which family).
std::vector<std::string> family_patterns(const std::string& sel, const std::string& name) {
  const auto& catalogue = device_catalogue::builtin();
  std::vector<std::string> out;
  for (const device_spec* d : catalogue.family(name))
    out.insert(out.end(), d->patterns.begin(), d->patterns.end());
  if (out.empty())
    throw input_error(fmt::format("selector '{}': unknown accelerator family '{}' (known: {})", sel,
                                  name, fmt::join(catalogue.families(), ", ")));
  return out;
}

} // namespace

void require_date(const std::string& value, const std::string& what) {
  // Compared as text with the stored start times: a word would silently select nothing or all.
  if (!is_date(value))
    throw input_error(
        fmt::format("{} '{}' is not a date (YYYY-MM-DD, or YYYY-MM-DDTHH:MM:SS)", what, value));
}

store::run_filter parse_selector(const std::string& sel) {
  store::run_filter f;
  if (sel.empty())
    throw input_error("empty selector (give a system name or key=value filters)");
  std::stringstream ss(sel);
  std::string part;
  bool any = false;
  while (std::getline(ss, part, '&')) {
    if (part.empty())
      continue;
    any = true;
    // accelerator~TEXT: the one filter written with '~' (a substring match on request).
    auto eq = part.rfind("accelerator~", 0) == 0 ? part.find('~') : part.find('=');
    if (eq == std::string::npos) {
      f.systems.push_back(part);
      continue;
    }
    std::string k = part.substr(0, eq + (part[eq] == '~')), v = part.substr(eq + 1);
    if (v.empty())
      throw input_error(fmt::format("selector '{}': {} has no value", sel, k));
    if (k == "system")
      f.systems.push_back(v);
    else if (k == "accelerator" || k == "accelerator~")
      f.accelerators.push_back(v); // the store filters by substring; select_runs then by token
    else if (k == "family") {
      // The store's any-of substring filter over every accelerator and family term keeps a
      // superset of what all of them together select; select_runs then checks each by token.
      const auto patterns = family_patterns(sel, v);
      f.accelerators.insert(f.accelerators.end(), patterns.begin(), patterns.end());
    } else if (k == "tag")
      f.tags.push_back(v);
    else if (k == "workload")
      f.workloads.push_back(v);
    else if (k == "source")
      f.source = v;
    else if (k == "since") {
      require_date(v, fmt::format("selector '{}': since", sel));
      f.since = v;
    } else if (k == "until")
      f.until = until_bound(sel, v);
    else if (k == "run") {
      std::stringstream ids(v);
      std::string id;
      while (std::getline(ids, id, ',')) {
        try {
          size_t pos = 0;
          long long n = std::stoll(id, &pos);
          if (pos != id.size() || n <= 0)
            throw std::invalid_argument(id);
          f.ids.push_back(n);
        } catch (...) {
          throw input_error(
              fmt::format("selector '{}': run id '{}' is not a positive integer", sel, id));
        }
      }
    } else if (k != "job") // job= is resolved over the stored runs (keep_job)
      throw input_error(
          fmt::format("selector '{}': unknown filter '{}' (use system=, accelerator=, "
                      "accelerator~, family=, tag=, workload=, run=, source=, since=, until=, "
                      "job=)",
                      sel, k));
  }
  // Only '&'s: no filter at all, which would select every run.
  if (!any)
    throw input_error(
        fmt::format("selector '{}' has no filter (give a system name or key=value filters)", sel));
  return f;
}

namespace {

std::vector<std::string> name_tokens(const std::string& s) {
  std::vector<std::string> out;
  std::string cur;
  for (char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (std::isalnum(c)) {
      cur += static_cast<char>(std::tolower(c));
    } else if (!cur.empty()) {
      out.push_back(cur);
      cur.clear();
    }
  }
  if (!cur.empty())
    out.push_back(cur);
  return out;
}

// One accelerator test: TEXT and its kind (true: accelerator~, a substring; false: name tokens).
using accelerator_term = std::pair<std::string, bool>;

// What a run's accelerator model must match: every condition, each by any of its terms. The
// accelerator= and accelerator~ terms are one condition (any of them, as the store's filter has
// always read them), the family= terms another (a model of any named family).
std::vector<std::vector<accelerator_term>> accelerator_conditions(const std::string& sel) {
  std::vector<accelerator_term> named, families;
  std::stringstream ss(sel);
  std::string part;
  while (std::getline(ss, part, '&')) {
    if (part.rfind("accelerator=", 0) == 0)
      named.emplace_back(part.substr(12), false);
    if (part.rfind("accelerator~", 0) == 0)
      named.emplace_back(part.substr(12), true);
    if (part.rfind("family=", 0) == 0)
      for (auto& p : family_patterns(sel, part.substr(7)))
        families.emplace_back(std::move(p), false);
  }
  std::vector<std::vector<accelerator_term>> out;
  for (auto* c : {&named, &families})
    if (!c->empty())
      out.push_back(std::move(*c));
  return out;
}

// The accelerator models the store's filter looked at: the system's and the run environment's.
std::vector<std::string>
accelerator_models_of(const run& r, const std::map<std::string, store::system_record>& systems) {
  std::vector<std::string> out;
  if (auto it = systems.find(r.system);
      it != systems.end() && !it->second.accelerator_model.empty())
    out.push_back(it->second.accelerator_model);
  if (r.environment.is_object() && r.environment.contains("accelerator") &&
      r.environment["accelerator"].is_object() && r.environment["accelerator"].contains("model") &&
      r.environment["accelerator"]["model"].is_string())
    out.push_back(r.environment["accelerator"]["model"].get<std::string>());
  return out;
}

// The store matched accelerators by substring; accelerator=B200 means B200, not GB200, and
// family= and accelerator= terms must both hold.
void keep_matching_accelerators(const std::string& sel, std::vector<run>& runs,
                                const std::map<std::string, store::system_record>& systems) {
  for (const auto& terms : accelerator_conditions(sel))
    std::erase_if(runs, [&](const run& r) {
      const auto models = accelerator_models_of(r, systems);
      return std::none_of(terms.begin(), terms.end(), [&](const auto& t) {
        return std::any_of(models.begin(), models.end(), [&](const std::string& m) {
          return accelerator_matches(m, t.first, t.second);
        });
      });
    });
}

std::string existing(store::store& db) {
  std::vector<std::string> sys, acc, tags = db.tags();
  for (const auto& s : db.systems()) {
    sys.push_back(s.name);
    if (!s.accelerator_model.empty() &&
        std::find(acc.begin(), acc.end(), s.accelerator_model) == acc.end())
      acc.push_back(s.accelerator_model);
  }
  auto list = [](const std::vector<std::string>& v) {
    if (v.empty())
      return std::string("none");
    std::string out;
    for (size_t i = 0; i < v.size() && i < 20; ++i)
      out += (i ? ", " : "") + v[i];
    if (v.size() > 20)
      out += fmt::format(", … ({} more)", v.size() - 20);
    return out;
  };
  return fmt::format("systems: {}; accelerators: {}; tags: {}", list(sys), list(acc), list(tags));
}

// The job= term of a selector ("" when it has none).
std::string job_term(const std::string& sel) {
  std::stringstream ss(sel);
  std::string part, out;
  while (std::getline(ss, part, '&'))
    if (part.rfind("job=", 0) == 0)
      out = part.substr(4);
  return out;
}

// The id job=latest or job=previous names: the last or last-but-one job by start time among the
// measured runs of the database (runs stored before jobs had ids belong to none).
std::string resolve_job(store::store& db, const std::string& sel, const std::string& term) {
  if (term != "latest" && term != "previous")
    return term; // a job id (run.extra.job_id, as show RUN prints it)
  store::run_filter f;
  f.source = "measured";
  f.with_samples = false;
  std::map<std::string, std::string> first_start;
  for (const auto& r : db.query(f))
    if (const auto j = job_of(r); !j.empty()) {
      auto [it, added] = first_start.emplace(j, r.started_at);
      if (!added && r.started_at < it->second)
        it->second = r.started_at;
    }
  std::vector<std::pair<std::string, std::string>> jobs; // (start, id), oldest first
  jobs.reserve(first_start.size());
  for (const auto& [id, start] : first_start)
    jobs.emplace_back(start, id);
  std::sort(jobs.begin(), jobs.end());
  const size_t back = term == "latest" ? 1 : 2;
  if (jobs.size() < back)
    throw input_error(fmt::format("selector '{}': {} holds {} job(s) with an id, so there is no "
                                  "{} job (run a job first)",
                                  sel, db.path().string(), jobs.size(), term));
  return jobs[jobs.size() - back].second;
}

} // namespace

void keep_job(store::store& db, const std::string& sel, std::vector<run>& runs) {
  const std::string term = job_term(sel);
  if (term.empty())
    return;
  const std::string id = resolve_job(db, sel, term);
  std::erase_if(runs, [&id](const run& r) { return job_of(r) != id; });
}

void keep_accelerators(store::store& db, const std::string& sel, std::vector<run>& runs) {
  if (accelerator_conditions(sel).empty())
    return;
  std::map<std::string, store::system_record> systems;
  for (const auto& r : runs)
    if (!systems.count(r.system))
      if (auto s = db.get_system(r.system))
        systems[r.system] = *s;
  keep_matching_accelerators(sel, runs, systems);
}

bool accelerator_matches(const std::string& model, const std::string& text, bool substring) {
  const auto m = name_tokens(model), t = name_tokens(text);
  if (substring || t.empty()) {
    std::string lm = model, lt = text;
    for (auto* x : {&lm, &lt})
      for (auto& c : *x)
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return lm.find(lt) != std::string::npos;
  }
  for (size_t i = 0; i + t.size() <= m.size(); ++i)
    if (std::equal(t.begin(), t.end(), m.begin() + static_cast<std::ptrdiff_t>(i)))
      return true;
  return false;
}

selection select_runs(store::store& db, const std::string& sel, bool with_samples,
                      bool allow_files) {
  selection out;
  out.label = sel;
  std::error_code ec;
  // Anything named *.json that exists is meant as a file (a folder gets "is a directory", not a
  // selector that matches nothing).
  if (allow_files && sel.ends_with(".json") && fs::exists(sel, ec)) {
    json systems;
    out.runs = read_results_document(read_input_file(sel, "results file"), sel, &systems);
    for (const auto& s : systems) {
      auto rec = store::system_from_json(s);
      out.systems[rec.name] = rec;
    }
    for (const auto& r : out.runs)
      if (!out.systems.count(r.system)) {
        store::system_record rec;
        rec.name = r.system;
        if (r.environment.contains("accelerator")) {
          rec.accelerator_model = r.environment["accelerator"].value("model", "");
          rec.accelerators_per_node = r.environment["accelerator"].value("count", int64_t{1});
        }
        out.systems[r.system] = rec;
      }
    if (out.runs.empty())
      throw input_error(fmt::format("selector '{}': the file holds no runs", sel));
    return out;
  }
  // A missing file is reported as one, unless a system happens to have that name.
  if (sel.ends_with(".json") && sel.find_first_of("=&~") == std::string::npos &&
      !db.get_system(sel))
    throw input_error(
        fmt::format("selector '{}': no such results file (and no system of that name)", sel));
  auto f = parse_selector(sel);
  f.with_samples = with_samples;
  out.runs = db.query(f);
  keep_job(db, sel, out.runs);
  for (const auto& r : out.runs)
    if (!out.systems.count(r.system)) {
      if (auto s = db.get_system(r.system))
        out.systems[r.system] = *s;
      else {
        store::system_record unknown;
        unknown.name = r.system;
        out.systems[r.system] = unknown;
      }
    }
  keep_matching_accelerators(sel, out.runs, out.systems);
  if (out.runs.empty())
    throw input_error(fmt::format("selector '{}' matches no runs in {} ({})", sel,
                                  db.path().string(), existing(db)));
  std::erase_if(out.systems, [&](const auto& kv) {
    return std::none_of(out.runs.begin(), out.runs.end(),
                        [&](const run& r) { return r.system == kv.first; });
  });
  return out;
}

std::string job_of(const run& r) {
  return r.extra.is_object() && r.extra.contains("job_id") && r.extra["job_id"].is_string()
             ? r.extra["job_id"].get<std::string>()
             : "";
}

} // namespace accelbench::query
