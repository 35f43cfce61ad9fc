// Host-side launchers of the kernels in src/kernels/. Plain pointers and sizes only: device
// code does not see the public API, and the dispatcher (src/dense_layer.cpp) translates.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <type_traits>

#include "align_geometry.h"
#include "fp8_geometry.h"
#include "gate_up_layout.h"
#include "gemv_geometry.h"  // FUSEDMOE_HOST_DEVICE, the GEMVs' tiles, one-token split, int stages
#include "kernel_limits.h"

namespace fusedmoe::kernels {

enum class ElemType { kBF16, kFP16 };
enum class GatedAct { kSilu, kGelu, kGeluTanh };

/// f(std::integral_constant<GatedAct, act>{}): the activation as a compile-time constant, chosen
/// once per call (a kernel's epilogue per tile, a launcher per launch), so that each activation
/// gets its own unrolled code rather than a choice per value.
#if defined(__CUDACC__)
#pragma nv_exec_check_disable
#endif
template <typename F>
FUSEDMOE_HOST_DEVICE inline decltype(auto) dispatch_act(GatedAct act, F&& f) {
  switch (act) {
    case GatedAct::kGelu: return f(std::integral_constant<GatedAct, GatedAct::kGelu>{});
    case GatedAct::kGeluTanh: return f(std::integral_constant<GatedAct, GatedAct::kGeluTanh>{});
    case GatedAct::kSilu: break;
  }
  return f(std::integral_constant<GatedAct, GatedAct::kSilu>{});
}

enum class RoutingLogits { kFP32, kBF16, kFP16 };

/// routing_topk: router logits [m, E] -> topk_ids / topk_weights [m, topk].
struct RoutingParams {
  const void* logits = nullptr;
  RoutingLogits logits_dtype = RoutingLogits::kFP32;
  int64_t m = 0;
  int32_t num_experts = 0;  // global experts, <= 1024
  int32_t topk = 1;         // <= 32
  bool softmax = true;      // else sigmoid
  bool renormalize = false;
  int32_t n_group = 0;      // 0: no grouping; else <= 32, dividing num_experts
  int32_t topk_group = 0;
  const float* correction_bias = nullptr;  // [E] or nullptr
  float routed_scaling_factor = 1.0f;
  int32_t* topk_ids = nullptr;
  float* topk_weights = nullptr;
};
cudaError_t launch_routing_topk(const RoutingParams& p, cudaStream_t stream);

/// smxx_align_tokens: groups the m * topk (token, slot) pairs by local expert.
struct AlignParams {
  const int32_t* topk_ids = nullptr;    // [pairs]
  const int32_t* expert_map = nullptr;  // [global_experts] or nullptr
  int64_t pairs = 0;                    // m * topk (< 2^31)
  int32_t global_experts = 0;
  int32_t num_experts = 0;              // local experts, <= 1024
  int32_t* expert_counts = nullptr;     // [E] out
  int64_t* expert_offsets = nullptr;    // [E + 1] out, unpadded prefix sums
  int32_t* sorted_pairs = nullptr;      // [pairs] out: pair indices grouped by expert
  int32_t* active_experts = nullptr;    // [E + 1] out: experts with pairs, ascending; [E] = their count
  int32_t* block_counts = nullptr;      // [align_block_counts_size()] scratch (multi-CTA only)
  int32_t* row_of_pair = nullptr;       // [pairs] out, optional: each pair's position in sorted_pairs, -1
                                        // where its expert is not local
  void* skipped_rows = nullptr;         // optional [pairs, skipped_row_bytes], rows by pair index (so the
  int64_t skipped_row_bytes = 0;        // output of a top-1 layer whose down GEMV writes it): the rows of
                                        // skipped pairs are zeroed; pairs <= kZeroSkippedMaxPairs only
  bool ids_from_predecessor = false;    // topk_ids written by the kernel just before (the router, which
                                        // lets its successor launch at its start): the one-warp and one-CTA
                                        // kernels launch as its programmatic dependents and wait for it
                                        // before their first id load (the multi-CTA kernel: stream order)
};
/// beside_predecessor: the one-warp or one-CTA kernel (pairs up to kSingleCtaPairs) may start
/// while the kernel before it runs, which must write nothing it reads (the small-M FP8 path's x
/// quantization past kWarpAlignPairs pairs), and which lets its successors launch early; it ends
/// after that kernel, so that its successor's wait covers both. The multi-CTA kernel ignores it
/// (as it does p.ids_from_predecessor).
cudaError_t launch_align_tokens(const AlignParams& p, cudaStream_t stream, bool beside_predecessor = false);
/// The tables and bounds every align kernel needs (E in (0, kMaxExperts]; skipped_rows: 16-byte
/// rows and alignment, at most kZeroSkippedMaxPairs pairs), and for one warp's (align_warp.cuh,
/// launch_fp8_quantize's table) at most kWarpAlignPairs pairs.
inline bool align_params_ok(const AlignParams& p, bool one_warp) {
  if (p.num_experts <= 0 || p.num_experts > kMaxExperts || p.pairs < 0) return false;
  if (p.topk_ids == nullptr || p.expert_counts == nullptr || p.expert_offsets == nullptr || p.sorted_pairs == nullptr ||
      p.active_experts == nullptr) {
    return false;
  }
  if (p.skipped_rows != nullptr &&
      (p.pairs > kZeroSkippedMaxPairs || p.skipped_row_bytes <= 0 || p.skipped_row_bytes % 16 != 0 ||
       reinterpret_cast<uintptr_t>(p.skipped_rows) % 16 != 0)) {
    return false;
  }
  return !one_warp || p.pairs <= kWarpAlignPairs;
}

/// small_m_splitk: the experts' weight rows streamed through tensor-core MMAs with swapped
/// operands (16 weight rows x 8 tokens), each hit expert's rows read once per 8 * n_tiles of
/// its tokens. Gate-up mode computes
/// act(x.w_gate) * (x.w_up) for row pairs (j, I + j); down mode computes y = a.w2 * weight.
struct GroupedGemvParams {
  ElemType elem = ElemType::kBF16;
  bool gate_up = true;
  GatedAct act = GatedAct::kSilu;
  const void* x = nullptr;  // gate-up: x[m, K] read by token; down: a[pairs, K] read by sorted position
  const void* w = nullptr;  // gate-up: w13[E, 2 * n_out, K]; down: w2[E, n_out, K]
  void* out = nullptr;      // gate-up: a[pairs, n_out] by sorted position; down: y[pairs, n_out] by pair index
  int64_t n_out = 0;        // gate-up: I; down: H
  int64_t k = 0;            // gate-up: H; down: I (a multiple of 8)
  int32_t topk = 1;
  int32_t num_experts = 0;  // local E: active_experts[E] holds the live count
  int32_t max_active = 0;   // host-known bound on experts with pairs: min(E, pairs)
  const float* topk_weights = nullptr;  // [pairs]
  bool weight_on_input = false;         // multiply the routed weight in gate-up instead of down
  // The expert table: align's, or for a few tokens without align (expert_offsets == nullptr;
  // the planner's direct_table) the pairs as their own instances: instance s < max_active =
  // m * topk is pair s at sorted position s, of local expert active_experts[s] (the routing's
  // topk_ids, no expert map), skipped where that id is outside [0, num_experts): the skipped
  // instance's CTAs write zeros to its rows of out instead (gate-up: a[s], down: y[s]), so
  // that every row is defined; sorted_pairs = the identity (direct_pair_order()), at most
  // kMaxDirectPairs instances, expert_counts unread. Two tokens on one expert are two
  // instances: its weights are streamed once per instance. The dense and integer GEMVs take
  // it; fp8_gemv takes align's only.
  const int32_t* expert_counts = nullptr;
  const int64_t* expert_offsets = nullptr;
  const int32_t* sorted_pairs = nullptr;
  const int32_t* active_experts = nullptr;
  int32_t split_k = 1;      // warps of a CTA that share a row tile's K range: 1, 2, 4 or 8
  int32_t n_tiles = 1;      // 8-token MMA tiles per pass over the weights: 1 or 4 (wna16_gemv also 8, unsplit)
};
// Every small_m_splitk, fp8_gemv and wna16_gemv kernel takes this struct by value, and a
// changed layout changes their generated code (v18: per-channel fp8_gemv up to 5% slower; v21:
// one field cost fp8 decode up to 6%). Re-measure those kernels (scripts/ab_bench.sh against
// main) before changing the size here; a parameter one kernel family needs goes to its launcher.
static_assert(sizeof(GroupedGemvParams) == 128, "GroupedGemvParams' layout changed: see the comment above");
/// The launchers' check of the expert table: align's four arrays, or the direct table
/// (expert_offsets == nullptr) with its ids in active_experts, the identity order and one
/// instance per pair of whole tokens.
inline bool gemv_table_ok(const GroupedGemvParams& p) {
  if (p.active_experts == nullptr || p.sorted_pairs == nullptr) return false;
  if (p.expert_offsets == nullptr) return p.topk > 0 && p.max_active % p.topk == 0 && p.max_active <= kMaxDirectPairs;
  return p.expert_counts != nullptr;
}
/// The direct table's sorted_pairs on the current device: 0, 1, ..., kMaxDirectPairs - 1.
cudaError_t direct_pair_order(const int32_t** order);
/// The dense and wna16 GEMVs are compiled for this many resident CTAs per SM
/// (__launch_bounds__: at most 128 registers at 256 threads), which the planner's
/// kDenseSplitRule assumes. Unbounded, ptxas gave the dense split-2 kernels 136 registers
/// after a parameter was added (0cd93fc): one CTA per SM, decode up to 20% slower (PERF.md v21).
inline constexpr int32_t kGemvCtasPerSm = 2;
/// The dense down GEMV's shared-memory ring variant with one n-tile is compiled for this many
/// (at most 80 registers, 52 KiB of shared memory per CTA); with four n-tiles for 2.
inline constexpr int32_t kDenseRingCtasPerSm = 3;
/// Where the dense GEMV keeps its weights between load and MMA: registers (a two-block software
/// pipeline), or, down only, a cp.async ring in shared memory (PERF.md v30: more CTAs per SM,
/// for short K slices; the planner's dense_down_ring() picks).
enum class GemvStaging { kRegisters, kSharedRing };
/// gate_up_interleaved: gate-up reads w13's rows as gate_up_row() interleaves them (prepared
/// dense weights). An argument of this launcher only, not a GroupedGemvParams field: a field
/// changes the generated code of every fp8_gemv and wna16_gemv kernel (v18, v21), which never
/// read interleaved rows; so is `staging`.
cudaError_t launch_grouped_gemv(const GroupedGemvParams& p, bool gate_up_interleaved, GemvStaging staging,
                                cudaStream_t stream);
/// CTAs of the (dtype, projection, split_k, n_tiles, staging) instantiation that fit one SM
/// (cudaOccupancyMaxActiveBlocksPerMultiprocessor); the GPU tests hold it to the planner's counts.
cudaError_t grouped_gemv_resident_ctas(ElemType elem, bool gate_up, int32_t split_k, int32_t n_tiles,
                                       GemvStaging staging, int* ctas_per_sm);
/// The down GEMV for a single token with the top-k combine folded in (M = 1, top-k 4-8, dense
/// weights; launch_wna16_one_token_down for int4 ones): p.out is out's one row [n_out] (not
/// y), written whole (zeros where no expert is local); p.x the intermediate by sorted
/// position, p.topk_weights applied unless weight_on_input. A CTA covers one 16-row tile for
/// all of the token's experts.
cudaError_t launch_one_token_down(const GroupedGemvParams& p, cudaStream_t stream);

/// Prepared weight-only int4/int8 weights of one projection (N rows, K columns; docs/FORMATS.md,
/// "Prepared integer layout"): codes [E, N, kp * bits / 32] uint32 with kp = K rounded up to
/// 128, in 128-k blocks whose quarter q holds, for steps u = 0..3, the 8 codes of
/// k = 128 j + 32 u + 8 q + (0..7) (int4: one word per step, nibble i = k offset
/// {0,2,4,6,1,3,5,7}[i]; int8: two words per step, bytes in k order); scales [E, G, N]
/// (fp16, bf16 or fp32); zeros [E, G, N] true zero points (uint8 for int4, uint16 for int8:
/// GPTQ's stored zero + 1 reaches 2^bits) or nullptr (the midpoint 2^(bits-1)). The group of
/// k is k / group_size: act-order weights were prepared with K in group order (their input
/// columns permuted, QuantRepackParams::k_order).
enum class ScaleType { kFP16, kBF16, kFP32 };
struct QuantWeightsView {
  const uint32_t* codes = nullptr;
  const void* scales = nullptr;
  const void* zeros = nullptr;
  ScaleType scale_type = ScaleType::kFP16;
  int32_t bits = 4;          // 4 or 8
  int64_t group_size = 128;  // a multiple of 8 (wna16_gemv: 32, 64 or a multiple of 128), or K (one group per row)
  int64_t groups = 1;        // G
  int64_t n = 0;
  int64_t k = 0;
};
/// 32-bit words of one prepared row: K rounded up to 128, times bits / 32.
FUSEDMOE_HOST_DEVICE inline int64_t quant_row_words(int64_t k, int32_t bits) { return (k + 127) / 128 * 128 * bits / 32; }

/// The layouts the kernels that dequantize in registers read (wna16_gemv, wna16_grouped_gemm;
/// the planner's wna16_gemv_supports on QuantParams): int4 / int8, group_size > 0 of 32 or 64,
/// a multiple of 128 or one group per row.
FUSEDMOE_HOST_DEVICE inline bool wna16_register_layout(const QuantWeightsView& w) {
  const bool groups_ok = w.groups == 1 || w.group_size == 32 || w.group_size == 64 || w.group_size % 128 == 0;
  return (w.bits == 4 || w.bits == 8) && w.group_size > 0 && groups_ok;
}

/// wna16_gemv: small_m_splitk's weight streaming over prepared int4/int8 weights, dequantized
/// in registers to exact integers (q - zero) for the MMAs; each 32-k step's partial sums are
/// scaled by their group's scale in fp32 (eight n-tiles: the weights scaled once in
/// the activation type). Same fields as GroupedGemvParams apart from `w`. tiles_per_warp (1 to
/// kWna16MaxTilesPerWarp, else cudaErrorInvalidValue): the row tiles each warp streams one
/// after another, its ring carried from one to the next, where wna16_multi_tile_ok(p); one
/// elsewhere.
inline constexpr int32_t kWna16MaxTilesPerWarp = 8;
cudaError_t launch_wna16_gemv(const GroupedGemvParams& p, const QuantWeightsView& w, cudaStream_t stream,
                              int32_t tiles_per_warp = 1);
/// Where wna16_gemv runs several row tiles per warp: the down GEMV at one n-tile, split 1 or 2,
/// on align's expert table (the direct table's skipped instances zero one tile's rows per CTA),
/// over whole 16-row tiles (n_out a multiple of 16).
inline bool wna16_multi_tile_ok(const GroupedGemvParams& p) {
  return !p.gate_up && p.n_tiles == 1 && (p.split_k == 1 || p.split_k == 2) && p.expert_offsets != nullptr &&
         p.n_out % 16 == 0;
}
/// launch_one_token_down over prepared int4 weights: wna16_gemv's down GEMV for a single token
/// (M = 1, top-k 4-8) with the top-k combine folded in; p.out is out's one row [n_out].
cudaError_t launch_wna16_one_token_down(const GroupedGemvParams& p, const QuantWeightsView& w, cudaStream_t stream);

/// wna16_grouped_gemm: one expert GEMM over prepared int4/int8 weights for every local expert
/// at large batch, the weights dequantized in registers into wgmma's A operand (no dense copy).
/// Rows of expert e are the sorted positions [expert_offsets[e], expert_offsets[e + 1]); a tile
/// is 128 weight rows (gate-up: 64 output columns) by tile_tokens of one expert's rows, and a
/// persistent CTA per SM walks the tiles.
///   gate-up: out[pos, j] = act(g * s) * (u * s), g / u = x[pos] . w13[e] rows j / n_out + j,
///            s = topk_weights[sorted_pairs[pos]] when topk_weights is set, else 1
///   down:    out[pos, n] = x[pos] . w2[e] row n
/// x [rows_bound, k] is in expert order (GEMM1: x's rows gathered first), read by TMA: 16-byte
/// aligned, rows_bound < 2^31.
struct Wna16GemmParams {
  ElemType elem = ElemType::kBF16;
  bool gate_up = true;
  GatedAct act = GatedAct::kSilu;
  const void* x = nullptr;  // [rows_bound, k] by sorted position, or (gather_topk > 0) [tokens, k] by token
  void* out = nullptr;      // [rows, n_out] by sorted position
  int64_t n_out = 0;        // gate-up: I; down: H (a multiple of 8)
  int64_t k = 0;            // a multiple of 8
  int32_t num_experts = 0;  // local experts
  int64_t rows_bound = 0;   // host-known bound on the rows (m * topk): the grid
  const int64_t* expert_offsets = nullptr;  // [num_experts + 1]
  const int32_t* sorted_pairs = nullptr;    // where topk_weights is set
  const float* topk_weights = nullptr;      // gate-up: the routed weight applied on the input, or nullptr
  int32_t tile_tokens = 128;                // an expert's rows per tile: 128 or 256 (planner.h, wna16_gemm_tile_tokens)
  // Gate-up only: > 0, x is read by token (sorted position pos is token sorted_pairs[pos] /
  // gather_topk) with no gathered copy; 0, x's rows are the sorted positions.
  int32_t gather_topk = 0;
  int32_t sm_count = 0;                     // persistent CTAs: at most one per SM
};
/// The tile space's host-known bound: x = token tiles (at most rows / tile_tokens + one
/// partial tile per expert with rows), y = weight tiles.
inline dim3 wna16_grouped_gemm_grid(const Wna16GemmParams& p) {
  const int64_t partial = p.rows_bound < p.num_experts ? p.rows_bound : p.num_experts;
  const int64_t tile = p.tile_tokens > 0 ? p.tile_tokens : 128;
  const int64_t token_tiles = p.rows_bound <= 0 ? 0 : p.rows_bound / tile + partial;
  const int64_t weight_tiles = p.gate_up ? (p.n_out + 63) / 64 : (p.n_out + 127) / 128;
  return dim3(static_cast<unsigned>(token_tiles), static_cast<unsigned>(weight_tiles));
}
cudaError_t launch_wna16_grouped_gemm(const Wna16GemmParams& p, const QuantWeightsView& w, cudaStream_t stream);

/// FP8 e4m3 weights of one projection as the checkpoint holds them (docs/FORMATS.md):
/// w [E, N, K] bytes, fp32 scales per expert [E], per row [E, N] or per block
/// [E, ceil(N / block_n), ceil(K / block_k)].
enum class Fp8WeightScale { kTensor, kRow, kBlock };
struct Fp8WeightsView {
  const uint8_t* w = nullptr;
  const float* scales = nullptr;
  Fp8WeightScale kind = Fp8WeightScale::kTensor;
  int64_t n = 0;
  int64_t k = 0;
  int32_t block_n = 128;
  int32_t block_k = 128;
};

/// Activation scales of an FP8-quantized matrix [rows, cols]: one for the tensor (scales[0]),
/// one per row [rows], or one per row and group of `group` columns [rows, ceil(cols / group)].
enum class Fp8ActScale { kTensor, kRow, kGroup };

/// fp8_amax: *amax = max |in| over the first rows (or *live_rows, when given) of [rows, cols].
cudaError_t launch_fp8_amax(ElemType elem, const void* in, int64_t rows, int64_t cols, const int64_t* live_rows,
                            float* amax, cudaStream_t stream);

/// Where fp8_quantize reads row r of the matrix it quantizes (r in the output's order):
///  - kRows: in [rows, cols].
///  - kGatherTokens: in = x [tokens, cols]; row r is token sorted_pairs[r] / topk, and
///    row_of_pair[sorted_pairs[r]] = r is recorded for the combine (gather_rows fused in: the
///    grouped path's gathered rows are never written in the activation dtype).
///  - kGatedAct: in = GEMM1's output [rows, 2 * cols] (gate half, then up half); the value is
///    act(g * w, u * w) rounded to elem, exactly what gated_act stores (w = the pair's routed
///    weight when topk_weights is set, else 1): the activation never goes to memory unquantized.
///    (The layer uses it where fp8_fuses_activation says, planner.h.)
///  - kScatterTokens: in = x [rows = tokens, cols]; each token's row is quantized once (its
///    scales: one per row, per 128-column group, or the tensor's) and stored at out rows
///    row_of_pair[t * topk + k] for the k whose entry is >= 0 (align's map: the rows of the
///    token's local pairs in expert order), with the scales at each of those rows. With
///    codes_by_token the codes go once to out row t instead (out [tokens, cols], for a GEMM1
///    that reads x's rows by token itself), the scales still to the pairs' rows.
///    kE4M3Grouped only, and topk at most kFp8ScatterSpanMaxTopk (fp8_geometry.h) for group
///    and tensor scales: kGatherTokens quantizes the same token once per pair.
enum class Fp8QuantIn { kRows, kGatherTokens, kGatedAct, kScatterTokens };

/// fp8_quantize: q = e4m3(v / s) (round to nearest even, saturating at +-448) per row of
/// `in` [rows, cols] (rows past *live_rows, when given, are skipped), s = max(amax / 448,
/// 2^-64) (1 for an all-zero span) over the span the kind says, or the static scale. Output:
///  - kF16Values (fp8_gemv): out [rows, cols] fp16 holding the e4m3 values exactly; scales
///    [rows] (kRow), [rows, ceil(cols / group)] (kGroup) or scales[0] (kTensor).
///  - kE4M3Grouped (sm90_fp8_grouped_gemm): out [rows, cols] e4m3 bytes, rows sorted by
///    expert (expert_offsets); scales in the GEMM's SFA layout, one per row and 128-column
///    block (kGroup: group = 128), or for kRow and kTensor, which the GEMM applies in its
///    epilogue, only the first block's (the one it reads).
enum class Fp8QuantOut { kF16Values, kE4M3Grouped };
struct Fp8QuantParams {
  ElemType elem = ElemType::kBF16;
  const void* in = nullptr;
  int64_t rows = 0;
  int64_t cols = 0;                   // a multiple of 8
  const int64_t* live_rows = nullptr;  // device row count (the layer's local pairs), or nullptr
  Fp8ActScale kind = Fp8ActScale::kRow;
  int32_t group = 128;                // kGroup: a multiple of 8
  const float* tensor_scale = nullptr;  // kTensor static: the scale; else nullptr
  const float* amax = nullptr;          // kTensor dynamic: launch_fp8_amax's result
  Fp8QuantOut out_kind = Fp8QuantOut::kF16Values;
  const int64_t* expert_offsets = nullptr;  // kE4M3Grouped: [num_experts + 1]
  int32_t num_experts = 0;
  void* out = nullptr;
  float* scales = nullptr;
  Fp8QuantIn in_kind = Fp8QuantIn::kRows;
  const int32_t* sorted_pairs = nullptr;  // kGatherTokens, kGatedAct with topk_weights
  int32_t topk = 1;                       // kGatherTokens
  int32_t* row_of_pair = nullptr;         // kGatherTokens: [m * topk] out; kScatterTokens: in
  GatedAct act = GatedAct::kSilu;         // kGatedAct
  const float* topk_weights = nullptr;    // kGatedAct: the routed weights applied on the input, or nullptr
  bool whole_tensor = false;  // kTensor dynamic at decode sizes: one CTA reduces the amax itself (amax unused)
  bool codes_by_token = false;  // kScatterTokens: the codes at out row t (the token), the scales still at its pairs' rows
  float* amax_out = nullptr;  // whole_tensor: where it stores that amax (launch_fp8_amax's value), or nullptr
};
/// whole_tensor: kTensor with no tensor_scale, kRows in, kF16Values out, rows * cols at most
/// kFp8WholeTensorValues: one CTA reads the live rows twice (the amax, then the codes), so no
/// amax pass and no memset run before it.
inline constexpr int64_t kFp8WholeTensorValues = 16384;
/// after_predecessor: a programmatic dependent launch that waits for the kernel before it
/// before reading (the small-M path's intermediate, after the gate-up GEMV). Every quantize
/// kernel lets its successor launch at once (a launch_align_tokens beside it, or a GEMV that
/// waits for it).
/// table (plain rows only, at most kWarpAlignPairs pairs): the launch also writes align's table
/// of these pairs, from one more CTA (align_warp.cuh), so that the small-M FP8 path launches no
/// align; a successor's wait covers it.
cudaError_t launch_fp8_quantize(const Fp8QuantParams& p, cudaStream_t stream, bool after_predecessor = false,
                                const AlignParams* table = nullptr);

/// fp8_gemv: small_m_splitk's grid, split-K and epilogue over e4m3 weights and activations
/// quantized by fp8_quantize (fp16 holding e4m3 values: products exact, fp32 accumulation),
/// weight and activation scales applied in fp32 after the MMAs (per 128-k block for block
/// weights, at the end otherwise). p.x: the quantized activations [rows, K] fp16; p.w
/// unused (w.w); p.elem: the output dtype. K a multiple of 16, at most kFp8GemvMaxK; block_k
/// a multiple of 64.
inline constexpr int64_t kFp8GemvMaxK = int64_t{1} << 30;
struct Fp8ActView {
  Fp8ActScale kind = Fp8ActScale::kRow;
  const float* scales = nullptr;
  int32_t group = 128;  // kGroup: columns per scale (= the weights' block_k)
};
/// ctas_per_sm: with block scales at one n-tile, kFp8GemvBoundCtasPerSm runs the variant
/// compiled for that many resident CTAs per SM (80 registers), 0 the one without a register
/// bound (2 CTAs); the other kernels have one variant. Other values are refused. (A host argument, not a GroupedGemvParams field: growing
/// the kernels' parameter struct changed the generated code of every fp8_gemv kernel, and the
/// per-tensor/per-channel ones measured up to 5% slower, v18.)
inline constexpr int32_t kFp8GemvBoundCtasPerSm = 3;
cudaError_t launch_fp8_gemv(const GroupedGemvParams& p, const Fp8WeightsView& w, const Fp8ActView& x,
                            int32_t ctas_per_sm, cudaStream_t stream);
/// CTAs of one fp8_gemv instantiation (ctas_per_sm as above) that fit one SM; the GPU tests
/// hold them to the planner's kFp8SplitRule / kFp8BlockSplitRule / kFp8BlockWideSplitRule.
cudaError_t fp8_gemv_resident_ctas(ElemType elem, bool block, bool gate_up, int32_t split_k, int32_t n_tiles,
                                   int32_t ctas_per_sm, int* resident);

/// fp8_weight_scales: the 128 x 128 block scales of experts 0 .. experts - 1 ([E][nb][kb] in
/// the checkpoint) in the blockwise grouped GEMM's SFB layout, out [experts][kb][ceil(n / g)]
/// for g = n_granularity columns per scale (128, or kFp8WideTileScaleCols: each block's scale
/// 128 / g times); experts without pairs skipped.
struct Fp8WeightScalesParams {
  Fp8WeightsView w;
  int32_t n_granularity = 128;
  int32_t experts = 0;
  const int32_t* expert_counts = nullptr;  // [E] or nullptr (all)
  float* out = nullptr;
};
cudaError_t launch_fp8_weight_scales(const Fp8WeightScalesParams& p, cudaStream_t stream);

/// Source checkpoint formats of wna16_repack.
enum class QuantSource { kGPTQ, kAWQ, kMoeWNA16 };
struct QuantRepackParams {
  QuantSource source = QuantSource::kGPTQ;
  int32_t bits = 4;
  int64_t experts = 0;
  int64_t n = 0;
  int64_t k = 0;
  int64_t groups = 1;
  bool gptq_zeros_minus_one = true;
  ScaleType scale_type = ScaleType::kFP16;
  const void* qweight = nullptr;  // checkpoint tensors (docs/FORMATS.md)
  const void* qzeros = nullptr;   // nullptr: symmetric
  const void* scales = nullptr;
  // Act-order (GPTQ g_idx; act_order_columns): prepared column j of expert e reads the
  // checkpoint's column k_order[e * K + j], which puts K in group order; w13 also takes its
  // rows in w2's column order, row_order [E, N / 2] (prepared gate row j and up row N / 2 + j
  // read the checkpoint's rows row_order[e][j] and N / 2 + that), so that GEMM1 writes the
  // intermediate's columns in the order w2 reads them. nullptr: the checkpoint's order.
  const int32_t* k_order = nullptr;
  const int32_t* row_order = nullptr;
  uint32_t* codes = nullptr;      // prepared outputs (QuantWeightsView)
  void* scales_out = nullptr;     // [E, G, N], same scale type
  void* zeros_out = nullptr;      // [E, G, N] (uint8 / uint16) when qzeros is set
};
cudaError_t launch_wna16_repack(const QuantRepackParams& p, cudaStream_t stream);

/// wna16_dequant: experts [e0, e0 + experts) of prepared weights into dense [experts, N, K]
/// (activation dtype), w = (q - zero) * scale rounded once; experts without pairs
/// (expert_counts[e] == 0) are skipped (the grouped GEMM reads no rows of them).
struct QuantDequantParams {
  ElemType elem = ElemType::kBF16;
  QuantWeightsView w;
  int32_t e0 = 0;
  int32_t experts = 0;
  const int32_t* expert_counts = nullptr;  // [E], indexed from 0
  void* out = nullptr;
  bool interleave_gate_up = false;  // w13: rows written as gate_up_row() interleaves them
};
cudaError_t launch_wna16_dequant(const QuantDequantParams& p, cudaStream_t stream);

/// gather_rows: x_sorted[pos] = x[sorted_pairs[pos] / topk] for the live positions
/// (pos < live_rows[0]), and row_of_pair[sorted_pairs[pos]] = pos for the combine; or, by_pair,
/// x_sorted[pair] (the row for kernels that read x by token, with topk 1).
struct GatherParams {
  ElemType elem = ElemType::kBF16;
  const void* x = nullptr;           // [m, hidden]
  void* x_sorted = nullptr;          // [rows_bound, hidden]
  int64_t rows_bound = 0;            // m * topk
  int64_t hidden = 0;                // a multiple of 8
  int32_t topk = 1;
  const int32_t* sorted_pairs = nullptr;
  const int64_t* live_rows = nullptr;  // device scalar: rows with a local expert (expert_offsets[E])
  int32_t* row_of_pair = nullptr;    // [m * topk] out (nullptr: not written)
  // Act-order weights: each row's columns in its local expert's order, x_order [E, hidden]
  // (prepared w13's k_order): column j of the row is x's column x_order[e][j], e =
  // expert_map[topk_ids[pair]] (or topk_ids[pair] without a map). nullptr: x's order.
  const int32_t* x_order = nullptr;
  const int32_t* topk_ids = nullptr;
  const int32_t* expert_map = nullptr;
  int32_t global_experts = 0;
  int32_t num_experts = 0;  // local
  bool by_pair = false;  // rows stored at the pair's index instead of its sorted position
};
cudaError_t launch_gather_rows(const GatherParams& p, cudaStream_t stream);

/// interleave_gate_up: dense w13 [experts, 2 * inter, hidden] (2-byte elements) from the
/// checkpoint's order (gate rows, then up rows) into gate_up_row()'s interleaved order.
struct InterleaveParams {
  const void* src = nullptr;
  void* dst = nullptr;
  int64_t experts = 0;
  int64_t inter = 0;   // a multiple of 8
  int64_t hidden = 0;
};
cudaError_t launch_interleave_gate_up(const InterleaveParams& p, cudaStream_t stream);

/// gated_act: a[pos, j] = act(h[pos, j] * s) * (h[pos, inter + j] * s) for live positions,
/// s = topk_weights[sorted_pairs[pos]] when topk_weights is set (weight applied on input), else 1.
/// With amax_bits, also *amax_bits = max(*amax_bits, |a| as float bits) over what it stores
/// (the caller zeroes it first): the per-tensor dynamic scale's amax, without a pass of its own.
struct GatedActParams {
  ElemType elem = ElemType::kBF16;
  GatedAct act = GatedAct::kSilu;
  const void* h = nullptr;           // [rows_bound, 2 * inter]
  void* a = nullptr;                 // [rows_bound, inter]
  int64_t rows_bound = 0;
  int64_t inter = 0;                 // a multiple of 8
  const int64_t* live_rows = nullptr;
  const int32_t* sorted_pairs = nullptr;
  const float* topk_weights = nullptr;
  unsigned int* amax_bits = nullptr;  // a float amax as bits (fp8_amax's layout), or nullptr
};
cudaError_t launch_gated_act(const GatedActParams& p, cudaStream_t stream);

/// sm90_grouped_gemm: D[rows of e] = A[rows of e] . B[e]^T for every local expert e, with
/// rows of e = [expert_offsets[e], expert_offsets[e + 1]) known on the device only.
struct GroupedGemmParams {
  int32_t num_groups = 0;                   // local experts
  int64_t n = 0;                            // output columns (a multiple of 8)
  int64_t k = 0;                            // reduction (a multiple of 8)
  const int64_t* expert_offsets = nullptr;  // [num_groups + 1]
  const void* a = nullptr;                  // [rows, k]
  const void* b = nullptr;                  // [num_groups, n, k]
  void* d = nullptr;                        // [rows, n]
  void* workspace = nullptr;                // grouped_gemm_workspace_bytes()
  size_t workspace_bytes = 0;
  int32_t sm_count = 0;                     // persistent CTAs
  // FP8 only (sm90_grouped_gemm.cuh): SFA [kb][rows_e] per expert at sfa + row0 * ceil(k / 128);
  // SFB [kb][ceil(n / 128)] per expert at sfb + e * sfb_expert_stride. Epilogue-scaled:
  // SFA's first block, and the weights' scales at sfb + e * sfb_expert_stride, n of them if
  // sfb_per_column, else one.
  const float* sfa = nullptr;
  const float* sfb = nullptr;
  int64_t sfb_expert_stride = 0;
  bool sfb_per_column = true;
  // Gated instantiations (GEMM1 on w13 interleaved as gate_up_row() says): D [rows, n / 2] =
  // act(g * s) * (u * s) of each (gate, up) row pair, s = topk_weights[sorted_pairs[row]] when
  // topk_weights is set (routed weight applied on the input), else 1.
  GatedAct act = GatedAct::kSilu;
  const int32_t* sorted_pairs = nullptr;
  const float* topk_weights = nullptr;
  // Gathering instantiations (grouped_gemm_entry's and fp8_grouped_gemm_entry's gather_a): > 0,
  // A is x [tokens, k] itself (FP8: its e4m3 codes) and row r of expert e is token
  // sorted_pairs[expert_offsets[e] + r] / gather_topk (no gathered copy); 0 for the others,
  // whose A holds the rows in expert order.
  int32_t gather_topk = 0;
  // Where the per-expert arrays (problem shapes, pointers, strides) come from: -1, a small
  // setup kernel launched before the GEMM writes them; 0 or 1, GEMM1's or GEMM2's set, which
  // one setup_pair launch wrote for both GEMMs of the layer beforehand (same workspace).
  int32_t arrays_set = -1;
  // Programmatic dependent launch (sm90_grouped_gemm.cuh's pdl_gemm_kernel). launch_early: the
  // GEMM's CTAs may start while its predecessor grid runs (each waits for that grid's end and
  // memory first); the predecessor lets it (setup_groups_kernel, at once). release_successor: a
  // successor launched as a programmatic dependent may start once every CTA of the GEMM has
  // started; it must wait for the GEMM's end before it reads what the GEMM writes.
  bool launch_early = false;
  bool release_successor = false;
};
// One instantiation per dtype (and, for FP8, weight-scale granularity), operand order (swap:
// sm90_grouped_gemm.cuh's swapped operands) and tile height; the inline dispatchers pick it.
#define FUSEDMOE_DECLARE_GROUPED_GEMM(name)                                     \
  size_t name##_workspace_bytes(int32_t num_groups, int32_t sm_count);           \
  cudaError_t launch_##name(const GroupedGemmParams& p, cudaStream_t stream);    \
  cudaError_t name##_setup_pair(const GroupedGemmParams& gemm1, const GroupedGemmParams& gemm2, cudaStream_t stream);
FUSEDMOE_DECLARE_GROUPED_GEMM(grouped_gemm_bf16)
FUSEDMOE_DECLARE_GROUPED_GEMM(grouped_gemm_fp16)
FUSEDMOE_DECLARE_GROUPED_GEMM(grouped_gemm_bf16_swap)
FUSEDMOE_DECLARE_GROUPED_GEMM(grouped_gemm_fp16_swap)
FUSEDMOE_DECLARE_GROUPED_GEMM(grouped_gemm_bf16_gated)
FUSEDMOE_DECLARE_GROUPED_GEMM(grouped_gemm_fp16_gated)
FUSEDMOE_DECLARE_GROUPED_GEMM(grouped_gemm_bf16_gated_swap)
FUSEDMOE_DECLARE_GROUPED_GEMM(grouped_gemm_fp16_gated_swap)
FUSEDMOE_DECLARE_GROUPED_GEMM(grouped_gemm_bf16_swap256)
FUSEDMOE_DECLARE_GROUPED_GEMM(grouped_gemm_fp16_swap256)
FUSEDMOE_DECLARE_GROUPED_GEMM(grouped_gemm_bf16_gated_swap256)
FUSEDMOE_DECLARE_GROUPED_GEMM(grouped_gemm_fp16_gated_swap256)
FUSEDMOE_DECLARE_GROUPED_GEMM(grouped_gemm_bf16_m64)
FUSEDMOE_DECLARE_GROUPED_GEMM(grouped_gemm_fp16_m64)
FUSEDMOE_DECLARE_GROUPED_GEMM(grouped_gemm_bf16_gated_m64)
FUSEDMOE_DECLARE_GROUPED_GEMM(grouped_gemm_fp16_gated_m64)
FUSEDMOE_DECLARE_GROUPED_GEMM(grouped_gemm_bf16_gated_gather)
FUSEDMOE_DECLARE_GROUPED_GEMM(grouped_gemm_fp16_gated_gather)
FUSEDMOE_DECLARE_GROUPED_GEMM(grouped_gemm_bf16_gated_gather_m64)
FUSEDMOE_DECLARE_GROUPED_GEMM(grouped_gemm_fp16_gated_gather_m64)
FUSEDMOE_DECLARE_GROUPED_GEMM(grouped_gemm_bf16_gated_swap_gather)
FUSEDMOE_DECLARE_GROUPED_GEMM(grouped_gemm_fp16_gated_swap_gather)
FUSEDMOE_DECLARE_GROUPED_GEMM(fp8_grouped_gemm_bf16_epi)
FUSEDMOE_DECLARE_GROUPED_GEMM(fp8_grouped_gemm_fp16_epi)
FUSEDMOE_DECLARE_GROUPED_GEMM(fp8_grouped_gemm_bf16_epi_swap)
FUSEDMOE_DECLARE_GROUPED_GEMM(fp8_grouped_gemm_bf16_epi_m64)
FUSEDMOE_DECLARE_GROUPED_GEMM(fp8_grouped_gemm_fp16_epi_m64)
FUSEDMOE_DECLARE_GROUPED_GEMM(fp8_grouped_gemm_bf16_epi_n192)
FUSEDMOE_DECLARE_GROUPED_GEMM(fp8_grouped_gemm_fp16_epi_n192)
FUSEDMOE_DECLARE_GROUPED_GEMM(fp8_grouped_gemm_bf16_epi_m64_n192)
FUSEDMOE_DECLARE_GROUPED_GEMM(fp8_grouped_gemm_fp16_epi_m64_n192)
FUSEDMOE_DECLARE_GROUPED_GEMM(fp8_grouped_gemm_bf16_epi_gather_m64_n192)
FUSEDMOE_DECLARE_GROUPED_GEMM(fp8_grouped_gemm_fp16_epi_gather_m64_n192)
FUSEDMOE_DECLARE_GROUPED_GEMM(fp8_grouped_gemm_bf16_epi_swap_gather)
FUSEDMOE_DECLARE_GROUPED_GEMM(fp8_grouped_gemm_fp16_epi_swap_gather)
FUSEDMOE_DECLARE_GROUPED_GEMM(fp8_grouped_gemm_fp16_epi_swap)
FUSEDMOE_DECLARE_GROUPED_GEMM(fp8_grouped_gemm_bf16_block)
FUSEDMOE_DECLARE_GROUPED_GEMM(fp8_grouped_gemm_fp16_block)
FUSEDMOE_DECLARE_GROUPED_GEMM(fp8_grouped_gemm_bf16_block_m64)
FUSEDMOE_DECLARE_GROUPED_GEMM(fp8_grouped_gemm_fp16_block_m64)
FUSEDMOE_DECLARE_GROUPED_GEMM(fp8_grouped_gemm_bf16_block_n192)
FUSEDMOE_DECLARE_GROUPED_GEMM(fp8_grouped_gemm_fp16_block_n192)
FUSEDMOE_DECLARE_GROUPED_GEMM(fp8_grouped_gemm_bf16_block_swap)
FUSEDMOE_DECLARE_GROUPED_GEMM(fp8_grouped_gemm_fp16_block_swap)
#undef FUSEDMOE_DECLARE_GROUPED_GEMM

// The instantiation's entry points. workspace_bytes: both GEMMs' arrays and CUTLASS's own
// workspace. setup_pair: GEMM1's and GEMM2's arrays (sets 0 and 1) in one launch, from either
// GEMM's entry of one family (gated or not, same dtype, scaling and operand order); the two
// params share the workspace and num_groups.
struct GroupedGemmEntry {
  size_t (*workspace_bytes)(int32_t num_groups, int32_t sm_count);
  cudaError_t (*launch)(const GroupedGemmParams& p, cudaStream_t stream);
  cudaError_t (*setup_pair)(const GroupedGemmParams& gemm1, const GroupedGemmParams& gemm2, cudaStream_t stream);
};
#define FUSEDMOE_GROUPED_ENTRY(name) GroupedGemmEntry{name##_workspace_bytes, launch_##name, name##_setup_pair}
/// gated: GEMM1 with the gated activation in its epilogue (GroupedGemmParams' gated fields).
/// tile_m: the tile's M, with swapped operands weight rows, 128 or 256 (planner.h,
/// swapped_tile_rows), else token rows, 128 or 64 (grouped_tile_rows). gather_a (gated; with
/// swapped operands on 128 weight rows only): GEMM1 reads x's rows in token order itself
/// (GroupedGemmParams::gather_topk).
/// Every family of one dtype and operand order shares the per-expert arrays' layout, so either
/// GEMM's entry may run setup_pair for both.
inline GroupedGemmEntry grouped_gemm_entry(ElemType e, bool swap, bool gated, int tile_m, bool gather_a = false) {
  const bool bf16 = e == ElemType::kBF16;
  if (gather_a && gated && swap && tile_m == 128) {
    return bf16 ? FUSEDMOE_GROUPED_ENTRY(grouped_gemm_bf16_gated_swap_gather)
                : FUSEDMOE_GROUPED_ENTRY(grouped_gemm_fp16_gated_swap_gather);
  }
  if (gather_a && gated && !swap) {
    if (tile_m == 64) {
      return bf16 ? FUSEDMOE_GROUPED_ENTRY(grouped_gemm_bf16_gated_gather_m64)
                  : FUSEDMOE_GROUPED_ENTRY(grouped_gemm_fp16_gated_gather_m64);
    }
    return bf16 ? FUSEDMOE_GROUPED_ENTRY(grouped_gemm_bf16_gated_gather)
                : FUSEDMOE_GROUPED_ENTRY(grouped_gemm_fp16_gated_gather);
  }
  if (swap && tile_m == 256) {
    if (gated) {
      return bf16 ? FUSEDMOE_GROUPED_ENTRY(grouped_gemm_bf16_gated_swap256)
                  : FUSEDMOE_GROUPED_ENTRY(grouped_gemm_fp16_gated_swap256);
    }
    return bf16 ? FUSEDMOE_GROUPED_ENTRY(grouped_gemm_bf16_swap256) : FUSEDMOE_GROUPED_ENTRY(grouped_gemm_fp16_swap256);
  }
  if (!swap && tile_m == 64) {
    if (gated) {
      return bf16 ? FUSEDMOE_GROUPED_ENTRY(grouped_gemm_bf16_gated_m64) : FUSEDMOE_GROUPED_ENTRY(grouped_gemm_fp16_gated_m64);
    }
    return bf16 ? FUSEDMOE_GROUPED_ENTRY(grouped_gemm_bf16_m64) : FUSEDMOE_GROUPED_ENTRY(grouped_gemm_fp16_m64);
  }
  if (gated) {
    if (bf16) {
      return swap ? FUSEDMOE_GROUPED_ENTRY(grouped_gemm_bf16_gated_swap)
                  : FUSEDMOE_GROUPED_ENTRY(grouped_gemm_bf16_gated);
    }
    return swap ? FUSEDMOE_GROUPED_ENTRY(grouped_gemm_fp16_gated_swap)
                : FUSEDMOE_GROUPED_ENTRY(grouped_gemm_fp16_gated);
  }
  if (bf16) {
    return swap ? FUSEDMOE_GROUPED_ENTRY(grouped_gemm_bf16_swap)
                : FUSEDMOE_GROUPED_ENTRY(grouped_gemm_bf16);
  }
  return swap ? FUSEDMOE_GROUPED_ENTRY(grouped_gemm_fp16_swap)
              : FUSEDMOE_GROUPED_ENTRY(grouped_gemm_fp16);
}
/// sm90_fp8_grouped_gemm: e4m3 A [rows, k] and B [num_groups, n, k], D in `out` (bf16/fp16);
/// block_scales: DeepSeek's 128 x 128 weight blocks and 1 x 128 activation groups applied per
/// 128-k block in the mainloop (SFA, SFB as fp8_quantize and fp8_weight_scales write them);
/// else the scales, which do not vary along k, applied once in the epilogue (per-row
/// activation scales, the checkpoint's per-column or per-expert weight scales). k a multiple
/// of 16, n of 8.
/// tile_m: 64 or 128 token rows per tile of the unswapped kernels (planner.h,
/// fp8_grouped_tile_rows); 128 for the swapped ones. tile_n: weight columns per tile, 128, or
/// 192 for the unswapped kernels (planner.h, fp8_grouped_tile_cols; block scales: 128-row
/// tiles, SFB as fp8_weight_scales writes it with n_granularity kFp8WideTileScaleCols). A
/// block-scaled entry on 192 columns sets up only GEMMs on its own tile width. gather_a
/// (epilogue scales; swapped, or unswapped on 64 x 192 tiles): GEMM1 reads x's e4m3 rows in
/// token order itself (GroupedGemmParams::gather_topk; planner.h, fp8_gemm1_gathers).
inline GroupedGemmEntry fp8_grouped_gemm_entry(ElemType out, bool block_scales, bool swap, int tile_m,
                                               int tile_n = 128, bool gather_a = false) {
  const bool bf16 = out == ElemType::kBF16;
  if (gather_a && !block_scales && swap) {
    return bf16 ? FUSEDMOE_GROUPED_ENTRY(fp8_grouped_gemm_bf16_epi_swap_gather)
                : FUSEDMOE_GROUPED_ENTRY(fp8_grouped_gemm_fp16_epi_swap_gather);
  }
  if (gather_a && !block_scales && !swap && tile_m == 64 && tile_n == 192) {
    return bf16 ? FUSEDMOE_GROUPED_ENTRY(fp8_grouped_gemm_bf16_epi_gather_m64_n192)
                : FUSEDMOE_GROUPED_ENTRY(fp8_grouped_gemm_fp16_epi_gather_m64_n192);
  }
  if (!swap && tile_n == 192) {
    if (block_scales) {  // 128-row tiles
      return bf16 ? FUSEDMOE_GROUPED_ENTRY(fp8_grouped_gemm_bf16_block_n192)
                  : FUSEDMOE_GROUPED_ENTRY(fp8_grouped_gemm_fp16_block_n192);
    }
    if (tile_m == 64) {
      return bf16 ? FUSEDMOE_GROUPED_ENTRY(fp8_grouped_gemm_bf16_epi_m64_n192)
                  : FUSEDMOE_GROUPED_ENTRY(fp8_grouped_gemm_fp16_epi_m64_n192);
    }
    return bf16 ? FUSEDMOE_GROUPED_ENTRY(fp8_grouped_gemm_bf16_epi_n192)
                : FUSEDMOE_GROUPED_ENTRY(fp8_grouped_gemm_fp16_epi_n192);
  }
  if (!swap && tile_m == 64) {
    if (block_scales) {
      return bf16 ? FUSEDMOE_GROUPED_ENTRY(fp8_grouped_gemm_bf16_block_m64)
                  : FUSEDMOE_GROUPED_ENTRY(fp8_grouped_gemm_fp16_block_m64);
    }
    return bf16 ? FUSEDMOE_GROUPED_ENTRY(fp8_grouped_gemm_bf16_epi_m64)
                : FUSEDMOE_GROUPED_ENTRY(fp8_grouped_gemm_fp16_epi_m64);
  }
  if (block_scales) {
    if (bf16) {
      return swap ? FUSEDMOE_GROUPED_ENTRY(fp8_grouped_gemm_bf16_block_swap)
                  : FUSEDMOE_GROUPED_ENTRY(fp8_grouped_gemm_bf16_block);
    }
    return swap ? FUSEDMOE_GROUPED_ENTRY(fp8_grouped_gemm_fp16_block_swap)
                : FUSEDMOE_GROUPED_ENTRY(fp8_grouped_gemm_fp16_block);
  }
  if (bf16) {
    return swap ? FUSEDMOE_GROUPED_ENTRY(fp8_grouped_gemm_bf16_epi_swap)
                : FUSEDMOE_GROUPED_ENTRY(fp8_grouped_gemm_bf16_epi);
  }
  return swap ? FUSEDMOE_GROUPED_ENTRY(fp8_grouped_gemm_fp16_epi_swap)
              : FUSEDMOE_GROUPED_ENTRY(fp8_grouped_gemm_fp16_epi);
}
#undef FUSEDMOE_GROUPED_ENTRY

/// combine: out[t] = sum over the token's local slots s of w * y[row(t * topk + s)], in slot
/// order; row(pair) = row_of_pair[pair] if set, else pair; w = topk_weights[pair] if set, else 1.
struct CombineParams {
  ElemType elem = ElemType::kBF16;
  const void* y = nullptr;  // [pairs, hidden]
  const int32_t* row_of_pair = nullptr;
  const float* topk_weights = nullptr;
  void* out = nullptr;      // [m, hidden]
  int64_t m = 0;
  int64_t hidden = 0;       // a multiple of 8
  int32_t topk = 1;
  const int32_t* topk_ids = nullptr;
  const int32_t* expert_map = nullptr;
  int32_t global_experts = 0;
  int32_t num_experts = 0;  // local experts: a mapped id outside [0, num_experts) has no row
};
cudaError_t launch_combine(const CombineParams& p, cudaStream_t stream);

}  // namespace fusedmoe::kernels
