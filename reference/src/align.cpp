// Reference token alignment: (token, slot) pairs grouped by local expert, each expert's
// rows padded to a multiple of block_m, as the GPU align kernel lays them out.
#include <string>

#include "check.h"
#include "fusedmoe_ref/reference.h"

namespace fusedmoe::ref {

using detail::invalid_argument;
using detail::str;

Status align_tokens(const int32_t* topk_ids, int64_t m, int32_t topk, int32_t global_experts,
                    const int32_t* expert_map, int32_t num_experts, int32_t block_m, Alignment* out) {
  if (out == nullptr) return invalid_argument("out", "non-null", "nullptr");
  if (m < 0) return invalid_argument("m", ">= 0", str(m));
  if (topk <= 0) return invalid_argument("topk", "> 0", str(topk));
  if (num_experts <= 0 || global_experts < num_experts) {
    return invalid_argument("num_experts / global_experts", "0 < num_experts <= global_experts",
                            str(num_experts) + " / " + str(global_experts));
  }
  if (block_m <= 0) return invalid_argument("block_m", "> 0", str(block_m));
  if (m > 0 && topk_ids == nullptr) return invalid_argument("topk_ids", "a pointer to [m, topk] int32", "nullptr");
  if (expert_map != nullptr) {
    for (int32_t g = 0; g < global_experts; ++g) {
      if (expert_map[g] < -1 || expert_map[g] >= num_experts) {
        return invalid_argument("expert_map[" + str(g) + "]",
                                "-1 (not on this GPU) or a local expert 0.." + str(num_experts - 1),
                                str(expert_map[g]));
      }
    }
  }
  const int64_t pairs = m * topk;
  std::vector<int32_t> local(static_cast<size_t>(pairs));
  out->block_m = block_m;
  out->expert_counts.assign(num_experts, 0);
  out->skipped_pairs = 0;
  for (int64_t p = 0; p < pairs; ++p) {
    const int32_t id = topk_ids[p];
    if (id < 0 || id >= global_experts) {
      return invalid_argument("topk_ids[" + str(p / topk) + "][" + str(p % topk) + "]",
                              "an expert id in 0.." + str(global_experts - 1), str(id));
    }
    local[p] = expert_map ? expert_map[id] : id;
    if (local[p] < 0) {
      ++out->skipped_pairs;
    } else {
      ++out->expert_counts[local[p]];
    }
  }
  out->expert_offsets.assign(num_experts + 1, 0);
  out->padded_offsets.assign(num_experts + 1, 0);
  for (int32_t e = 0; e < num_experts; ++e) {
    const int64_t c = out->expert_counts[e];
    out->expert_offsets[e + 1] = out->expert_offsets[e] + c;
    out->padded_offsets[e + 1] = out->padded_offsets[e] + (c + block_m - 1) / block_m * block_m;
  }
  out->sorted_pairs.assign(static_cast<size_t>(out->padded_offsets[num_experts]), Alignment::kPad);
  std::vector<int64_t> cursor(out->padded_offsets.begin(), out->padded_offsets.end() - 1);
  for (int64_t p = 0; p < pairs; ++p) {
    if (local[p] >= 0) out->sorted_pairs[cursor[local[p]]++] = static_cast<int32_t>(p);
  }
  out->tile_expert.clear();
  for (int32_t e = 0; e < num_experts; ++e) {
    const int64_t tiles = (out->padded_offsets[e + 1] - out->padded_offsets[e]) / block_m;
    out->tile_expert.insert(out->tile_expert.end(), static_cast<size_t>(tiles), e);
  }
  return Status();
}

}  // namespace fusedmoe::ref
