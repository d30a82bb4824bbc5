// The shape catalogues (attention and GEMM, Llama 3 and DeepBench): valid
// against schemas/catalogue.schema.json, real model dimensions, and the attention ones resolve to
// valid configs of the attention workload.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <string>

#include "harness/core/json_schema.hpp"
#include "workloads/attention/attention_workload.hpp"

using namespace accelbench;

namespace {

json read(const std::string& rel) {
  std::ifstream in(std::string(ACCELBENCH_SOURCE_DIR) + "/" + rel);
  REQUIRE(in.good());
  return json::parse(in);
}

// A "set" value that names a parameter takes the parameter's value.
std::map<std::string, std::string> values_of(const json& cat, const json& set) {
  std::map<std::string, std::string> out;
  for (const auto& [k, v] : set.items()) {
    json x = v;
    if (x.is_string() && cat.contains("parameters") &&
        cat["parameters"].contains(x.get<std::string>()))
      x = cat["parameters"][x.get<std::string>()];
    out[k] = x.is_string() ? x.get<std::string>() : x.dump();
  }
  return out;
}

const json& config_named(const json& cat, const std::string& name) {
  for (const json& c : cat["configs"])
    if (c.value("name", "") == name)
      return c;
  FAIL("no config " << name);
  static json none;
  return none;
}

} // namespace

TEST_CASE("catalogues follow the catalogue schema", "[attention][catalogue]") {
  const json_schema schema =
      json_schema::load(std::string(ACCELBENCH_SOURCE_DIR) + "/schemas/catalogue.schema.json");
  for (const char* f :
       {"workloads/attention/catalogues/llama3-8b.json",
        "workloads/attention/catalogues/llama3-70b.json",
        "workloads/attention/catalogues/llama3-405b.json",
        "workloads/gemm/catalogues/llama3-8b.json", "workloads/gemm/catalogues/llama3-70b.json",
        "workloads/gemm/catalogues/llama3-405b.json", "workloads/gemm/catalogues/deepbench.json"}) {
    INFO(f);
    const json cat = read(f);
    CHECK(schema.validate(cat).empty());
    // File name = catalogue name.
    CHECK(std::filesystem::path(f).stem().string() == cat["name"].get<std::string>());
  }
}

TEST_CASE("attention catalogues resolve to valid attention configs", "[attention][catalogue]") {
  auto w = attention::make_attention_workload();
  const std::map<std::string, std::pair<int, int>> heads = {
      {"llama3-8b", {32, 8}}, {"llama3-70b", {64, 8}}, {"llama3-405b", {128, 8}}};
  for (const auto& [name, hk] : heads) {
    const json cat = read("workloads/attention/catalogues/" + name + ".json");
    CHECK(cat["workload"] == "attention");
    CHECK(cat["configs"].size() == 2);
    for (const json& c : cat["configs"]) {
      const config cfg = resolve_config(w->spec(), "cpu", values_of(cat, c["set"]));
      w->validate(cfg);
      const attention::attention_shape s = attention::shape_of(cfg);
      CHECK(s.heads == hk.first);
      CHECK(s.kv_heads == hk.second);
      CHECK(s.head_dim == 128);
      CHECK(s.seq_q == 8192);
      CHECK(s.causal);
    }
  }
}

TEST_CASE("Llama 3 GEMM catalogues carry the models' dimensions", "[catalogue]") {
  // hidden, ffn, (heads + 2 kv_heads) * 128
  struct dims {
    const char* name;
    int hidden, ffn, qkv;
  };
  for (const dims& d :
       {dims{"llama3-8b", 4096, 14336, 6144}, dims{"llama3-70b", 8192, 28672, 10240},
        dims{"llama3-405b", 16384, 53248, 18432}}) {
    INFO(d.name);
    const json cat = read(std::string("workloads/gemm/catalogues/") + d.name + ".json");
    CHECK(cat["configs"].size() == 15); // 5 layers x (fwd, dgrad, wgrad)
    const auto qkv = values_of(cat, config_named(cat, "qkv_fwd")["set"]);
    CHECK(qkv.at("N") == std::to_string(d.qkv));
    CHECK(qkv.at("K") == std::to_string(d.hidden));
    CHECK(qkv.at("M") == "4096"); // tokens
    const auto up = values_of(cat, config_named(cat, "gate_up_dgrad")["set"]);
    CHECK(up.at("N") == std::to_string(d.hidden));
    CHECK(up.at("K") == std::to_string(2 * d.ffn));
    const auto down = values_of(cat, config_named(cat, "down_wgrad")["set"]);
    CHECK(down.at("M") == std::to_string(d.ffn));
    CHECK(down.at("K") == "4096");
    CHECK(down.at("trans_a") == "1");
    const auto head = values_of(cat, config_named(cat, "lm_head_fwd")["set"]);
    CHECK(head.at("N") == "128256");
  }
}
