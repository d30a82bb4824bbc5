#include "variants.hpp"

#include <cmath>
#include <fstream>
#include <functional>
#include <stdexcept>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace mlperf_differential {

namespace {

// Key order kept, so that an edited line differs from the published one only where it was broken.
using ojson = nlohmann::ordered_json;

const std::string k_token = ":::MLLOG ";

// A published folder the variants start from: one system, one benchmark folder, and what differs
// between benchmarks (batch sizes placed against MLCommons' 5.0 RCP tables, a quality value that
// misses the target, the keys the closed rules of the benchmark require).
struct base {
  std::string id, org, system, benchmark;
  int runs;
  long bs_between;                   // between two RCP batch sizes: MLCommons interpolates
  long bs_above_all;                 // above every RCP batch size: "Missing RCP"
  long bs_at_ref;                    // another batch size with an RCP of its own
  long bs_below_all;                 // below every RCP batch size: compared with the smallest one
  double missed;                     // an eval_accuracy that misses the quality target
  std::string other_benchmark;       // another benchmark name, for a renamed results folder
  std::vector<std::string> own_keys; // keys the benchmark's closed rules require
  std::vector<std::pair<std::string, ojson>> bad_hyper; // values outside the closed rules
};

const std::vector<base>& bases() {
  static const std::vector<base> b = {
      {"amd_lora",
       "AMD",
       "MI300X_EPYC_9575F_pytorch",
       "llama2_70b_lora",
       10,
       12,
       256,
       16,
       4,
       0.95,
       "bert",
       {"lora_rank", "lora_alpha", "opt_gradient_clip_norm", "opt_adamw_weight_decay",
        "opt_learning_rate_training_steps", "block_start", "block_stop"},
       {{"lora_rank", 8}}},
      {"tiny_bert",
       "tinycorp",
       "tinybox_green",
       "bert",
       10,
       512,
       32768,
       448,
       64,
       0.5,
       "dlrm_dcnv2",
       {"opt_lamb_epsilon", "opt_lamb_beta_1", "opt_learning_rate_warmup_steps", "num_warmup_steps",
        "epoch_start", "epoch_stop"},
       {{"opt_lamb_beta_1", 0.5}}},
      {"tiny_retinanet",
       "tinycorp",
       "tinybox_green",
       "retinanet",
       5,
       288,
       8192,
       256,
       64,
       0.2,
       "stable_diffusion",
       {"opt_name", "opt_weight_decay", "opt_learning_rate_warmup_epochs",
        "opt_learning_rate_warmup_factor", "epoch_start", "epoch_stop"},
       {{"opt_name", "sgd"}, {"opt_weight_decay", 0.1}}},
  };
  return b;
}

// Keys every base's logs carry that MLCommons' common.yaml (or nothing) requires.
const std::vector<std::string>& common_keys() {
  static const std::vector<std::string> k = {"submission_benchmark",
                                             "submission_division",
                                             "submission_org",
                                             "submission_status",
                                             "global_batch_size",
                                             "eval_accuracy",
                                             "run_stop",
                                             "run_start",
                                             "init_start",
                                             "init_stop",
                                             "seed",
                                             "cache_clear",
                                             "train_samples",
                                             "eval_samples",
                                             "eval_start",
                                             "eval_stop",
                                             "gradient_accumulation_steps",
                                             "opt_base_learning_rate"};
  return k;
}

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in)
    throw std::runtime_error("cannot read " + p.string());
  return {std::istreambuf_iterator<char>(in), {}};
}

std::string results_dir(const base& b) {
  return fmt::format("results/{}/{}", b.system, b.benchmark);
}

std::string run_path(const base& b, int i) {
  return fmt::format("{}/result_{}.txt", results_dir(b), i);
}

std::string system_path(const base& b) { return fmt::format("systems/{}.json", b.system); }

package load_base(const fs::path& published, const base& b) {
  package p;
  p.org = b.org;
  const fs::path org = published / b.org;
  p.files[system_path(b)] = read_file(org / system_path(b));
  for (const auto& e : fs::directory_iterator(org / results_dir(b)))
    p.files[results_dir(b) + "/" + e.path().filename().string()] = read_file(e.path());
  p.folders.insert("benchmarks");
  return p;
}

