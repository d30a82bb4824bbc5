// First contact: --version, examples at the end of every command's --help, shell completion and
// the man page generated from the command definitions.
#include <catch2/catch.hpp>

#include "harness/app/cli/table.hpp"
#include "tests/support/cli_helpers.hpp"
#include "tests/support/load_free.hpp"
#include "tests/support/skip.hpp"

using namespace test_cli;

namespace {
const std::vector<std::string> k_commands = {
    "env",     "list",          "run",    "show",    "export",  "import",
    "publish", "check-package", "report", "compare", "history", "package",
    "db",      "serve",         "token",  "delete",  "gc",      "ab"};

// Lines of text, without the trailing empty line.
std::vector<std::string> lines_of(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  for (std::string l; std::getline(ss, l);)
    out.push_back(l);
  while (!out.empty() && out.back().empty())
    out.pop_back();
  return out;
}
// What `accelbench ARGS` prints on stdout, written to a file (the helper redirects stdout itself).
void write_output(const std::string& args, const std::filesystem::path& file) {
  auto r = ab(args);
  REQUIRE(r.rc == 0);
  std::ofstream(file) << r.out;
}
} // namespace

TEST_CASE("the version flag names the revision, build type, compiler, backends and libraries") {
  auto r = ab("--version");
  REQUIRE(r.rc == 0);
  for (const char* want :
       {"accelbench 0.", "revision ", "build      ", "backends   cpu", "library    onednn",
        "library    openblas", "library    sqlite", "CLI11 "})
    CHECK(r.out.find(want) != std::string::npos);
  CHECK(r.out.find("\n\n") == std::string::npos);
}

TEST_CASE("every command's --help ends with two or three examples of that command") {
  for (const auto& cmd : k_commands) {
    auto r = ab(cmd + " --help");
    INFO(cmd << "\n" << r.out);
    REQUIRE(r.rc == 0);
    auto lines = lines_of(r.out);
    size_t at = 0;
    for (size_t i = 0; i < lines.size(); ++i)
      if (lines[i] == "Examples:")
        at = i;
    REQUIRE(at > 0);
    const size_t n = lines.size() - at - 1;
    CHECK(n >= 1);
    CHECK(n <= 3);
    for (size_t i = at + 1; i < lines.size(); ++i) {
      const std::string& l = lines[i];
      const size_t p = l.find("accelbench " + cmd);
      REQUIRE(p != std::string::npos);
      const size_t end = p + 11 + cmd.size();
      CHECK((end == l.size() || l[end] == ' '));
    }
  }
}

TEST_CASE("the examples of list run as shown") {
  // The examples are parsed by the real command line: every one of `list` runs and succeeds.
  auto help = ab("list --help");
  REQUIRE(help.rc == 0);
  auto lines = lines_of(help.out.substr(help.out.find("Examples:")));
  REQUIRE(lines.size() >= 3);
  for (size_t i = 1; i < lines.size(); ++i) {
    const std::string args = lines[i].substr(lines[i].find("accelbench ") + 11);
    auto r = ab(args);
    INFO(args << "\n" << r.err);
    CHECK(r.rc == 0);
    CHECK(!r.out.empty());
  }
}

TEST_CASE("bash completion offers commands, options, option values and workloads") {
  temp_dir t;
  const auto script = t.path / "accelbench.bash";
  write_output("completion bash", script);
  // COMP_WORDS as bash fills it for the line typed so far; prints COMPREPLY one per line.
  auto complete = [&](const std::string& words) {
    auto out = t.path / "reply";
    std::string cmd = "bash -c 'source " + script.string() + "; COMP_WORDS=(" + words +
                      "); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); _accelbench; printf \"%s\\n\" "
                      "\"${COMPREPLY[@]}\"' >" +
                      out.string() + " 2>&1";
    REQUIRE(std::system(cmd.c_str()) == 0);
    return lines_of(slurp(out));
  };
  auto has = [](const std::vector<std::string>& v, const std::string& s) {
    return std::find(v.begin(), v.end(), s) != v.end();
  };
  auto cmds = complete("accelbench co");
  CHECK(has(cmds, "compare"));
  CHECK(!has(cmds, "run"));
  CHECK(!has(cmds, "completion")); // hidden
  auto opts = complete("accelbench run gemm --se");
  CHECK(has(opts, "--set"));
  CHECK(has(opts, "--seed"));
  CHECK(!has(opts, "--baseline"));
  CHECK(complete("accelbench run --backend \"\"") == std::vector<std::string>{"cpu", "cuda"});
  auto formats = complete("accelbench compare --format j");
  CHECK(formats == std::vector<std::string>{"junit", "json"});
  CHECK(complete("accelbench ab --format j") == formats);
  CHECK(has(complete("accelbench ab --candidate-"), "--candidate-exe"));
  CHECK(has(complete("accelbench run g"), "gemm"));
  CHECK(has(complete("accelbench run --suite q"), "quick"));
  CHECK(has(complete("accelbench list \"\""), "catalogues"));
}

