// kernels/attention/cuda/sdpa_graph and sdpa_rules: the cuDNN SDPA graphs as data and the named
// support rules, on the CPU (no cuDNN, no GPU): what cudnn_sdpa.cpp hands cuDNN, checked here.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>

#include "kernels/attention/cuda/sdpa_graph.hpp"
#include "kernels/attention/cuda/sdpa_rules.hpp"

using namespace accelbench::attention;
using namespace accelbench::attention::cudnn;
using accelbench::dtype;

namespace {
attention_shape shape(int64_t h = 4, int64_t kvh = 2, int64_t sq = 128, int64_t sk = 128,
                      int64_t d = 64, bool causal = false) {
  attention_shape s;
  s.batch = 2, s.heads = h, s.kv_heads = kvh, s.seq_q = sq, s.seq_k = sk, s.head_dim = d;
  s.causal = causal;
  return s;
}
sdpa_env h200() {
  sdpa_env e;
  e.cudnn_version = 91900, e.cudnn_cudart_version = 13000, e.built_cuda_version = 13000;
  e.sm = 90;
  return e;
}
std::string rule_of(const attention_shape& s, bool backward, const sdpa_env& e,
                    dtype io = dtype::bf16) {
  auto f = check_sdpa(s, io, backward, e);
  return f ? f->rule : std::string();
}
// The index of the first operation whose output is `name`.
size_t position(const sdpa_graph& g, const std::string& name) {
  for (size_t i = 0; i < g.ops.size(); ++i)
    if (g.tensors[size_t(g.ops[i].y)].name == name)
      return i;
  FAIL("no operation writes " << name);
  return 0;
}
} // namespace

TEST_CASE("SDPA forward graph: P·V's A operand in the I/O type, stats fp32, our layout",
          "[cudnn_graph]") {
  for (bool causal : {false, true})
    for (auto io : {dtype::bf16, dtype::fp16}) {
      INFO("causal=" << causal << " io=" << to_string(io));
      const auto s = shape(4, 2, 128, 128, 64, causal);
      const sdpa_graph g = describe_forward(s, io);
      const auto& p = g.tensor("P");
      CHECK(p.type == io);
      CHECK(p.is_virtual);
      // P is what the second matmul reads as A, and the softmax's division writes it.
      auto uses = g.consumers("P");
      REQUIRE(uses.size() == 1);
      CHECK(uses[0]->kind == sdpa_op_kind::matmul);
      CHECK(g.tensors[size_t(uses[0]->x)].name == "P");
      CHECK(g.tensors[size_t(uses[0]->b)].name == "V");
      CHECK(g.tensors[size_t(uses[0]->y)].name == "O");
      REQUIRE(g.producers("P").size() == 1);
      CHECK(g.producers("P")[0]->mode == sdpa_mode::div);
      // The intermediates before P stay fp32.
      CHECK(g.tensor("S").type == dtype::fp32);
      CHECK(g.tensor("E").type == dtype::fp32);
      const auto& st = g.tensor("Stats");
      CHECK(st.type == dtype::fp32);
      CHECK_FALSE(st.is_virtual);
      CHECK(st.dims == std::vector<int64_t>{2, 4, 128, 1});
      CHECK(st.strides == std::vector<int64_t>{4 * 128, 128, 1, 1});
      // Q, V, O: logical [B, H, S, D] over our [B, S, H, D] memory; K as its transpose K^T.
      for (const char* n : {"Q", "V", "O"}) {
        CHECK(g.tensor(n).stride_order() == "BSHD");
        CHECK(g.tensor(n).type == io);
        CHECK(g.tensor(n).strides.back() == 1);
      }
      CHECK(g.tensor("K^T").dims == std::vector<int64_t>{2, 2, 64, 128});
      CHECK(g.tensor("K^T").strides == std::vector<int64_t>{128 * 2 * 64, 64, 1, 2 * 64});
      CHECK(g.tensor("attn_scale").by_value);
      CHECK_FALSE(check_sdpa_graph(g, false).has_value());
    }
}

TEST_CASE("SDPA inference forward (is_inference): no stats, the same P", "[cudnn_graph]") {
  const sdpa_graph train = describe_forward(shape(4, 2, 128, 128, 64, true));
  const sdpa_graph infer = describe_forward(shape(4, 2, 128, 128, 64, true), dtype::bf16, false);
  CHECK_THROWS(infer.tensor("Stats"));
  CHECK_THROWS(infer.tensor("log_L"));
  CHECK(infer.ops.size() == train.ops.size() - 2); // the log and the add of M + log(L)
  CHECK(infer.tensor("P").type == dtype::bf16);
  CHECK(train.producers("Stats").at(0)->mode == sdpa_mode::add);
  CHECK_FALSE(check_sdpa_graph(infer, false).has_value());
}

