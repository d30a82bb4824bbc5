// The device arrays of llama_cuda: their bytes (sizes_of, device_plan), their allocation (the
// constructor) and how the bf16 recipe carves its activations and backward scratch.
#include <algorithm>
#include <initializer_list>
#include <utility>
#include <vector>

#include "workloads/training/cuda/llama_cuda_impl.hpp"

namespace accelbench::training::cuda {

namespace {

// The bf16 recipe's per-layer bf16 activations, per token.
uint64_t acts16_per_token(const model_config& m) {
  return uint64_t(5 * m.dim + 2 * m.kv_dim() + 3 * m.ffn_dim);
}
// The bf16 recipe's backward scratch, per token: dres dxn dq datt [C], dk dv [KV], dh1 dh3 dg [F].
uint64_t scratch16_per_token(const model_config& m) {
  return uint64_t(4 * m.dim + 2 * m.kv_dim() + 3 * m.ffn_dim);
}

// The bf16 scratch's bytes, rounded up to 256 so that the fp32 delta after it is aligned.
uint64_t scratch16_bytes(const model_config& m, uint64_t bt) {
  return (bt * scratch16_per_token(m) * 2 + 255) / 256 * 256;
}

sizes sizes_of(const model_config& m, const llama_options& o) {
  sizes z;
  z.layers = resolved_layers(m, o);
  z.bt = o.batch * o.seq;
  const llama_layout layout(m, o);
  z.params = layout.num_params();
  const uint64_t bt = z.bt, c = m.dim, v = m.vocab_size;
  const uint64_t delta = uint64_t(o.batch * m.n_heads * o.seq);
  z.rope = 2 * uint64_t(o.seq * (m.head_dim() / 2)) * 4;
  if (!bf16_recipe(o)) {
    z.block_acts = uint64_t(block_act_floats(m, z.bt)) * 4;
    z.resid = (z.layers + 1) * bt * c * 4;
    z.head = (o.with_head ? bt * c + bt + bt * v + bt : bt * c) * 4;
    z.scratch = layout.scratch_floats(true) * 4;
    return z;
  }
  z.block_acts = (bt * acts16_per_token(m) * 2 + 255) / 256 * 256; // each layer 256-byte aligned
  z.block_stats = (2 * bt + delta) * 4;
  z.resid = (z.layers + 1) * bt * c * 2;
  z.head = o.with_head ? (bt * c + bt * v) * 2 : 0;
  z.head_f32 = (o.with_head ? 3 * bt : bt * c) * 4;
  z.scratch = scratch16_bytes(m, bt) + delta * 4;
  z.params_bf16 = z.params * 2;
  return z;
}

// The fused AdamW's work list: every tensor cut in runs of at most kChunk parameters.
constexpr int64_t kChunk = 1 << 14;
std::vector<K::adamw_chunk> adamw_chunks(const std::vector<param_tensor>& tensors) {
  std::vector<K::adamw_chunk> out;
  for (const auto& t : tensors)
    for (int64_t b = 0; b < int64_t(t.size); b += kChunk) {
      K::adamw_chunk ch;
      ch.begin = int64_t(t.offset) + b;
      ch.end = int64_t(t.offset) + std::min<int64_t>(int64_t(t.size), b + kChunk);
      ch.decay = t.decay ? 1 : 0;
      out.push_back(ch);
    }
  return out;
}

// Points each of `parts` at its [n, len] bf16 slice of the array at p, one after another.
void carve16(uint16_t* p, int64_t n, std::initializer_list<std::pair<uint16_t**, int64_t>> parts) {
  for (auto [dst, len] : parts) {
    *dst = p;
    p += n * len;
  }
}

} // namespace

memory_plan device_plan(const model_config& cfg, const llama_options& opt) {
  const sizes z = sizes_of(cfg, opt);
  memory_plan mp;
  mp.params = z.params * 4 + z.params_bf16;
  mp.grads = z.params * 4;
  mp.optimizer = z.params * 8;
  mp.activations = z.layers * (z.block_acts + z.block_stats) + z.resid + z.head + z.head_f32;
  // cuDNN's backward keeps rowsum(dO*O) and an fp32 dQ accumulator of its own.
  const uint64_t cudnn_scratch =
      attention_impl(cfg, opt) == "cudnn"
          ? (uint64_t(opt.batch * cfg.n_heads * opt.seq) + uint64_t(z.bt * cfg.dim)) * 4
          : 0;
  mp.scratch = z.scratch + z.rope + 2 * uint64_t(kPartials) * 8 + uint64_t(2 * z.bt) * 4 +
               kLtWorkspace + cudnn_scratch;
  return mp;
}

llama_cuda::impl::impl(const model_config& c, const llama_options& o)
    : cfg(c), opt(o), z(sizes_of(c, o)), layout(c, o), bf16(bf16_recipe(o)),
      attn(attention_impl(c, o)), params(z.params * 4), grads(z.params * 4), adam_m(z.params * 4),
      adam_v(z.params * 4), acts(z.layers * z.block_acts), resid(z.resid), scratch(z.scratch),
      rope(z.rope), loss_partials(uint64_t(kPartials) * 8), norm_partials(uint64_t(kPartials) * 8),
      tokens(uint64_t(2 * z.bt) * 4), scalars(8) {
  if (bf16) {
    params_bf16 = device::device_buffer(z.params_bf16);
    stats = device::device_buffer(z.layers * z.block_stats);
    head_f32 = device::device_buffer(z.head_f32);
  }
  if (z.head)
    head = device::device_buffer(z.head);
  make_attention();
  upload_chunks();
  for (auto* b : {&acts, &stats, &resid, &head, &head_f32, &scratch, &grads, &adam_m, &adam_v})
    if (b->get())
      b->zero();
  auto table = make_rope_table(opt.seq, cfg.head_dim(), cfg.rope_theta);
  rope.upload(table.cos.data(), table.cos.size() * 4);
  rope.upload(table.sin.data(), table.sin.size() * 4, table.cos.size() * 4);
}

void llama_cuda::impl::upload_chunks() {
  const auto list = adamw_chunks(layout.tensors());
  chunk_count = int64_t(list.size());
  chunks = device::device_buffer(std::max<uint64_t>(1, list.size()) * sizeof(K::adamw_chunk));
  chunks.upload(list.data(), list.size() * sizeof(K::adamw_chunk));
}

acts16 llama_cuda::impl::la16(int64_t l) const {
  const int64_t n = bt(), c = cfg.dim, kv = cfg.kv_dim(), f = cfg.ffn_dim;
  acts16 a{};
  carve16(acts.as<uint16_t>() + l * (z.block_acts / 2), n,
          {{&a.xn1, c},
           {&a.q, c},
           {&a.k, kv},
           {&a.v, kv},
           {&a.att, c},
           {&a.xmid, c},
           {&a.xn2, c},
           {&a.h1, f},
           {&a.h3, f},
           {&a.g, f}});
  float* s = stats.as<float>() + l * (z.block_stats / 4);
  a.rstd1 = s;
  a.rstd2 = s + n;
  a.lse = s + 2 * n;
  return a;
}

scratch16 llama_cuda::impl::scr16() const {
  const int64_t n = bt(), c = cfg.dim, kv = cfg.kv_dim(), f = cfg.ffn_dim;
  scratch16 s{};
  carve16(scratch.as<uint16_t>(), n,
          {{&s.dres, c},
           {&s.dxn, c},
           {&s.dq, c},
           {&s.datt, c},
           {&s.dk, kv},
           {&s.dv, kv},
           {&s.dh1, f},
           {&s.dh3, f},
           {&s.dg, f}});
  s.delta = reinterpret_cast<float*>(scratch.as<char>() + scratch16_bytes(cfg, uint64_t(n)));
  return s;
}

} // namespace accelbench::training::cuda