TEST_CASE("zsh completion is valid zsh naming every command") {
  if (std::system("command -v zsh >/dev/null 2>&1") != 0)
    ACCELBENCH_SKIP("zsh is not installed (scripts/install-deps.sh --test installs it)");
  temp_dir t;
  const auto script = t.path / "_accelbench";
  write_output("completion zsh", script);
  CHECK(std::system(("zsh -n " + script.string()).c_str()) == 0);
  const std::string text = slurp(script);
  CHECK(text.rfind("#compdef accelbench\n", 0) == 0);
  for (const auto& cmd : k_commands)
    CHECK(text.find("\n    " + cmd + ")\n") != std::string::npos);
  CHECK(text.find("--backend'[Backend\\: cpu (default) or cuda]:value:(cpu cuda)'") !=
        std::string::npos);
}

TEST_CASE(
    "the man page is roff that groff reads without warnings, with every command and its examples") {
  temp_dir t;
  const auto page = t.path / "accelbench.1";
  write_output("man", page);
  const std::string text = slurp(page);
  CHECK(text.find(".TH ACCELBENCH 1") != std::string::npos);
  for (auto cmd : k_commands) {
    if (auto dash = cmd.find('-'); dash != std::string::npos)
      cmd.replace(dash, 1, "\\-"); // roff's minus
    CHECK(text.find(".SS \"accelbench " + cmd) != std::string::npos);
  }
  CHECK(text.find("ACCELBENCH_HOME") != std::string::npos);
  CHECK(text.find("accelbench compare \\-\\-baseline tag=before \\-\\-candidate tag=after") !=
        std::string::npos);
  if (std::system("command -v groff >/dev/null 2>&1") != 0)
    ACCELBENCH_SKIP("groff is not installed (scripts/install-deps.sh --test installs it)");
  const auto warn = t.path / "warnings";
  CHECK(std::system(("groff -man -ww -z " + page.string() + " 2>" + warn.string()).c_str()) == 0);
  CHECK(slurp(warn).empty());
}

TEST_CASE("show scales units, warns of few samples, and shows a run's environment without --json",
          "[timing]") {
  temp_dir t;
  auto r = ab("run gemm --set M=64 --set N=64 --set K=64" + test_support::k_fast_rules + "--db " +
              t.db());
  INFO(r.err);
  REQUIRE(r.rc == 0);
  CHECK(r.out.find("FLOP/s") != std::string::npos);
  CHECK(r.out.find("e-0") == std::string::npos); // never 6.981e-04 TFLOP/s
  auto list = ab("show --db " + t.db());
  REQUIRE(list.rc == 0);
  CHECK(list.out.find("notes") != std::string::npos);
  CHECK(list.out.find("e-0") == std::string::npos);
  auto one = ab("show 1 --db " + t.db());
  REQUIRE(one.rc == 0);
  CHECK(one.out.find("warning    only 3 sample(s): compare needs at least 5 a side") !=
        std::string::npos);
  CHECK(one.out.find("  environment\n") != std::string::npos);
  CHECK(one.out.find("    cpu        ") != std::string::npos);
  CHECK(one.out.find("    library    onednn") != std::string::npos);
  CHECK(one.out.find("s  mean ") != std::string::npos); // sample statistics in their unit (ms, us)
}

TEST_CASE("text cut for a table ends in an ellipsis at a word boundary, never mid-word or "
          "mid-character") {
  using accelbench::cli::clip;
  CHECK(clip("short", 10) == "short");
  CHECK(clip("K=512 M=512 N=512 dtype=fp32 library=openblas", 30) ==
        "K=512 M=512 N=512 dtype=fp32\u2026");
  CHECK(clip("abcdefghijklmnopqrstuvwxyz", 10) ==
        "abcdefghi\u2026"); // no boundary: cut between letters
  CHECK(clip("\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9", 4) ==
        "\u00e9\u00e9\u00e9\u2026"); // code points, not bytes
  CHECK(accelbench::cli::display_width(clip("one, two, three, four, five", 12)) <= 12);
  CHECK(clip("one, two, three, four, five", 12) == "one, two\u2026");
}

TEST_CASE("a run's effective config: the requested value, and the one the run recorded after an "
          "arrow only where the two differ") {
  accelbench::run r;
  r.cfg.workload = "attention";
  r.cfg.values = {{"heads", "16"},   {"kv_heads", "0"}, {"scale", "0"},
                  {"seq_k", "2048"}, {"dtype", "bf16"}, {"causal", "1"}};
  r.extra["resolved"] = {{"kv_heads", 16}, {"scale", 0.08838834764831845},
                         {"seq_k", 2048},  {"dtype", "bf16"},
                         {"causal", true}, {"not_in_config", 3}};
  const auto settings = accelbench::cli::effective_config(r);
  REQUIRE(settings.size() == 6); // one per config key, none for a recorded key the config lacks
  // Key order; a value recorded as asked (the same number, text or boolean) shows no arrow.
  CHECK(accelbench::cli::effective_config_text(r) ==
        "causal=1 dtype=bf16 heads=16 kv_heads=0\u219216 scale=0\u21920.0884 seq_k=2048");
  CHECK(settings[3].requested == "0");
  CHECK(settings[3].effective == "16");
  CHECK(settings[3].resolved());
  CHECK_FALSE(settings[5].resolved());
  // A run that recorded nothing (an older run, an import) prints its config as stored.
  r.extra = accelbench::json::object();
  CHECK(accelbench::cli::effective_config_text(r) ==
        "causal=1 dtype=bf16 heads=16 kv_heads=0 scale=0 seq_k=2048");
}