// Rewrites text line by line: fn may change a line (without its '\n') or return false to drop it.
std::string edit_lines(const std::string& text, const std::function<bool(std::string& line)>& fn) {
  std::string out;
  out.reserve(text.size() + 256);
  size_t at = 0;
  while (at < text.size()) {
    size_t end = text.find('\n', at);
    const bool has_newline = end != std::string::npos;
    if (!has_newline)
      end = text.size();
    std::string line = text.substr(at, end - at);
    if (fn(line)) {
      out += line;
      if (has_newline)
        out += '\n';
    }
    at = end + 1;
  }
  return out;
}

// The event of a log line; a discarded value when the line is no MLLOG event.
ojson event_of(const std::string& line) {
  const size_t pos = line.find(k_token);
  if (pos == std::string::npos)
    return ojson(ojson::value_t::discarded);
  return ojson::parse(line.substr(pos + k_token.size()), nullptr, false);
}

bool has_key(const ojson& e, const std::string& key) {
  return e.is_object() && e.contains("key") && e["key"].is_string() &&
         (key.empty() || e["key"].get<std::string>() == key);
}

// Applies fn to every event of `key` ("": every event); fn returns false to drop the line. A
// changed event is written back compactly after the same prefix.
std::string edit_events(const std::string& text, const std::string& key,
                        const std::function<bool(ojson&)>& fn) {
  return edit_lines(text, [&](std::string& line) {
    ojson e = event_of(line);
    if (!has_key(e, key))
      return true;
    const ojson before = e;
    if (!fn(e))
      return false;
    if (e != before)
      line = line.substr(0, line.find(k_token)) + k_token + e.dump();
    return true;
  });
}

ojson first_value(const std::string& text, const std::string& key) {
  ojson v;
  edit_events(text, key, [&](ojson& e) {
    if (v.is_null())
      v = e["value"];
    return true;
  });
  return v;
}

std::vector<int> all_runs(const base& b) {
  std::vector<int> r;
  r.reserve(static_cast<size_t>(b.runs));
  for (int i = 0; i < b.runs; ++i)
    r.push_back(i);
  return r;
}

using text_edit = std::function<void(std::string&)>;
using apply_fn = std::function<void(package&, const base&)>;

// The runs a defect touches: run 1 ("one"), runs 1 and 2 ("two"), every run ("all").
enum class runs_of { one, two, all };

std::vector<int> pick(runs_of w, const base& b) {
  switch (w) {
  case runs_of::one:
    return {1};
  case runs_of::two:
    return {1, 2};
  default:
    return all_runs(b);
  }
}

const char* suffix(runs_of w) {
  switch (w) {
  case runs_of::one:
    return "one";
  case runs_of::two:
    return "two";
  default:
    return "all";
  }
}

const char* in_words(runs_of w) {
  switch (w) {
  case runs_of::one:
    return "in one run";
  case runs_of::two:
    return "in two runs";
  default:
    return "in every run";
  }
}

apply_fn on_runs(runs_of w, text_edit edit) {
  return [w, edit = std::move(edit)](package& p, const base& b) {
    for (int i : pick(w, b))
      edit(p.files.at(run_path(b, i)));
  };
}

text_edit drop_key(const std::string& key) {
  return [key](std::string& t) { t = edit_events(t, key, [](ojson&) { return false; }); };
}

text_edit set_value(const std::string& key, const ojson& v) {
  return [key, v](std::string& t) {
    t = edit_events(t, key, [&](ojson& e) {
      e["value"] = v;
      return true;
    });
  };
}

text_edit set_metadata(const std::string& key, const std::string& field, const ojson& v) {
  return [key, field, v](std::string& t) {
    t = edit_events(t, key, [&](ojson& e) {
      e["metadata"][field] = v;
      return true;
    });
  };
}

// Every samples_count and epoch_num times f (floored below 1, ceiled above, so that even the
// small epoch numbers of retinanet move): the runs converge at f times the published point.
text_edit scale_progress(double f) {
  return [f](std::string& t) {
    t = edit_events(t, "", [f](ojson& e) {
      if (!e.contains("metadata") || !e["metadata"].is_object())
        return true;
      for (const char* field : {"samples_count", "epoch_num"}) {
        ojson& m = e["metadata"];
        if (m.contains(field) && m[field].is_number() && m[field].get<double>() > 0) {
          const double x = m[field].get<double>() * f;
          m[field] = static_cast<long long>(f < 1 ? std::floor(x) : std::ceil(x));
        }
      }
      return true;
    });
  };
}

