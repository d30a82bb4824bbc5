// The cuDNN SDPA graphs as data (sdpa_graph.hpp). No cuDNN or CUDA header: built and tested on
// any machine.
#include "kernels/attention/cuda/sdpa_graph.hpp"

#include <algorithm>
#include <numeric>
#include <stdexcept>

namespace accelbench::attention::cudnn {

std::string type_name(sdpa_type t) { return t ? to_string(*t) : "boolean"; }

const char* to_string(sdpa_mode m) {
  static const char* const names[] = {
      "none",     "mul",       "sub",    "add",           "div",        "exp",       "log",
      "identity", "gen_index", "cmp_ge", "binary_select", "reduce_max", "reduce_add"};
  return names[static_cast<int>(m)];
}

std::string sdpa_tensor::stride_order(const std::string& letters) const {
  std::vector<size_t> idx(dims.size());
  std::iota(idx.begin(), idx.end(), size_t{0});
  // Largest stride first; on a tie (extent-1 dims) the earlier dimension first.
  std::stable_sort(idx.begin(), idx.end(),
                   [&](size_t a, size_t b) { return strides[a] > strides[b]; });
  std::string out;
  for (size_t i : idx)
    out += i < letters.size() ? letters[i] : '?';
  return out;
}

const sdpa_tensor& sdpa_graph::tensor(const std::string& name) const {
  for (const auto& t : tensors)
    if (t.name == name)
      return t;
  throw std::out_of_range("SDPA graph has no tensor " + name);
}

std::vector<const sdpa_op*> sdpa_graph::producers(const std::string& name) const {
  std::vector<const sdpa_op*> out;
  for (const auto& op : ops)
    if (tensors[size_t(op.y)].name == name)
      out.push_back(&op);
  return out;
}

std::vector<const sdpa_op*> sdpa_graph::consumers(const std::string& name) const {
  std::vector<const sdpa_op*> out;
  for (const auto& op : ops)
    for (int in : {op.x, op.b, op.t})
      if (in >= 0 && tensors[size_t(in)].name == name) {
        out.push_back(&op);
        break;
      }
  return out;
}

namespace {

using dims_t = std::vector<int64_t>;

dims_t packed(const dims_t& dims) {
  dims_t st(dims.size());
  int64_t s = 1;
  for (size_t i = dims.size(); i-- > 0;) {
    st[i] = s;
    s *= dims[i];
  }
  return st;
}

// Our [B, S, heads, D] memory seen as the logical [B, heads, S, D] (and its transpose [B, heads,
// D, S]) that cuDNN's SDPA patterns use.
dims_t bshd_strides(int64_t heads, int64_t s, int64_t d) {
  return {s * heads * d, d, heads * d, 1};
}
dims_t bshd_strides_t(int64_t heads, int64_t s, int64_t d) {
  return {s * heads * d, d, 1, heads * d};
}

struct builder {
  sdpa_graph g;
  int64_t next_uid = u_first_virtual;

  int io(const std::string& name, int64_t uid, dims_t dims, dims_t strides, sdpa_type t) {
    g.tensors.push_back({name, uid, std::move(dims), std::move(strides), t, false, false});
    return int(g.tensors.size()) - 1;
  }
  int scalar(const std::string& name, int64_t uid) {
    g.tensors.push_back({name, uid, {1, 1, 1, 1}, {1, 1, 1, 1}, dtype::fp32, false, true});
    return int(g.tensors.size()) - 1;
  }
  int virt(const std::string& name, dims_t dims, sdpa_type t = dtype::fp32) {
    dims_t st = packed(dims);
    return virt_strided(name, std::move(dims), std::move(st), t);
  }
  int virt_strided(const std::string& name, dims_t dims, dims_t strides, sdpa_type t) {
    g.tensors.push_back({name, next_uid++, std::move(dims), std::move(strides), t, true, false});
    return int(g.tensors.size()) - 1;
  }
  const dims_t& dims(int t) const { return g.tensors[size_t(t)].dims; }

  void op(sdpa_op_kind k, sdpa_mode m, int x, int b, int t, int y, sdpa_type compute = dtype::fp32,
          int64_t axis = -1) {
    g.ops.push_back({k, m, x, b, t, y, compute, axis});
  }
  void pw(sdpa_mode m, int x, int b, int y) { op(sdpa_op_kind::pointwise, m, x, b, -1, y); }
  int pw(const std::string& name, sdpa_mode m, int x, int b = -1) {
    const int y = virt(name, dims(x));
    pw(m, x, b, y);
    return y;
  }
  void matmul(int a, int b, int c) { op(sdpa_op_kind::matmul, sdpa_mode::none, a, b, -1, c); }
  void reduce(sdpa_mode m, int x, int y) { op(sdpa_op_kind::reduction, m, x, -1, -1, y); }
  void reshape(int x, int y) { op(sdpa_op_kind::reshape, sdpa_mode::none, x, -1, -1, y); }

