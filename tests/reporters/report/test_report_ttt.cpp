// Tests of the implied model-FLOP utilisation of published time-to-train results
// (reporters/report/plausibility_ttt): Llama 3.1 405B on 512 H100 and 512 GB200 against a hand
// computation, the flags above the peak and far below it, and the figures that stay unassessed.
#include <catch2/catch.hpp>

#include <string>

#include "harness/core/json_schema.hpp"
#include "report_test_helpers.hpp"

using namespace accelbench;
using namespace report_test;

namespace {

// The hand computation, every step written out.
//
// Llama 3.1 405B (workloads/training/models.json "llama3-405b", the Llama 3 paper's table 3):
// d = 16384, L = 126 layers, H = 128 query heads of Q = 128, 8 KV heads (kv_dim = 1024),
// SwiGLU width 53248, vocabulary 128256, untied LM head.
//   one block: 2 x 16384 (RMSNorm gains)            =         32,768
//              16384^2 (Wq) + 16384^2 (Wo)           =    536,870,912
//              2 x 1024 x 16384 (Wk, Wv)             =     33,554,432
//              3 x 53248 x 16384 (W1, W3, W2)        =  2,617,245,696
//                                                    =  3,187,703,808
//   126 blocks                                       = 401,650,679,808
//   LM head 128256 x 16384 + final norm 16384        =   2,101,362,688
//   N (the embedding lookup is no matmul: left out)  = 403,752,042,496
// Model FLOPs per token, PaLM appendix B (as MLPerf/Megatron-style MFU counts them, with the
// attention term over the full T x T matrix, as accelbench's training MFU does):
//   6N                                               = 2,422,512,254,976
//   12 L H Q T = 12 x 126 x 128 x 128 x 8192         =   202,937,204,736
//   F                                                = 2,625,449,459,712 FLOP/token
//
// The score averages one run a side (three runs, the olympic mean drops the fastest and the
// slowest); its samples and its own minutes (run_stop - run_start, before scaling.json):
//   512 x H100-SXM5-80GB (eos-dfw_n64, result_2): 276,480 samples x 8192 = 2,264,924,160 tokens
//     in 1,744,890,805,530 - 1,744,876,964,992 ms = 13,840,538 ms = 230.675633 min
//     model FLOPs 2,264,924,160 x F = 5.94644e21
//     per accelerator 5.94644e21 / (13,840.538 s x 512) = 839.14 TFLOP/s
//     results/devices.json h100-sxm dense: fp8 1979, bf16 989 TFLOP/s
//     MFU 839.14 / 1979 = 42.40% (fp8), 839.14 / 989 = 84.85% (bf16)
//   512 x GB200 (tyche_ngpu512, result_1): 279,552 samples x 8192 = 2,290,089,984 tokens
//     in 1,745,673,779,401 - 1,745,667,448,020 ms = 6,331,381 ms = 105.523017 min
//     model FLOPs 2,290,089,984 x F = 6.01252e21
//     per accelerator 6.01252e21 / (6,331.381 s x 512) = 1854.76 TFLOP/s
//     results/devices.json gb200 dense: fp8 5000, bf16 2500 TFLOP/s
//     MFU 1854.76 / 5000 = 37.10% (fp8), 1854.76 / 2500 = 74.19% (bf16)
constexpr double k_flop_per_token = 2625449459712.0;
constexpr double k_h100_minutes = 13840538.0 / 60000.0;
constexpr double k_gb200_minutes = 6331381.0 / 60000.0;
constexpr double k_h100_tflops = 276480.0 * 8192 * k_flop_per_token / (13840.538 * 512) / 1e12;
constexpr double k_gb200_tflops = 279552.0 * 8192 * k_flop_per_token / (6331.381 * 512) / 1e12;

report::report_model llama405b_report(report::side b, report::side c) {
  return report::build_report(b, c, fixed_options());
}

report::side side_for(store::store& db, const std::string& selector) {
  return side_of(query::select_runs(db, selector));
}

} // namespace

