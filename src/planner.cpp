#include "planner.h"

#include <cstring>
#include <string>

#include "check.h"
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
  // Every batch size on the small-M path until the tensor-core grouped GEMM exists.
  return KernelFamily::kSmallMSplitK;
}

bool kernel_family_available(KernelFamily family) {
#ifdef FUSEDMOE_WITH_CUDA
  return family == KernelFamily::kSmallMSplitK;
#else
  (void)family;
  return false;  // a CPU-only build has no kernels
#endif
}

Status check_gpu_routing(const RoutingConfig& r) {
  if (r.n_group > 32) {
    return detail::not_implemented("routing_topk keeps one group per lane: n_group <= 32, got " + str(r.n_group));
  }
  return Status();
}

SmallMGemmConfig choose_small_m_config(int64_t tiles, int64_t max_active, int64_t pairs, int64_t k,
                                       int32_t sm_count) {
  constexpr int kWarps = 8;
  SmallMGemmConfig c;
  c.n_tiles = max_active > 0 && pairs > 12 * max_active ? 4 : 1;
  for (int split = 1; split <= kWarps; split *= 2) {
    if (split > 1 && k < 128 * split) break;  // each warp keeps >= 4 steps of 32 k
    const int64_t row_tiles = kWarps / split;
    c.split_k = split;
    c.ctas = (tiles + row_tiles - 1) / row_tiles * max_active;
    if (c.ctas >= 8 * static_cast<int64_t>(sm_count)) break;
  }
  return c;
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

Status plan_workspace(const MoeInputs& in, const QuantParams& q, int32_t block_m,
                      WorkspaceLayout* out) {
  if (out == nullptr) return invalid_argument("out", "non-null", "nullptr");
  FUSEDMOE_RETURN_IF_ERROR(validate_shape(in.shape));
  if (block_m <= 0 || (block_m & (block_m - 1)) != 0) {
    return invalid_argument("block_m", "a positive power of two", str(block_m));
  }
  const ProblemShape& s = in.shape;
  const int64_t pairs = s.m * s.topk;  // < 2^31, checked by validate_shape
  const int64_t e = s.num_experts;
  // Each expert's rows are padded to a multiple of block_m: at most block_m - 1 extra per expert.
  const int64_t sorted_rows = pairs + e * (block_m - 1);
  const int64_t tiles = (sorted_rows + block_m - 1) / block_m;
  const int64_t act_bytes = dtype_size(in.act_dtype);
  const bool fp8 = q.act_quant != ActQuant::kNone;
  const int64_t elem = fp8 ? 1 : act_bytes;
  const std::string pair_str = "m * topk = " + str(pairs);

  LayoutBuilder b(out);
  if (in.router_logits != nullptr) {
    FUSEDMOE_RETURN_IF_ERROR(b.add("topk_ids", pairs, 4, pair_str));
    FUSEDMOE_RETURN_IF_ERROR(b.add("topk_weights", pairs, 4, pair_str));
  }
  FUSEDMOE_RETURN_IF_ERROR(b.add("expert_counts", e, 4, "E = " + str(e)));
  FUSEDMOE_RETURN_IF_ERROR(b.add("expert_offsets", e + 1, 8, "E + 1 = " + str(e + 1)));
  FUSEDMOE_RETURN_IF_ERROR(b.add("active_experts", e + 1, 4, "E + 1 = " + str(e + 1)));
  FUSEDMOE_RETURN_IF_ERROR(b.add("sorted_pairs", sorted_rows, 4, "padded rows = " + str(sorted_rows)));
  FUSEDMOE_RETURN_IF_ERROR(b.add("tile_expert", tiles, 4, "tiles = " + str(tiles)));
  int64_t count = 0;
  if (fp8) {
    // x quantized once before GEMM1, with its scales (at most one per block_k columns).
    if (!checked_mul(s.m, s.hidden, &count)) return invalid_argument("m * hidden", "< 2^63", str(s.m));
    FUSEDMOE_RETURN_IF_ERROR(b.add("x_quantized", count, 1, "m * hidden"));
    const int64_t groups = (s.hidden + q.block_k - 1) / q.block_k;
    if (!checked_mul(s.m, groups, &count)) return invalid_argument("m * groups", "< 2^63", str(s.m));
    FUSEDMOE_RETURN_IF_ERROR(b.add("x_scales", count, 4, "m * hidden groups"));
  }
  // GEMM1 output after the activation: one row per (token, slot), I columns.
  if (!checked_mul(sorted_rows, s.inter, &count)) {
    return invalid_argument("padded rows * inter", "< 2^63", str(sorted_rows) + " * " + str(s.inter));
  }
  FUSEDMOE_RETURN_IF_ERROR(b.add("intermediate", count, elem, "padded rows * inter"));
  if (fp8) {
    const int64_t groups = (s.inter + q.block_k - 1) / q.block_k;
    if (!checked_mul(sorted_rows, groups, &count)) return invalid_argument("rows * groups", "< 2^63", "");
    FUSEDMOE_RETURN_IF_ERROR(b.add("intermediate_scales", count, 4, "padded rows * inter groups"));
  }
  // GEMM2 output per (token, slot), summed over slots by the deterministic combine.
  if (!checked_mul(pairs, s.hidden, &count)) {
    return invalid_argument("m * topk * hidden", "< 2^63", pair_str + " * " + str(s.hidden));
  }
  return b.add("expert_out", count, act_bytes, "m * topk * hidden");
}

}  // namespace fusedmoe