// The line of `key` cut in the middle of its JSON.
text_edit break_line(const std::string& key) {
  return [key](std::string& t) {
    t = edit_lines(t, [&](std::string& line) {
      if (has_key(event_of(line), key))
        line = line.substr(0, line.find(k_token) + k_token.size() + 40);
      return true;
    });
  };
}

text_edit duplicate_line(const std::string& key) {
  return [key](std::string& t) {
    t = edit_lines(t, [&](std::string& line) {
      if (has_key(event_of(line), key))
        line += "\n" + line;
      return true;
    });
  };
}

// run_stop logged before run_start: the clock runs backwards.
text_edit stop_before_start() {
  return [](std::string& t) {
    const ojson start = [&] {
      ojson s;
      edit_events(t, "run_start", [&](ojson& e) {
        s = e["time_ms"];
        return true;
      });
      return s;
    }();
    t = edit_events(t, "run_stop", [&](ojson& e) {
      e["time_ms"] = start.get<long long>() - 1000;
      return true;
    });
  };
}

// init_start moved 31 minutes earlier: initialisation takes longer than the 30 closed minutes.
text_edit long_init() {
  return [](std::string& t) {
    t = edit_events(t, "init_start", [](ojson& e) {
      e["time_ms"] = e["time_ms"].get<long long>() - 31LL * 60 * 1000;
      return true;
    });
  };
}

text_edit prefix_lines(const std::string& prefix) {
  return [prefix](std::string& t) {
    t = edit_lines(t, [&](std::string& line) {
      if (line.rfind(k_token, 0) == 0)
        line = prefix + line;
      return true;
    });
  };
}

text_edit crlf() {
  return [](std::string& t) {
    t = edit_lines(t, [](std::string& line) {
      line += '\r';
      return true;
    });
  };
}

text_edit truncate_at(double fraction) {
  return [fraction](std::string& t) {
    t.resize(static_cast<size_t>(static_cast<double>(t.size()) * fraction));
  };
}

apply_fn edit_system(const std::function<void(ojson&)>& fn) {
  return [fn](package& p, const base& b) {
    ojson desc = ojson::parse(p.files.at(system_path(b)));
    fn(desc);
    p.files[system_path(b)] = desc.dump(4) + "\n";
  };
}

// Moves the results folder to results/<system>/<name>.
apply_fn rename_results(const std::string& name) {
  return [name](package& p, const base& b) {
    std::map<std::string, std::string> files;
    const std::string from = results_dir(b) + "/";
    const std::string to = fmt::format("results/{}/{}/", b.system, name);
    for (auto& [path, text] : p.files)
      files[path.rfind(from, 0) == 0 ? to + path.substr(from.size()) : path] = std::move(text);
    p.files = std::move(files);
  };
}

apply_fn drop_results(bool keep_folder) {
  return [keep_folder](package& p, const base&) {
    std::erase_if(p.files, [](const auto& f) { return f.first.rfind("results/", 0) == 0; });
    if (keep_folder)
      p.folders.insert("results");
  };
}

apply_fn add_file(const std::string& where, std::string text) {
  return [where, text = std::move(text)](package& p, const base& b) {
    const std::string dir =
        where == "system" ? fmt::format("results/{}", b.system) : results_dir(b);
    p.files[dir + "/" + (where == "stray" ? "notes.txt" : "package_checker_params")] = text;
  };
}

apply_fn both(apply_fn a, apply_fn c) {
  return [a = std::move(a), c = std::move(c)](package& p, const base& b) {
    a(p, b);
    c(p, b);
  };
}

struct defect {
  std::string name;
  std::string words;
  apply_fn apply;
};

void add_key_defects(std::vector<defect>& d, const base& b) {
  std::vector<std::string> keys = common_keys();
  keys.insert(keys.end(), b.own_keys.begin(), b.own_keys.end());
  for (const auto& key : keys)
    for (runs_of w : {runs_of::one, runs_of::all})
      d.push_back({fmt::format("no_{}.{}", key, suffix(w)),
                   fmt::format("'{}' deleted {}", key, in_words(w)), on_runs(w, drop_key(key))});
}