TEST_CASE("report: Llama 3.1 405B time to train implies the hand-computed MFU on 512 H100 and "
          "512 GB200",
          "[report][plausibility]") {
  REQUIRE(k_h100_tflops == Approx(839.14).epsilon(1e-4));
  REQUIRE(k_gb200_tflops == Approx(1854.76).epsilon(1e-4));
  temp_dir t;
  auto db = store::store::open(t.path / "r.db");
  import_mlperf(db);
  const auto rep = llama405b_report(side_for(db, "eos-dfw_n64_ngc25.01_nemo"),
                                    side_for(db, "tyche_ngpu512_ngc25.04_nemo"));
  REQUIRE(rep.pairs.size() == 1);
  struct expect {
    const report::side_score& s;
    double samples, minutes, tflops, fp8_peak, bf16_peak;
  };
  for (const expect& e :
       {expect{rep.pairs[0].baseline, 276480, k_h100_minutes, k_h100_tflops, 1979, 989},
        expect{rep.pairs[0].candidate, 279552, k_gb200_minutes, k_gb200_tflops, 5000, 2500}}) {
    INFO(e.s.display);
    const auto& c = e.s.plausibility;
    CHECK(c.status == "plausible");
    REQUIRE(c.ttt);
    const auto& u = *c.ttt;
    CHECK(u.model == "llama3-405b");
    CHECK(u.runs == 1);
    CHECK(u.accelerators == 512);
    CHECK(u.samples == e.samples);
    CHECK(u.sequence_length == 8192);
    CHECK(u.tokens == e.samples * 8192);
    CHECK(u.flop_per_token == k_flop_per_token);
    CHECK(u.minutes == Approx(e.minutes).epsilon(1e-12));
    CHECK(c.implied_tflops == Approx(e.tflops).epsilon(1e-9));
    CHECK(u.peak_dtype == "fp8");
    CHECK(c.peak_tflops == e.fp8_peak);
    CHECK(*c.utilisation_pct == Approx(100 * e.tflops / e.fp8_peak).epsilon(1e-9));
    CHECK(*u.bf16_utilisation_pct == Approx(100 * e.tflops / e.bf16_peak).epsilon(1e-9));
    // The side shows it as its MFU, against the same peak.
    CHECK(e.s.pct_of_peak_kind == "mfu");
    CHECK(*e.s.pct_of_peak == *c.utilisation_pct);
  }
  CHECK(*rep.pairs[0].baseline.plausibility.utilisation_pct == Approx(42.40).margin(0.01));
  CHECK(*rep.pairs[0].candidate.plausibility.utilisation_pct == Approx(37.10).margin(0.01));
  // The page prints the formula with its inputs and the peak it divides by, and why.
  const std::string html = report::to_html(rep);
  CHECK(html.find("Implied model-FLOP utilisation of time-to-train results") != std::string::npos);
  CHECK(html.find("MFU = samples x T x F / (t x A x peak) = 276480 x 8192 x 2.6254e+12 FLOP / "
                  "(230.68 min x 60 s x 512 x 1979 TFLOP/s fp8 dense) = 42.4% (84.8% of the 989 "
                  "TFLOP/s bf16 dense peak)") != std::string::npos);
  CHECK(html.find("(105.52 min x 60 s x 512 x 5000 TFLOP/s fp8 dense) = 37.1%") !=
        std::string::npos);
  CHECK(html.find("the log states no precision") != std::string::npos);
  // The JSON carries the inputs and the result, and stays within the schema.
  const json j = report::to_json(rep);
  const json& tj = j["pairs"][0]["baseline"]["plausibility"]["time_to_train"];
  CHECK(tj["samples"] == 276480.0);
  CHECK(tj["sequence_length"] == 8192);
  CHECK(tj["flop_per_token"] == k_flop_per_token);
  CHECK(tj["peak_dtype"] == "fp8");
  CHECK(tj["utilisation_pct"].get<double>() == Approx(42.40).margin(0.01));
  CHECK(tj["formula"].get<std::string>().rfind("MFU = samples x T x F", 0) == 0);
  const auto v = load_builtin_schema("report.schema.json").validate(j);
  for (const auto& x : v)
    INFO(x.path << ": " << x.message);
  CHECK(v.empty());
}