  // x with the keys after each query set to -inf (top-left causal mask), as the frontend's
  // diagonal band mask builds it: int32 row/column indices, a boolean comparison, a select.
  int causal_mask(int x) {
    const int neg = scalar("neg_inf", u_neg_inf);
    const int row = virt("row_index", dims(x), dtype::int32);
    op(sdpa_op_kind::pointwise, sdpa_mode::gen_index, x, -1, -1, row, dtype::fp32, 2);
    const int col = virt("col_index", dims(x), dtype::int32);
    op(sdpa_op_kind::pointwise, sdpa_mode::gen_index, x, -1, -1, col, dtype::fp32, 3);
    const int keep = virt("causal_keep", dims(x), sdpa_boolean);
    op(sdpa_op_kind::pointwise, sdpa_mode::cmp_ge, row, col, -1, keep, sdpa_boolean);
    const int y = virt(g.tensors[size_t(x)].name + "_masked", dims(x));
    // select(x, b, t): y = t ? x : b
    op(sdpa_op_kind::pointwise, sdpa_mode::binary_select, x, neg, keep, y);
    return y;
  }
};

} // namespace

sdpa_graph describe_forward(const attention_shape& s, dtype io_type, bool generate_stats) {
  builder g;
  const int64_t B = s.batch, H = s.heads, KH = s.kv_heads, Sq = s.seq_q, Sk = s.seq_k,
                D = s.head_dim;
  const dims_t sdims = {B, H, Sq, Sk}, rdims = {B, H, Sq, 1};
  const int q = g.io("Q", u_q, {B, H, Sq, D}, bshd_strides(H, Sq, D), io_type);
  const int kt = g.io("K^T", u_k, {B, KH, D, Sk}, bshd_strides_t(KH, Sk, D), io_type);
  const int v = g.io("V", u_v, {B, KH, Sk, D}, bshd_strides(KH, Sk, D), io_type);
  const int o = g.io("O", u_o, {B, H, Sq, D}, bshd_strides(H, Sq, D), io_type);
  const int stats = generate_stats ? g.io("Stats", u_stats, rdims, packed(rdims), dtype::fp32) : -1;
  const int scale = g.scalar("attn_scale", u_scale);

  const int s1 = g.virt("S", sdims);
  g.matmul(q, kt, s1);
  int logits = g.pw("S_scaled", sdpa_mode::mul, s1, scale);
  if (s.causal)
    logits = g.causal_mask(logits);
  const int mx = g.virt("M", rdims);
  g.reduce(sdpa_mode::reduce_max, logits, mx);
  const int sub = g.pw("S-M", sdpa_mode::sub, logits, mx);
  const int ex = g.pw("E", sdpa_mode::exp, sub);
  const int sum = g.virt("L", rdims);
  g.reduce(sdpa_mode::reduce_add, ex, sum);
  if (generate_stats) {
    const int lg = g.pw("log_L", sdpa_mode::log, sum);
    g.pw(sdpa_mode::add, mx, lg, stats);
  }
  // The second matmul's A operand in the I/O type: cuDNN's fused engines match no other.
  const int p = g.virt("P", sdims, io_type);
  g.pw(sdpa_mode::div, ex, sum, p);
  g.matmul(p, v, o);
  return std::move(g.g);
}

namespace {

struct backward_io {
  int q, kt, vt, o, d_o, stats, dq, dk, dv, scale, one, sum, dq_accum;
};

backward_io declare_backward_io(builder& g, const attention_shape& s, dtype io_type) {
  const int64_t B = s.batch, H = s.heads, KH = s.kv_heads, Sq = s.seq_q, Sk = s.seq_k,
                D = s.head_dim;
  const dims_t rdims = {B, H, Sq, 1};
  backward_io t{};
  t.q = g.io("Q", u_q, {B, H, Sq, D}, bshd_strides(H, Sq, D), io_type);
  t.kt = g.io("K^T", u_k, {B, KH, D, Sk}, bshd_strides_t(KH, Sk, D), io_type);
  t.vt = g.io("V^T", u_v, {B, KH, D, Sk}, bshd_strides_t(KH, Sk, D), io_type);
  t.o = g.io("O", u_o, {B, H, Sq, D}, bshd_strides(H, Sq, D), io_type);
  t.d_o = g.io("dO", u_do, {B, H, Sq, D}, bshd_strides(H, Sq, D), io_type);
  t.stats = g.io("Stats", u_stats, rdims, packed(rdims), dtype::fp32);
  t.dq = g.io("dQ", u_dq, {B, H, Sq, D}, bshd_strides(H, Sq, D), io_type);
  t.dk = g.io("dK", u_dk, {B, KH, Sk, D}, bshd_strides(KH, Sk, D), io_type);
  t.dv = g.io("dV", u_dv, {B, KH, Sk, D}, bshd_strides(KH, Sk, D), io_type);
  t.scale = g.scalar("attn_scale", u_scale);
  t.one = g.scalar("one", u_one);
  t.sum = g.io("softmax_sum", u_sum, rdims, packed(rdims), dtype::fp32);
  t.dq_accum = g.io("dQ_accum", u_dq_accum, {B, H, Sq, D}, packed({B, H, Sq, D}), dtype::fp32);
  return t;
}

// out = x^T y for scores x [B,H,Sq,Sk] (dV = P^T dO, dK = dS^T Q): the transposed view in the I/O
// type, per query head, then summed over each GQA group.
void add_transposed_product(builder& g, int x, int y, int out, const attention_shape& s,
                            dtype io_type, const std::string& name) {
  const int64_t B = s.batch, H = s.heads, Sq = s.seq_q, Sk = s.seq_k;
  const int xt =
      g.virt_strided(name + "^T", {B, H, Sk, Sq}, {H * Sq * Sk, Sq * Sk, 1, Sk}, io_type);
  g.reshape(x, xt);
  if (s.heads == s.kv_heads) {
    g.matmul(xt, y, out);
    return;
  }
  const std::string grad = name == "P" ? "dV" : "dK";
  const int full = g.virt(grad + "_fullhead", {B, H, Sk, s.head_dim}, io_type);
  g.matmul(xt, y, full);
  g.reduce(sdpa_mode::reduce_add, full, out);
}

} // namespace

sdpa_graph describe_backward(const attention_shape& s, dtype io_type) {
  builder g;
  const backward_io t = declare_backward_io(g, s, io_type);
  const dims_t sdims = {s.batch, s.heads, s.seq_q, s.seq_k};
  // softmax_sum = rowsum(dO * O) * 1  (FlashAttention-2's D)
  const int do_o = g.pw("dO*O", sdpa_mode::mul, t.d_o, t.o);
  const int rs = g.virt("rowsum", {s.batch, s.heads, s.seq_q, 1});
  g.reduce(sdpa_mode::reduce_add, do_o, rs);
  g.pw(sdpa_mode::mul, rs, t.one, t.sum);
  // P = exp(mask(Q K^T * scale - Stats)): the mask after the subtraction, as the frontend does
  const int s1 = g.virt("S", sdims);
  g.matmul(t.q, t.kt, s1);
  const int s2 = g.pw("S_scaled", sdpa_mode::mul, s1, t.scale);
  int s3 = g.pw("S-Stats", sdpa_mode::sub, s2, t.stats);
  if (s.causal)
    s3 = g.causal_mask(s3);
  const int p = g.pw("P", sdpa_mode::exp, s3);
  add_transposed_product(g, p, t.d_o, t.dv, s, io_type, "P");
  // dS = (dO V^T - softmax_sum) * P * scale
  const int dp = g.virt("dP", sdims);
  g.matmul(t.d_o, t.vt, dp);
  const int t1 = g.pw("dP-sum", sdpa_mode::sub, dp, t.sum);
  const int t2 = g.pw("dP*P", sdpa_mode::mul, t1, p);
  const int ds = g.pw("dS", sdpa_mode::mul, t2, t.scale);
  add_transposed_product(g, ds, t.q, t.dk, s, io_type, "dS");
  // dQ = dS K, accumulated in fp32 in memory, then cast into our layout
  const int k = g.virt_strided("K", {s.batch, s.kv_heads, s.seq_k, s.head_dim},
                               bshd_strides(s.kv_heads, s.seq_k, s.head_dim), io_type);
  g.reshape(t.kt, k);
  g.matmul(ds, k, t.dq_accum);
  g.pw(sdpa_mode::identity, t.dq_accum, -1, t.dq);
  return std::move(g.g);
}

} // namespace accelbench::attention::cudnn