// The end of the runs and where they converge: status, convergence point, batch size.
void add_run_defects(std::vector<defect>& d, const base& b) {
  d.push_back({"run_stop_no_status.one", "run_stop without status in one run",
               on_runs(runs_of::one, [](std::string& t) {
                 t = edit_events(t, "run_stop", [](ojson& e) {
                   e["metadata"].erase("status");
                   return true;
                 });
               })});
  d.push_back({"run_stop_no_status.all", "run_stop without status in every run",
               on_runs(runs_of::all, [](std::string& t) {
                 t = edit_events(t, "run_stop", [](ojson& e) {
                   e["metadata"].erase("status");
                   return true;
                 });
               })});
  for (runs_of w : {runs_of::one, runs_of::two})
    d.push_back({fmt::format("status_aborted.{}", suffix(w)),
                 fmt::format("run_stop status 'aborted' {}", in_words(w)),
                 on_runs(w, set_metadata("run_stop", "status", "aborted"))});
  for (const auto& [tag, f] :
       std::vector<std::pair<std::string, double>>{{"x075", 0.75}, {"x096", 0.96}, {"x110", 1.1}})
    d.push_back({"progress_" + tag,
                 fmt::format("samples_count and epoch_num times {} in every run", f),
                 on_runs(runs_of::all, scale_progress(f))});
  for (const auto& [tag, bs] :
       std::vector<std::pair<std::string, long>>{{"between_rcps", b.bs_between},
                                                 {"above_all_rcps", b.bs_above_all},
                                                 {"other_rcp", b.bs_at_ref},
                                                 {"below_all_rcps", b.bs_below_all}})
    d.push_back({"batch_" + tag, fmt::format("global_batch_size {} in every run", bs),
                 on_runs(runs_of::all, set_value("global_batch_size", bs))});
  d.push_back({"batch_other_rcp.two",
               fmt::format("global_batch_size {} in two runs only", b.bs_at_ref),
               on_runs(runs_of::two, set_value("global_batch_size", b.bs_at_ref))});
}

// Logs broken as text or in their events' order and values.
void add_log_defects(std::vector<defect>& d, const base& b) {
  for (runs_of w : {runs_of::one, runs_of::two})
    d.push_back({fmt::format("malformed_line.{}", suffix(w)),
                 fmt::format("the submission_status line cut mid-JSON {}", in_words(w)),
                 on_runs(w, break_line("submission_status"))});
  for (runs_of w : {runs_of::one, runs_of::two})
    d.push_back({fmt::format("truncated.{}", suffix(w)),
                 fmt::format("the file cut at 60% {}", in_words(w)), on_runs(w, truncate_at(0.6))});
  d.push_back({"empty_file.one", "one result file empty",
               on_runs(runs_of::one, [](std::string& t) { t.clear(); })});
  for (runs_of w : {runs_of::one, runs_of::all})
    d.push_back(
        {fmt::format("target_missed.{}", suffix(w)),
         fmt::format("every eval_accuracy {} misses the target ({})", in_words(w), b.missed),
         on_runs(w, set_value("eval_accuracy", b.missed))});
  d.push_back({"eval_value_string.one", "eval_accuracy values as strings in one run",
               on_runs(runs_of::one, [](std::string& t) {
                 t = edit_events(t, "eval_accuracy", [](ojson& e) {
                   e["value"] = e["value"].dump();
                   return true;
                 });
               })});
  d.push_back({"eval_no_progress.all",
               "eval_accuracy without samples_count and epoch_num in every run",
               on_runs(runs_of::all, [](std::string& t) {
                 t = edit_events(t, "eval_accuracy", [](ojson& e) {
                   e["metadata"].erase("samples_count");
                   e["metadata"].erase("epoch_num");
                   return true;
                 });
               })});
  for (runs_of w : {runs_of::one, runs_of::all})
    d.push_back({fmt::format("stop_before_start.{}", suffix(w)),
                 fmt::format("run_stop's time_ms before run_start's {}", in_words(w)),
                 on_runs(w, stop_before_start())});
  for (runs_of w : {runs_of::one, runs_of::all})
    d.push_back({fmt::format("run_start_twice.{}", suffix(w)),
                 fmt::format("run_start logged twice {}", in_words(w)),
                 on_runs(w, duplicate_line("run_start"))});
  d.push_back({"init_too_long.all", "init_start 31 minutes earlier in every run",
               on_runs(runs_of::all, long_init())});
  d.push_back({"log_benchmark_other.all",
               fmt::format("submission_benchmark '{}' in every run", b.other_benchmark),
               on_runs(runs_of::all, set_value("submission_benchmark", b.other_benchmark))});
  for (runs_of w : {runs_of::two, runs_of::all})
    d.push_back({fmt::format("log_division_open.{}", suffix(w)),
                 fmt::format("submission_division 'open' {}", in_words(w)),
                 on_runs(w, set_value("submission_division", "open"))});
  d.push_back({"log_division_invalid.one", "submission_division 'semi' in one run",
               on_runs(runs_of::one, set_value("submission_division", "semi"))});
  d.push_back({"prefixed_lines.all", "every MLLOG line behind a '[1,0]<stdout>: ' prefix",
               on_runs(runs_of::all, prefix_lines("[1,0]<stdout>: "))});
  d.push_back(
      {"text_lines.all", "lines of plain text between the events of every run",
       on_runs(runs_of::all, [](std::string& t) { t = "starting the run\n" + t + "done\n"; })});
  d.push_back({"crlf.all", "CRLF line ends in every run", on_runs(runs_of::all, crlf())});
}

