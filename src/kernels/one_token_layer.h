// The one-token int4 layer (wna16_one_token_layer.cu): both expert GEMMs and the combine of one
// token in one cooperative launch (geometry: one_token_layer_geometry.h). Its own header, so
// that launch.h (which every kernel includes) stays as it is.
#pragma once

#include "launch.h"
#include "one_token_layer_geometry.h"

namespace fusedmoe::kernels {

struct OneTokenLayerParams {
  ElemType elem = ElemType::kBF16;
  GatedAct act = GatedAct::kSilu;
  const void* x = nullptr;           // [H], 16-byte aligned
  void* out = nullptr;               // [H]; may be x itself (x is read before out is written)
  void* intermediate = nullptr;      // [topk, I] workspace
  const int32_t* topk_ids = nullptr;  // [topk] local expert ids; ids outside [0, num_experts) are skipped
  const float* topk_weights = nullptr;  // [topk]
  int32_t num_experts = 0;
  int32_t topk = 0;
  int64_t hidden = 0;
  int64_t inter = 0;
  int32_t ctas = 0;                  // CTAs of the launch: the device's SMs (one per SM)
  QuantWeightsView w13;              // prepared int4, [E, 2I, H]
  QuantWeightsView w2;               // prepared int4, [E, H, I]
};

/// The plan the launch runs for p's shape (fits false: the launch refuses it).
OneTokenLayerPlan one_token_layer_plan_for(const OneTokenLayerParams& p);

/// out = sum over the token's slots s of w_s * (w2[e_s] . act(w13[e_s] . x)), one launch,
/// deterministic (fixed summation order). int4 weights whose groups are a power-of-two count of
/// whole 128-k blocks or one per row, H and I multiples of 128, no expert map and no act-order
/// (the planner's one_token_layer, which also leaves top-1 layers to the GEMVs).
/// cudaErrorInvalidValue for anything else.
cudaError_t launch_wna16_one_token_layer(const OneTokenLayerParams& p, cudaStream_t stream);

}  // namespace fusedmoe::kernels
