#include "planner.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>

#include "check.h"
#include "kernels/align_geometry.h"
#include "kernels/fp8_one_token_geometry.h"
#include "kernels/kernel_limits.h"
#include "validate.h"

namespace fusedmoe {

using detail::checked_add;
using detail::checked_mul;
using detail::invalid_argument;
using detail::str;

const char* kernel_family_name(KernelFamily family) {
  switch (family) {
    case KernelFamily::kSmallMSplitK: return "small_m_splitk";
    case KernelFamily::kSm90Bf16GroupedGemm: return "sm90_bf16_grouped_gemm";
    case KernelFamily::kSm90Fp8GroupedGemm: return "sm90_fp8_grouped_gemm";
    case KernelFamily::kSm90Fp8GroupedGemmBlockscale: return "sm90_fp8_grouped_gemm_blockscale";
    case KernelFamily::kWna16GroupedGemm: return "wna16_grouped_gemm";
  }
  return "unknown";
}

KernelFamily kernel_family_for(const QuantParams& q) {
  switch (q.format) {
    case WeightFormat::kFP8PerTensor:
    case WeightFormat::kFP8PerChannel: return KernelFamily::kSm90Fp8GroupedGemm;
    case WeightFormat::kFP8Block: return KernelFamily::kSm90Fp8GroupedGemmBlockscale;
    case WeightFormat::kGPTQ:
    case WeightFormat::kAWQ:
    case WeightFormat::kMoeWNA16: return KernelFamily::kWna16GroupedGemm;
    case WeightFormat::kDense: break;
  }
  return KernelFamily::kSm90Bf16GroupedGemm;
}

std::string kernel_families_description(const QuantParams& q) {
  const KernelFamily family = kernel_family_for(q);
  if (family == KernelFamily::kSm90Bf16GroupedGemm) {
    return std::string(kernel_family_name(KernelFamily::kSmallMSplitK)) + " + " + kernel_family_name(family);
  }
  return kernel_family_name(family);
}

bool kernel_family_available(KernelFamily family) {
#ifdef FUSEDMOE_WITH_CUDA
  return family == KernelFamily::kSmallMSplitK || family == KernelFamily::kSm90Bf16GroupedGemm ||
         family == KernelFamily::kWna16GroupedGemm || family == KernelFamily::kSm90Fp8GroupedGemm ||
         family == KernelFamily::kSm90Fp8GroupedGemmBlockscale;
#else
  (void)family;
  return false;  // a CPU-only build has no kernels
#endif
}

namespace {

int64_t round_up(int64_t v, int64_t to) { return (v + to - 1) / to * to; }

// The experts a batch of `pairs` can reach: the divisor of the rules' rows per expert.
int64_t active_experts(int64_t pairs, int64_t num_experts) { return std::max<int64_t>(1, std::min(num_experts, pairs)); }

}  // namespace

bool wna16_gemv_supports(const QuantParams& q) {
  const int64_t gs = q.group_size;
  return gs == -1 || gs == 32 || gs == 64 || (gs > 0 && gs % 128 == 0);
}

int32_t wna16_gemm_tile_tokens(int64_t pairs, int64_t num_experts) {
  return pairs >= kWna16GemmWideMinRows * active_experts(pairs, num_experts) ? 256 : 128;
}

bool fp8_grouped_supports(const QuantParams& q) {
  return is_fp8_format(q.format) && (q.format != WeightFormat::kFP8Block || (q.block_n == 128 && q.block_k == 128));
}

bool fp8_epilogue_scales(const QuantParams& q) {
  return is_fp8_format(q.format) && q.format != WeightFormat::kFP8Block;
}

int64_t fp8_block_scales_per_expert(int64_t n, int64_t k, int64_t n_granularity) {
  return (n + n_granularity - 1) / n_granularity * ((k + 127) / 128);
}

bool fp8_fuses_activation(const ProblemShape& shape, const QuantParams& q) {
  return is_fp8_format(q.format) && q.act_quant != ActQuant::kPerTensorDynamic &&
         shape.inter <= kFp8FusedActivationMaxInter;
}

bool fp8_one_pass_quantize(const QuantParams& q, int64_t rows, int64_t cols, int64_t sms) {
  return is_fp8_format(q.format) && q.act_quant == ActQuant::kPerTensorDynamic &&
         kernels::fp8_one_pass_plan(rows, cols, sms).fits;
}

namespace {
// Whether x's quantizer can store a token's scales at its topk pairs' rows (kScatterTokens):
// group and tensor scales by a span team's lanes, one destination per lane (at most
// kernels::kFp8ScatterSpanMaxTopk); per-token scales by the row's threads in turn (any topk).
bool fp8_scatter_holds(const QuantParams& q, int64_t topk) {
  return q.act_quant == ActQuant::kPerToken || topk <= kernels::kFp8ScatterSpanMaxTopk;
}
}  // namespace

bool fp8_x_by_token(const ProblemShape& shape, const QuantParams& q) {
  if (!is_fp8_format(q.format)) return false;
  if (q.act_quant == ActQuant::kPerToken) return shape.m >= kFp8ScatterMinTokens && shape.topk >= kFp8ScatterMinTopk;
  return shape.topk >= kFp8SpanScatterMinTopk && fp8_scatter_holds(q, shape.topk);  // group or tensor
}

bool fp8_gemm1_gathers(const QuantParams& q, KernelPath path, int64_t tile_rows, int64_t tile_cols,
                       int64_t hidden, int64_t inter, int32_t topk) {
  if (!fp8_epilogue_scales(q) || hidden % 16 != 0 || topk < 2 || !fp8_scatter_holds(q, topk)) return false;
  if (path == KernelPath::kGroupedSwapped) return hidden >= kFp8SwapGatherMinHidden;
  return path == KernelPath::kGroupedGemm && tile_rows == 64 && tile_cols == 192 && 2 * inter <= kGatherMaxGateUpRows;
}

bool top1_direct_output(const ProblemShape& s, bool has_expert_map) {
  return s.topk == 1 && s.m <= kernels::kZeroSkippedMaxPairs && (!has_expert_map || s.m <= kTop1DirectMaxMappedTokens);
}

bool one_token_down(const ProblemShape& s, const QuantParams& q, int32_t sm_count, bool direct) {
  if (s.m < 1 || s.topk < kOneTokenDownMinTopk || s.topk > kOneTokenDownMaxTopk) return false;
  if (is_fp8_format(q.format)) {
    // Align's table: the token counts the kernel takes, several only up to
    // kFp8FewTokensDownMaxTokens and the repeat bound; block scales at any I (v66); the rows in
    // shared memory.
    const double duplicate_bytes = expected_repeated_pairs(s) * static_cast<double>(s.hidden) * static_cast<double>(s.inter);
    const bool tokens_ok =
        kernels::fp8_one_token_down_takes_tokens(s.m, s.topk, q.act_quant == ActQuant::kPerTensorDynamic) &&
        (s.m == 1 || (s.m <= kFp8FewTokensDownMaxTokens &&
                      duplicate_bytes <= static_cast<double>(kFp8FewTokensDownMaxDuplicateBytes)));
    return tokens_ok && (s.inter >= kOneTokenDownPerTokenMinInter || q.format == WeightFormat::kFP8Block) &&
           kernels::fp8_one_token_down_supports(s.inter, s.topk, q.act_quant == ActQuant::kPerGroup, q.block_k);
  }
  const bool tokens_ok = s.m == 1 || (direct && s.m > 1 && s.m <= kDirectTableMaxTokens &&
                                      s.inter >= kOneTokenDownPerTokenMinInter);  // a CTA row per token
  if (!tokens_ok) return false;
  if (q.format == WeightFormat::kDense) return true;
  if (!is_integer_format(q.format) || q.bits != 4 || !wna16_gemv_supports(q)) return false;
  // The down GEMV's own split at one token (run_small_m's choice; more tokens, more CTAs: no
  // more ways): the one-token kernel's warps must not split K fewer ways, or it streams with
  // fewer warps and longer slices.
  const int64_t active = std::min<int64_t>(s.num_experts, s.topk);
  const SmallMGemmConfig down = choose_small_m_config(kernels::grouped_gemv_tiles(false, s.hidden), active, s.topk,
                                                      s.inter, sm_count, small_m_split_unit(q, s.inter), kWna16SplitRule);
  return down.split_k <= kernels::one_token_down_split(s.topk);
}

double expected_repeated_pairs(const ProblemShape& s) {
  if (s.m <= 1 || s.num_experts <= 0) return 0.0;
  const double e = static_cast<double>(s.num_experts);
  const double distinct = e * (1.0 - std::pow(1.0 - static_cast<double>(s.topk) / e, static_cast<double>(s.m)));
  return std::max(0.0, static_cast<double>(s.m * s.topk) - distinct);
}

double direct_table_duplicate_bytes(const ProblemShape& s, const QuantParams& q) {
  const double bytes_per_weight = is_integer_format(q.format) ? q.bits / 8.0 : 2.0;
  return expected_repeated_pairs(s) * 3.0 * static_cast<double>(s.hidden) * static_cast<double>(s.inter) * bytes_per_weight;
}

bool direct_table(const ProblemShape& s, const QuantParams& q, bool has_expert_map) {
  return s.m >= 1 && s.m <= kDirectTableMaxTokens && s.m * s.topk <= kernels::kMaxDirectPairs && !has_expert_map &&
         !is_fp8_format(q.format) && !(is_integer_format(q.format) && q.has_g_idx) &&
         direct_table_duplicate_bytes(s, q) <= static_cast<double>(kDirectTableMaxDuplicateBytes);
}

kernels::OneTokenLayerPlan one_token_layer_plan(const ProblemShape& s, const QuantParams& q, int32_t sm_count) {
  if (!is_integer_format(q.format) || q.bits != 4 ||
      !(q.group_size == -1 || kernels::one_token_layer_group_ok(q.group_size))) {
    return kernels::OneTokenLayerPlan();
  }
  return kernels::one_token_layer_plan(s.hidden, s.inter, s.topk, sm_count, quant_groups(q, s.hidden),
                                       quant_groups(q, s.inter), kernels::kMaxTopk);
}

bool one_token_layer(const ProblemShape& s, const QuantParams& q, bool has_expert_map, int32_t sm_count) {
  return s.m == 1 && s.topk >= kOneTokenLayerMinTopk && direct_table(s, q, has_expert_map) &&
         one_token_layer_plan(s, q, sm_count).fits;
}

bool grouped_gemms_launch_early(const ProblemShape& s) {
  return s.m * s.topk <= kGemmEarlyLaunchMaxRowsPerExpert * s.num_experts;
}

bool grouped_fuses_activation(const QuantParams& q, bool gate_up_interleaved) {
  return is_integer_format(q.format) || (q.format == WeightFormat::kDense && gate_up_interleaved);
}

bool grouped_gemm1_gathers(const QuantParams& q, bool gate_up_interleaved, KernelPath path, int64_t inter,
                           int64_t hidden, int64_t pairs, int64_t num_experts, int64_t sm_count) {
  if (path == KernelPath::kGroupedMixed) {
    return is_integer_format(q.format) && !q.has_g_idx && 2 * inter <= kGatherMaxGateUpRows &&
           pairs >= kMixedGatherMinRows * active_experts(pairs, num_experts) &&
           wna16_gemm_tile_tokens(pairs, num_experts) == 128;
  }
  if (q.format != WeightFormat::kDense || !gate_up_interleaved) return false;
  const int64_t active = active_experts(pairs, num_experts);
  if (path == KernelPath::kGroupedSwapped) {
    if (swapped_tile_rows(2 * inter) != 128) return false;  // the gathering kernel's tile
    const int64_t tiles = active * ((2 * inter + 127) / 128);
    return tiles <= kSwapGatherMaxTilesPerSm * std::max<int64_t>(1, sm_count) ||
           hidden * pairs >= kSwapGatherMinRowElems * active;
  }
  if (path != KernelPath::kGroupedGemm) return false;
  return 2 * inter <= kGatherMaxGateUpRows ||
         (2 * inter <= kGatherShortMaxGateUpRows && pairs <= kGatherShortMaxRows * active);
}

int64_t swapped_tile_rows(int64_t weight_rows) { return weight_rows >= kSwapWideMinRows ? 256 : 128; }

namespace {
// Whether 128-row tiles of `tile_cols` weight rows each fit one wave on sm_count SMs (the rows
// per expert at most kOneWaveMaxRows: mostly one token tile per expert).
bool tall_tiles_fit_one_wave(int64_t pairs, int64_t num_experts, int64_t weight_rows, int64_t tile_cols,
                             int64_t sm_count) {
  const int64_t active = active_experts(pairs, num_experts);
  return pairs <= kOneWaveMaxRows * active && active * (round_up(weight_rows, tile_cols) / tile_cols) <= sm_count;
}
}  // namespace

int64_t grouped_tile_rows(int64_t pairs, int64_t num_experts, int64_t weight_rows, bool gate_up, int64_t sm_count) {
  const bool tall = gate_up && pairs >= kGateUpTallMinRows * active_experts(pairs, num_experts);
  return tall || tall_tiles_fit_one_wave(pairs, num_experts, weight_rows, 256, sm_count) ? 128 : 64;
}

int64_t fp8_grouped_tile_rows(int64_t pairs, int64_t num_experts, int64_t weight_rows, int64_t k, bool gate_up,
                              bool block_scales, int64_t sm_count) {
  if (tall_tiles_fit_one_wave(pairs, num_experts, weight_rows, 128, sm_count)) return 128;
  const int64_t active = active_experts(pairs, num_experts);
  const int64_t down_max_rows =
      block_scales || k < kFp8DownShortMinK ? kFp8BlockDownShortMaxRows : kFp8DownShortMaxRows;
  const bool short_tiles = gate_up ? !block_scales && pairs <= kFp8GateUpShortMaxRows * active
                                   : pairs <= down_max_rows * active && k <= kFp8DownShortMaxK;
  return short_tiles ? 64 : 128;
}

int64_t fp8_grouped_tile_cols(int64_t pairs, int64_t num_experts, int64_t tile_rows, bool block_scales) {
  const bool narrow = tile_rows == 128 && pairs <= kFp8NarrowTileMaxRows * active_experts(pairs, num_experts);
  return narrow || (block_scales && tile_rows != 128) ? 128 : 192;
}

PathRule path_rule(const QuantParams& q) {
  if (is_integer_format(q.format)) return kIntegerPathRule;
  if (q.format == WeightFormat::kFP8Block) return kFp8BlockPathRule;
  if (is_fp8_format(q.format)) return kFp8PathRule;
  return kDensePathRule;
}

KernelPath choose_path(const QuantParams& q, int64_t pairs, int64_t num_experts, int64_t inter, KernelPath forced) {
  if (forced != KernelPath::kAuto) return forced;
  const int64_t active = active_experts(pairs, num_experts);
  const KernelPath grouped = pairs < kSwapMaxRows * active ? KernelPath::kGroupedSwapped : KernelPath::kGroupedGemm;
  if (is_fp8_format(q.format) && !fp8_grouped_supports(q)) return KernelPath::kSmallM;
  if (is_integer_format(q.format) && !wna16_gemv_supports(q)) return grouped;
  const PathRule rule = path_rule(q);
  const int64_t min_rows = inter <= kSmallInter   ? rule.rows_small_inter
                           : inter >= kLargeInter ? rule.rows_large_inter
                                                  : rule.rows;
  const bool small = pairs < min_rows * active && (rule.max_small_pairs == 0 || pairs < rule.max_small_pairs);
  if (small) return KernelPath::kSmallM;
  // Integer weights the GEMV reads: the mixed-input GEMM (no dense copy of the weights).
  return is_integer_format(q.format) ? KernelPath::kGroupedMixed : grouped;
}

int64_t PreparedQuantSizes::total() const {
  return round_up(codes, 256) + round_up(scales, 256) + round_up(zeros, 256) + round_up(g_idx, 256);
}

PreparedQuantSizes prepared_quant_sizes(const ProblemShape& s, const QuantParams& q, Projection which) {
  PreparedQuantSizes out;
  const int64_t e = s.num_experts;
  const int64_t n = projection_rows(s, which);
  const int64_t k = projection_cols(s, which);
  if (q.format == WeightFormat::kDense) {
    out.codes = e * n * k * 2;
    return out;
  }
  const int64_t g = quant_groups(q, k);
  out.codes = e * n * round_up(k, 128) * q.bits / 8;
  out.scales = e * g * n * dtype_size(q.scale_dtype);
  out.zeros = q.has_zeros ? e * g * n * (q.bits == 4 ? 1 : 2) : 0;
  out.g_idx = q.has_g_idx ? e * k * 4 : 0;
  return out;
}

size_t prepared_quant_bytes(const ProblemShape& shape, const QuantParams& quant) {
  return static_cast<size_t>(prepared_quant_sizes(shape, quant, Projection::kW13).total() +
                             prepared_quant_sizes(shape, quant, Projection::kW2).total());
}

void prepared_quant_pointers(const ProblemShape& shape, const QuantParams& quant, const void* storage,
                             ProjectionWeights* w13, ProjectionWeights* w2) {
  const char* base = static_cast<const char*>(storage);
  auto take = [&](int64_t bytes) -> const void* {
    if (bytes == 0) return nullptr;
    const void* at = base;
    base += round_up(bytes, 256);
    return at;
  };
  for (Projection which : {Projection::kW13, Projection::kW2}) {
    ProjectionWeights& w = which == Projection::kW13 ? *w13 : *w2;
    const PreparedQuantSizes sizes = prepared_quant_sizes(shape, quant, which);
    w = ProjectionWeights();
    w.weight = take(sizes.codes);
    w.scales = take(sizes.scales);
    w.zeros = take(sizes.zeros);
    w.g_idx = static_cast<const int32_t*>(take(sizes.g_idx));
  }
}

int32_t dequant_chunk_experts(const ProblemShape& s, DType act_dtype) {
  const int64_t per_expert = 2 * s.inter * s.hidden * dtype_size(act_dtype);
  const int64_t fit = per_expert > 0 ? kDequantScratchBytes / per_expert : s.num_experts;
  return static_cast<int32_t>(std::max<int64_t>(1, std::min<int64_t>(s.num_experts, fit)));
}

SmallMSplitRule gemv_split_rule(const QuantParams& q, bool gate_up) {
  if (is_integer_format(q.format)) return kWna16SplitRule;
  if (is_fp8_format(q.format)) return gate_up ? kFp8GateUpSplitRule : kFp8SplitRule;
  return gate_up ? kDenseGateUpSplitRule : kDenseSplitRule;
}

int32_t wna16_tiles_per_warp(const SmallMGemmConfig& cfg, bool gate_up, int32_t sm_count) {
  if (gate_up || cfg.n_tiles != 1 || cfg.split_k > 2 || sm_count <= 0) return 1;
  const int64_t wave = int64_t{kWna16SplitRule.resident_one_tile} * sm_count;
  return cfg.ctas >= kWna16MultiTileMinWaves * wave ? kWna16DownTilesPerWarp : 1;
}

int64_t small_m_split_unit(const QuantParams& q, int64_t k) {
  if (!is_integer_format(q.format)) return 128;
  const int64_t groups = q.group_size > 0 ? (k + q.group_size - 1) / q.group_size : 1;
  return 2 * 128 * kernels::wna16_stage_blocks(q.bits, kernels::wna16_block_groups(groups, q.group_size));
}

bool dense_down_ring(int64_t k, int32_t split_k) {
  if (split_k <= 0) return false;
  const int64_t steps = (k + 31) / 32;
  return (steps + split_k - 1) / split_k <= kDenseRingMaxSliceSteps;
}

SmallMGemmConfig choose_small_m_config(int64_t tiles, int64_t max_active, int64_t pairs, int64_t k,
                                       int32_t sm_count, int64_t split_k_unit, SmallMSplitRule rule) {
  constexpr int kWarps = kernels::kGemvWarps;
  SmallMGemmConfig c;
  c.n_tiles = max_active > 0 && pairs > rule.four_tiles_above_rows * max_active ? 4 : 1;
  const int64_t sms = sm_count;
  const int64_t resident = c.n_tiles == 1 ? rule.resident_one_tile : rule.resident_four_tiles;
  const int64_t wave = resident * sms;
  // The grid at a split: the CTA's warps take kWarps / split row tiles, each expert its own.
  const auto ctas_at = [&](int split) {
    const int64_t row_tiles = kWarps / split;
    return (tiles + row_tiles - 1) / row_tiles * max_active;
  };
  const int64_t unsplit = ctas_at(1);
  if (c.n_tiles == 4 && rule.unsplit_four_tiles_min_ctas_per_sm > 0 &&
      unsplit >= rule.unsplit_four_tiles_min_ctas_per_sm * sms) {
    c.split_k = 1;
    c.ctas = unsplit;
    if (rule.eight_tiles_above_rows > 0 && pairs > rule.eight_tiles_above_rows * max_active) c.n_tiles = 8;
    return c;
  }
  const bool one_wave = resident > 0 && unsplit <= rule.max_unsplit_ctas_per_sm * sms;
  for (int split = 1; split <= kWarps; split *= 2) {
    if (split > 1 && k < split_k_unit * split) break;  // each warp keeps split_k_unit k
    const int64_t ctas = ctas_at(split);
    if (one_wave && split > 1 && ctas > wave) break;  // the grid would pass one wave
    c.split_k = split;
    c.ctas = ctas;
    if (!one_wave && ctas >= kSplitTargetCtasPerSm * sms) break;
  }
  if (c.n_tiles == 1 && c.split_k < 2 && rule.split_two_from_k > 0 && k >= rule.split_two_from_k &&
      k >= split_k_unit * 2) {
    c.split_k = 2;
    c.ctas = ctas_at(2);
  }
  return c;
}

SmallMGemmConfig choose_fp8_block_config(int64_t tiles, int64_t max_active, int64_t pairs, int64_t k,
                                         int32_t sm_count, int64_t split_k_unit) {
  SmallMGemmConfig bound = choose_small_m_config(tiles, max_active, pairs, k, sm_count, split_k_unit, kFp8BlockSplitRule);
  if (bound.n_tiles != 1) return bound;  // four n-tiles: one variant
  bound.ctas_per_sm = kFp8BlockSplitRule.resident_one_tile;
  const SmallMGemmConfig wide =
      choose_small_m_config(tiles, max_active, pairs, k, sm_count, split_k_unit, kFp8BlockWideSplitRule);
  const int64_t bound_wave = static_cast<int64_t>(bound.ctas_per_sm) * sm_count;
  const bool short_tail = bound.ctas > bound_wave && bound.ctas <= bound_wave + bound_wave / 5;
  return wide.ctas <= kFp8BlockWideMaxCtasPerSm * sm_count || short_tail ? wide : bound;
}

const WorkspaceBuffer* WorkspaceLayout::find(const char* name) const {
  for (const WorkspaceBuffer& b : buffers) {
    if (std::strcmp(b.name, name) == 0) return &b;
  }
  return nullptr;
}

namespace {

class LayoutBuilder {
 public:
  explicit LayoutBuilder(WorkspaceLayout* out) : out_(out) { out_->buffers.clear(); }

