// Workspace layout: sizes from host-known bounds, alignment, 64-bit products.
#include <gtest/gtest.h>

#include "planner.h"
#include "cpu/test_util.h"

namespace fusedmoe {
namespace {

using testing_util::make_shape;

MoeInputs inputs(int64_t m, int64_t h, int64_t i, int32_t e, int32_t k, bool logits) {
  MoeInputs in;
  in.shape = make_shape(m, h, i, e, k);
  static float dummy = 0.0f;
  if (logits) in.router_logits = &dummy;
  return in;
}

TEST(Planner, LayoutIsAlignedAndDisjoint) {
  WorkspaceLayout ws;
  ASSERT_TRUE(plan_workspace(inputs(33, 2048, 768, 128, 8, true), QuantParams(), 64, &ws).ok());
  size_t end = 0;
  for (const WorkspaceBuffer& b : ws.buffers) {
    EXPECT_EQ(b.offset % WorkspaceLayout::kAlignment, 0u) << b.name;
    EXPECT_GE(b.offset, end) << b.name;
    end = b.offset + b.bytes;
  }
  EXPECT_GE(ws.total_bytes, end);
  EXPECT_EQ(ws.total_bytes % WorkspaceLayout::kAlignment, 0u);
  // Rows padded per expert: m * topk + E * (block_m - 1).
  const int64_t rows = 33 * 8 + 128 * 63;
  EXPECT_EQ(ws.find("sorted_pairs")->bytes, static_cast<size_t>(rows * 4));
  EXPECT_EQ(ws.find("tile_expert")->bytes, static_cast<size_t>((rows + 63) / 64 * 4));
  EXPECT_EQ(ws.find("intermediate")->bytes, static_cast<size_t>(rows * 768 * 2));
  EXPECT_EQ(ws.find("expert_out")->bytes, static_cast<size_t>(33 * 8 * 2048 * 2));
  EXPECT_NE(ws.find("topk_ids"), nullptr);
  EXPECT_EQ(ws.find("x_quantized"), nullptr);
}

TEST(Planner, Fp8AddsQuantizedActivations) {
  QuantParams q;
  q.format = WeightFormat::kFP8Block;
  q.act_quant = ActQuant::kPerGroup;
  WorkspaceLayout ws;
  ASSERT_TRUE(plan_workspace(inputs(16, 7168, 256, 256, 8, false), q, 16, &ws).ok());
  EXPECT_EQ(ws.find("topk_ids"), nullptr);  // routing given by the caller
  EXPECT_EQ(ws.find("x_quantized")->bytes, 16u * 7168u);
  EXPECT_EQ(ws.find("x_scales")->bytes, 16u * 56u * 4u);
  EXPECT_EQ(ws.find("intermediate_scales")->bytes, static_cast<size_t>((16 * 8 + 256 * 15) * 2 * 4));
}

TEST(Planner, SixtyFourBitSizes) {
  // DeepSeek-V3 TP8 at M = 65536: m * topk * hidden = 3.76e9 elements, past 2^31.
  WorkspaceLayout ws;
  ASSERT_TRUE(plan_workspace(inputs(65536, 7168, 256, 256, 8, true), QuantParams(), 128, &ws).ok());
  EXPECT_EQ(ws.find("expert_out")->bytes, static_cast<size_t>(int64_t{65536} * 8 * 7168 * 2));
  EXPECT_GT(ws.total_bytes, size_t{1} << 32);
}

TEST(Planner, BadBlockAndOverflowAreNamed) {
  WorkspaceLayout ws;
  Status st = plan_workspace(inputs(4, 64, 64, 8, 2, false), QuantParams(), 48, &ws);
  EXPECT_EQ(st.message(), "block_m: expected a positive power of two, got 48");
  // hidden near 2^62: m * topk * hidden * 2 bytes leaves int64.
  st = plan_workspace(inputs(1 << 20, int64_t{1} << 50, 64, 8, 8, false), QuantParams(), 64, &ws);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("expected < 2^63"), std::string::npos) << st.message();
}

TEST(Planner, KernelFamilies) {
  QuantParams q;
  EXPECT_STREQ(kernel_family_name(kernel_family_for(q)), "small_m_splitk");
  q.format = WeightFormat::kFP8Block;
  EXPECT_STREQ(kernel_family_name(kernel_family_for(q)), "sm90_fp8_grouped_gemm_blockscale");
  q.format = WeightFormat::kAWQ;
  EXPECT_STREQ(kernel_family_name(kernel_family_for(q)), "wna16_grouped_gemm");
}

TEST(Planner, SplitKFillsTheGridOnlyWhenNeeded) {
  // DeepSeek-V3 TP8 gate-up at M = 1: 8 experts x 32 tiles (I = 256), K = 7168:
  // 32 CTAs at split 1, 64, 128, then 256 at split 8 (the most there is).
  SmallMGemmConfig c = choose_small_m_config(32, 8, 8, 7168, 132);
  EXPECT_EQ(c.split_k, 8);
  EXPECT_EQ(c.ctas, 256);
  EXPECT_EQ(c.n_tiles, 1);
  // Its down projection: 448 tiles (H = 7168), K = 256: 448 CTAs at split 1, 896 at split 2,
  // and K = 256 allows no more.
  c = choose_small_m_config(448, 8, 8, 256, 132);
  EXPECT_EQ(c.split_k, 2);
  EXPECT_EQ(c.ctas, 896);
  // Enough CTAs without a split: Mixtral's gate-up at M = 16 (1792 tiles on 8 experts).
  c = choose_small_m_config(1792, 8, 32, 4096, 132);
  EXPECT_EQ(c.split_k, 1);
  // Llama-4 Scout gate-up at M = 1: one expert, 128 tiles, K = 5120: split 8 gives 128 CTAs.
  c = choose_small_m_config(128, 1, 1, 5120, 132);
  EXPECT_EQ(c.split_k, 8);
  // Short K caps the split: K = 256 allows at most split 2.
  c = choose_small_m_config(16, 1, 1, 256, 132);
  EXPECT_EQ(c.split_k, 2);
  // Many tokens per expert (Mixtral at M = 64: 128 pairs on 8 experts): 32 tokens per pass.
  EXPECT_EQ(choose_small_m_config(1792, 8, 128, 4096, 132).n_tiles, 4);
  EXPECT_EQ(choose_small_m_config(1792, 8, 96, 4096, 132).n_tiles, 1);
}

}  // namespace
}  // namespace fusedmoe
