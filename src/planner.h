// Planner: which kernel family serves a call, and how the workspace is laid out.
// Tile and split choices join this file with the kernels that need them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "fusedmoe/moe.h"
#include "kernels/fp8_geometry.h"
#include "kernels/fp8_one_pass_geometry.h"
#include "kernels/gemv_geometry.h"
#include "kernels/one_token_layer_geometry.h"

namespace fusedmoe {

/// Kernel families of src/kernels/, named by their file stems.
enum class KernelFamily {
  kSmallMSplitK,              ///< dense bf16/fp16 weights, grouped GEMV with in-CTA split-K
  kSm90Bf16GroupedGemm,       ///< dense bf16/fp16 weights, tensor cores (large batches)
  kSm90Fp8GroupedGemm,        ///< fp8 per-tensor / per-channel scales
  kSm90Fp8GroupedGemmBlockscale,  ///< fp8 128x128 block scales
  kWna16GroupedGemm,          ///< GPTQ / AWQ / moe_wna16 int4 and int8: wna16_gemv, or wna16_dequant +
                              ///< the sm90 grouped GEMM, or (forced) wna16_grouped_gemm
};

const char* kernel_family_name(KernelFamily family);
/// The family of a quantized format; dense weights have two (see choose_path) and report
/// sm90_bf16_grouped_gemm here.
KernelFamily kernel_family_for(const QuantParams& quant);
/// "small_m_splitk + sm90_bf16_grouped_gemm" for dense weights, else the one family's name.
std::string kernel_families_description(const QuantParams& quant);
/// Whether this build compiled the family's kernels.
bool kernel_family_available(KernelFamily family);

/// The layer's path from host-known sizes, by the rows an active expert averages
/// (r = pairs / min(E, pairs)); `forced` other than kAuto decides instead. One table
/// (the PathRule constants below, path_rule) from forced-path measurements on the H200 (docs/PERF.md v14, same-run pairs):
/// - small_m (the weight-streaming GEMV of the format) below `rows` per active expert
///   (`rows_small_inter` when inter <= kSmallInter, where the GEMV's down projection has
///   K = inter and too little work per CTA; `rows_large_inter` when inter >= kLargeInter,
///   where the grouped kernel has tiles enough to stream at its best) and, where
///   `max_small_pairs` is set, below that many pairs, else the grouped path;
/// - on the grouped path the swapped-operand kernel below kSwapMaxRows rows per expert (one
///   64-wide N tile per expert re-reads no weights), else the unswapped tiles (64 or 128
///   token rows per GEMM: grouped_tile_rows).
/// Dense (bf16/fp16): crossover between r = 2 and 4 on Mixtral, Qwen2, Qwen3 (r = 4: swapped
/// 739 / 248 / 324 us vs small_m 775 / 257 / 342), between 4 and 8 on Scout (r = 4: 160 vs
/// 155), between 1 and 2 on DeepSeek-V3 TP8 (I 256; r = 2: 404 vs 475).
/// FP8 per-tensor / per-channel (epilogue-scaled grouped GEMMs, PERF.md v15, per-channel):
/// at r = 4 swapped wins on the large experts (Mixtral 428 vs 477 us, Scout 117 vs 122) and
/// loses on the small ones (Qwen3 214 vs 201, Qwen2 174 vs 166; the sum of the four 3% lower
/// from r = 4), at r = 2 small_m or a tie everywhere (Scout 108 vs 104, DeepSeek-V3 TP8 317
/// vs 321, Mixtral 367 vs 369), at r = 8 swapped (Qwen2 176 vs 222).
/// FP8 128x128 blocks (v17, fp8_gemv at 3 resident CTAs and one wave; against v16's rule of
/// small_m below 16 pairs, same run, bench/results/h200/v17_split_rules/): the GEMV wins at
/// r <= 2 (Qwen3 M = 4 85.6 -> 67.4 us, M = 16 156 -> 147; Qwen2 M = 4 106 -> 84; DeepSeek
/// M = 8 146 -> 123, M = 16 204 -> 168; Scout M = 16 99.5 -> 88.9, M = 32 105 -> 97) but not
/// on Mixtral's large experts (M = 8, r = 2: 338 swapped vs 364); about ties at r = 1 on
/// Qwen2/Qwen3 M = 8 (1-2% slower); v16's forced paths: loses at r = 4 on Mixtral (M = 16 439
/// vs 398), ties at r = 4 on Qwen3 (206 vs 210), loses from 256 pairs on DeepSeek-V3 TP8
/// (M = 32, r = 1: 255 vs 226; M = 64: 405 vs 295: 56 block scales per row); always fp8_gemv
/// for other block shapes (fp8_grouped_supports).
/// Integer weights (GPTQ/AWQ/moe_wna16): wna16_gemv below r = 64 (24 at inter <= 256), then
/// the mixed-input GEMM (kGroupedMixed: wna16_grouped_gemm, the codes dequantized in registers);
/// the dequantization into bf16/fp16 chunks + the grouped GEMM only for layouts neither reads
/// (wna16_gemv_supports). v55 (`bench/results/h100/v55/`, measured on an H100 80GB HBM3: no
/// H200 could be had that session; grouped_mixed forced against auto, the v54 builds' first
/// call and the landed build's, w4a16 and w8a16): against the dequant path at every grouped
/// point 0.40-0.91 (Mixtral w4a16 M = 1024 3156.5 -> 2076.3 us, Qwen2 M = 768 0.398) but for
/// Mixtral w8a16 M = 4096 (r = 1024: 0.994 and 1.065); against the GEMV at r = 64 0.67-0.84
/// (Mixtral M = 256 1089.7 -> 750.8 us, Qwen3 M = 1024, Scout M = 1024, Qwen2 M = 512), at r =
/// 48 0.99-1.10 but Scout 0.86-0.91, at r = 32 1.08-1.27; DeepSeek-V3 TP8 (I 256) at r = 24
/// 0.81-0.97 and r = 32 0.82-0.92, at r = 16 0.93-1.25 (w8a16 / w4a16). Before v55 the GEMV
/// gave way to the dequant path further up (history; layouts the GEMV cannot read take the
/// dequant path at every batch): v50 (call 3, int8 after the GEMV's whole-sector code copies, w8a16
/// forced small_m against auto, two rounds): the GEMV at r = 96 0.73 / 0.91 (Mixtral M = 384
/// 2297.5 -> 1672.5 us, Qwen2 M = 768), r = 48-64 0.51-0.82 (Qwen3 M = 768 857.4 -> 437.4,
/// Scout M = 768 / 1024, Qwen2 M = 384 / 512), DeepSeek-V3 TP8 r = 32 0.777; slower at r = 128
/// on every shape (1.09-1.19; Mixtral M = 512 2162.1 -> 2349.6) and DeepSeek-V3 at r = 64
/// (1.100); 112 splits the unmeasured interval 96-128. v48 (call 6, the GEMV's four n-tiles
/// reading x once per CTA, forced small_m against the grouped path, w4a16 two rounds, w8a16
/// one; int8 before v50's copies): int4 at r = 64 0.66-0.73
/// (Qwen2 M = 512 617.2 -> 448.0 us, Qwen3 M = 1024 794.2 -> 523.0, Scout M = 1024 353.6 ->
/// 240.6), DeepSeek-V3 TP8 r = 32 0.671 and r = 64 0.999, Mixtral r = 128 0.939; at r = 128
/// 1.04-1.10 (Mixtral r = 256 1.317); int8 slower on the GEMV at every grouped point (1.10-1.76
/// at the first ones). v27's forced paths (int4,
/// w4a16_gptq, same run; bench/results/h200/v27/crossover_w4a16.txt), GEMV / best grouped us:
/// r = 32: Mixtral 1202 / 1867, Qwen2 395 / 580, Qwen3 468 / 771, Scout 279 / 338, but
/// DeepSeek-V3 TP8 (I 256) 1702 / 1585; r = 64: Mixtral (I 14336) 1812 / 2170, Qwen3 773 /
/// 817, Qwen2 696 / 651, Scout 472 / 358; r = 128: the grouped path everywhere (Mixtral 3473
/// / 2244). 48 keeps Scout's 24% at r = 64 over Qwen3's 5%.
/// Swapped operands: at r <= 32 faster than the 128-row tiles on all five shapes (bf16:
/// Mixtral r = 32 727 vs 776 us, Qwen2 r = 32 268 vs 296, DeepSeek r = 16 671 vs 681; FP8
/// alike), at r = 64 slower (Mixtral 1150 vs 775, Qwen2 348 vs 312: experts past 64 rows take
/// a second N tile that streams the weights again); 48 splits the unmeasured interval. v33,
/// with the swapped tiles walked along N (an expert's token tiles of one weight tile one after
/// another, the later reads from L2): still slower at r = 64 in bf16 (Mixtral M = 256 838 vs
/// 752 us, Scout M = 1024 199 vs 186, Qwen3 M = 1024 410 vs 390). These crossovers were
/// measured against 128-row unswapped tiles; v34's 64-row tiles, faster at r = 64 on most
/// shapes, would move them down if anything (not re-measured).
struct PathRule {
  int64_t rows;              ///< grouped from this many rows per active expert
  int64_t rows_small_inter;  ///< the same when inter <= kSmallInter
  int64_t rows_large_inter;  ///< the same when inter >= kLargeInter
  int64_t max_small_pairs;   ///< and from this many pairs at any rows (0: no such bound)
};
inline constexpr int64_t kSmallInter = 256;
inline constexpr int64_t kLargeInter = 8192;
inline constexpr int64_t kSwapMaxRows = 48;
inline constexpr PathRule kDensePathRule{4, 2, 4, 0};
inline constexpr PathRule kFp8PathRule{4, 4, 4, 0};
inline constexpr PathRule kFp8BlockPathRule{4, 2, 2, 256};
inline constexpr PathRule kIntegerPathRule{64, 24, 64, 0};
/// The rule choose_path applies to these weights (the table above).
PathRule path_rule(const QuantParams& quant);
KernelPath choose_path(const QuantParams& quant, int64_t pairs, int64_t num_experts, int64_t inter,
                       KernelPath forced);

/// Weight rows per tile of the swapped bf16/fp16 grouped GEMMs, per GEMM from its rows per
/// expert (n: 2I for GEMM1, H for GEMM2): 256 from kSwapWideMinRows, else 128. Fewer tiles of
/// twice the height read each token tile half as often and pay the per-tile costs half as
/// often, but give fewer tiles to balance over the SMs. Measured per GEMM (v33, bf16, one
/// binary, two rounds, the whole layer's time 256 / 128 with only that GEMM changed,
/// bench/results/h200/v33/): GEMM2 DeepSeek-V3 TP8 (n 7168, K 256) 0.944-0.962 at M = 64-1024,
/// Scout (5120) 0.989 / 1.006 at M = 64 / 256, Mixtral (4096) 0.993-0.998, Qwen2 (3584)
/// 0.994-1.001, Qwen3 (2048) 1.000-1.004; GEMM1 Mixtral (28672) 0.958 / 0.987 at M = 16 / 64,
/// Scout (2048) 1.001-1.012, Qwen3 (1536) 1.028-1.029, Qwen2 (1280) 1.074-1.079, DeepSeek
/// (512) 0.988-1.015.
inline constexpr int64_t kSwapWideMinRows = 4096;
int64_t swapped_tile_rows(int64_t weight_rows);

/// Token rows per tile of the unswapped bf16/fp16 grouped GEMMs (128 x 256 cooperative, or
/// 64 x 256 pingpong: each consumer warp group its own tile), per GEMM from the rows an active
/// expert averages (r = pairs / min(E, pairs)), its weight rows n (2I for GEMM1, H for GEMM2)
/// and the SM count: 128 where the 128-row tiles fit one wave (r <= kOneWaveMaxRows and
/// active experts x ceil(n / 256) <= SMs: each SM streams one weight tile once; 64-row tiles
/// would give the experts past 64 rows a second tile on an SM that already has one) and for
/// GEMM1 (gate/up) from kGateUpTallMinRows; else 64, which computes no padded half at r = 64 and
/// hides each tile's epilogue under the other warp group's mainloop (most where k is short:
/// GEMM2). Measured per GEMM (v34, bf16, one binary, two rounds, the layer's time with only
/// that GEMM on 64-row tiles / both on 128, bench/results/h200/v34/): GEMM1 DeepSeek-V3 TP8
/// r = 64 / 128 0.940 / 1.004, Scout r = 64 1.045 (one wave: 16 experts x 8 tiles), r = 128
/// 0.950, r = 256 0.973, Mixtral r = 64 / 128 / 256 / 512 / 1024 0.994 / 0.952 / 1.003 / 0.979 /
/// 1.007, Qwen2 r = 64 / 128 / 256 / 512 0.969 / 1.006 / 0.961 / 1.017, Qwen3 r = 64 / 128 /
/// 256 0.986 / 0.979 / 1.010 (from r = 256 mixed: 128 keeps the losses out); GEMM2
/// 0.962-0.992 at r = 64-1024 on every shape but Mixtral r = 64 (1.026, one wave: 8 experts x
/// 16 tiles), 0.998-1.001 at Scout r = 256 and Qwen2 r = 512.
inline constexpr int64_t kOneWaveMaxRows = 96;
inline constexpr int64_t kGateUpTallMinRows = 256;
int64_t grouped_tile_rows(int64_t pairs, int64_t num_experts, int64_t weight_rows, bool gate_up, int64_t sm_count);

/// The same for the unswapped FP8 GEMMs (128 x 128 x 128 cooperative or 64 x 128 x 128
/// pingpong), per GEMM from r, the weight rows n, the reduction length k and the scaling
/// (block_scales: 128 x 128 weight blocks in the mainloop, else per-tensor / per-channel
/// weights in the epilogue). Epilogue scales: 128 where the 128-row tiles fit one
/// wave (weight tiles of 128 columns, as above); else 64 for GEMM1 (gate/up) up to
/// kFp8GateUpShortMaxRows rows per expert, and for GEMM2 (down) up to kFp8DownShortMaxRows
/// where k is at least kFp8DownShortMinK and at most kFp8DownShortMaxK (up to
/// kFp8BlockDownShortMaxRows where k is shorter: two 128-k blocks per 64 x 192 tile leave its
/// epilogue most of the time). Measured per GEMM (v35, fp8_channel, one binary, two
/// rounds, the layer's time with only that GEMM on 64-row tiles / both on 128,
/// bench/results/h200/v35/): GEMM1 r = 64 DeepSeek-V3 TP8 0.983, Mixtral 0.980, Qwen3 0.972,
/// Scout / Qwen2 1.006; r = 128 0.994-1.032 but Mixtral 0.943; r = 256 1.000-1.074. GEMM2
/// (k = I) r = 64 / 128 / 256: Qwen3 (768) 0.943 / 0.958 / 0.978, Qwen2 (640) 0.957 / 0.965 /
/// 0.982 (r = 512 1.002), Scout (1024) 0.965 / 0.976 / 0.979, DeepSeek (256) 0.964 / 1.010;
/// Mixtral (k = 14336) 1.035 / 0.995 / 1.026 (r = 512 / 1024 1.075 / 1.111). On v41's
/// 192-column tiles (v44, fp8_channel / fp8_tensor, one binary, two rounds, GEMM2 on 128 rows
/// against this rule, bench/results/h200/v44/): DeepSeek-V3 TP8 (k = 256) r = 128 0.936 /
/// 0.981 and r = 64 1.042 / 1.057; the others keep 64: Qwen2 (640) r = 64 / 128 / 256 1.064 /
/// 1.017 / 0.999 (fp8_tensor 1.048 / 1.025 / 1.010), Qwen3 (768) r = 64 / 128 / 256 1.066 /
/// 1.017 / 1.010, Scout (1024) r = 64 / 128 / 256 1.036 / 1.007 / 0.984 (fp8_tensor 1.026 /
/// 1.006 / 0.988).
/// Block scales: the same one-wave test; then 64 for GEMM2 only, up to kFp8BlockDownShortMaxRows
/// rows per expert where k is at most kFp8DownShortMaxK. Measured per GEMM (v36, fp8_block, as
/// above): GEMM2 r = 64 DeepSeek-V3 TP8 0.986, Scout 0.991, Qwen2 0.982, Qwen3 0.984; r = 128
/// 0.979-1.007 (Scout 0.979, Qwen2 1.002, Qwen3 1.006, DeepSeek 1.007), r = 256 1.002-1.030;
/// Mixtral 1.029 at r = 64. GEMM1 r = 64 DeepSeek 0.983, Qwen3 1.002, Mixtral 1.004, Scout
/// 1.018, Qwen2 1.021; Mixtral r = 128 / 256 / 512 / 1024 0.929 / 0.944 / 1.065 / 1.147, the
/// other shapes at r >= 128 1.001-1.097: 128 (Mixtral's gains left out with the losses).
inline constexpr int64_t kFp8GateUpShortMaxRows = 96;
inline constexpr int64_t kFp8DownShortMaxRows = 256;
inline constexpr int64_t kFp8BlockDownShortMaxRows = 96;
inline constexpr int64_t kFp8DownShortMinK = 512;
inline constexpr int64_t kFp8DownShortMaxK = 4096;
int64_t fp8_grouped_tile_rows(int64_t pairs, int64_t num_experts, int64_t weight_rows, int64_t k, bool gate_up,
                              bool block_scales, int64_t sm_count);

/// Weight columns per tile (the kernel's N) of the same unswapped FP8 GEMMs, per GEMM from r and
/// the tile height fp8_grouped_tile_rows chose: epilogue scales 192 (128 x 192 x 128
/// cooperative, 64 x 192 x 128 pingpong; two promoted accumulator sets of 96 registers per
/// thread, no spills, where 256 columns spill), except 128 on 128-row tiles at r <=
/// kFp8NarrowTileMaxRows (mostly padding and bound by the weight stream, where 1.5x as many
/// tiles spread it better over the SMs; the one-wave test above counts 128 columns); block
/// scales 192 on 128-row tiles past kFp8NarrowTileMaxRows (the mainloop reading the weights'
/// scales per kFp8WideTileScaleCols columns), else 128. Measured (v41, fp8_channel, one
/// binary, two rounds, the layer with every such GEMM on 192 / on 128, bench/results/h200/v41/):
/// Mixtral r = 128-1024 0.837-0.934 (M = 1024 1132.7 -> 947.8 us), r = 64 0.966 (GEMM1 on 64
/// rows); Qwen2 r = 64-512 0.930-0.996, Qwen3 r = 64-256 0.940-0.976, Scout r = 64 / 128 / 256
/// 1.000 / 0.958 / 1.009, DeepSeek-V3 TP8 r = 64 / 128 0.991 / 0.994; fp8_tensor at M = 1024 and
/// 4096 0.832-1.000. Mixtral's GEMM2 alone on 192 at r = 64 (128-row tiles, k = 14336): 1.033.
/// Block scales (v42, fp8_block, one binary, two rounds, this rule against 128 columns
/// everywhere, bench/results/h200/v42/): Mixtral r = 128-1024 0.841-0.967 (M = 1024 1169.2 ->
/// 983.9 us), Qwen2 M = 1024-4096 0.960-0.975, Qwen3 M = 2048 / 4096 0.984 / 0.964, Scout
/// 0.952 / 0.985, DeepSeek-V3 TP8 M = 4096 0.965; the points this rule leaves on 128 columns
/// 0.997-1.005.
inline constexpr int64_t kFp8NarrowTileMaxRows = 96;
int64_t fp8_grouped_tile_cols(int64_t pairs, int64_t num_experts, int64_t tile_rows, bool block_scales);

/// Whether sm90_fp8_grouped_gemm takes these FP8 weights: per-tensor, per-channel, or block
/// scales of 128 x 128 (its scale block; DeepSeek-V3's).
bool fp8_grouped_supports(const QuantParams& quant);
/// Whether the FP8 grouped GEMM applies the scales once in its epilogue (they do not vary along
/// k: per-tensor or per-channel weights, which validation pairs with per-tensor or per-token
/// activations) and reads the checkpoint's weight scales as they are; else (128 x 128 blocks)
/// its blockwise-scaled mainloop, with the block scales rewritten per call in its layout
/// (fp8_weight_scales), ceil(n / g) * ceil(k / 128) per expert of one projection (n x k), g =
/// n_granularity columns per scale (128, or kFp8WideTileScaleCols under 192-column tiles, which
/// the workspace holds).
using kernels::kFp8WideTileScaleCols;
bool fp8_epilogue_scales(const QuantParams& quant);
int64_t fp8_block_scales_per_expert(int64_t n, int64_t k, int64_t n_granularity = 128);
/// Whether the FP8 grouped path quantizes the gated activation as fp8_quantize computes it
/// from GEMM1's output (the activation never written in bf16), or writes it with gated_act
/// first: a dynamic per-tensor scale needs every value's amax before any is quantized, and
/// long rows (inter above kFp8FusedActivationMaxInter) lost fused: Mixtral's I = 14336 was
/// 1.4-8% slower at M = 1024-4096 in both fused kernel designs measured (PERF.md v19), while
/// the shapes with I = 256-1024 ran 2-17% faster there (the fused gather of x included).
inline constexpr int64_t kFp8FusedActivationMaxInter = 4096;
bool fp8_fuses_activation(const ProblemShape& shape, const QuantParams& quant);
/// Whether a dynamic per-tensor scale's quantizer of `rows` (a bound) rows of `cols` values
/// runs in one pass on `sms` SMs (kernels/fp8_one_pass.h: the rows held in the CTAs' shared
/// memory across a grid barrier; no amax pass, and for the grouped path's activation no
/// gated_act writing it in bf16 first), else in two. Any such tensor that fits: the one pass
/// reads its input once where the two read it twice (or write and read it once more).
bool fp8_one_pass_quantize(const QuantParams& quant, int64_t rows, int64_t cols, int64_t sms);
/// Whether the FP8 grouped path quantizes x once per token and stores it at the rows of the
/// token's pairs (kScatterTokens), else once per pair (kGatherTokens).
/// - Per-token scales (a warp or a CTA per row): measured with every M on it (v24,
///   per-channel): M = 4096 with topk 8 2.8-4.7% faster (the same token quantized topk times
///   before), topk 2 neutral, topk 1 2.2% slower; M = 64-1024 2-3% slower then (a CTA per
///   token storing topk rows in turn). Again in v43 (fp8_channel, two rounds, topk >= 2 at
///   every M against this rule at 2048): topk 8 M = 256 / 512 / 1024 0.991-0.998 / 0.983-0.993
///   / 0.978-0.988, M = 64 1.002-1.005; Mixtral (topk 2) 0.996-1.003. So from
///   kFp8ScatterMinTokens tokens and topk >= 4.
/// - Group and tensor scales (a team of 16 lanes per 128-column span): measured at M = 16-4096
///   (v43, fp8_block and fp8_tensor, two rounds) against once per pair: topk 8 0.77-0.97 from
///   M = 256 (DeepSeek-V3 TP8 block M = 2048 986.0 -> 760.5 us, M = 1024 609.4 -> 528.7),
///   0.96-0.98 at M = 64 but for Qwen3 (1.00); topk 2 (Mixtral) 0.988-0.995 from M = 256;
///   topk 1 0.986-1.004 (a token is its pair). So topk from kFp8SpanScatterMinTopk to
///   kernels::kFp8ScatterSpanMaxTopk (the span team's lanes) at any M.
inline constexpr int64_t kFp8ScatterMinTokens = 256;
inline constexpr int32_t kFp8ScatterMinTopk = 4;
inline constexpr int32_t kFp8SpanScatterMinTopk = 2;
bool fp8_x_by_token(const ProblemShape& shape, const QuantParams& quant);
/// Whether GEMM1 of the FP8 grouped path reads x's e4m3 rows by token itself
/// (sm90_gather_mainloop.cuh over the epilogue-scaled kernel, as grouped_gemm1_gathers for
/// bf16): x is then quantized once per token into [tokens, H] and only its scales go to the
/// rows of the token's pairs (kScatterTokens with codes_by_token), where otherwise its codes
/// are written at every pair's row (topk times x's bytes) and read back by GEMM1's TMA.
/// Epilogue scales (per-tensor and per-channel), H a multiple of 16 (the producer's 16-byte
/// copies), topk >= 2 (with one pair per token nothing is saved); then swapped tiles where H
/// is at least kFp8SwapGatherMinHidden, and unswapped ones on 64 x 192 tiles (tile_rows x
/// tile_cols: fp8_grouped_tile_rows / _cols) where 2I is at most kGatherMaxGateUpRows.
/// Measured (v44, fp8_channel / fp8_tensor, one binary, two rounds, the layer with every
/// eligible GEMM1 gathering against none, bench/results/h200/v44/): swapped Mixtral (H =
/// 4096, topk 2) M = 16-96 0.947-0.994, M = 128 0.994 / 0.998; DeepSeek-V3 TP8 (7168) M = 256
/// / 512 / 1024 0.988 / 0.984 / 0.985 (0.997 / 0.990 / 0.981), M = 128 0.997 / 1.005; but Qwen2
/// (3584) M = 32-256 1.004-1.029 and Qwen3 (2048) 1.017-1.036; Scout (topk 1) 0.999-1.010.
/// Unswapped DeepSeek (2I = 512) on 64-row tiles (r = 64-96) 0.968-0.976, on 128-row ones (M =
/// 4096) 1.055 / 1.057; the wider 2I on 64-row tiles (r = 64) Qwen2 1.004 / 1.011, Qwen3 1.019
/// / 1.017, Scout 1.004 / 1.009, and 1.08-1.29 on 128-row tiles (Mixtral M >= 512 1.10-1.29):
/// where GEMM1 is bound by its tensor cores the cp.async producer costs more than the bytes
/// it saves.
inline constexpr int64_t kFp8SwapGatherMinHidden = 4096;
bool fp8_gemm1_gathers(const QuantParams& quant, KernelPath path, int64_t tile_rows, int64_t tile_cols,
                       int64_t hidden, int64_t inter, int32_t topk);

/// Whether a small-M layer writes its output from the down GEMV, without the combine: top-1
/// (a pair is its token), at most kZeroSkippedMaxPairs pairs (align's one CTA zeroes the rows of
/// tokens with no local expert), and with an expert map at most kTop1DirectMaxMappedTokens
/// tokens: under expert parallelism most top-1 rows are skipped, and one CTA zeroing them
/// costs more than the combine's full grid beyond a few (v27 review: about 10 KB per row at
/// Scout's H; an estimate, not measured). Without a map only ids out of range are skipped.
/// Measured (v27): Scout M = 1 1.1-1.4 us faster without the combine.
inline constexpr int64_t kTop1DirectMaxMappedTokens = 16;
bool top1_direct_output(const ProblemShape& shape, bool has_expert_map);
/// Whether a small-M layer runs its down GEMV per token with the combine folded in
/// (kernels::launch_one_token_down, launch_wna16_one_token_down): M = 1 on either expert
/// table, or up to kDirectTableMaxTokens tokens on the direct table (`direct`: direct_table
/// holds; a CTA row per token) where I >= kOneTokenDownPerTokenMinInter; top-k 4-8; dense
/// weights, or int4 ones that wna16_gemv reads where its down GEMV would not split K further
/// than the one-token kernel does. A CTA sums its 16 output rows over its token's experts in
/// shared memory, so neither the y rows nor the combine's launch remain. Measured (v39, bf16,
/// M = 1, three rounds, against the combine): Qwen2 0.926, DeepSeek-V3 TP8 0.976, Qwen3 0.991
/// (top-8), Mixtral (top-2, K = 14336) 1.006; top-1 writes its output directly already.
/// Integer (v57, H100, four ABBA rounds): int4 GPTQ / AWQ g128 Qwen3 0.930-0.943, Qwen2
/// 0.944-0.960, DeepSeek-V3 TP8 0.953-0.974; int8 Qwen3 1.014-1.029 (its down GEMV splits K 2
/// ways there, the one-token kernel's warps 1: half the warps, twice the serial ring stages),
/// Qwen2 and DeepSeek-V3 0.992-1.029 (no gain): int8 keeps the combine. FP8 at one token
/// (launch_fp8_one_token_down, align's table) where I >= kOneTokenDownPerTokenMinInter, or
/// under block scales: v66 (H100, two ABBA rounds against the down GEMV and combine) Qwen2 TP4
/// 0.950-0.969 and Qwen3 0.964-0.974 in every scaling mode; DeepSeek-V3 TP8 (I = 256) block
/// 0.980-0.983, per-channel 1.006, per-tensor 1.016. Since v67 the kernel also quantizes the
/// token's intermediate in its shared memory (no intermediate quantizer launch), where
/// kernels::fp8_one_token_down_supports holds (at most 48 KiB; groups of 64, 128 or 256):
/// against v66's kernel and the quantizer (H100, two ABBA rounds; PERF.md v67) per-channel
/// Qwen3 0.960-0.966, Qwen2 0.980-0.988, per-tensor 0.949-0.953 / 0.971-0.979, block
/// DeepSeek-V3 0.943-0.945, Qwen3 1.000-1.003, Qwen2 1.008.
/// v65 (H100, two rounds, against the direct table's down GEMV and combine): Qwen3 (I = 768)
/// w4a16 M = 2 / 3 0.97 / 0.976, bf16 0.97 / 0.98, Qwen2 TP4 (I = 640) w4a16 M = 2 0.99;
/// DeepSeek-V3 TP8 (I = 256) w4a16 M = 3 / 4 1.01 / 1.025, bf16 M = 2 1.02.
/// FP8 from v69: 2 to kFp8FewTokensDownMaxTokens tokens on align's table too (a CTA row per
/// token, each finding its pairs' rows in the table; at most kernels::kWarpAlignPairs pairs,
/// not under dynamic per-tensor scales), so that neither the intermediate's quantizer nor the
/// combine runs there either, where the down weights its CTA rows stream again for an expert
/// that several tokens share (expected_repeated_pairs x H I bytes) are at most
/// kFp8FewTokensDownMaxDuplicateBytes. Measured (v69, H100, two ABBA rounds against the down
/// GEMV, quantizer and combine; PERF.md v69): per-channel Qwen3 M = 2 / 3 / 4 0.947 / 0.966 /
/// 0.985, Qwen2 TP4 M = 2 / 3 0.97 / 0.99; block DeepSeek-V3 TP8 0.92 / 0.94 / 0.97, Qwen3
/// 0.955 / 0.95 / 0.975, Qwen2 TP4 1.01 / 0.96; Qwen2 TP4 M = 4 (12.7 MB expected again)
/// 1.016-1.029 slower, which the bound leaves on the combine.
inline constexpr int64_t kOneTokenDownPerTokenMinInter = 512;
inline constexpr int64_t kFp8FewTokensDownMaxTokens = 4;
inline constexpr int64_t kFp8FewTokensDownMaxDuplicateBytes = int64_t{8} << 20;
inline constexpr int64_t kOneTokenDownMinTopk = kernels::kOneTokenDownMinTopk;
inline constexpr int64_t kOneTokenDownMaxTopk = kernels::kOneTokenDownMaxTopk;  // one CTA's 8 warps, one expert each at least
bool one_token_down(const ProblemShape& shape, const QuantParams& quant, int32_t sm_count, bool direct);

/// Whether a small-M layer runs without align (the direct table, kernels::GroupedGemvParams):
/// at most kDirectTableMaxTokens tokens and kernels::kMaxDirectPairs pairs, no expert map, no
/// act-order (its x columns are gathered by align's table), dense or integer weights, and at
/// most kDirectTableMaxDuplicateBytes of expected duplicate weight reads
/// (direct_table_duplicate_bytes). The GEMVs take the routing's ids as their instances,
/// instance s being pair s at sorted position s (an expert that two tokens share is streamed
/// once per pair, as its own instance, where align's table streams it once), and a skipped
/// id's CTAs write zeros to its rows; the one-token down kernels and the combine read the same
/// ids. At decode the layer is the serial sum of its kernels, of which align is one (v57 call
/// 3, H100, ncu: 3.9 of Qwen3 w4a16's 28.0 us at M = 1).
/// Measured (v58, H100, ABBA against align at M = 1, four rounds): bf16 0.88-0.99, w4a16
/// 0.85-0.98, w8a16 two rounds 0.88-0.99 (Scout top-1 most, Mixtral's long GEMVs least). v65
/// (H100, two rounds against align, M = 2-4, the bench's routing): where the expected
/// duplicates are under 4 MiB, w4a16 Qwen3 M = 2 0.94, DeepSeek-V3 TP8 M = 2-3 0.96, M = 4
/// 0.995, Qwen2 TP4 M = 2 0.95, Scout M = 2-4 0.89-0.92, w8a16 0.92-0.97, bf16 DeepSeek-V3 M =
/// 2 0.99, Scout M = 2 0.91; above them up to 1.19x slower (Mixtral bf16 M = 3; Qwen2 M = 4
/// 1.10, Qwen3 M = 4 1.02-1.06), with gains left out (Qwen2 M = 2 w8a16 / bf16 0.96 / 0.975,
/// Scout bf16 M = 3-4 0.95, at 5-14 MiB expected).
/// Not FP8: its x quantizer ran beside align (M = 1 0.95-1.00, Mixtral 1.02-1.03 slower), and
/// fp8_gemv's kernels with the direct table's prologue were 1.00-1.04x slower at M = 2-16, so
/// they keep align's (WarpPlace's kDirect).
inline constexpr int64_t kDirectTableMaxTokens = 4;
inline constexpr int64_t kDirectTableMaxDuplicateBytes = int64_t{4} << 20;
bool direct_table(const ProblemShape& shape, const QuantParams& quant, bool has_expert_map);
/// The pairs beyond the distinct experts they hit, expected under uniform routing: M topk - E
/// (1 - (1 - topk / E)^M). Zero at one token.
double expected_repeated_pairs(const ProblemShape& shape);
/// The weight bytes the direct table streams beyond align's distinct experts, expected under
/// uniform routing: expected_repeated_pairs instances, each an expert's codes of both
/// projections (3 H I weights at bits / 8 bytes, dense 2).
double direct_table_duplicate_bytes(const ProblemShape& shape, const QuantParams& quant);

/// Whether a small-M layer runs as one launch for one token (kernels::launch_wna16_one_token_layer:
/// both GEMMs and the combine, every CTA's share of both GEMMs' weights copied into its shared
/// memory at its start (or, where they do not fit together, the down codes once its gate-up
/// GEMM is done, into their place: dn_after_gu), a grid barrier between the GEMMs; PERF.md
/// v60-v62): one token (M = 1) where direct_table holds, top-k at least kOneTokenLayerMinTopk, int4 weights
/// whose groups are a power-of-two count of whole 128-k blocks or one per row, H and I multiples
/// of 128, and the plan fits shared memory on sm_count CTAs (of the bench shapes Qwen3,
/// DeepSeek-V3 TP8 and, dn_after_gu, Qwen2 TP4). one_token_layer_plan gives that plan (any top-k).
/// v61 on an H100 (w4a16 M = 1, against the GEMVs, ABBA): top-8 Qwen3 0.78-0.79, DeepSeek-V3 TP8
/// 0.83-0.85 (GPTQ and AWQ g128); v62: Qwen2 TP4 (dn_after_gu) 0.86-0.87 GPTQ, 0.89-0.90 AWQ on
/// an H100, 0.87 / 0.94 on an H200; top-1 Scout TP8 1.05 (its GEMVs write out directly, no combine, and its 40 scale
/// groups per row land late), so top-1 layers keep the GEMVs. Top-2 to top-6 are not measured
/// (on the GEMVs top-2 and top-3 also run the combine launch; one_token_down takes top-4 to 8).
inline constexpr int64_t kOneTokenLayerMinTopk = 2;
bool one_token_layer(const ProblemShape& shape, const QuantParams& quant, bool has_expert_map, int32_t sm_count);
kernels::OneTokenLayerPlan one_token_layer_plan(const ProblemShape& shape, const QuantParams& quant, int32_t sm_count);

/// Whether the grouped path's GEMMs launch as programmatic dependents
/// (kernels::GroupedGemmParams): both GEMMs launch_early (GEMM1's CTAs start under the setup
/// kernel, GEMM2's under the FP8 activation's quantizer or the setup kernel, both of which let
/// them at once) and GEMM2 releases its successor (the combine's CTAs start under GEMM2's tail
/// and load their slots' rows and weights there). GEMM1 never releases GEMM2 early. Where the
/// pairs per expert (M * topk / E) are at most kGemmEarlyLaunchMaxRowsPerExpert.
/// Measured (bench/results/h200/v47, against plain launches):
/// - call 1, each overlap alone (an experiment build's FUSEDMOE_GEMM_PDL bits), bf16 and
///   fp8_channel at M = 64-4096, two rounds: the combine under GEMM2 M = 64-256 0.989-0.999
///   on every shape, M = 1024 0.994-1.004, M = 4096 up to 1.008 (DeepSeek-V3 TP8); GEMM1 under
///   setup 0.995-1.001 (M <= 1024); FP8 GEMM2 under the activation's quantizer M = 64-256
///   0.988-1.002, M = 1024 up to 1.030 (Mixtral), M = 4096 up to 1.038 (Qwen3); GEMM2 under
///   GEMM1 (bf16, GEMM1 releasing) 1.001-1.014 at M = 64-256 and 1.003-1.046 from M = 1024.
/// - call 2, the three together up to M = 512 (every precision): Scout, Qwen2 and Qwen3 at
///   4-32 pairs per expert 0.977-0.998, DeepSeek (4-16) 0.989-1.001, Mixtral (4-32)
///   0.993-1.010; at 64 pairs per expert and more Qwen2 fp8_channel M = 512 1.013, Mixtral
///   M = 512 1.014 (bf16) to 1.051 (fp8_channel), Mixtral M = 256 0.996-1.006.
/// - call 3, this rule, M = 16-2048: 0.974-1.004 where it launches early.
/// Each kernel alone takes the same time either way (v46 call 6): what is lost is in the
/// overlap, and grows with the GEMMs' length; not explained further.
inline constexpr int64_t kGemmEarlyLaunchMaxRowsPerExpert = 32;
bool grouped_gemms_launch_early(const ProblemShape& shape);

/// Whether GEMM1 of the bf16/int grouped path applies the gated activation in its epilogue
/// (sm90_grouped_gemm's gated instantiations), writing I columns instead of the 2I of gate and
/// up: it needs w13 interleaved (gate_up_row()), which prepare_weights writes for dense weights
/// given storage and wna16_dequant always writes. FP8 w13 keeps the checkpoint's order.
bool grouped_fuses_activation(const QuantParams& quant, bool gate_up_interleaved);

/// Whether GEMM1 of the dense grouped path (gated: w13 interleaved) reads x's rows in token
/// order itself (sm90_gather_mainloop.cuh: a cp.async producer for the activations beside the
/// weights' TMA) instead of reading the copy a gather kernel writes in expert order first (then
/// align writes row_of_pair). Its one producer warp issues 16-32 cp.async per lane per k-step
/// (about 5 instructions each), loads each token tile again for every weight tile, and pays a
/// dependent chain of loads (the tile's rows' tokens) at each tile's start.
/// Unswapped tiles: where 2I is at most kGatherMaxGateUpRows (two 256-row weight tiles), at
/// any M, and where 2I is at most kGatherShortMaxGateUpRows (eight) while the experts average
/// at most kGatherShortMaxRows rows (r = pairs / min(E, pairs)), where GEMM1 streams its
/// weights with few token tiles each; from 128 rows the copy wins. Measured (v38, bf16, one
/// binary, two rounds, the layer gathering / with the copy): DeepSeek-V3 TP8 (2I = 512) r =
/// 64 / 128 0.882 / 0.872; Scout (2048) r = 64 / 128 / 256 0.976 / 1.013 / 1.093; Qwen3
/// (1536) 0.987 / 1.005 / 1.054; Qwen2 (1280) r = 64 / 128 / 256 / 512 0.959 / 0.995 / 1.059 /
/// 1.012; Mixtral (28672) r = 64 / 128 1.019 / 1.021, then 1.136-1.160.
/// Swapped tiles (128 weight rows x 64 tokens; not the 256-row ones): where GEMM1 has at most
/// kSwapGatherMaxTilesPerSm weight tiles per SM (active experts x ceil(2I / 128)), so few tile
/// starts per SM, or where the gather copies many elements per expert (H * r at least
/// kSwapGatherMinRowElems). Measured (v38, bf16, three rounds, same comparison): Scout (1.9
/// tiles per SM) r = 4-32 0.979-0.992, Qwen2 (4.8) r = 4-32 0.989-0.995; Qwen3 (11.6, H =
/// 2048) r = 4-32 1.010-1.020 and DeepSeek-V3 TP8 (7.8, H = 7168) r = 2 / 4 / 8 1.003 / 1.029
/// / 1.001, but r = 16 / 32 (H * r = 114688 / 229376) 0.985 / 0.920; a second run 1.003 / 1.038
/// / 1.006 / 0.991 / 0.934 for DeepSeek, Qwen3 1.018-1.034.
inline constexpr int64_t kGatherMaxGateUpRows = 512;
inline constexpr int64_t kGatherShortMaxGateUpRows = 2048;
inline constexpr int64_t kGatherShortMaxRows = 64;
inline constexpr int64_t kSwapGatherMaxTilesPerSm = 5;
inline constexpr int64_t kSwapGatherMinRowElems = 100000;
/// The mixed-input GEMM (kGroupedMixed, 128-token tiles) reads x's rows by token with its
/// producer warp group's cp.async (the copies spread over 128 threads, their addresses worked
/// out once per tile) where 2I is at most kGatherMaxGateUpRows and the active experts average
/// at least kMixedGatherMinRows rows; elsewhere, and always under act-order (whose copy puts x's
/// columns in each expert's order), a gather kernel copies them in expert order first and the
/// GEMM reads them by TMA. Measured (v56 call 3, H100, ABBA, w4a16 and w8a16 on the mixed path,
/// x by token on every 128-token tile against main): DeepSeek-V3 TP8 (2I = 512) r = 32 / 64 /
/// 128 0.968-0.981 / 0.908-0.930 / 0.862-0.881 (M = 4096 1964.6 -> 1698.0 us: the gather copy
/// was 278 us there, v56 call 2), r = 8 / 16 1.034-1.077 slower; Scout, Qwen2, Qwen3 (2I =
/// 1536-5120) at r = 64-128 0.973-1.017, at r = 16-32 1.06-1.18 slower; Mixtral r = 64 / 128
/// 1.18-1.22 slower. The copies compete with the consumers where the GEMM streams its weights
/// (few rows per tile, many weight tiles per token tile); the copy kernel's cost grows with
/// pairs x H. On 128-token tiles everywhere (the 256-token tiles' points too) 1.08-1.44 slower
/// at those points (Mixtral M = 4096 4657.3 -> 6698.5 us).
inline constexpr int64_t kMixedGatherMinRows = 32;
bool grouped_gemm1_gathers(const QuantParams& quant, bool gate_up_interleaved, KernelPath path, int64_t inter,
                           int64_t hidden, int64_t pairs, int64_t num_experts, int64_t sm_count);

/// Whether `path` stores GEMM1's gate and up sums in the activation dtype before the
/// activation (the grouped paths where GEMM1 does not apply it itself); the CPU reference
/// rounds there too when it checks that path.
inline bool path_rounds_gate_up(KernelPath path, const QuantParams& quant, bool gate_up_interleaved) {
  return is_grouped_path(path) && !grouped_fuses_activation(quant, gate_up_interleaved);
}

/// Whether wna16_gemv (and the mixed-input wna16_grouped_gemm, KernelPath::kGroupedMixed) reads
/// these integer weights: groups of 32 or 64 columns, a multiple of 128, or one group per row
/// (act-order weights too: prepared with K in group order).
bool wna16_gemv_supports(const QuantParams& quant);

/// wna16_grouped_gemm's token rows per tile (kernels::Wna16GemmParams::tile_tokens): 256 where
/// the active experts average at least kWna16GemmWideMinRows rows (each dequantized weight
/// then feeds twice the tokens), else 128. A first rule, not yet measured (PERF.md v51).
inline constexpr int64_t kWna16GemmWideMinRows = 256;
int32_t wna16_gemm_tile_tokens(int64_t pairs, int64_t num_experts);

/// Bytes of the prepared integer layout of one projection (launch.h, QuantWeightsView):
/// codes [E, N, K rounded up to 128] at bits per code, scales [E, G, N] in the checkpoint's
/// scale dtype, zeros [E, G, N] (uint8 for int4, uint16 for int8) when present, and with
/// act-order the projection's column order [E, K] int32 in the g_idx slot (FORMATS.md).
/// Dense weights: `codes` is the projection [E, N, K] in 2-byte elements (w13's rows
/// interleaved, gate_up_row()), the other parts empty.
struct PreparedQuantSizes {
  int64_t codes = 0, scales = 0, zeros = 0, g_idx = 0;
  int64_t total() const;  ///< each part rounded up to 256 bytes
};
PreparedQuantSizes prepared_quant_sizes(const ProblemShape& shape, const QuantParams& quant, Projection which);
/// Bytes of the whole prepared storage: w13's parts, then w2's (integer and dense formats).
size_t prepared_quant_bytes(const ProblemShape& shape, const QuantParams& quant);
/// The prepared integer layout's tensors inside `storage`: w13's codes, scales, zeros, g_idx,
/// then w2's, each at a 256-byte boundary (absent parts stay nullptr).
void prepared_quant_pointers(const ProblemShape& shape, const QuantParams& quant, const void* storage,
                             ProjectionWeights* w13, ProjectionWeights* w2);

/// Experts whose dequantized weights the grouped path holds at once (at least one): as many
/// as fit kDequantScratchBytes at the larger projection (2I x H) in the activation dtype.
inline constexpr int64_t kDequantScratchBytes = int64_t{512} << 20;
int32_t dequant_chunk_experts(const ProblemShape& shape, DType act_dtype);

/// Launch configuration of the small-M path for one GEMM (see choose_small_m_config).
struct SmallMGemmConfig {
  int32_t split_k = 1;   ///< warps of a CTA sharing one 16-row tile's K range: 1, 2, 4, 8
  int32_t n_tiles = 1;   ///< 8-token MMA tiles per pass over an expert's weights: 1, 4 or 8
  int64_t ctas = 0;      ///< CTAs launched (an upper bound: slots past the live experts exit)
  int32_t ctas_per_sm = 0;  ///< fp8_gemv block scales: 3 for the register-bound variant, else 0
};

/// How choose_small_m_config grows split-K, per GEMV kernel (PERF.md v16).
struct SmallMSplitRule {
  /// The kernel's resident CTAs per SM with one n-tile and with four (0: the multi-wave rule).
  /// Multi-wave: the smallest split whose grid reaches kSplitTargetCtasPerSm CTAs per SM, or
  /// the largest K allows. One wave (resident CTAs R > 0, and the unsplit grid at most
  /// max_unsplit_ctas_per_sm per SM, else multi-wave): the largest split whose grid fits
  /// R CTAs per SM, split 1 when even that grid does not, so that every CTA's fixed latency
  /// (the expert lookup, the split-K reduction, the epilogue) is paid once.
  int32_t resident_one_tile;
  int32_t resident_four_tiles;
  int32_t max_unsplit_ctas_per_sm;
  /// Four n-tiles: split 1 wherever the unsplit grid has at least this many CTAs per SM
  /// (0: never; the rules above decide).
  int32_t unsplit_four_tiles_min_ctas_per_sm = 0;
  /// Four n-tiles (32 tokens per pass) where the active experts average more than this many
  /// pairs, else one (8 tokens per pass).
  int32_t four_tiles_above_rows = 12;
  /// Eight n-tiles (64 tokens per pass; only unsplit, by unsplit_four_tiles_min_ctas_per_sm)
  /// where the active experts average more than this many pairs (0: never).
  int32_t eight_tiles_above_rows = 0;
  /// One n-tile: at least split 2 where K is at least this (0: never), whatever the rules
  /// above chose: the split kernels stream with more steps in flight (kFp8GateUpSplitRule).
  int64_t split_two_from_k = 0;
};
/// The multi-wave target (v3: at 1-2 CTAs per SM the last partial wave of large CTAs cost
/// Mixtral M = 1 a third of its bandwidth).
inline constexpr int32_t kSplitTargetCtasPerSm = 8;
/// The FP8 GEMVs' one-wave bound on the unsplit grid (v16, between measured points:
/// DeepSeek-V3 TP8 gate-up at M = 32-64, 1024 CTAs unsplit on 132 SMs, ran 20-27% slower
/// unsplit than at v3's split 2, same run; Qwen2's down GEMV at M = 4, 896 CTAs, took 80 us
/// one-wave against 87 multi-wave, two runs).
inline constexpr int32_t kFp8OneWaveMaxUnsplitCtasPerSm = 7;
/// Dense GEMVs (compiled for kernels::kGemvCtasPerSm = 2 resident CTAs, split, as wna16_gemv;
/// the unsplit dense ones fit 3; layer.cpp static_asserts the two agree): one wave only while the
/// unsplit grid has at most one CTA per SM (v17: every split pair 1-8 x 1-8 of both GEMVs
/// measured at M = 1, 4, 16 on the five shapes, bf16 and w4a16, one run; this rule's choices
/// average 1.8% over each point's best pair, v16's multi-wave rule 3.9%, and are slower
/// nowhere: bf16 Qwen3 M = 1 39 -> 35 us, w4a16 Qwen2 M = 1 38 -> 33, DeepSeek M = 4 67 -> 62,
/// Scout M = 4 38 -> 34. A bound of two per SM was measured too, same run as the FP8 changes:
/// one wave at split 1 for 256-CTA grids of long K, bf16 Scout M = 16 114 -> 132 us, Mixtral
/// M = 4 634 -> 657; as at Mixtral M = 1's gate-up, 448 CTAs, 13-17% slower in v16).
inline constexpr SmallMSplitRule kDenseSplitRule{2, 0, 1};
/// The dense gate-up GEMV: kDenseSplitRule, but split at least 2 from K = 2048 (v68's sweep on
/// an H100, bf16 M = 1-32, one round: at the 4 GEMV points where the rule above left gate-up
/// unsplit, split 2 with the same down split measured Qwen3 M = 16 / 32 0.971 / 0.967, Mixtral
/// M = 4 / 8 0.991 / 0.973).
inline constexpr SmallMSplitRule kDenseGateUpSplitRule = [] {
  SmallMSplitRule r = kDenseSplitRule;
  r.split_two_from_k = 2048;
  return r;
}();
/// wna16_gemv (v48, `bench/results/h200/v48/`):
/// - four n-tiles run unsplit from one CTA per SM on, where the CTA's warps share x's rows in
///   shared memory (kernels::wna16_gemv, kSharedX): every four-tile point of the bench shapes
///   (256-2048 unsplit CTAs) 0.49-0.84 against the dense rule's splits of 2-8, equal where that
///   rule gave split 1 already (w4a16 Scout M = 256 187.4 -> 91.7 us, Qwen2 M = 128 267.8 ->
///   169.2, DeepSeek-V3 M = 512 1021.5 -> 659.9, Mixtral M = 64-256 0.63-0.64; w8a16
///   0.67-0.96). Smaller unsplit grids were not measured and keep the multi-wave rule.
/// - one n-tile, int4: one wave while the unsplit grid has at most two CTAs per SM (the
///   resident count; the ring keeps the loads in flight, not the CTA count): w4a16 Scout M =
///   16-128 0.78-0.91, Mixtral M = 16 0.928, DeepSeek-V3 M = 8 0.916, Qwen2 / Qwen3 M = 2
///   0.945 / 0.970; Mixtral M = 32 1.018 and M = 8 1.009 the losses.
/// - one n-tile, int8: as int4, one wave up to two CTAs per SM (v50). v48 measured it mixed
///   (Qwen2 M = 2 1.120, DeepSeek-V3 M = 8 1.055, Mixtral M = 8 1.030; Scout M = 64 0.915) and
///   kept the dense rule's one per SM, while the int8 GEMV was bound by L2 (each code sector
///   read twice). After v50's whole-sector copies (call 4, this rule against the dense rule's
///   bound, both on the new kernel, ABBA): Qwen3 M = 2 48.2 -> 41.3 us, Scout M = 16 / 32 / 64
///   0.903 / 0.907 / 0.859, M = 4 0.933, Mixtral M = 4 / 16 0.966 / 0.939, DeepSeek-V3 M = 8
///   0.940, Qwen2 M = 1 / 2 0.927 / 0.962; every other point within 1% but DeepSeek-V3 M = 1
///   1.017 (the same splits, 0.6 us).
/// - four n-tiles above 6 pairs per active expert (the dense GEMV's 12; call 8, at 8 pairs per
///   expert): w4a16 DeepSeek-V3 M = 256 584.1 -> 453.6 us, Scout M = 128 0.810, Qwen2 M = 64
///   0.971, Mixtral M = 32 1.010 and Qwen3 M = 128 1.012 the losses; w8a16 0.66-0.82 at all
///   five. At 4 pairs per expert (above 3) four tiles lost up to 1.54x (Mixtral M = 16).
/// - eight n-tiles (64 tokens per pass; kernels::wna16_gemv dequantizes the weights with their
///   scales there) above 24 pairs per active expert (v49, `bench/results/h200/v49/`):
///   w8a16 at 32-64 pairs per expert 0.71-0.85 (Mixtral M = 128 1473.7 -> 1081.1 us, Scout M =
///   512 0.714, Qwen2 M = 256 0.781, Qwen3 M = 512 0.838), at 8-16 pairs 1.04-1.14 slower (call
///   1, above 6). int4 lost or barely gained at 32-64 (Mixtral M = 128 0.928, M = 256 1.047,
///   DeepSeek-V3 M = 1024 1.050). By count: eight tiles cut int4's instructions and DRAM bytes
///   per token, not its x fragments' shared-memory reads, which kept the shared pipe 64% busy
///   at four tiles (v48's ncu); int8 carries twice the weight bytes per step. int4 since v53
///   (after v50's whole-sector x copies; `bench/results/h200/v53/call1/summary.txt`, one run
///   each): 0.879-0.978 at every point where it fires (Mixtral M = 128 736.1 -> 663.4 us,
///   Scout M = 512 0.879, Qwen2 M = 256 / 512 0.928 / 0.929); above 12 the 16-pair points lost
///   1.05-1.21. v55 on an H100 (ABBA, `bench/results/h100/v55/call1/`): 0.879-0.979 where it
///   fires, 0.985-1.014 elsewhere; int4 and int8 now share the rule.
inline constexpr SmallMSplitRule kWna16SplitRule{2, 0, 2, 1, 6, 24};
/// fp8_gemv with per-tensor / per-row weight scales, no register bound: one n-tile 94-102
/// registers (2 CTAs) split, 64-78 (3-4) unsplit; four n-tiles 108-138 (1-2). One wave of 2
/// at both (v16: Mixtral M = 64, four n-tiles, 659 vs 693 us multi-wave).
inline constexpr SmallMSplitRule kFp8SplitRule{2, 2, kFp8OneWaveMaxUnsplitCtasPerSm};
/// fp8_gemv's gate-up GEMV (per-tensor / per-row scales): kFp8SplitRule, but split at least
/// 2 from K = 3584 (v68's sweep of every split pair on an H100, fp8_channel M = 1-32, one
/// round: at the 12 GEMV points where the rule above left gate-up unsplit at K >= 3584, split
/// 2 with the same down split measured 0.891-0.979 of its time at 11, Mixtral M = 1 157.6 ->
/// 144.0 us, Qwen2 M = 8 144.4 -> 128.7, Scout M = 16 87.8 -> 82.1, DeepSeek-V3 M = 8 127.5 ->
/// 119.6, and 1.013 at Qwen2 M = 4; each gap held at all four down splits. The split kernels
/// keep four 64-k steps in flight per warp against the unsplit ones' two. Qwen3's K = 2048
/// measured fastest unsplit at M = 4-16, split 2 within 1% at M = 32.)
inline constexpr SmallMSplitRule kFp8GateUpSplitRule = [] {
  SmallMSplitRule r = kFp8SplitRule;
  r.split_two_from_k = 3584;
  return r;
}();
/// fp8_gemv with block scales: one n-tile in two variants, compiled for 3 resident CTAs (80
/// registers; kernels::kFp8GemvBoundCtasPerSm, checked where layer.cpp sees both) and
/// unbounded (126-128, 2 CTAs); four n-tiles 241-246 registers, 1 CTA,
/// multi-wave (v16: Mixtral M = 64 1008 us one-wave vs 955).
inline constexpr SmallMSplitRule kFp8BlockSplitRule{3, 0, kFp8OneWaveMaxUnsplitCtasPerSm};
inline constexpr SmallMSplitRule kFp8BlockWideSplitRule{2, 0, kFp8OneWaveMaxUnsplitCtasPerSm};
/// When the unbounded block variant runs (v18, one run, four candidate rules): its grid fits
/// one wave of 2 per SM (Scout M = 1-32 5-7% faster, DeepSeek-V3 M = 4-8 3-4%), or the bound
/// variant's grid passes one wave of 3 by at most a fifth, a short second wave (Mixtral's
/// gate-up at M = 1, 448 CTAs: 149 -> 131 us; DeepSeek-V3's down GEMV at M = 1, 448 CTAs: 38.3
/// -> 35.5). Not for full waves: there the 3 resident CTAs keep more loads in flight
/// (DeepSeek-V3 M = 16's gate-up, 512 CTAs: 170 -> 199 us unbounded; Qwen2 M = 4's, 320:
/// 84 -> 101).
inline constexpr int64_t kFp8BlockWideMaxCtasPerSm = 2;

/// The split rule of the format's GEMV for choose_small_m_config: the dense one, wna16_gemv's
/// for int4 or int8, fp8_gemv's for per-tensor / per-channel scales (dense and FP8: the
/// gate-up GEMV's own; 128 x 128 blocks take choose_fp8_block_config).
SmallMSplitRule gemv_split_rule(const QuantParams& quant, bool gate_up = false);
/// Row tiles each warp of wna16_gemv's one-n-tile GEMV streams (kernels::launch_wna16_gemv's
/// tiles_per_warp) for the planner's config `cfg` of that GEMV: kWna16DownTilesPerWarp for
/// down where its grid has at least kWna16MultiTileMinWaves waves of resident CTAs, else 1
/// (gate-up, four or eight n-tiles and splits above 2 always). PERF.md v63: each CTA pays about
/// 2 us of serial latency (launch, the expert lookups, the first bytes, the epilogue) that a
/// warp carrying its ring from tile to tile pays once, but the several-tile kernel runs each
/// tile 5-8% slower than the one-tile kernel. On the H100, against the one-tile kernel: down
/// at T = 4 from 13 waves (DeepSeek-V3 TP8 M = 8-128) 0.91-0.985; at 2-7 waves (DeepSeek-V3 M
/// = 2-4, Qwen2 M = 4-16, Qwen3 M = 64, Scout M = 64) 1.01-1.06 with T = 2-4; gate-up at T = 2
/// 0.92-0.96 at Qwen2 M = 8-32 and Qwen3 M = 8-16 against the several-tile kernel at T = 1,
/// but 1.03-1.09 at DeepSeek-V3 M = 32-64.
inline constexpr int64_t kWna16MultiTileMinWaves = 8;
inline constexpr int32_t kWna16DownTilesPerWarp = 4;
int32_t wna16_tiles_per_warp(const SmallMGemmConfig& cfg, bool gate_up, int32_t sm_count);
/// The k a small-M GEMV warp's K slice keeps per split (choose_small_m_config's split_k_unit)
/// over a projection of K = k: wna16_gemv two pipeline stages (int4 2 x 128 k per stage where
/// groups span whole 128-k blocks, else 128: kernels::wna16_stage_blocks), the dense GEMV 4
/// steps of 32, fp8_gemv one block of two 64-k steps.
int64_t small_m_split_unit(const QuantParams& quant, int64_t k);

/// The small-M kernel's CTA has 8 warps; a warp owns one 16-row tile (8 gate/up column pairs,
/// or 16 down rows). Split-K trades row tiles for K slices by `rule`, as long as each warp's
/// slice keeps split_k_unit k (K >= split_k_unit * split_k). Experts averaging more than
/// `rule.four_tiles_above_rows` tokens (12; wna16_gemv 6) take 32 tokens per pass over their
/// weights (4 n-tiles) instead of 8.
///   tiles        16-row tiles of one expert (gate-up: ceil(I / 8), down: ceil(H / 16))
///   max_active   host-known bound on experts with tokens: min(E, m * topk)
///   pairs        m * topk
///   split_k_unit k a warp's slice must keep per split (dense: 128, 4 steps of 32; wna16_gemv:
///                two pipeline stages)
SmallMGemmConfig choose_small_m_config(int64_t tiles, int64_t max_active, int64_t pairs, int64_t k,
                                       int32_t sm_count, int64_t split_k_unit = 128,
                                       SmallMSplitRule rule = kDenseSplitRule);

/// The dense down GEMV keeps its weights in a shared-memory ring (3 CTAs per SM instead of 2)
/// where a warp's K slice has at most this many 32-k steps, in registers where longer (v30,
/// bf16 and fp16, one run, two rounds against registers everywhere: the ring at slices of 4-12
/// steps 1-6% faster (Qwen2-57B TP4 M = 1 48.5 -> 45.6 us, Qwen3-30B M = 2-4 4-5%, DeepSeek-V3
/// TP8 1-2%), at 20-24 steps 0.6-1.1% slower, at Mixtral's 112 1.5-4% slower: short slices are
/// bound by the CTA's fixed latencies, which more resident CTAs overlap; long ones by bytes in
/// flight per warp, which the registers' deeper pipeline holds).
inline constexpr int64_t kDenseRingMaxSliceSteps = 16;
/// Whether the dense down GEMV at this K and split-K runs the shared-memory ring.
bool dense_down_ring(int64_t k, int32_t split_k);

/// fp8_gemv's configuration for 128 x 128 block scales: the register-bound variant under
/// kFp8BlockSplitRule, or the unbounded one under kFp8BlockWideSplitRule where the grids
/// qualify (see kFp8BlockWideMaxCtasPerSm).
SmallMGemmConfig choose_fp8_block_config(int64_t tiles, int64_t max_active, int64_t pairs, int64_t k,
                                         int32_t sm_count, int64_t split_k_unit = 128);

/// One named region of the workspace.
struct WorkspaceBuffer {
  const char* name;
  size_t offset;
  size_t bytes;
};

/// The workspace of one layer call, sized from host-known bounds only (m is the bound of the
/// live token count), so that a captured CUDA graph stays valid for any routing.
struct WorkspaceLayout {
  static constexpr size_t kAlignment = 256;
  std::vector<WorkspaceBuffer> buffers;
  size_t total_bytes = 0;
  const WorkspaceBuffer* find(const char* name) const;
};

/// Lays out the workspace of `path` (kSmallM or kGroupedGemm, as choose_path returns; FP8
/// formats add their quantized activations and scales, integer formats on the grouped path
/// the dequantized weights of dequant_chunk_experts experts). `gemm_workspace_bytes` is what the
/// grouped GEMM needs for its per-expert arguments and CUTLASS workspace (0 for the small-M
/// path). `gate_up_interleaved`: dense w13 as prepare_weights interleaves it (no 2I-column
/// gate_up buffer, grouped_fuses_activation). All products in 64 bits; fails (naming the
/// product) when a size leaves int64.
Status plan_workspace(const MoeInputs& inputs, const QuantParams& quant, KernelPath path,
                      size_t gemm_workspace_bytes, WorkspaceLayout* out, bool gate_up_interleaved = false);

}  // namespace fusedmoe