void add_seed_defects(std::vector<defect>& d) {
  d.push_back({"seed_duplicated", "run 1 logs run 0's seed", [](package& p, const base& b) {
                 const ojson seed = first_value(p.files.at(run_path(b, 0)), "seed");
                 set_value("seed", seed)(p.files.at(run_path(b, 1)));
               }});
  d.push_back({"seed_not_integer", "seed 'abc' in one run",
               on_runs(runs_of::one, set_value("seed", "abc"))});
  d.push_back({"seed_integer_string", "seed as a string of digits in one run",
               on_runs(runs_of::one, [](std::string& t) {
                 set_value("seed", first_value(t, "seed").dump())(t);
               })});
  d.push_back({"seed_fraction", "seed + 0.5 in one run", on_runs(runs_of::one, [](std::string& t) {
                 set_value("seed", first_value(t, "seed").get<double>() + 0.5)(t);
               })});
}

void add_hyper_defects(std::vector<defect>& d, const base& b) {
  d.push_back({"grad_accum_0.all", "gradient_accumulation_steps 0 in every run",
               on_runs(runs_of::all, set_value("gradient_accumulation_steps", 0))});
  d.push_back({"grad_accum_neg.all", "gradient_accumulation_steps -1 in every run",
               on_runs(runs_of::all, set_value("gradient_accumulation_steps", -1))});
  d.push_back({"lr_negative.all", "opt_base_learning_rate negated in every run",
               on_runs(runs_of::all, [](std::string& t) {
                 set_value("opt_base_learning_rate",
                           -first_value(t, "opt_base_learning_rate").get<double>())(t);
               })});
  d.push_back({"lr_x10.all", "opt_base_learning_rate times 10 in every run",
               on_runs(runs_of::all, [](std::string& t) {
                 set_value("opt_base_learning_rate",
                           10 * first_value(t, "opt_base_learning_rate").get<double>())(t);
               })});
  for (const auto& kv : b.bad_hyper)
    d.push_back({fmt::format("hyper_{}.all", kv.first),
                 fmt::format("{} {} in every run", kv.first, kv.second.dump()),
                 on_runs(runs_of::all, set_value(kv.first, kv.second))});
}

void add_file_defects(std::vector<defect>& d, const base& b) {
  d.push_back({"file_removed", "the last result file removed",
               [](package& p, const base& bb) { p.files.erase(run_path(bb, bb.runs - 1)); }});
  d.push_back({"file_extra", "one result file more (run 0 with another seed)",
               [](package& p, const base& bb) {
                 std::string t = p.files.at(run_path(bb, 0));
                 set_value("seed", first_value(t, "seed").get<long long>() + 1000)(t);
                 p.files[run_path(bb, bb.runs)] = t;
               }});
  d.push_back({"result_misnamed", "result_1.txt named result1.txt", [](package& p, const base& bb) {
                 auto node = p.files.extract(run_path(bb, 1));
                 node.key() = results_dir(bb) + "/result1.txt";
                 p.files.insert(std::move(node));
               }});
  d.push_back({"stray_file", "a notes.txt beside the result files", add_file("stray", "notes\n")});
  d.push_back({"folder_renamed_other",
               fmt::format("the results folder named '{}'", b.other_benchmark),
               rename_results(b.other_benchmark)});
  d.push_back({"folder_renamed_unknown", "the results folder named 'resnet' (not a 5.0 benchmark)",
               rename_results("resnet")});
  d.push_back({"empty_system_folder", "an empty results/<system> folder beside the real one",
               [](package& p, const base&) { p.folders.insert("results/empty_system"); }});
  d.push_back({"empty_results", "results/ empty", drop_results(true)});
  d.push_back({"no_results", "no results/ folder", drop_results(false)});
}

