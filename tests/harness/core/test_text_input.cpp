// harness/core/text_input: bounded JSON parsing, UTF-8 checks and repair, printable names.
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include "harness/core/error.hpp"
#include "harness/core/text_input.hpp"

using namespace accelbench;

TEST_CASE("json nesting depth is counted outside strings and bounded", "[text_input]") {
  CHECK(json_nesting_depth("{}") == 1);
  CHECK(json_nesting_depth(R"({"a":[1,{"b":[]}]})") == 4);
  CHECK(json_nesting_depth(R"({"a":"[[[[[[\"[[["})") == 1);
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  CHECK(json_nesting_depth(deep) == k_max_json_depth + 1); // stops scanning early
  try {
    parse_json_input(deep, "deep.json");
    FAIL("a 100,000-level document was accepted");
  } catch (const input_error& e) {
    CHECK(std::string(e.what()).find("deep.json") != std::string::npos);
    CHECK(std::string(e.what()).find("nesting too deep") != std::string::npos);
  }
  CHECK(parse_json_lenient(deep).is_discarded());
  const std::string ok = std::string(k_max_json_depth, '[') + std::string(k_max_json_depth, ']');
  CHECK_NOTHROW(parse_json_input(ok, "ok"));
  CHECK_THROWS_AS(parse_json_input("{\"a\":", "trunc.json"), input_error);
}

TEST_CASE("numbers beyond a double are input errors, not out_of_range", "[text_input]") {
  try {
    parse_json_input(R"({"value": 1e400})", "big.json");
    FAIL("1e400 was accepted");
  } catch (const input_error& e) {
    CHECK(std::string(e.what()).find("big.json: number out of range") != std::string::npos);
    CHECK(std::string(e.what()).find("1e400") != std::string::npos);
  }
  CHECK(parse_json_lenient("[-1e999]").is_discarded());
}

TEST_CASE("first_invalid_utf8 gives the offset of the first bad byte", "[text_input]") {
  CHECK(first_invalid_utf8("fine \xE2\x86\x92") == std::string_view::npos);
  CHECK(first_invalid_utf8("caf\xE9!") == 3);
  CHECK(first_invalid_utf8("ab\xE2\x86") == 2);
}

TEST_CASE("utf-8 validation rejects overlongs, surrogates and stray bytes", "[text_input]") {
  CHECK(valid_utf8("plain ascii"));
  CHECK(valid_utf8("H100 \xE2\x86\x92 B200 \xF0\x9F\x9A\x80"));
  CHECK_FALSE(valid_utf8("caf\xE9"));          // latin-1
  CHECK_FALSE(valid_utf8("\xC0\xAF"));         // overlong '/'
  CHECK_FALSE(valid_utf8("\xED\xA0\x80"));     // surrogate U+D800
  CHECK_FALSE(valid_utf8("\xF4\x90\x80\x80")); // above U+10FFFF
  CHECK_FALSE(valid_utf8("\xE2\x86"));         // truncated
  size_t n = 0;
  CHECK(repair_utf8("caf\xE9 ok\xFF", &n) == "caf\xEF\xBF\xBD ok\xEF\xBF\xBD");
  CHECK(n == 2);
  CHECK(valid_utf8(repair_utf8("\xC0\xAF\xED\xA0\x80")));
}

TEST_CASE("dump_json never throws on stored invalid text", "[text_input]") {
  json j = {{"system", std::string("caf\xE9")}};
  CHECK_THROWS(j.dump());
  std::string s;
  REQUIRE_NOTHROW(s = dump_json(j));
  CHECK(s == "{\"system\":\"caf\xEF\xBF\xBD\"}");
}

TEST_CASE("printable escapes terminal controls and bidi overrides", "[text_input]") {
  CHECK(printable("gpu\nbox") == "gpu\\nbox");
  CHECK(printable("\x1b]0;pwned\x07") == "\\x1b]0;pwned\\x07");
  CHECK(printable("a\xC2\x9b"
                  "31m") == "a\\u009b31m");            // C1 CSI
  CHECK(printable("x\xE2\x80\xAEyz") == "x\\u202eyz"); // RIGHT-TO-LEFT OVERRIDE
  CHECK(printable("x\xE2\x81\xA6y") == "x\\u2066y");   // LEFT-TO-RIGHT ISOLATE
  CHECK(printable("H100 \xE2\x86\x92 GB200") == "H100 \xE2\x86\x92 GB200"); // ordinary text kept
}

TEST_CASE("read_input_file names directories, missing files and oversized input", "[text_input]") {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / fmt::format("ab_text_input_{}", ::getpid());
  fs::create_directories(dir);
  auto message = [](auto&& f) {
    try {
      f();
    } catch (const input_error& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  CHECK(message([&] { read_input_file(dir, "results file"); }).find("is a directory") !=
        std::string::npos);
  CHECK(message([&] {
          read_input_file(dir / "missing.json", "results file");
        }).find("cannot read results file") != std::string::npos);
  { std::ofstream(dir / "small.json") << R"({"a": 1})"; }
  CHECK(read_input_file(dir / "small.json", "f") == R"({"a": 1})");
  CHECK(read_json_file(dir / "small.json", "f")["a"] == 1);
  CHECK(message([&] { read_input_file(dir / "small.json", "f", 4); }).find("larger than 4 bytes") !=
        std::string::npos);
  // A device without a size: bounded while reading, not by stat().
  CHECK(message([&] { read_input_file("/dev/zero", "f", 1 << 20); }).find("larger than 1 MiB") !=
        std::string::npos);
  { std::ofstream(dir / "deep.json") << std::string(100000, '[') << std::string(100000, ']'); }
  CHECK(message([&] { read_json_file(dir / "deep.json", "suite"); }).find("nesting too deep") !=
        std::string::npos);
  fs::remove_all(dir);
}

TEST_CASE("a NUL byte anywhere in JSON text is refused, also after a whole value", "[text_input]") {
  // nlohmann's lexer takes a NUL for the end of the input: `{"a":1}\0junk` read as {"a":1}.
  const std::string after(R"({"a": 1})"
                          "\0junk",
                          12);
  json_problem problem;
  std::string why;
  CHECK(parse_json_checked(after, problem, why).is_discarded());
  CHECK(problem == json_problem::nul_byte);
  CHECK(why == "not valid JSON (a NUL byte at offset 8)");
  CHECK(parse_json_lenient(after).is_discarded());
  CHECK_THROWS_WITH(parse_json_input(after, "x.json"),
                    "x.json: not valid JSON (a NUL byte at offset 8)");
  CHECK(parse_json_lenient(std::string("[1]\0", 4)).is_discarded());
}

TEST_CASE("a key twice in one object is refused and named, at any depth", "[text_input]") {
  json_problem problem;
  std::string why;
  CHECK(parse_json_checked(R"({"valid": false, "x": 1, "valid": true})", problem, why)
            .is_discarded());
  CHECK(problem == json_problem::duplicate_key);
  CHECK(why.rfind("duplicate key 'valid' in one object", 0) == 0);
  CHECK_THROWS_WITH(parse_json_input(R"({"runs": [{"a": {"b": 1, "c": 2, "b": 3}}]})", "r.json"),
                    Catch::StartsWith("r.json: duplicate key 'b' in one object"));
  CHECK(parse_json_lenient(R"([{"k": 1}, {"k": 2}])").size() == 2); // one key in two objects
  CHECK(parse_json_lenient(R"({"a": {"a": {"a": 1}}})")["a"]["a"]["a"] == 1);
  CHECK(parse_json_lenient(R"({"a": 1, "a": 1})").is_discarded()); // even the same value
  // The problems keep their words: nesting, syntax, range.
  const std::string deep = std::string(300, '[') + std::string(300, ']');
  CHECK(parse_json_checked(deep, problem, why).is_discarded());
  CHECK(problem == json_problem::too_deep);
  CHECK(why == "JSON nesting too deep (more than 256 levels)");
  CHECK(parse_json_checked("{\"a\":", problem, why).is_discarded());
  CHECK(problem == json_problem::not_json);
  CHECK(parse_json_checked("[1e400]", problem, why).is_discarded());
  CHECK(problem == json_problem::out_of_range);
  CHECK(parse_json_checked(R"({"a": [1, {"b": null}]})", problem, why)["a"][1]["b"].is_null());
  CHECK(problem == json_problem::none);
  CHECK(why.empty());
}

TEST_CASE("read_found_file never reads through a link, a FIFO or a device, and is bounded",
          "[text_input]") {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / fmt::format("ab_found_file_{}", ::getpid());
  fs::remove_all(dir);
  fs::create_directories(dir / "tree");
  auto message = [](const fs::path& p, std::size_t max = 1 << 20) {
    try {
      return "read: " + read_found_file(p, "MLPerf log", max);
    } catch (const input_error& e) {
      return std::string(e.what());
    }
  };
  { std::ofstream(dir / "secret") << "TOKEN=hunter2\n"; }
  { std::ofstream(dir / "tree" / "log.txt") << "a log\n"; }
  CHECK(message(dir / "tree" / "log.txt") == "read: a log\n");
  // A link out of the tree: refused by name and target, its target's text never read.
  fs::create_symlink(dir / "secret", dir / "tree" / "result_1.txt");
  const std::string link = message(dir / "tree" / "result_1.txt");
  CHECK(link == fmt::format("MLPerf log '{}' is a symbolic link to '{}': not followed",
                            (dir / "tree" / "result_1.txt").string(), (dir / "secret").string()));
  CHECK(link.find("hunter2") == std::string::npos);
  fs::create_symlink("/proc/self/environ", dir / "tree" / "result_2.txt");
  CHECK(message(dir / "tree" / "result_2.txt").find("symbolic link to '/proc/self/environ'") !=
        std::string::npos);
  // A link inside the tree is refused too: nothing proves where a link leads when it is opened.
  fs::create_symlink("log.txt", dir / "tree" / "result_3.txt");
  CHECK(message(dir / "tree" / "result_3.txt").find("symbolic link to 'log.txt'") !=
        std::string::npos);
  // A FIFO without a writer: refused at once (a read would wait forever; ctest's timeout would
  // end this test).
  REQUIRE(::mkfifo((dir / "tree" / "fifo.txt").c_str(), 0600) == 0);
  CHECK(message(dir / "tree" / "fifo.txt").find("is not a regular file (a FIFO)") !=
        std::string::npos);
  CHECK(message("/dev/zero").find("is not a regular file (a character device)") !=
        std::string::npos);
  CHECK(message(dir / "tree").find("is a directory, not a file") != std::string::npos);
  CHECK(message(dir / "tree" / "log.txt", 4).find("is larger than 4 bytes") != std::string::npos);
  CHECK(message(dir / "tree" / "missing.txt").find("cannot read MLPerf log") != std::string::npos);
  fs::remove_all(dir);
}