  // Appends count * elem_bytes bytes; `what` names the product in the error.
  Status add(const char* name, int64_t count, int64_t elem_bytes, const std::string& what) {
    int64_t bytes = 0;
    int64_t aligned_end = 0;
    const int64_t align = WorkspaceLayout::kAlignment;
    if (!checked_mul(count, elem_bytes, &bytes) || !checked_add(offset_, bytes, &aligned_end) ||
        !checked_add(aligned_end, align - 1, &aligned_end)) {
      return invalid_argument(std::string("workspace buffer ") + name, "a size below 2^63 bytes", what);
    }
    out_->buffers.push_back(WorkspaceBuffer{name, static_cast<size_t>(offset_), static_cast<size_t>(bytes)});
    offset_ = aligned_end / align * align;
    out_->total_bytes = static_cast<size_t>(offset_);
    return Status();
  }

 private:
  WorkspaceLayout* out_;
  int64_t offset_ = 0;
};

}  // namespace

Status plan_workspace(const MoeInputs& in, const QuantParams& q, KernelPath path,
                      size_t gemm_workspace_bytes, WorkspaceLayout* out, bool gate_up_interleaved) {
  if (out == nullptr) return invalid_argument("out", "non-null", "nullptr");
  FUSEDMOE_RETURN_IF_ERROR(validate_shape(in.shape));
  const ProblemShape& s = in.shape;
  const int64_t pairs = s.m * s.topk;  // < 2^31, checked by validate_shape
  const int64_t e = s.num_experts;
  const int64_t act_bytes = dtype_size(in.act_dtype);
  const bool fp8 = q.act_quant != ActQuant::kNone;
  const bool grouped = is_grouped_path(path);
  const std::string pair_str = "m * topk = " + str(pairs);

  LayoutBuilder b(out);
  if (in.router_logits != nullptr) {
    FUSEDMOE_RETURN_IF_ERROR(b.add("topk_ids", pairs, 4, pair_str));
    FUSEDMOE_RETURN_IF_ERROR(b.add("topk_weights", pairs, 4, pair_str));
  }
  FUSEDMOE_RETURN_IF_ERROR(b.add("expert_counts", e, 4, "E = " + str(e)));
  FUSEDMOE_RETURN_IF_ERROR(b.add("expert_offsets", e + 1, 8, "E + 1 = " + str(e + 1)));
  FUSEDMOE_RETURN_IF_ERROR(b.add("active_experts", e + 1, 4, "E + 1 = " + str(e + 1)));
  FUSEDMOE_RETURN_IF_ERROR(b.add("sorted_pairs", pairs, 4, pair_str));
  const int64_t chunk_counts = kernels::align_block_counts_size(pairs, static_cast<int32_t>(e));
  if (chunk_counts > 0) FUSEDMOE_RETURN_IF_ERROR(b.add("align_chunk_counts", chunk_counts, 4, "pair chunks * E"));
  if (grouped) FUSEDMOE_RETURN_IF_ERROR(b.add("row_of_pair", pairs, 4, pair_str));
  int64_t count = 0;
  if (fp8) FUSEDMOE_RETURN_IF_ERROR(b.add("amax", 2, 4, "2"));  // per-tensor: x's and the intermediate's
  if (q.act_quant == ActQuant::kPerTensorDynamic) {  // the one-pass quantizer's CTA amaxes
    FUSEDMOE_RETURN_IF_ERROR(b.add("amax_partials", kernels::kFp8OnePassMaxCtas, 4, "one-pass quantizer CTAs"));
  }
  if (fp8 && !grouped) {
    // fp8_gemv: x quantized once (e4m3 values held in fp16) with its scales (at most one per
    // block_k columns).
    if (!checked_mul(s.m, s.hidden, &count)) return invalid_argument("m * hidden", "< 2^63", str(s.m));
    FUSEDMOE_RETURN_IF_ERROR(b.add("x_quantized", count, 2, "m * hidden"));
    const int64_t groups = (s.hidden + q.block_k - 1) / q.block_k;
    if (!checked_mul(s.m, groups, &count)) return invalid_argument("m * groups", "< 2^63", str(s.m));
    FUSEDMOE_RETURN_IF_ERROR(b.add("x_scales", count, 4, "m * hidden groups"));
  }
  if (fp8 && grouped) {
    // Each GEMM's input in e4m3 (x's gathered rows, then the intermediate) with one scale per
    // row and 128 columns; the weights' scales of the larger projection in the GEMM's layout.
    const int64_t k = std::max(s.hidden, s.inter);
    if (!checked_mul(pairs, k, &count)) return invalid_argument("m * topk * max(hidden, inter)", "< 2^63", pair_str);
    FUSEDMOE_RETURN_IF_ERROR(b.add("fp8_rows", count, 1, "m * topk * max(hidden, inter)"));
    if (!checked_mul(pairs, (k + 127) / 128, &count)) return invalid_argument("m * topk * k blocks", "< 2^63", pair_str);
    FUSEDMOE_RETURN_IF_ERROR(b.add("fp8_row_scales", count, 4, "m * topk * max(hidden, inter) / 128"));
    const int64_t per_expert = fp8_epilogue_scales(q) ? 0  // the checkpoint's scales serve as they are
        : std::max(fp8_block_scales_per_expert(2 * s.inter, s.hidden, kFp8WideTileScaleCols),
                   fp8_block_scales_per_expert(s.hidden, s.inter, kFp8WideTileScaleCols));
    if (!checked_mul(e, per_expert, &count)) return invalid_argument("E * weight scales", "< 2^63", str(e));
    FUSEDMOE_RETURN_IF_ERROR(b.add("fp8_weight_scales", count, 4, "E * weight scales per expert"));
  }
  if (grouped && !grouped_fuses_activation(q, gate_up_interleaved)) {
    // GEMM1's output before the activation: gate and up halves, 2I columns per sorted row.
    if (!checked_mul(pairs, 2 * s.inter, &count)) {
      return invalid_argument("m * topk * 2 * inter", "< 2^63", pair_str + " * " + str(2 * s.inter));
    }
    FUSEDMOE_RETURN_IF_ERROR(b.add("gate_up", count, act_bytes, "m * topk * 2 * inter"));
  }
  // GEMM1 output after the activation: one row per (token, slot), I columns. The FP8 grouped
  // path has none where it quantizes the activation as it computes it (fp8_fuses_activation).
  if (!checked_mul(pairs, s.inter, &count)) {
    return invalid_argument("m * topk * inter", "< 2^63", pair_str + " * " + str(s.inter));
  }
  if (!(fp8 && grouped) || !fp8_fuses_activation(s, q)) {
    FUSEDMOE_RETURN_IF_ERROR(b.add("intermediate", count, act_bytes, "m * topk * inter"));
  }
  if (fp8 && !grouped) {
    // fp8_gemv's down GEMM reads the intermediate quantized (fp16 holding e4m3).
    FUSEDMOE_RETURN_IF_ERROR(b.add("intermediate_quantized", count, 2, "m * topk * inter"));
    const int64_t groups = (s.inter + q.block_k - 1) / q.block_k;
    if (!checked_mul(pairs, groups, &count)) return invalid_argument("m * topk * groups", "< 2^63", pair_str);
    FUSEDMOE_RETURN_IF_ERROR(b.add("intermediate_scales", count, 4, "m * topk * inter groups"));
  }
  // GEMM2 output per (token, slot), summed over slots by the deterministic combine. The bf16
  // and integer grouped paths first gather x's rows in expert order here (dead once GEMM1 has
  // run); the FP8 one gathers them into fp8_rows as it quantizes them.
  if (!checked_mul(pairs, s.hidden, &count)) {
    return invalid_argument("m * topk * hidden", "< 2^63", pair_str + " * " + str(s.hidden));
  }
  FUSEDMOE_RETURN_IF_ERROR(b.add("expert_out", count, act_bytes, "m * topk * hidden"));
  if (grouped && is_integer_format(q.format) && path != KernelPath::kGroupedMixed) {
    // Dequantized weights of one chunk of experts at the larger projection (w13: 2I x H).
    const int64_t chunk = dequant_chunk_experts(s, in.act_dtype);
    if (!checked_mul(chunk * 2 * s.inter, s.hidden, &count)) {
      return invalid_argument("dequantized weights", "< 2^63 elements", str(chunk) + " experts");
    }
    FUSEDMOE_RETURN_IF_ERROR(b.add("dequant_weights", count, act_bytes, "experts per chunk * 2 * inter * hidden"));
  }
  if (grouped && gemm_workspace_bytes > 0) {
    FUSEDMOE_RETURN_IF_ERROR(b.add("gemm_workspace", static_cast<int64_t>(gemm_workspace_bytes), 1,
                                   "grouped GEMM arguments"));
  }
  return Status();
}

}  // namespace fusedmoe