TEST_CASE("SDPA causal mask: int32 indices, a boolean row >= col, -inf selected", "[cudnn_graph]") {
  const sdpa_graph g = describe_forward(shape(4, 4, 64, 64, 64, true));
  CHECK(g.tensor("row_index").type == dtype::int32);
  CHECK(g.tensor("causal_keep").type == sdpa_boolean);
  const auto* cmp = g.producers("causal_keep").at(0);
  CHECK(cmp->mode == sdpa_mode::cmp_ge);
  CHECK(cmp->compute == sdpa_boolean);
  CHECK(g.tensors[size_t(cmp->x)].name == "row_index");
  CHECK(g.tensors[size_t(cmp->b)].name == "col_index");
  CHECK(g.producers("row_index").at(0)->axis == 2);
  CHECK(g.producers("col_index").at(0)->axis == 3);
  CHECK(g.tensor("neg_inf").by_value);
  // The mask comes before the softmax's max in the forward.
  CHECK(position(g, "S_scaled_masked") < position(g, "M"));
  // No mask op at all without causal.
  const sdpa_graph plain = describe_forward(shape());
  CHECK_THROWS(plain.tensor("causal_keep"));
}

TEST_CASE("SDPA backward graph: the frontend's bprop order and types", "[cudnn_graph]") {
  for (int64_t kvh : {4, 2, 1})
    for (bool causal : {false, true}) {
      INFO("kv_heads=" << kvh << " causal=" << causal);
      const sdpa_graph g = describe_backward(shape(4, kvh, 128, 128, 64, causal));
      // The transposed probabilities and score gradients feed their matmuls in bf16.
      CHECK(g.tensor("P^T").type == dtype::bf16);
      CHECK(g.tensor("dS^T").type == dtype::bf16);
      CHECK(g.tensor("P^T").stride_order() == "BHDS"); // [B,H,Sk,Sq] over the packed scores
      CHECK(g.tensor("P").type == dtype::fp32);
      CHECK(g.tensor("dS").type == dtype::fp32);
      // softmax_sum and the dQ accumulator are fp32 in memory; dQ/dK/dV in the I/O type.
      CHECK_FALSE(g.tensor("softmax_sum").is_virtual);
      CHECK(g.tensor("softmax_sum").type == dtype::fp32);
      CHECK(g.tensor("dQ_accum").type == dtype::fp32);
      CHECK(g.tensor("dQ_accum").stride_order() == "BHSD");
      for (const char* n : {"dQ", "dK", "dV", "dO", "O"})
        CHECK(g.tensor(n).type == dtype::bf16);
      CHECK(g.tensor("dK").dims == std::vector<int64_t>{2, kvh, 128, 64});
      // Order: rowsum(dO*O) first, then S - Stats, the mask after the subtraction, then exp.
      CHECK(position(g, "softmax_sum") < position(g, "S"));
      if (causal) {
        CHECK(position(g, "S-Stats") < position(g, "S-Stats_masked"));
        CHECK(position(g, "S-Stats_masked") < position(g, "P"));
      }
      // dS = (dP - sum) * P * scale; dQ = identity(dS K in fp32).
      CHECK(position(g, "dP-sum") < position(g, "dP*P"));
      CHECK(position(g, "dP*P") < position(g, "dS"));
      CHECK(g.producers("dQ").at(0)->mode == sdpa_mode::identity);
      // GQA: per query head, then summed per group; MHA writes dK/dV directly.
      const bool gqa = kvh != 4;
      CHECK(g.producers("dV").at(0)->kind ==
            (gqa ? sdpa_op_kind::reduction : sdpa_op_kind::matmul));
      CHECK_FALSE(check_sdpa_graph(g, true).has_value());
    }
}