void add_system_defects(std::vector<defect>& d) {
  d.push_back({"system_field_removed", "accelerator_model_name removed from the system",
               edit_system([](ojson& s) { s.erase("accelerator_model_name"); })});
  d.push_back({"system_status_invalid", "system status 'bogus'",
               edit_system([](ojson& s) { s["status"] = "bogus"; })});
  d.push_back({"system_division_open", "system division 'open'",
               edit_system([](ojson& s) { s["division"] = "open"; })});
  d.push_back({"system_malformed", "the system description cut in half",
               [](package& p, const base& b) { truncate_at(0.5)(p.files.at(system_path(b))); }});
  d.push_back({"system_missing", "the system description removed",
               [](package& p, const base& b) { p.files.erase(system_path(b)); }});
  d.push_back({"system_extra", "a second system description without results",
               [](package& p, const base& b) {
                 p.files["systems/other_system.json"] = p.files.at(system_path(b));
               }});
}

// A folder that fails the RCP stage (convergence 25% early), with and without a bypass.
void add_bypass_defects(std::vector<defect>& d) {
  const apply_fn fast = on_runs(runs_of::all, scale_progress(0.75));
  d.push_back({"rcp_bypass", "progress x0.75 with package_checker_params 'rcp-bypass'",
               both(fast, add_file("benchmark", "rcp-bypass"))});
  d.push_back({"rcp_bypass_newline",
               "progress x0.75 with package_checker_params 'rcp-bypass' and a newline",
               both(fast, add_file("benchmark", "rcp-bypass\n"))});
  d.push_back({"rcp_bypass_system",
               "progress x0.75 with the system folder's package_checker_params 'rcp-bypass'",
               both(fast, add_file("system", "rcp-bypass"))});
  d.push_back({"rcp_bypass_unneeded", "package_checker_params 'rcp-bypass' on a passing folder",
               add_file("benchmark", "rcp-bypass")});
  d.push_back({"rcp_bypass_batch", "global_batch_size above every RCP with 'rcp-bypass'",
               [](package& p, const base& b) {
                 on_runs(runs_of::all, set_value("global_batch_size", b.bs_above_all))(p, b);
                 add_file("benchmark", "rcp-bypass")(p, b);
               }});
}

std::vector<defect> defects(const base& b) {
  std::vector<defect> d;
  d.push_back({"original", "none: the folder as published", [](package&, const base&) {}});
  add_key_defects(d, b);
  add_run_defects(d, b);
  add_log_defects(d, b);
  add_seed_defects(d);
  add_hyper_defects(d, b);
  add_file_defects(d, b);
  add_system_defects(d);
  add_bypass_defects(d);
  return d;
}

bool same(const package& a, const package& b) {
  return a.files == b.files && a.folders == b.folders;
}

} // namespace

std::vector<variant> make_variants(const fs::path& published) {
  std::vector<variant> out;
  for (const base& b : bases()) {
    const package original = load_base(published, b);
    for (const defect& d : defects(b)) {
      variant v{b.id + "." + d.name, b.id, d.words, original};
      d.apply(v.pkg, b);
      // A defect that changes nothing in this base (no such key) is no variant.
      if (d.name != "original" && same(v.pkg, original))
        continue;
      out.push_back(std::move(v));
    }
  }
  return out;
}

fs::path org_folder(const variant& v, const fs::path& dir) { return dir / v.id / v.pkg.org; }

void write_variant(const variant& v, const fs::path& dir) {
  const fs::path org = org_folder(v, dir);
  fs::create_directories(org);
  for (const auto& f : v.pkg.folders)
    fs::create_directories(org / f);
  for (const auto& [path, text] : v.pkg.files) {
    const fs::path p = org / path;
    fs::create_directories(p.parent_path());
    std::ofstream out(p, std::ios::binary);
    out << text;
    if (!out)
      throw std::runtime_error("cannot write " + p.string());
  }
}

} // namespace mlperf_differential
