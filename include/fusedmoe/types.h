// fusedmoe public API: plain descriptions of one MoE layer, its weights and its routing.
// No torch, no CUDA headers: this file is shared by the GPU library, the CPU reference,
// the CLI and the bindings.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

// The same declaration the CUDA runtime makes, so the API can name streams without
// including CUDA headers (redeclaring an identical typedef is legal C++).
struct CUstream_st;
typedef struct CUstream_st* cudaStream_t;

namespace fusedmoe {

/// Element types of the tensors the API sees.
enum class DType : int32_t {
  kBF16 = 0,
  kFP16 = 1,
  kFP32 = 2,
  kFP8E4M3 = 3,  ///< float8_e4m3fn: no infinities, max 448, NaN = 0x7F/0xFF
  kInt32 = 4,
  kUInt8 = 5,
};

/// The gated activation between the two GEMMs: a[:, j] = act(h[:, j]) * h[:, I + j]
/// where h = x . w13^T holds the gate half first, then the up half (vLLM convention).
enum class Activation : int32_t {
  kSiluAndMul = 0,      ///< silu(g) = g / (1 + exp(-g))
  kGeluAndMul = 1,      ///< exact gelu: 0.5 g (1 + erf(g / sqrt 2))
  kGeluTanhAndMul = 2,  ///< tanh approximation of gelu
};

/// How a checkpoint stores the expert weights. docs/FORMATS.md documents each with an example.
enum class WeightFormat : int32_t {
  kDense = 0,          ///< bf16/fp16 in the activation dtype: w13[E,2I,H], w2[E,H,I]
  kFP8PerTensor = 1,   ///< e4m3 weights, one fp32 scale per expert: scales[E]
  kFP8PerChannel = 2,  ///< e4m3 weights, one fp32 scale per output row: scales[E,N]
  kFP8Block = 3,       ///< e4m3 weights, fp32 scales per 128x128 block: [E,ceil(N/128),ceil(K/128)]
  kGPTQ = 4,           ///< int32 qweight[E,K/p,N] packed along K, qzeros[E,G,N/p], scales[E,G,N], g_idx[E,K]
  kAWQ = 5,            ///< int32 qweight[E,K,N/8] packed along N in order 0,2,4,6,1,3,5,7, qzeros, scales
  kMoeWNA16 = 6,       ///< vLLM moe_wna16: uint8 qweight[E,N,K*b/8], scales[E,N,K/g], qzeros[E,N*b/8,K/g]
};

/// How activations are quantized before an FP8 GEMM (both x before GEMM1 and the
/// activation output before GEMM2). Integer weight-only and dense formats use kNone. A
/// dynamic scale is amax / 448 but at least 2^-64 (1 for an all-zero span; docs/FORMATS.md).
enum class ActQuant : int32_t {
  kNone = 0,               ///< activations stay in bf16/fp16
  kPerTensorDynamic = 1,   ///< one e4m3 scale for the whole tensor, amax / 448, computed per call
  kPerTensorStatic = 2,    ///< one e4m3 scale from the checkpoint (input_scale of each projection)
  kPerToken = 3,           ///< one scale per row (token), amax(row) / 448
  kPerGroup = 4,           ///< one scale per row and 128 columns (DeepSeek-V3 1x128 groups)
};

/// Router score function.
enum class ScoringFunc : int32_t {
  kSoftmax = 0,  ///< softmax over all experts
  kSigmoid = 1,  ///< element-wise sigmoid (DeepSeek-V3, Llama-4)
};

/// Which projection a weight tensor belongs to.
enum class Projection : int32_t {
  kW13 = 0,  ///< gate and up: N = 2I output rows, K = H
  kW2 = 1,   ///< down: N = H output rows, K = I
};

/// The sizes of one layer on this GPU.
struct ProblemShape {
  int64_t m = 0;                 ///< tokens (0 is valid: empty output)
  int64_t hidden = 0;            ///< H
  int64_t inter = 0;             ///< I, intermediate size per expert on this GPU (full I / tp)
  int32_t num_experts = 0;       ///< E, experts whose weights this GPU holds
  int32_t topk = 0;              ///< experts per token
  int32_t global_num_experts = 0;  ///< experts the router chooses among; 0 means num_experts
};

/// Routing from router logits to (topk_ids, topk_weights). Ties between equal scores go to
/// the lower expert (or group) index.
struct RoutingConfig {
  ScoringFunc scoring = ScoringFunc::kSoftmax;
  bool renormalize = false;  ///< divide the k chosen weights by their sum
  /// DeepSeek grouped top-k: experts form n_group contiguous groups; only the topk_group
  /// groups with the best group score are eligible. 0 disables grouping.
  int32_t n_group = 0;
  int32_t topk_group = 0;
  /// Optional [global_E] fp32 bias added to the scores for choosing experts only (DeepSeek-V3
  /// e_score_correction_bias); the weights are the unbiased scores. With a bias, a group's
  /// score is the sum of its two best biased scores, without one it is the best score.
  const float* correction_bias = nullptr;
  float routed_scaling_factor = 1.0f;  ///< multiplies the final weights
};

/// Quantization parameters of the expert weights (shared by w13 and w2).
struct QuantParams {
  WeightFormat format = WeightFormat::kDense;
  /// Integer formats: 4 or 8 (AWQ: 4). Ignored for dense and FP8 formats.
  int32_t bits = 4;
  /// Integer formats: input channels per scale group, 32/64/128/..., or -1 for one group per
  /// row (per-channel). Must divide K of both projections.
  int32_t group_size = 128;
  /// Integer formats: zero points present. Without them the zero is the midpoint 2^(bits-1).
  bool has_zeros = false;
  /// GPTQ act-order: g_idx[E,K] maps each input channel to its group, as GPTQ writes it (the
  /// channel at position i of its quantization order is in group i / group_size, so every
  /// group holds group_size channels; prepare_weights checks this).
  bool has_g_idx = false;
  /// GPTQ only: the classic format stores zero - 1 (true zero = stored + 1); the gptq_v2
  /// format stores the zero itself.
  bool gptq_zeros_minus_one = true;
  /// dtype of the integer formats' scales: kFP16, kBF16 or kFP32. FP8 scales are always fp32.
  DType scale_dtype = DType::kFP16;
  /// FP8 only: how activations are quantized (see ActQuant).
  ActQuant act_quant = ActQuant::kNone;
  /// FP8 block format and ActQuant::kPerGroup: block edge along N and K (DeepSeek: 128).
  int32_t block_n = 128;
  int32_t block_k = 128;
};

/// One projection's tensors as a checkpoint holds them (vLLM parameter names in brackets).
/// Which pointers are needed depends on QuantParams; describe_weight_tensors() lists them.
struct ProjectionWeights {
  const void* weight = nullptr;      ///< [w13_weight | w13_qweight]
  const void* scales = nullptr;      ///< [w13_weight_scale | w13_weight_scale_inv | w13_scales]
  const void* zeros = nullptr;       ///< [w13_qzeros]
  const int32_t* g_idx = nullptr;    ///< [w13_g_idx], GPTQ act-order (prepared weights: the column order, FORMATS.md)
  const float* input_scale = nullptr;  ///< [w13_input_scale], FP8 kPerTensorStatic: one fp32
};

/// All expert weights of a layer in a checkpoint format.
struct MoeWeights {
  QuantParams quant;
  ProjectionWeights w13;  ///< gate rows first, then up rows
  ProjectionWeights w2;
};

/// Everything a layer call needs besides the weights. Pointers refer to device memory for
/// run() and to host memory for the CPU reference.
struct MoeInputs {
  ProblemShape shape;
  Activation activation = Activation::kSiluAndMul;
  DType act_dtype = DType::kBF16;  ///< dtype of x and out: kBF16 or kFP16
  const void* x = nullptr;         ///< [m, hidden]