TEST_CASE("SDPA rules name the rule that fails", "[cudnn_graph]") {
  const sdpa_env e = h200();
  CHECK(rule_of(shape(), false, e).empty());
  CHECK(rule_of(shape(), true, e).empty());
  CHECK(rule_of(shape(), false, e, dtype::fp32) == "io_dtype");
  // Every element type of the harness reaches the rule: those cuDNN's SDPA has no kernel for too.
  const auto fp8 = check_sdpa(shape(), dtype::fp8_e4m3, true, e);
  REQUIRE(fp8);
  CHECK(fp8->rule == "io_dtype");
  CHECK(fp8->detail == "dtype=fp8_e4m3");
  CHECK(rule_of(shape(4, 3), false, e) == "gqa_heads");
  CHECK(rule_of(shape(4, 2, 128, 128, 60), false, e) == "head_dim");
  CHECK(rule_of(shape(4, 2, 128, 128, 320), false, e) == "head_dim");
  CHECK(rule_of(shape(4, 2, 64, 128, 64, true), false, e) == "causal_alignment");
  CHECK(rule_of(shape(4, 2, 64, 128, 64, false), false, e).empty());
  CHECK(rule_of(shape(4, 2, 1, 1, 64), true, e) == "seq_len");
  CHECK(rule_of(shape(4, 2, 1, 1, 64), false, e).empty());
  // head_dim limits by pass and GPU: 256 on Hopper both ways, 128 for the backward elsewhere.
  CHECK(rule_of(shape(4, 2, 128, 128, 256), true, e).empty());
  sdpa_env b200 = e;
  b200.sm = 100;
  CHECK(rule_of(shape(4, 2, 128, 128, 256), false, b200).empty());
  CHECK(rule_of(shape(4, 2, 128, 128, 256), true, b200) == "head_dim");
  b200.cudnn_version = 90800;
  CHECK(rule_of(shape(4, 2, 128, 128, 256), false, b200) == "head_dim");
  // The message names the rule, the value and the requirement.
  auto f = check_sdpa(shape(4, 2, 128, 128, 60), dtype::bf16, false, e);
  REQUIRE(f);
  CHECK(f->kind == sdpa_rule_kind::config);
  CHECK(f->message().find("'head_dim'") != std::string::npos);
  CHECK(f->message().find("head_dim=60") != std::string::npos);
  CHECK(f->message().find("multiple of 8") != std::string::npos);
  // Unknown GPU: the arch-dependent limit is the widest.
  sdpa_env none;
  CHECK(rule_of(shape(4, 2, 128, 128, 256), true, none).empty());
}

TEST_CASE("SDPA install rules: cuDNN's CUDA major, version and the GPU", "[cudnn_graph]") {
  sdpa_env e = h200();
  e.cudnn_cudart_version = 12080; // a CUDA 12 cuDNN picked up by a CUDA 13 binary
  auto f = check_sdpa(shape(), dtype::bf16, false, e);
  REQUIRE(f);
  CHECK(f->rule == "cudart_major");
  CHECK(f->kind == sdpa_rule_kind::install);
  CHECK(f->message().find("built for CUDA 12.8") != std::string::npos);
  CHECK(f->message().find("this binary for CUDA 13.0") != std::string::npos);
  e = h200();
  e.cudnn_cudart_version = 13010; // minor versions may differ
  CHECK(rule_of(shape(), false, e).empty());
  e = h200();
  e.cudnn_version = 91000;
  CHECK(rule_of(shape(), false, e) == "cudnn_version");
  e.cudnn_version = 81000;
  CHECK(rule_of(shape(), false, e) == "cudnn_version");
  e = h200();
  e.sm = 75;
  CHECK(rule_of(shape(), false, e) == "gpu_arch");
  CHECK(cudnn_version_string(91900) == "9.19.0");
  CHECK(cuda_version_text(12080) == "12.8");
}

TEST_CASE("SDPA graph rules catch a graph that is not the documented pattern", "[cudnn_graph]") {
  sdpa_graph g = describe_forward(shape());
  auto p = std::find_if(g.tensors.begin(), g.tensors.end(),
                        [](const sdpa_tensor& t) { return t.name == "P"; });
  p->type = dtype::fp32; // the defect of the first version: P fp32 before P·V
  auto f = check_sdpa_graph(g, false);
  REQUIRE(f);
  CHECK(f->rule == "bmm2_operand_dtype");
  CHECK(f->message().find("P is fp32") != std::string::npos);

  g = describe_forward(shape());
  auto q = std::find_if(g.tensors.begin(), g.tensors.end(),
                        [](const sdpa_tensor& t) { return t.name == "Q"; });
  q->strides = {128 * 4 * 64, 1, 4 * 64, 4}; // head_dim not contiguous
  CHECK(check_sdpa_graph(g, false)->rule == "layout");

  g = describe_backward(shape());
  auto st = std::find_if(g.tensors.begin(), g.tensors.end(),
                         [](const sdpa_tensor& t) { return t.name == "Stats"; });
  st->type = dtype::bf16;
  CHECK(check_sdpa_graph(g, true)->rule == "stats");

  // Every rule named in a failure is in the one list, with what it requires.
  for (const auto& r : sdpa_rules())
    CHECK(std::string(r.requires_).size() > 10);
}