TEST_CASE("report: a time to train above the peak or far below it is flagged as kernels are",
          "[report][plausibility]") {
  temp_dir t;
  auto db = store::store::open(t.path / "r.db");
  import_mlperf(db);
  auto set_samples = [](report::side& s, double factor) {
    for (auto& r : s.runs)
      if (r.extra.contains("trained"))
        r.extra["trained"]["samples"] = r.extra["trained"]["samples"].get<double>() * factor;
  };
  {
    // Samples read 3x too many: 127% of the H100's FP8 peak, which nothing explains.
    auto b = side_for(db, "eos-dfw_n64_ngc25.01_nemo");
    auto c = side_for(db, "tyche_ngpu512_ngc25.04_nemo");
    set_samples(b, 3);
    set_samples(c, 3);
    const auto rep = llama405b_report(b, c);
    const auto& hb = rep.pairs[0].baseline.plausibility;
    CHECK(hb.implausible());
    CHECK(*hb.utilisation_pct == Approx(3 * 42.40).margin(0.03));
    CHECK(hb.reason.find("more than 5% above the peak") != std::string::npos);
    CHECK(hb.likely_reading.empty()); // H100 has no FP4: no reading makes it possible
    // GB200 at 111% of FP8: only FP4 matmuls, which the log does not state, would explain it.
    const auto& gc = rep.pairs[0].candidate.plausibility;
    CHECK(gc.implausible());
    CHECK(gc.likely_reading.find("FP4") != std::string::npos);
    CHECK(*gc.likely_utilisation_pct == Approx(3 * 37.10 / 2).margin(0.03));
    // Left out of the headline as an implausible kernel figure is.
    CHECK_FALSE(rep.pairs[0].in_summary);
  }
  {
    // Samples counted in global batches (1152 to a batch): 0.04% of the peak.
    auto b = side_for(db, "eos-dfw_n64_ngc25.01_nemo");
    set_samples(b, 1.0 / 1152);
    const auto rep = llama405b_report(b, side_for(db, "tyche_ngpu512_ngc25.04_nemo"));
    const auto& hb = rep.pairs[0].baseline.plausibility;
    CHECK(hb.implausible());
    CHECK(hb.reason.find("below 1%") != std::string::npos);
    CHECK(rep.pairs[0].candidate.plausibility.status == "plausible");
  }
}

TEST_CASE("report: a time to train without model FLOPs says which input is missing",
          "[report][plausibility]") {
  temp_dir t;
  auto db = store::store::open(t.path / "r.db");
  import_mlperf(db);
  // Llama 2 70B LoRA: the benchmark names no model (frozen base weights: 6N would overcount).
  const auto lora =
      llama405b_report(side_for(db, "eos_ngc24.04_nemo"), side_for(db, "nyx_n1_ngc25.04_nemo"));
  REQUIRE(lora.pairs.size() == 1);
  const auto& lc = lora.pairs[0].baseline.plausibility;
  CHECK(lc.status == "not assessed");
  CHECK_FALSE(lc.ttt);
  CHECK(lc.reason.find("names no model") != std::string::npos);
  // A 405B log without max_sequence_length: the tokens are unknown.
  auto b = side_for(db, "eos-dfw_n64_ngc25.01_nemo");
  for (auto& r : b.runs)
    r.extra["trained"].erase("sequence_length");
  const auto rep = llama405b_report(b, side_for(db, "tyche_ngpu512_ngc25.04_nemo"));
  const auto& c = rep.pairs[0].baseline.plausibility;
  CHECK(c.status == "not assessed");
  CHECK(c.reason.find("no sequence length") != std::string::npos);
  CHECK_FALSE(rep.pairs[0].baseline.pct_of_peak);
}

TEST_CASE("model catalogue: the built-in copy is workloads/training/models.json, read once for "
          "the workload and the report",
          "[report][models]") {
  const auto& builtin = model_catalogue::builtin();
  const auto file =
      model_catalogue::load(fs::path(ACCELBENCH_SOURCE_DIR) / "workloads/training/models.json");
  REQUIRE(builtin.models().size() == file.models().size());
  const model_dims* m = builtin.find("llama3-405b");
  REQUIRE(m);
  CHECK(m->n_layers == 126);
  CHECK(m->max_seq_len == 8192);
  CHECK(builtin.find("gpt-5") == nullptr);
  // 6N + 12 L H Q T over the blocks and the untied head (the report's and the workload's count).
  CHECK(m->training_flops_per_token(0) == Approx(6 * m->non_embedding_params()));
  // A malformed entry is named, whether in a catalogue or in a figure's extra.model.
  model_dims d;
  CHECK(read_model_dims(json{{"dim", 4096}}, "x", d).find("n_layers") != std::string::npos);
  CHECK(read_model_dims(json{{"dim", "wide"}}, "x", d).find("'dim'") != std::string::npos);
  CHECK_THROWS_WITH(
      model_catalogue::from_json(json{{"models", {{"bad", {{"dim", 1.5}}}}}}, "m.json"),
      Catch::Contains("model 'bad' in m.json is malformed"));
  CHECK_THROWS_AS(model_catalogue::from_json(json::object(), "m.json"), input_error);
}
