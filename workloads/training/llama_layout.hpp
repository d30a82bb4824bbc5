#pragma once
// The one layout of the Llama model's buffers, shared by the CPU model (llama.cpp) and the CUDA
// one (cuda/llama_cuda.cpp), as llm.c shares its tensor structs between its C and CUDA files:
//  - parameters and gradients: one flat buffer each, same offsets (parameter_layout, llama.hpp):
//    embedding, 9 tensors per block, final norm, LM head; where the LM head's, each block's and
//    the embedding's gradients start is where data-parallel backward announces them final;
//  - the backward scratch (backward_scratch, below), shared by all blocks;
//  - each block's saved activations: block_acts (llama.hpp).
// The layout is of floats, on whichever side the buffers live: base pointers are host or device.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "workloads/training/llama.hpp"

namespace accelbench::training {

// One decoder block's tensors (parameters or gradients: the same offsets from another base).
struct block_tensors {
  float *attn_norm, *wq, *wk, *wv, *wo, *mlp_norm, *w1, *w3, *w2;
};

// The backward pass's scratch for BT = B*T tokens, shared by all blocks: dres, dxn, dq, datt
// [BT*C]; dk, dv [BT*KVH*HD]; dh1, dh3, dg [BT*F]; with_delta: then delta [B*NH*T] (the CUDA
// attention backward's rowsum(dO*O); the CPU kernel keeps it in its own workspace). Forward uses
// dres as its [BT,C] temporary: it is free until backward starts.
struct backward_scratch {
  float *dres, *dxn, *dq, *datt, *dk, *dv, *dh1, *dh3, *dg, *delta;
};

class llama_layout {
public:
  llama_layout(const model_config& cfg, const llama_options& opt);

  const std::vector<param_tensor>& tensors() const { return m_tensors; }
  size_t num_params() const { return m_num_params; }
  int64_t layers() const { return m_layers; }

  // Offsets in floats into the parameter (or gradient) buffer. The embedding, final norm and LM
  // head exist only in models with the head.
  size_t tok_emb() const { return m_tensors.front().offset; }
  size_t final_norm() const { return m_tensors[m_tensors.size() - 2].offset; }
  size_t lm_head() const { return m_tensors.back().offset; }
  // Where block l's tensors start (its attn_norm): from here on, every gradient is final once
  // backward has finished block l.
  size_t block_offset(int64_t l) const { return m_tensors[first_of_block(l)].offset; }
  block_tensors block(float* base, int64_t l) const;

  // Floats of the backward scratch (see backward_scratch) and its arrays carved from `base`.
  size_t scratch_floats(bool with_delta) const;
  backward_scratch scratch(float* base, bool with_delta) const;

private:
  size_t first_of_block(int64_t l) const { return (m_with_head ? 1 : 0) + size_t(l) * 9; }
  model_config m_cfg;
  llama_options m_opt;
  int64_t m_layers = 0;
  bool m_with_head = true;
  std::vector<param_tensor> m_tensors;
  size_t m_num_params = 0;
};

} // namespace accelbench::training
