// train.llama on the GPU: the model (llama_cuda.hpp), its cuBLASLt matmuls and the training step,
// in two recipes (recipe_name): fp32, and bf16-mixed-v1. The forward and backward passes follow
// llama_model::forward/backward line by line.
// Its parts: llama_cuda_impl.hpp (the model's state), llama_buffers.cpp, llama_forward.cpp,
// llama_backward.cpp, lt_gemm.cpp; here the choices of recipe and attention, the optimizer step
// and the public calls.
#include "workloads/training/cuda/llama_cuda.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <functional>

#include <fmt/format.h>

#include "harness/core/error.hpp"
#include "harness/device/device.hpp"
#include "workloads/training/cuda/llama_cuda_impl.hpp"

namespace accelbench::training::cuda {

namespace {

constexpr int64_t kNativeMaxHeadDim = 256; // flash_native.cu's register tiles

} // namespace

std::string attention_impl(const model_config& cfg, const llama_options& opt) {
  if (opt.dtype != compute_dtype::bf16)
    return "native";
  return attention::cudnn::unsupported_reason(attn_shape(cfg, opt), opt.dtype, true).empty()
             ? "cudnn"
             : "native";
}

std::string recipe_name(const llama_options& opt) {
  return bf16_recipe(opt) ? "bf16-mixed-v1" : "fp32";
}

std::string unavailable_reason(const model_config& cfg, const llama_options& opt) {
  if (attention_impl(cfg, opt) == "native" && cfg.head_dim() > kNativeMaxHeadDim)
    return fmt::format(
        "train.llama on CUDA: the native attention kernel supports head_dim up to {} (model {} has "
        "head_dim {})",
        kNativeMaxHeadDim, cfg.name, cfg.head_dim());
  std::string why;
  if (!device::cuda_available(&why))
    return "CUDA backend: " + why;
  const auto st = device::query_cuda(true);
  return device::memory_refusal(device_plan(cfg, opt).total(), st.gpus.front().free_memory);
}

void llama_cuda::impl::make_attention() {
  if (attn == "cudnn") {
    try {
      sdpa_fwd = std::make_unique<attention::cudnn::sdpa_forward>(attn_shape(cfg, opt), opt.dtype);
      sdpa_bwd = std::make_unique<attention::cudnn::sdpa_backward>(attn_shape(cfg, opt), opt.dtype);
    } catch (const backend_error& e) {
      // cuDNN has no engine for this shape on this GPU: our kernel runs attention instead (in
      // bf16 too), and the run record says why.
      sdpa_fwd.reset();
      sdpa_bwd.reset();
      attn = "native";
      attn_note = e.what();
    }
  }
  if (attn == "native" && cfg.head_dim() > kNativeMaxHeadDim)
    throw backend_error(fmt::format(
        "train.llama on CUDA: the native attention kernel supports head_dim up to {} "
        "(got {}){}",
        kNativeMaxHeadDim, cfg.head_dim(), attn_note.empty() ? "" : "; cuDNN: " + attn_note));
}

void llama_cuda::impl::check_tokens(const int32_t* inputs, const int32_t* targets) const {
  const int64_t v = cfg.vocab_size;
  for (int64_t i = 0; i < bt(); i++)
    if (inputs[i] < 0 || inputs[i] >= v || targets[i] < 0 || targets[i] >= v)
      throw input_error(
          fmt::format("train.llama: token id {} is outside the vocabulary of {} tokens",
                      inputs[i] < 0 || inputs[i] >= v ? inputs[i] : targets[i], v));
}

// One launch: clipping from the norm's partial sums (null: none) and AdamW over every
// parameter, writing the bf16 weight copies in the bf16 recipe.
void llama_cuda::impl::optimizer(double lr, const adamw_config& c, const double* norm,
                                 double max_norm, float* norm_out) {
  adam_t++;
  K::adamw_args a{};
  a.p = params.as<float>();
  a.m = adam_m.as<float>();
  a.v = adam_v.as<float>();
  a.g = grads.as<float>();
  a.p_bf16 = bf16 ? params_bf16.as<uint16_t>() : nullptr;
  a.chunks = chunks.as<K::adamw_chunk>();
  a.chunk_count = chunk_count;
  a.lr = float(lr);
  a.b1 = float(c.beta1);
  a.b2 = float(c.beta2);
  a.eps = float(c.eps);
  a.wd = float(c.weight_decay);
  a.bc1 = float(1.0 - std::pow(c.beta1, double(adam_t)));
  a.bc2 = float(1.0 - std::pow(c.beta2, double(adam_t)));
  a.norm_partials = norm;
  a.partials_count = kPartials;
  a.max_norm = max_norm;
  a.norm_out = norm_out;
  K::adamw_fused(a, stream);
}

llama_cuda::llama_cuda(const model_config& cfg, const llama_options& opt) {
  cfg.validate();
  if (opt.batch <= 0 || opt.seq <= 0)
    throw input_error(fmt::format(
        "train.llama: batch and seq must be positive, got batch {}, seq {}", opt.batch, opt.seq));
  m = std::make_unique<impl>(cfg, opt);
}
llama_cuda::~llama_cuda() = default;

size_t llama_cuda::num_params() const { return m->z.params; }
float* llama_cuda::device_grads() { return m->grads.as<float>(); }
void* llama_cuda::stream() const { return m->stream; }
void llama_cuda::set_grad_ready(std::function<void(size_t)> fn) {
  m->on_grad_ready = std::move(fn);
}
const float* llama_cuda::host_params(std::vector<float>& buf) {
  buf.resize(m->z.params);
  download_parameters(buf.data());
  return buf.data();
}
const std::vector<param_tensor>& llama_cuda::tensors() const { return m->layout.tensors(); }
const model_config& llama_cuda::config() const { return m->cfg; }
const llama_options& llama_cuda::options() const { return m->opt; }
void llama_cuda::synchronize() { m->wait("train.llama step"); }
nlohmann::json llama_cuda::step_facts() { return device::clock_facts(m->device); }
std::string llama_cuda::recipe() const { return recipe_name(m->opt); }
int64_t llama_cuda::host_waits() const { return m->host_waits; }

std::string llama_cuda::implementation() const {
  const bool bf16 = m->bf16;
  std::string g = bf16 ? "cuBLASLt, bf16 in / bf16 out (weight gradients: bf16 in, accumulated "
                         "into fp32), fp32 accumulation (CUBLAS_COMPUTE_32F), residual adds in "
                         "the epilogue"
                       : "cuBLASLt, fp32 (CUBLAS_COMPUTE_32F, no TF32)";
  std::string a =
      m->attn == "cudnn"
          ? "cuDNN fused SDPA (bf16): " + m->sdpa_fwd->engine() + " / " + m->sdpa_bwd->engine()
          : std::string("accelbench native FlashAttention-2-style "
                        "kernel (") +
                (bf16 ? "bf16" : "fp32") + ")" +
                (m->attn_note.empty() ? std::string()
                                      : " (cuDNN could not run it: " + m->attn_note + ")");
  std::string other = bf16 ? "accelbench CUDA kernels (bf16 in/out, fp32 statistics, casts fused)"
                           : "accelbench CUDA kernels (fp32)";
  return "recipe " + recipe() + "; matmuls: " + g + "; attention: " + a +
         "; other layers: " + other +
         "; optimizer: one fused AdamW launch with on-device gradient-norm clipping (fp32 "
         "master weights and moments)";
}

void llama_cuda::init_parameters(uint64_t seed) {
  std::vector<float> p(m->z.params);
  const int64_t n = m->bt() * m->cfg.dim;
  std::vector<float> x0, probe;
  if (!m->opt.with_head) {
    x0.resize(size_t(n));
    probe.resize(size_t(n));
  }
  init_parameter_values(m->cfg, m->layout.tensors(), seed, p.data(),
                        x0.empty() ? nullptr : x0.data(), probe.empty() ? nullptr : probe.data(),
                        n);
  upload_parameters(p.data());
  if (!m->opt.with_head) {
    m->host_waits += 2; // the two uploads below (pageable copies)
    if (m->bf16) {      // x0 rounded to bf16 once: the bf16 recipe's residual stream starts there
      device::device_buffer tmp(uint64_t(n) * 4);
      tmp.upload(x0.data(), uint64_t(n) * 4);
      K::to_bf16(m->res16(0), tmp.as<float>(), n, m->stream);
      m->wait("train.llama init");
    } else {
      m->resid.upload(x0.data(), uint64_t(n) * 4);
    }
    m->head_f32.get() ? m->head_f32.upload(probe.data(), uint64_t(n) * 4)
                      : m->head.upload(probe.data(), uint64_t(n) * 4);
  }
  m->adam_m.zero();
  m->adam_v.zero();
  m->adam_t = 0;
  m->pending_clip = 0;
  m->have_forward = false;
}

void llama_cuda::upload_parameters(const float* host) {
  m->host_waits++;
  m->params.upload(host, m->z.params * 4);
  m->refresh_weights_bf16();
}
void llama_cuda::download_parameters(float* host) const {
  m->host_waits++;
  m->params.download(host, m->z.params * 4);
}
void llama_cuda::download_grads(float* host) const {
  m->host_waits++;
  m->grads.download(host, m->z.params * 4);
}
void llama_cuda::zero_grad() {
  device::memset_async(m->grads.get(), 0, m->z.params * 4, m->stream);
}

void llama_cuda::forward_async(const int32_t* inputs, const int32_t* targets, float loss_weight,
                               int64_t slot) {
  auto& I = *m;
  if (slot >= I.log_slots)
    throw error(
        fmt::format("train.llama: step log slot {} beyond the {} reserved", slot, I.log_slots));
  if (I.opt.with_head) {
    I.check_tokens(inputs, targets);
    const uint64_t bytes = uint64_t(I.bt()) * 4;
    auto s = static_cast<cudaStream_t>(I.stream);
    device::check_cuda(cudaMemcpyAsync(I.inputs(), inputs, bytes, cudaMemcpyHostToDevice, s),
                       "train.llama token upload");
    device::check_cuda(cudaMemcpyAsync(I.targets(), targets, bytes, cudaMemcpyHostToDevice, s),
                       "train.llama token upload");
  }
  I.bf16 ? I.forward_blocks16() : I.forward_blocks32();
  I.forward_loss(I.slot_at(slot), loss_weight);
  I.have_forward = true;
}

float llama_cuda::forward(const int32_t* inputs, const int32_t* targets) {
  auto& I = *m;
  if (I.opt.with_head) {
    I.check_tokens(inputs, targets);
    I.host_waits++; // a copy from pageable memory
    I.tokens.upload(inputs, uint64_t(I.bt()) * 4);
    I.tokens.upload(targets, uint64_t(I.bt()) * 4, uint64_t(I.bt()) * 4);
  }
  device::memset_async(I.slot_at(-1), 0, 4, I.stream);
  I.bf16 ? I.forward_blocks16() : I.forward_blocks32();
  I.forward_loss(I.slot_at(-1), 1.0f);
  I.have_forward = true;
  float loss = 0;
  I.host_waits++;
  I.scalars.download(&loss, 4);
  return loss;
}

void llama_cuda::backward(float loss_scale) {
  auto& I = *m;
  if (!I.have_forward)
    throw error("train.llama: backward() called without a forward()");
  const float dloss = loss_scale / float(I.bt());
  I.bf16 ? I.backward16(dloss) : I.backward32(dloss);
  // The logits were turned into dlogits in place: a second backward needs a new forward.
  I.have_forward = false;
}

double llama_cuda::clip_grad_norm(double max_norm) {
  auto& I = *m;
  K::dot_partials(I.norm_partials.as<double>(), kPartials, I.grads.as<float>(), nullptr,
                  (int64_t)I.z.params, I.stream);
  std::vector<double> h(kPartials);
  I.host_waits++;
  I.norm_partials.download(h.data(), uint64_t(kPartials) * 8);
  double s = 0;
  for (double x : h)
    s += x;
  I.pending_clip = max_norm; // applied inside the next optimizer step, from the same partials
  return std::sqrt(s);
}

void llama_cuda::adamw_step(double lr, const adamw_config& c) {
  auto& I = *m;
  const bool clip = I.pending_clip > 0;
  I.optimizer(lr, c, clip ? I.norm_partials.as<double>() : nullptr, I.pending_clip, nullptr);
  I.pending_clip = 0;
}

void llama_cuda::step_async(double max_norm, double lr, const adamw_config& c, int64_t slot) {
  auto& I = *m;
  K::dot_partials(I.norm_partials.as<double>(), kPartials, I.grads.as<float>(), nullptr,
                  (int64_t)I.z.params, I.stream);
  I.optimizer(lr, c, I.norm_partials.as<double>(), max_norm, I.slot_at(slot) + 1);
}

void llama_cuda::reserve_step_log(int64_t slots) {
  auto& I = *m;
  I.log = device::device_buffer(uint64_t(std::max<int64_t>(1, slots)) * 8);
  device::memset_async(I.log.get(), 0, I.log.size(), I.stream);
  I.log_slots = slots;
}

std::vector<float> llama_cuda::read_step_log() const {
  std::vector<float> out(size_t(2 * m->log_slots));
  m->host_waits++;
  if (!out.empty())
    m->log.download(out.data(), out.size() * 4);
  return out;
}

} // namespace accelbench::training::cuda