  /// Either router logits (routing runs inside the layer) ...
  const void* router_logits = nullptr;  ///< [m, global_num_experts]
  DType router_dtype = DType::kFP32;    ///< kFP32, kBF16 or kFP16
  RoutingConfig routing;
  /// ... or a routing already made: ids in [0, global_num_experts) and their weights.
  const int32_t* topk_ids = nullptr;     ///< [m, topk]
  const float* topk_weights = nullptr;   ///< [m, topk]

  /// Expert parallelism: [global_num_experts] local expert index or -1 where the expert lives
  /// on another GPU (its pairs are skipped). nullptr: expert i is local expert i. The GPU
  /// does not read the map on the host: an entry outside [-1, num_experts) skips its pairs
  /// there as -1 does (the CPU reference rejects it by name).
  const int32_t* expert_map = nullptr;
  /// Multiply the routed weight into GEMM1's output instead of GEMM2's (Llama-4; topk = 1).
  bool apply_router_weight_on_input = false;
};

/// Shape and dtype of one tensor the API expects.
struct TensorSpec {
  std::string name;             ///< e.g. "w13.qweight"
  DType dtype = DType::kFP32;
  std::vector<int64_t> dims;    ///< row-major
  int64_t numel() const;
  int64_t bytes() const;
};

/// Size of one element (1 for fp8/uint8, 4 for int32/fp32, 2 for bf16/fp16).
int64_t dtype_size(DType dtype);

const char* to_string(DType v);
const char* to_string(Activation v);
const char* to_string(WeightFormat v);
const char* to_string(ActQuant v);
const char* to_string(ScoringFunc v);
const char* to_string(Projection v);

}  // namespace fusedmoe
