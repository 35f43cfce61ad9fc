// Workspace layout: sizes from host-known bounds, alignment, 64-bit products.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "kernels/align_geometry.h"
#include "kernels/fp8_one_token_geometry.h"
#include "kernels/gate_up_layout.h"
#include "kernels/kernel_limits.h"
#include "planner.h"
#include "validate.h"
#include "cpu/test_util.h"

namespace fusedmoe {
namespace {

using testing_util::make_shape;
using testing_util::fp8_quant;
using testing_util::integer_quant;

MoeInputs inputs(int64_t m, int64_t h, int64_t i, int32_t e, int32_t k, bool logits) {
  MoeInputs in;
  in.shape = make_shape(m, h, i, e, k);
  static float dummy = 0.0f;
  if (logits) in.router_logits = &dummy;
  return in;
}

TEST(Planner, LayoutIsAlignedAndDisjoint) {
  for (KernelPath path : {KernelPath::kSmallM, KernelPath::kGroupedGemm}) {
    WorkspaceLayout ws;
    ASSERT_TRUE(plan_workspace(inputs(33, 2048, 768, 128, 8, true), QuantParams(), path, 5000, &ws).ok());
    size_t end = 0;
    for (const WorkspaceBuffer& b : ws.buffers) {
      EXPECT_EQ(b.offset % WorkspaceLayout::kAlignment, 0u) << b.name;
      EXPECT_GE(b.offset, end) << b.name;
      end = b.offset + b.bytes;
    }
    EXPECT_GE(ws.total_bytes, end);
    EXPECT_EQ(ws.total_bytes % WorkspaceLayout::kAlignment, 0u);
    const int64_t rows = 33 * 8;  // no padding: every buffer holds m * topk rows
    EXPECT_EQ(ws.find("sorted_pairs")->bytes, static_cast<size_t>(rows * 4));
    EXPECT_EQ(ws.find("intermediate")->bytes, static_cast<size_t>(rows * 768 * 2));
    EXPECT_EQ(ws.find("expert_out")->bytes, static_cast<size_t>(rows * 2048 * 2));
    EXPECT_NE(ws.find("topk_ids"), nullptr);
    EXPECT_EQ(ws.find("x_quantized"), nullptr);
    const bool grouped = path == KernelPath::kGroupedGemm;
    EXPECT_EQ(ws.find("gate_up") != nullptr, grouped);
    EXPECT_EQ(ws.find("row_of_pair") != nullptr, grouped);
    if (grouped) {
      EXPECT_EQ(ws.find("gate_up")->bytes, static_cast<size_t>(rows * 2 * 768 * 2));
      EXPECT_EQ(ws.find("gemm_workspace")->bytes, 5000u);
    } else {
      EXPECT_EQ(ws.find("gemm_workspace"), nullptr);
    }
  }
}

TEST(Planner, ChunkedAlignScratchAboveOneCta) {
  WorkspaceLayout ws;
  ASSERT_TRUE(plan_workspace(inputs(256, 64, 64, 128, 8, false), QuantParams(), KernelPath::kSmallM, 0, &ws).ok());
  EXPECT_EQ(ws.find("align_chunk_counts"), nullptr);  // 2048 pairs: one CTA
  ASSERT_TRUE(plan_workspace(inputs(512, 64, 64, 128, 8, false), QuantParams(), KernelPath::kSmallM, 0, &ws).ok());
  EXPECT_EQ(ws.find("align_chunk_counts"), nullptr);  // 4096 pairs (kSingleCtaPairs): one CTA
  ASSERT_TRUE(plan_workspace(inputs(513, 64, 64, 128, 8, false), QuantParams(), KernelPath::kSmallM, 0, &ws).ok());
  EXPECT_EQ(ws.find("align_chunk_counts")->bytes, 5u * 128u * 4u);  // 4104 pairs: 5 chunks of 1024 x E
  ASSERT_TRUE(plan_workspace(inputs(4096, 64, 64, 128, 8, false), QuantParams(), KernelPath::kSmallM, 0, &ws).ok());
  EXPECT_EQ(ws.find("align_chunk_counts")->bytes, 32u * 128u * 4u);  // 32768 pairs: 32 chunks x E
}

TEST(Planner, GemmOneActivatesOnInterleavedWeights) {
  // Dense weights prepared (interleaved) and integer ones (dequantized interleaved): GEMM1
  // writes the activation, no 2I-column gate_up buffer. Dense in place, and FP8: it stays.
  const MoeInputs in = inputs(64, 2048, 768, 128, 8, false);
  const QuantParams dense;
  const QuantParams awq = integer_quant(WeightFormat::kAWQ, 4, 128, true);
  QuantParams fp8 = fp8_quant(WeightFormat::kFP8PerChannel, ActQuant::kPerToken);
  WorkspaceLayout ws;
  for (KernelPath path : {KernelPath::kGroupedGemm, KernelPath::kGroupedSwapped}) {
    ASSERT_TRUE(plan_workspace(in, dense, path, 0, &ws, true).ok());
    EXPECT_EQ(ws.find("gate_up"), nullptr);
    EXPECT_EQ(ws.find("intermediate")->bytes, 64u * 8u * 768u * 2u);
    EXPECT_FALSE(path_rounds_gate_up(path, dense, true));
    ASSERT_TRUE(plan_workspace(in, dense, path, 0, &ws).ok());
    EXPECT_EQ(ws.find("gate_up")->bytes, 64u * 8u * 2u * 768u * 2u);
    EXPECT_TRUE(path_rounds_gate_up(path, dense, false));
    ASSERT_TRUE(plan_workspace(in, awq, path, 0, &ws).ok());
    EXPECT_EQ(ws.find("gate_up"), nullptr);
    EXPECT_FALSE(path_rounds_gate_up(path, awq, false));
    ASSERT_TRUE(plan_workspace(in, fp8, path, 0, &ws).ok());
    EXPECT_NE(ws.find("gate_up"), nullptr);
    EXPECT_TRUE(path_rounds_gate_up(path, fp8, false));
  }
  EXPECT_FALSE(path_rounds_gate_up(KernelPath::kSmallM, dense, false));  // the GEMVs activate fp32 sums
}

TEST(Planner, InterleavedGateUpRowsAreAPermutation) {
  // Blocks of 16 rows: gate rows 8b..8b+7, then the matching up rows; the inverse agrees.
  for (int64_t inter : {8, 72, 1408}) {
    std::vector<int> hits(static_cast<size_t>(2 * inter), 0);
    for (int64_t j = 0; j < inter; ++j) {
      const int64_t g = kernels::gate_up_row(j, false, inter, true);
      const int64_t u = kernels::gate_up_row(j, true, inter, true);
      ASSERT_LT(u, 2 * inter);
      EXPECT_EQ(u, g + 8);
      EXPECT_EQ(g / 16, j / 8);
      EXPECT_EQ(kernels::interleaved_gate_up_row(j, inter), g);
      EXPECT_EQ(kernels::interleaved_gate_up_row(inter + j, inter), u);
      EXPECT_EQ(kernels::gate_up_row(j, false, inter, false), j);
      EXPECT_EQ(kernels::gate_up_row(j, true, inter, false), inter + j);
      ++hits[static_cast<size_t>(g)];
      ++hits[static_cast<size_t>(u)];
    }
    for (int h : hits) EXPECT_EQ(h, 1);
  }
  EXPECT_EQ(kernels::gate_up_row(13, false, 64, true), 21);  // block 1, gate row 5
  EXPECT_EQ(kernels::gate_up_row(13, true, 64, true), 29);
}

TEST(Planner, Fp8AddsQuantizedActivations) {
  QuantParams q = fp8_quant(WeightFormat::kFP8Block, ActQuant::kPerGroup);
  WorkspaceLayout ws;
  ASSERT_TRUE(plan_workspace(inputs(16, 7168, 256, 256, 8, false), q, KernelPath::kGroupedGemm, 0, &ws).ok());
  EXPECT_EQ(ws.find("topk_ids"), nullptr);  // routing given by the caller
  // The grouped GEMM's e4m3 inputs (x's gathered rows, then the intermediate) and their
  // scales per 128 columns; the block scales of the larger projection, with room for
  // kFp8WideTileScaleCols columns per scale (w13: 8 x 56).
  EXPECT_EQ(ws.find("fp8_rows")->bytes, 16u * 8u * 7168u);
  EXPECT_EQ(ws.find("fp8_row_scales")->bytes, 16u * 8u * 56u * 4u);
  EXPECT_EQ(ws.find("fp8_weight_scales")->bytes, 256u * 8u * 56u * 4u);
  EXPECT_EQ(ws.find("amax")->bytes, 2u * 4u);
  // The activation is quantized as the quantizer computes it from gate_up: no bf16 copy.
  EXPECT_EQ(ws.find("intermediate"), nullptr);
  EXPECT_EQ(ws.find("gate_up")->bytes, 16u * 8u * 2u * 256u * 2u);
  EXPECT_EQ(ws.find("x_quantized"), nullptr);
  EXPECT_EQ(ws.find("intermediate_quantized"), nullptr);
  EXPECT_EQ(ws.find("dequant_weights"), nullptr);
  EXPECT_FALSE(fp8_epilogue_scales(q));
  EXPECT_EQ(fp8_block_scales_per_expert(512, 7168), 4 * 56);
  EXPECT_EQ(fp8_block_scales_per_expert(7168, 256), 56 * 2);
  EXPECT_EQ(fp8_block_scales_per_expert(7168, 256, kFp8WideTileScaleCols), 112 * 2);
  EXPECT_EQ(fp8_block_scales_per_expert(2880, 1360, kFp8WideTileScaleCols), 45 * 11);
  // Per-channel (and per-tensor) weights: the scales in the epilogue, the checkpoint's weight
  // scales as they are, no rewritten copy.
  q.format = WeightFormat::kFP8PerChannel;
  q.act_quant = ActQuant::kPerToken;
  EXPECT_TRUE(fp8_epilogue_scales(q));
  ASSERT_TRUE(plan_workspace(inputs(16, 7168, 256, 256, 8, false), q, KernelPath::kGroupedSwapped, 0, &ws).ok());
  EXPECT_EQ(ws.find("fp8_weight_scales")->bytes, 0u);
  EXPECT_EQ(ws.find("fp8_row_scales")->bytes, 16u * 8u * 56u * 4u);
  q.format = WeightFormat::kFP8PerTensor;
  q.act_quant = ActQuant::kPerTensorStatic;
  EXPECT_TRUE(fp8_epilogue_scales(q));
  ASSERT_TRUE(plan_workspace(inputs(16, 7168, 256, 256, 8, false), q, KernelPath::kGroupedGemm, 0, &ws).ok());
  EXPECT_EQ(ws.find("intermediate"), nullptr);
  // A dynamic per-tensor scale needs the amax of the whole activation before any of it is
  // quantized, and long rows lost fused: gated_act writes the activation in bf16 first.
  q.act_quant = ActQuant::kPerTensorDynamic;
  ASSERT_TRUE(plan_workspace(inputs(16, 7168, 256, 256, 8, false), q, KernelPath::kGroupedGemm, 0, &ws).ok());
  EXPECT_EQ(ws.find("intermediate")->bytes, 16u * 8u * 256u * 2u);
  // ... unless the one-pass quantizer holds it (layer.cpp asks fp8_one_pass_quantize with the
  // SMs, which the plan does not know: the slot stays), with its CTAs' amax slots.
  EXPECT_EQ(ws.find("amax_partials")->bytes, static_cast<size_t>(kernels::kFp8OnePassMaxCtas) * 4u);
  q.act_quant = ActQuant::kPerTensorStatic;
  ASSERT_TRUE(plan_workspace(inputs(16, 4096, 14336, 8, 2, false), q, KernelPath::kGroupedGemm, 0, &ws).ok());
  EXPECT_EQ(ws.find("intermediate")->bytes, 16u * 2u * 14336u * 2u);
  EXPECT_TRUE(fp8_fuses_activation(inputs(16, 4096, kFp8FusedActivationMaxInter, 8, 2, false).shape, q));
  EXPECT_FALSE(fp8_fuses_activation(inputs(16, 4096, kFp8FusedActivationMaxInter + 16, 8, 2, false).shape, q));
  // x quantized once per token: per-token scales for many tokens and topk >= 4; group and
  // tensor scales at any M for topk 2 to kFp8ScatterSpanMaxTopk (a span team's lanes).
  const int32_t span_topk = kernels::kFp8ScatterSpanMaxTopk;
  for (ActQuant a : {ActQuant::kPerTensorStatic, ActQuant::kPerTensorDynamic, ActQuant::kPerToken, ActQuant::kPerGroup}) {
    SCOPED_TRACE(static_cast<int>(a));
    q.act_quant = a;
    const bool row = a == ActQuant::kPerToken;
    EXPECT_TRUE(fp8_x_by_token(inputs(kFp8ScatterMinTokens, 2048, 768, 128, kFp8ScatterMinTopk, false).shape, q));
    EXPECT_TRUE(fp8_x_by_token(inputs(4096, 2048, 768, 128, span_topk, false).shape, q));
    EXPECT_EQ(fp8_x_by_token(inputs(4096, 2048, 768, 128, span_topk + 1, false).shape, q), row);
    EXPECT_EQ(fp8_x_by_token(inputs(kFp8ScatterMinTokens - 1, 2048, 768, 128, 8, false).shape, q), !row);
    EXPECT_EQ(fp8_x_by_token(inputs(16, 4096, 14336, 8, kFp8SpanScatterMinTopk, false).shape, q), !row);
    EXPECT_FALSE(fp8_x_by_token(inputs(4096, 5120, 1024, 16, 1, false).shape, q));  // a token is its pair
  }
  q.act_quant = ActQuant::kPerTensorStatic;
  // fp8_gemv: activations held as fp16 e4m3 values with their scales.
  q.format = WeightFormat::kFP8Block;
  q.act_quant = ActQuant::kPerGroup;
  ASSERT_TRUE(plan_workspace(inputs(16, 7168, 256, 256, 8, false), q, KernelPath::kSmallM, 0, &ws).ok());
  EXPECT_EQ(ws.find("x_quantized")->bytes, 16u * 7168u * 2u);
  EXPECT_EQ(ws.find("x_scales")->bytes, 16u * 56u * 4u);
  EXPECT_EQ(ws.find("intermediate_quantized")->bytes, 16u * 8u * 256u * 2u);
  EXPECT_EQ(ws.find("intermediate_scales")->bytes, 16u * 8u * 2u * 4u);
  EXPECT_EQ(ws.find("fp8_rows"), nullptr);
}

// The one-pass per-tensor quantizer (kernels/fp8_one_pass_geometry.h): a warp per unit (a row's
// segment of at most 256 vectors), about a unit per warp, at most two CTAs per SM, each holding
// its units in kFp8OnePassHeldBytes of shared memory.
TEST(Planner, Fp8OnePassQuantizerWhereTheRowsFitSharedMemory) {
  using kernels::fp8_one_pass_plan;
  // Qwen3 M = 1024's activation (8192 pairs x 768): a unit per row, 264 CTAs of 32 rows.
  kernels::Fp8OnePassPlan p = fp8_one_pass_plan(8192, 768, 132);
  EXPECT_TRUE(p.fits);
  EXPECT_EQ(p.segments, 1);
  EXPECT_EQ(p.seg_vecs, 96);
  EXPECT_EQ(p.ctas, 264);
  EXPECT_EQ(p.held_bytes, 32 * 96 * 16);
  EXPECT_FALSE(fp8_one_pass_plan(32768, 768, 132).fits);  // M = 4096: 50 MB against 26
  // Mixtral M = 1's activation (2 pairs x 14336): seven units of 256 vectors per row, two CTAs.
  p = fp8_one_pass_plan(2, 14336, 132);
  EXPECT_TRUE(p.fits);
  EXPECT_EQ(p.segments, 7);
  EXPECT_EQ(p.seg_vecs, 256);
  EXPECT_EQ(p.units, 14);
  EXPECT_EQ(p.ctas, 2);
  // DeepSeek-V3's x at M = 8 (896 vectors a row: four units of 224); at M = 4096 it does not fit.
  p = fp8_one_pass_plan(8, 7168, 132);
  EXPECT_EQ(p.segments, 4);
  EXPECT_EQ(p.seg_vecs, 224);
  EXPECT_EQ(p.ctas, 4);
  EXPECT_TRUE(p.fits);
  EXPECT_FALSE(fp8_one_pass_plan(4096, 7168, 132).fits);
  EXPECT_TRUE(fp8_one_pass_plan(4096, 2048, 132).fits);  // Qwen3's x at M = 4096: 16 rows of 4 KiB per CTA
  EXPECT_EQ(fp8_one_pass_plan(1 << 20, 1024, 4096).ctas, kernels::kFp8OnePassMaxCtas);  // the amax slots bound the grid
  // The bound: a CTA's units exactly at the held bytes, and one row more.
  const int64_t per_cta = kernels::kFp8OnePassHeldBytes / (128 * 16);  // rows of 1024 values
  EXPECT_TRUE(fp8_one_pass_plan(264 * per_cta, 1024, 132).fits);
  EXPECT_FALSE(fp8_one_pass_plan(264 * per_cta + 1, 1024, 132).fits);
  EXPECT_FALSE(fp8_one_pass_plan(0, 768, 132).fits);
  EXPECT_FALSE(fp8_one_pass_plan(16, 772, 132).fits);  // not whole 8-value vectors
  EXPECT_FALSE(fp8_one_pass_plan(16, 768, 0).fits);
  // Dynamic per-tensor scales only (the others have their scale before any value is read).
  for (ActQuant a : {ActQuant::kPerTensorDynamic, ActQuant::kPerTensorStatic, ActQuant::kPerToken, ActQuant::kPerGroup}) {
    const QuantParams q = fp8_quant(a == ActQuant::kPerGroup ? WeightFormat::kFP8Block : WeightFormat::kFP8PerTensor, a);
    EXPECT_EQ(fp8_one_pass_quantize(q, 8192, 768, 132), a == ActQuant::kPerTensorDynamic) << static_cast<int>(a);
  }
  EXPECT_FALSE(fp8_one_pass_quantize(fp8_quant(WeightFormat::kFP8PerTensor, ActQuant::kPerTensorDynamic), 32768, 768, 132));
}

TEST(Planner, Fp8GroupedNeeds128Blocks) {
  QuantParams q = fp8_quant(WeightFormat::kFP8Block, ActQuant::kPerGroup);
  EXPECT_TRUE(fp8_grouped_supports(q));
  EXPECT_EQ(choose_path(q, 4096 * 8, 256, 256, KernelPath::kAuto), KernelPath::kGroupedGemm);  // 128 rows per expert
  q.block_n = 64;
  EXPECT_FALSE(fp8_grouped_supports(q));
  EXPECT_EQ(choose_path(q, 4096 * 8, 256, 256, KernelPath::kAuto), KernelPath::kSmallM);
  q.format = WeightFormat::kFP8PerChannel;  // block sizes do not matter without block scales
  EXPECT_TRUE(fp8_grouped_supports(q));
  EXPECT_EQ(fp8_block_scales_per_expert(2880, 1360), 23 * 11);
}

TEST(Planner, SixtyFourBitSizes) {
  // DeepSeek-V3 TP8 at M = 65536: m * topk * hidden = 3.76e9 elements, past 2^31.
  WorkspaceLayout ws;
  ASSERT_TRUE(plan_workspace(inputs(65536, 7168, 256, 256, 8, true), QuantParams(), KernelPath::kGroupedGemm, 0, &ws).ok());
  EXPECT_EQ(ws.find("expert_out")->bytes, static_cast<size_t>(int64_t{65536} * 8 * 7168 * 2));
  EXPECT_GT(ws.total_bytes, size_t{1} << 32);
}

TEST(Planner, OverflowIsNamed) {
  WorkspaceLayout ws;
  // hidden near 2^62: m * topk * hidden * 2 bytes leaves int64.
  Status st = plan_workspace(inputs(1 << 20, int64_t{1} << 50, 64, 8, 8, false), QuantParams(), KernelPath::kSmallM, 0, &ws);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("expected < 2^63"), std::string::npos) << st.message();
}

TEST(Planner, KernelFamilies) {
  QuantParams q;
  EXPECT_STREQ(kernel_family_name(kernel_family_for(q)), "sm90_bf16_grouped_gemm");
  EXPECT_EQ(kernel_families_description(q), "small_m_splitk + sm90_bf16_grouped_gemm");
  q.format = WeightFormat::kFP8Block;
  EXPECT_STREQ(kernel_family_name(kernel_family_for(q)), "sm90_fp8_grouped_gemm_blockscale");
  EXPECT_EQ(kernel_families_description(q), "sm90_fp8_grouped_gemm_blockscale");
  q.format = WeightFormat::kAWQ;
  EXPECT_STREQ(kernel_family_name(kernel_family_for(q)), "wna16_grouped_gemm");
}

TEST(Planner, DensePathByRowsPerExpert) {
  auto path = [](int64_t m, int32_t e, int32_t topk, int64_t inter) {
    return choose_path(QuantParams(), m * topk, e, inter, KernelPath::kAuto);
  };
  // Grouped below kSwapMaxRows rows per expert: the swapped-operand kernel.
  const KernelPath small = KernelPath::kSmallM, grouped = KernelPath::kGroupedSwapped;
  // The H200 crossovers of docs/PERF.md v14: Mixtral (E 8, topk 2) between M = 8 and 16.
  EXPECT_EQ(path(8, 8, 2, 14336), small);
  EXPECT_EQ(path(16, 8, 2, 14336), grouped);
  // Qwen3-30B-A3B (E 128, topk 8) between M = 32 and 64; Scout (E 16, topk 1) likewise.
  EXPECT_EQ(path(32, 128, 8, 768), small);
  EXPECT_EQ(path(64, 128, 8, 768), grouped);
  EXPECT_EQ(path(32, 16, 1, 1024), small);
  EXPECT_EQ(path(64, 16, 1, 1024), grouped);
  // DeepSeek-V3 TP8 (E 256, topk 8, I 256) between M = 32 and 64.
  EXPECT_EQ(path(32, 256, 8, 256), small);
  EXPECT_EQ(path(64, 256, 8, 256), grouped);
  EXPECT_EQ(path(0, 8, 2, 14336), small);
  // From kSwapMaxRows rows per expert the 128-row tiles.
  EXPECT_EQ(path(4 * kSwapMaxRows - 4, 8, 2, 14336), KernelPath::kGroupedSwapped);
  EXPECT_EQ(path(4 * kSwapMaxRows, 8, 2, 14336), KernelPath::kGroupedGemm);
  EXPECT_EQ(path(128, 8, 2, 14336), KernelPath::kGroupedSwapped);  // r = 32
  EXPECT_EQ(path(256, 8, 2, 14336), KernelPath::kGroupedGemm);     // r = 64
  // Forced paths.
  EXPECT_EQ(choose_path(QuantParams(), 1, 8, 14336, KernelPath::kGroupedGemm), KernelPath::kGroupedGemm);
  EXPECT_EQ(choose_path(QuantParams(), 1 << 20, 8, 14336, KernelPath::kGroupedSwapped), KernelPath::kGroupedSwapped);
  EXPECT_EQ(choose_path(QuantParams(), 1 << 20, 8, 14336, KernelPath::kSmallM), small);
}

TEST(Planner, SwappedTileRowsPerGemm) {
  // v33: 256 weight rows per tile from kSwapWideMinRows rows per expert, per GEMM (n = 2I for
  // GEMM1, H for GEMM2): DeepSeek-V3 TP8's, Scout's and Mixtral's GEMM2 and Mixtral's GEMM1.
  EXPECT_EQ(swapped_tile_rows(kSwapWideMinRows - 1), 128);
  EXPECT_EQ(swapped_tile_rows(kSwapWideMinRows), 256);
  EXPECT_EQ(swapped_tile_rows(7168), 256);       // DeepSeek-V3 TP8 GEMM2
  EXPECT_EQ(swapped_tile_rows(2 * 256), 128);    // its GEMM1
  EXPECT_EQ(swapped_tile_rows(2 * 14336), 256);  // Mixtral GEMM1
  EXPECT_EQ(swapped_tile_rows(2048), 128);       // Qwen3 GEMM2, Scout GEMM1
  EXPECT_EQ(swapped_tile_rows(3584), 128);       // Qwen2 GEMM2
  EXPECT_EQ(swapped_tile_rows(0), 128);
}

TEST(Planner, GroupedTileRowsPerGemm) {
  // v34: the unswapped bf16/fp16 tile's token rows per GEMM (pairs, E, n, GEMM1?, SMs).
  constexpr int64_t kSms = 132;
  // Scout M = 1024 (r = 64, 16 experts): GEMM1's 8 weight tiles per expert fit one wave at 128
  // rows; GEMM2's 20 do not. At r = 128 neither GEMM fits.
  EXPECT_EQ(grouped_tile_rows(1024, 16, 2 * 1024, true, kSms), 128);
  EXPECT_EQ(grouped_tile_rows(1024, 16, 5120, false, kSms), 64);
  EXPECT_EQ(grouped_tile_rows(2048, 16, 2 * 1024, true, kSms), 64);
  // Mixtral M = 256 (r = 64, 8 experts): GEMM1 (112 tiles each) 64, GEMM2 (16 each) one wave.
  EXPECT_EQ(grouped_tile_rows(512, 8, 2 * 14336, true, kSms), 64);
  EXPECT_EQ(grouped_tile_rows(512, 8, 4096, false, kSms), 128);
  // The one-wave bounds: rows per expert and weight tiles.
  EXPECT_EQ(grouped_tile_rows(8 * kOneWaveMaxRows, 8, 4096, false, kSms), 128);
  EXPECT_EQ(grouped_tile_rows(8 * kOneWaveMaxRows + 1, 8, 4096, false, kSms), 64);
  EXPECT_EQ(grouped_tile_rows(512, 8, 4096 + 1, false, kSms), 64);  // 17 tiles per expert: 136
  EXPECT_EQ(grouped_tile_rows(512, 8, 4096, false, 127), 64);       // fewer SMs
  // GEMM1 from kGateUpTallMinRows rows per expert: 128; GEMM2 stays 64.
  EXPECT_EQ(grouped_tile_rows(64 * (kGateUpTallMinRows - 1), 64, 2 * 640, true, kSms), 64);  // Qwen2
  EXPECT_EQ(grouped_tile_rows(64 * kGateUpTallMinRows, 64, 2 * 640, true, kSms), 128);
  EXPECT_EQ(grouped_tile_rows(64 * kGateUpTallMinRows, 64, 3584, false, kSms), 64);
  EXPECT_EQ(grouped_tile_rows(2 * 4096, 8, 4096, false, kSms), 64);  // Mixtral M = 4096 GEMM2
  // Fewer pairs than experts: the active experts are the pairs.
  EXPECT_EQ(grouped_tile_rows(3, 256, 7168, false, kSms), 128);
  EXPECT_EQ(grouped_tile_rows(0, 256, 7168, false, kSms), 128);
}

TEST(Planner, GemmOneGathersRowsOnlyWithFewWeightTiles) {
  // v38: GEMM1 reads x's rows itself on the dense unswapped path (here H = 4096) where 2I fits two 256-row
  // weight tiles (DeepSeek-V3 TP8: I = 256) at any M, and up to eight (2I <= 2048) while the
  // experts average at most 64 rows; a gather kernel first elsewhere.
  QuantParams dense;
  constexpr int64_t kSms = 132;
  const KernelPath gemm = KernelPath::kGroupedGemm;
  EXPECT_TRUE(grouped_gemm1_gathers(dense, true, gemm, 256, 4096, 8 * 4096, 256, kSms));  // DeepSeek M = 4096: r = 128
  EXPECT_TRUE(grouped_gemm1_gathers(dense, true, gemm, kGatherMaxGateUpRows / 2, 4096, 1 << 20, 8, kSms));
  EXPECT_TRUE(grouped_gemm1_gathers(dense, true, gemm, 768, 4096, 8 * 1024, 128, kSms));    // Qwen3 M = 1024: r = 64
  EXPECT_FALSE(grouped_gemm1_gathers(dense, true, gemm, 768, 4096, 8 * 1024 + 1, 128, kSms));
  EXPECT_FALSE(grouped_gemm1_gathers(dense, true, gemm, 768, 4096, 8 * 2048, 128, kSms));   // r = 128
  EXPECT_TRUE(grouped_gemm1_gathers(dense, true, gemm, 1024, 4096, 1024, 16, kSms));        // Scout M = 1024
  EXPECT_TRUE(grouped_gemm1_gathers(dense, true, gemm, kGatherShortMaxGateUpRows / 2, 4096, 64, 1, kSms));
  EXPECT_FALSE(grouped_gemm1_gathers(dense, true, gemm, kGatherShortMaxGateUpRows / 2 + 8, 4096, 64, 1, kSms));
  EXPECT_FALSE(grouped_gemm1_gathers(dense, true, gemm, 14336, 4096, 2 * 256, 8, kSms));    // Mixtral M = 256: r = 64
  // Fewer pairs than experts: the active experts are the pairs (r = 1).
  EXPECT_TRUE(grouped_gemm1_gathers(dense, true, gemm, 768, 4096, 3, 128, kSms));
  // Only the gated GEMM1 (interleaved w13) of dense weights on the grouped tiles.
  EXPECT_FALSE(grouped_gemm1_gathers(dense, false, gemm, 256, 4096, 64, 8, kSms));
  EXPECT_FALSE(grouped_gemm1_gathers(dense, true, KernelPath::kSmallM, 256, 4096, 64, 8, kSms));
  EXPECT_FALSE(grouped_gemm1_gathers(integer_quant(WeightFormat::kGPTQ, 4, 128, false), true, gemm, 256, 4096, 64, 8, kSms));
  QuantParams fp8;
  fp8.format = WeightFormat::kFP8PerChannel;
  EXPECT_FALSE(grouped_gemm1_gathers(fp8, true, gemm, 256, 4096, 64, 8, kSms));
}

TEST(Planner, MixedGemmOneGathersRowsWhereGateUpIsNarrow) {
  // v56: the mixed-input GEMM reads x by token where 2I <= kGatherMaxGateUpRows and the active
  // experts average kMixedGatherMinRows rows or more, on its 128-token tiles (below
  // kWna16GemmWideMinRows rows), but under act-order; no other format reaches it.
  constexpr int64_t kSms = 132;
  const KernelPath mixed = KernelPath::kGroupedMixed;
  const QuantParams gptq = integer_quant(WeightFormat::kGPTQ, 4, 128, false);
  EXPECT_TRUE(grouped_gemm1_gathers(gptq, false, mixed, 256, 7168, 8 * 4096, 256, kSms));  // DeepSeek-V3 TP8 M = 4096: r = 128
  EXPECT_TRUE(grouped_gemm1_gathers(gptq, false, mixed, 256, 7168, 8 * 1024, 256, kSms));  // r = 32
  EXPECT_FALSE(grouped_gemm1_gathers(gptq, false, mixed, 256, 7168, 8 * 1024 - 1, 256, kSms));
  EXPECT_FALSE(grouped_gemm1_gathers(gptq, false, mixed, 256, 7168, 8 * 8192, 256, kSms));  // r = 256: 256-token tiles
  EXPECT_TRUE(grouped_gemm1_gathers(integer_quant(WeightFormat::kMoeWNA16, 8, -1, true), true, mixed,
                                    kGatherMaxGateUpRows / 2, 1024, 64 * 32, 64, kSms));
  EXPECT_FALSE(grouped_gemm1_gathers(gptq, true, mixed, kGatherMaxGateUpRows / 2 + 8, 1024, 64 * 32, 64, kSms));
  EXPECT_FALSE(grouped_gemm1_gathers(gptq, true, mixed, 768, 2048, 8 * 2048, 128, kSms));   // Qwen3 M = 2048: 2I = 1536
  EXPECT_FALSE(grouped_gemm1_gathers(gptq, true, mixed, 14336, 4096, 2 * 512, 8, kSms));    // Mixtral M = 512
  QuantParams act_order = integer_quant(WeightFormat::kGPTQ, 4, 128, false);
  act_order.has_g_idx = true;
  EXPECT_FALSE(grouped_gemm1_gathers(act_order, false, mixed, 256, 7168, 8 * 4096, 256, kSms));
  QuantParams dense;
  EXPECT_FALSE(grouped_gemm1_gathers(dense, true, mixed, 256, 4096, 8 * 4096, 256, kSms));
}

TEST(Planner, SwappedGemmOneGathersRowsWithFewTilesOrLongRows) {
  // v38: with swapped operands (128 weight rows x 64 tokens) where GEMM1 has at most 5 weight
  // tiles per SM, or where H * r reaches kSwapGatherMinRowElems.
  QuantParams dense;
  constexpr int64_t kSms = 132;
  const KernelPath swapped = KernelPath::kGroupedSwapped;
  EXPECT_TRUE(grouped_gemm1_gathers(dense, true, swapped, 1024, 5120, 64, 16, kSms));       // Scout: 256 tiles
  EXPECT_TRUE(grouped_gemm1_gathers(dense, true, swapped, 640, 3584, 8 * 32, 64, kSms));    // Qwen2: 640 tiles
  EXPECT_FALSE(grouped_gemm1_gathers(dense, true, swapped, 768, 2048, 8 * 512, 128, kSms)); // Qwen3: r = 32
  EXPECT_FALSE(grouped_gemm1_gathers(dense, true, swapped, 256, 7168, 8 * 256, 256, kSms)); // DeepSeek r = 8
  EXPECT_TRUE(grouped_gemm1_gathers(dense, true, swapped, 256, 7168, 8 * 512, 256, kSms));  // r = 16
  // The tile count's bound scales with the SMs: Qwen2 on half the SMs copies first.
  EXPECT_FALSE(grouped_gemm1_gathers(dense, true, swapped, 640, 3584, 8 * 32, 64, kSms / 2));
  // Not on 256 weight rows per tile (2I >= kSwapWideMinRows: Mixtral).
  EXPECT_FALSE(grouped_gemm1_gathers(dense, true, swapped, kSwapWideMinRows / 2, 4096, 64, 8, kSms));
  EXPECT_FALSE(grouped_gemm1_gathers(dense, false, swapped, 1024, 5120, 64, 16, kSms));
}

TEST(Planner, Fp8Gemm1GathersXCodes) {
  // Epilogue scales, H a multiple of 16, topk >= 2; swapped tiles where H >= 4096, unswapped
  // 64 x 192 tiles where 2I <= kGatherMaxGateUpRows (v44).
  const QuantParams channel = fp8_quant(WeightFormat::kFP8PerChannel, ActQuant::kPerToken);
  const QuantParams tensor = fp8_quant(WeightFormat::kFP8PerTensor, ActQuant::kPerTensorDynamic);
  const QuantParams block = fp8_quant(WeightFormat::kFP8Block, ActQuant::kPerGroup);
  const KernelPath gemm = KernelPath::kGroupedGemm, swapped = KernelPath::kGroupedSwapped;
  // DeepSeek-V3 TP8 (H = 7168, 2I = 512): 64-row tiles (r = 64-96) and swapped ones, every
  // epilogue-scaled mode; not 128-row tiles (M = 4096), not block scales.
  EXPECT_TRUE(fp8_gemm1_gathers(channel, gemm, 64, 192, 7168, 256, 8));
  EXPECT_TRUE(fp8_gemm1_gathers(tensor, gemm, 64, 192, 7168, 256, 8));
  EXPECT_FALSE(fp8_gemm1_gathers(block, gemm, 64, 192, 7168, 256, 8));
  EXPECT_FALSE(fp8_gemm1_gathers(channel, gemm, 128, 192, 7168, 256, 8));
  EXPECT_FALSE(fp8_gemm1_gathers(channel, gemm, 64, 128, 7168, 256, 8));  // no such kernel
  EXPECT_TRUE(fp8_gemm1_gathers(channel, swapped, 128, 128, 7168, 256, 8));
  EXPECT_FALSE(fp8_gemm1_gathers(block, swapped, 128, 128, 7168, 256, 8));
  EXPECT_FALSE(fp8_gemm1_gathers(channel, KernelPath::kSmallM, 64, 192, 7168, 256, 8));
  // Wider 2I unswapped (Qwen2, Qwen3 at r = 64), shorter rows swapped (Qwen2: H = 3584).
  EXPECT_FALSE(fp8_gemm1_gathers(channel, gemm, 64, 192, 2048, 768, 8));
  EXPECT_FALSE(fp8_gemm1_gathers(channel, swapped, 128, 128, kFp8SwapGatherMinHidden - 16, 640, 8));
  EXPECT_TRUE(fp8_gemm1_gathers(channel, swapped, 128, 128, kFp8SwapGatherMinHidden, 14336, 2));  // Mixtral
  // 16-byte rows; topk 1 (Scout: a token is its pair).
  EXPECT_FALSE(fp8_gemm1_gathers(channel, swapped, 128, 128, 7168 + 8, 256, 8));
  EXPECT_FALSE(fp8_gemm1_gathers(channel, swapped, 128, 128, 5120, 1024, 1));
  // Tensor scales go to the pairs' rows by a span team's lanes: topk up to kFp8ScatterSpanMaxTopk.
  const int32_t most = kernels::kFp8ScatterSpanMaxTopk;
  EXPECT_TRUE(fp8_gemm1_gathers(tensor, swapped, 128, 128, 4096, 256, most));
  EXPECT_FALSE(fp8_gemm1_gathers(tensor, swapped, 128, 128, 4096, 256, most + 1));
  EXPECT_TRUE(fp8_gemm1_gathers(channel, swapped, 128, 128, 4096, 256, most + 1));
}

TEST(Planner, Fp8GroupedTileRowsPerGemm) {
  // The unswapped FP8 GEMMs, epilogue scales first: weight tiles of 128 columns in the one-wave test;
  // GEMM1 on 64 rows up to kFp8GateUpShortMaxRows per expert, GEMM2 up to kFp8DownShortMaxRows
  // where k <= kFp8DownShortMaxK.
  constexpr int64_t kSms = 132;
  const int64_t r1 = kFp8GateUpShortMaxRows, r2 = kFp8DownShortMaxRows;
  EXPECT_EQ(fp8_grouped_tile_rows(128 * 64, 128, 1536, 2048, true, false, kSms), 64);  // Qwen3 M = 1024 GEMM1
  EXPECT_EQ(fp8_grouped_tile_rows(128 * 64, 128, 2048, 768, false, false, kSms), 64);  // and GEMM2
  EXPECT_EQ(fp8_grouped_tile_rows(128 * 128, 128, 1536, 2048, true, false, kSms), 128);  // M = 2048
  EXPECT_EQ(fp8_grouped_tile_rows(128 * 128, 128, 2048, 768, false, false, kSms), 64);
  EXPECT_EQ(fp8_grouped_tile_rows(64 * r1, 64, 1280, 3584, true, false, kSms), 64);
  EXPECT_EQ(fp8_grouped_tile_rows(64 * (r1 + 1), 64, 1280, 3584, true, false, kSms), 128);
  EXPECT_EQ(fp8_grouped_tile_rows(64 * r2, 64, 3584, 640, false, false, kSms), 64);
  EXPECT_EQ(fp8_grouped_tile_rows(64 * (r2 + 1), 64, 3584, 640, false, false, kSms), 128);
  // Below kFp8DownShortMinK, GEMM2 on 64 rows only up to kFp8BlockDownShortMaxRows per expert
  // (DeepSeek-V3 TP8: k = 256).
  const int64_t rb = kFp8BlockDownShortMaxRows;
  EXPECT_EQ(fp8_grouped_tile_rows(256 * rb, 256, 7168, 256, false, false, kSms), 64);
  EXPECT_EQ(fp8_grouped_tile_rows(256 * (rb + 1), 256, 7168, 256, false, false, kSms), 128);
  EXPECT_EQ(fp8_grouped_tile_rows(256 * 128, 256, 7168, kFp8DownShortMinK - 1, false, false, kSms), 128);
  EXPECT_EQ(fp8_grouped_tile_rows(256 * 128, 256, 7168, kFp8DownShortMinK, false, false, kSms), 64);
  // Mixtral's GEMM2 (k = 14336) stays on 128 at every r; its GEMM1 takes 64 at r = 64.
  EXPECT_EQ(fp8_grouped_tile_rows(8 * 64, 8, 4096, 14336, false, false, kSms), 128);
  EXPECT_EQ(fp8_grouped_tile_rows(8 * 64, 8, 4096, kFp8DownShortMaxK, false, false, kSms), 64);
  EXPECT_EQ(fp8_grouped_tile_rows(8 * 64, 8, 28672, 4096, true, false, kSms), 64);
  // One wave: 8 experts x 16 tiles of 128 columns (n = 2048) fit 132 SMs, x 17 do not.
  EXPECT_EQ(fp8_grouped_tile_rows(8 * 64, 8, 2048, 1024, true, false, kSms), 128);
  EXPECT_EQ(fp8_grouped_tile_rows(8 * 64, 8, 2048 + 1, 1024, true, false, kSms), 64);
  EXPECT_EQ(fp8_grouped_tile_rows(8 * 64, 8, 2048, 1024, false, false, kSms), 128);
  EXPECT_EQ(fp8_grouped_tile_rows(8 * (kOneWaveMaxRows + 1), 8, 2048, 1024, false, false, kSms), 64);
  EXPECT_EQ(fp8_grouped_tile_rows(0, 8, 2048, 1024, true, false, kSms), 128);
  // Block scales: GEMM1 on 128 rows at every r; GEMM2 on 64 up to kFp8BlockDownShortMaxRows
  // where k <= kFp8DownShortMaxK, past the same one-wave test.
  EXPECT_EQ(fp8_grouped_tile_rows(256 * 64, 256, 512, 7168, true, true, kSms), 128);  // DeepSeek-V3 TP8 M = 2048
  EXPECT_EQ(fp8_grouped_tile_rows(256 * 64, 256, 7168, 256, false, true, kSms), 64);
  EXPECT_EQ(fp8_grouped_tile_rows(128 * rb, 128, 2048, 768, false, true, kSms), 64);
  EXPECT_EQ(fp8_grouped_tile_rows(128 * (rb + 1), 128, 2048, 768, false, true, kSms), 128);
  EXPECT_EQ(fp8_grouped_tile_rows(8 * 64, 8, 4096, 14336, false, true, kSms), 128);  // Mixtral
  EXPECT_EQ(fp8_grouped_tile_rows(8 * 64, 8, 2048, 1024, false, true, kSms), 128);  // one wave
  EXPECT_EQ(fp8_grouped_tile_rows(8 * 64, 8, 2048 + 1, 1024, false, true, kSms), 64);
}

TEST(Planner, Fp8GroupedTileColsPerGemm) {
  // Epilogue scales: 192 columns on 64-row tiles at any r, and on 128-row tiles past
  // kFp8NarrowTileMaxRows rows per expert.
  const int64_t r = kFp8NarrowTileMaxRows;
  EXPECT_EQ(fp8_grouped_tile_cols(8 * 256, 8, 128, false), 192);      // Mixtral M = 1024, both GEMMs
  EXPECT_EQ(fp8_grouped_tile_cols(8 * 64, 8, 128, false), 128);       // M = 256, GEMM2 (k = 14336)
  EXPECT_EQ(fp8_grouped_tile_cols(8 * 64, 8, 64, false), 192);        // and GEMM1 on 64 rows
  EXPECT_EQ(fp8_grouped_tile_cols(64 * r, 64, 128, false), 128);
  EXPECT_EQ(fp8_grouped_tile_cols(64 * (r + 1), 64, 128, false), 192);
  EXPECT_EQ(fp8_grouped_tile_cols(128 * 8, 128, 64, false), 192);
  EXPECT_EQ(fp8_grouped_tile_cols(0, 8, 128, false), 128);            // no pairs: the one-wave case
  // Block scales: 192 on 128-row tiles past r, 128 on 64-row tiles.
  EXPECT_EQ(fp8_grouped_tile_cols(8 * 1024, 8, 128, true), 192);
  EXPECT_EQ(fp8_grouped_tile_cols(64 * r, 64, 128, true), 128);
  EXPECT_EQ(fp8_grouped_tile_cols(64 * (r + 1), 64, 128, true), 192);
  EXPECT_EQ(fp8_grouped_tile_cols(256 * 64, 256, 64, true), 128);
}

TEST(Planner, IntegerPathByRowsPerExpertAndLayout) {
  QuantParams q = integer_quant(WeightFormat::kGPTQ, 4, 128, false);
  for (int32_t bits : {4, 8}) {
    SCOPED_TRACE(bits);
    q.bits = bits;
    const PathRule rule = kIntegerPathRule;
    EXPECT_EQ(path_rule(q).rows, rule.rows);
    // The crossover by inter: Mixtral's 14336 (large), Qwen3's 768, DeepSeek-V3 TP8's 256 (small);
    // past it the mixed-input GEMM at every size.
    const std::pair<int64_t, int64_t> by_inter[] = {
        {14336, rule.rows_large_inter}, {768, rule.rows}, {kSmallInter, rule.rows_small_inter}};
    for (const auto& [inter, r] : by_inter) {
      SCOPED_TRACE(inter);
      EXPECT_EQ(choose_path(q, 8 * (r - 1), 8, inter, KernelPath::kAuto), KernelPath::kSmallM);
      EXPECT_EQ(choose_path(q, 8 * r, 8, inter, KernelPath::kAuto), KernelPath::kGroupedMixed);
      EXPECT_EQ(choose_path(q, 8 * 4096, 8, inter, KernelPath::kAuto), KernelPath::kGroupedMixed);
    }
    // The measured points (PERF.md v55): the GEMV through Mixtral M = 192 (48 rows), Qwen2 M =
    // 384 (48 per expert of 64), Qwen3 M = 768, DeepSeek-V3 TP8 M = 512 (16 of 256); the mixed
    // GEMM from Mixtral M = 256, Qwen2 M = 512, Qwen3 M = 1024, DeepSeek-V3 TP8 M = 768 (24).
    EXPECT_EQ(choose_path(q, 384, 8, 14336, KernelPath::kAuto), KernelPath::kSmallM);
    EXPECT_EQ(choose_path(q, 512, 8, 14336, KernelPath::kAuto), KernelPath::kGroupedMixed);
    EXPECT_EQ(choose_path(q, 3072, 64, 640, KernelPath::kAuto), KernelPath::kSmallM);
    EXPECT_EQ(choose_path(q, 4096, 64, 640, KernelPath::kAuto), KernelPath::kGroupedMixed);
    EXPECT_EQ(choose_path(q, 6144, 128, 768, KernelPath::kAuto), KernelPath::kSmallM);
    EXPECT_EQ(choose_path(q, 8192, 128, 768, KernelPath::kAuto), KernelPath::kGroupedMixed);
    EXPECT_EQ(choose_path(q, 4096, 256, 256, KernelPath::kAuto), KernelPath::kSmallM);
    EXPECT_EQ(choose_path(q, 6144, 256, 256, KernelPath::kAuto), KernelPath::kGroupedMixed);
  }
  // Layouts neither wna16_gemv nor the mixed-input GEMM reads go to the dequant path at any batch.
  for (int32_t gs : {32, 64, 128, 256, -1}) {
    q.group_size = gs;
    EXPECT_TRUE(wna16_gemv_supports(q)) << gs;
  }
  q.group_size = 96;
  EXPECT_FALSE(wna16_gemv_supports(q));
  EXPECT_EQ(choose_path(q, 1, 8, 14336, KernelPath::kAuto), KernelPath::kGroupedSwapped);
  EXPECT_EQ(choose_path(q, 8 * kSwapMaxRows, 8, 14336, KernelPath::kAuto), KernelPath::kGroupedGemm);
  // Act-order weights are prepared with K in group order: the same rules as without.
  q.group_size = 128;
  q.has_g_idx = true;
  EXPECT_TRUE(wna16_gemv_supports(q));
  EXPECT_EQ(choose_path(q, 1, 8, 14336, KernelPath::kAuto), KernelPath::kSmallM);
  EXPECT_EQ(choose_path(q, 2048, 8, 14336, KernelPath::kAuto), KernelPath::kGroupedMixed);
  // A forced path still decides.
  EXPECT_EQ(choose_path(q, 2048, 8, 14336, KernelPath::kGroupedGemm), KernelPath::kGroupedGemm);
}

TEST(Planner, ActOrderColumnsPutGroupsInOrder) {
  // GPTQ's act-order: the channel at position i of the quantization order is in group i / 4.
  const std::vector<int32_t> perm = {5, 2, 7, 0, 3, 6, 1, 4};
  std::vector<int32_t> g_idx(8);
  for (int32_t i = 0; i < 8; ++i) g_idx[perm[i]] = i / 4;
  std::vector<int32_t> order(8, -1);
  ASSERT_TRUE(act_order_columns(g_idx.data(), 8, 4, "w13.g_idx[0]", order.data()).ok());
  EXPECT_EQ(order, (std::vector<int32_t>{0, 2, 5, 7, 1, 3, 4, 6}));  // group 0's channels ascending, then group 1's
  // Static groups (g_idx = k / group_size) and one group per row keep the checkpoint's order.
  const std::vector<int32_t> natural = {0, 1, 2, 3, 4, 5, 6, 7};
  const std::vector<int32_t> statics = {0, 0, 0, 0, 1, 1, 1, 1};
  ASSERT_TRUE(act_order_columns(statics.data(), 8, 4, "w13.g_idx[0]", order.data()).ok());
  EXPECT_EQ(order, natural);
  const std::vector<int32_t> one_group(8, 0);
  ASSERT_TRUE(act_order_columns(one_group.data(), 8, 8, "w13.g_idx[0]", order.data()).ok());
  EXPECT_EQ(order, natural);
  // A group out of range, a group of the wrong size: named, with the expert.
  g_idx[6] = 2;
  EXPECT_EQ(act_order_columns(g_idx.data(), 8, 4, "w2.g_idx[3]", order.data()).message(),
            "w2.g_idx[3][6]: expected a group in 0..1, got 2");
  g_idx[6] = 0;
  EXPECT_EQ(act_order_columns(g_idx.data(), 8, 4, "w2.g_idx[3]", order.data()).message(),
            "w2.g_idx[3]: expected 4 channels in every group (GPTQ act-order: g_idx[perm[i]] = i / group_size), "
            "got 5 in group 0");
  EXPECT_EQ(act_order_columns(statics.data(), 8, 3, "w13.g_idx[0]", order.data()).message(),
            "group_size: expected a divisor of 8, got 3");
}

TEST(Planner, TopOneWritesTheOutputFromTheDownGemv) {
  EXPECT_TRUE(top1_direct_output(make_shape(1, 5120, 8192, 16, 1), false));
  EXPECT_TRUE(top1_direct_output(make_shape(2048, 5120, 8192, 16, 1), false));
  EXPECT_FALSE(top1_direct_output(make_shape(2049, 5120, 8192, 16, 1), false));  // past kZeroSkippedMaxPairs
  EXPECT_TRUE(top1_direct_output(make_shape(kTop1DirectMaxMappedTokens, 5120, 8192, 16, 1), true));
  EXPECT_FALSE(top1_direct_output(make_shape(kTop1DirectMaxMappedTokens + 1, 5120, 8192, 16, 1), true));
  EXPECT_FALSE(top1_direct_output(make_shape(1, 4096, 14336, 8, 2), false));  // top-2 sums its slots
}

TEST(Planner, GroupedGemmsLaunchEarlyUpToThePairsPerExpertBound) {
  const int64_t r = kGemmEarlyLaunchMaxRowsPerExpert;
  EXPECT_TRUE(grouped_gemms_launch_early(make_shape(16 * r, 5120, 1024, 16, 1)));       // Scout M = 512
  EXPECT_FALSE(grouped_gemms_launch_early(make_shape(16 * r + 1, 5120, 1024, 16, 1)));
  EXPECT_TRUE(grouped_gemms_launch_early(make_shape(4 * r, 4096, 14336, 8, 2)));        // Mixtral M = 128
  EXPECT_FALSE(grouped_gemms_launch_early(make_shape(4 * r + 1, 4096, 14336, 8, 2)));
  EXPECT_TRUE(grouped_gemms_launch_early(make_shape(32 * r, 7168, 256, 256, 8)));       // DeepSeek M = 1024
  EXPECT_FALSE(grouped_gemms_launch_early(make_shape(64 * r, 7168, 256, 256, 8)));
}

TEST(Planner, OneTokenSumsItsExpertsInTheDownGemv) {
  constexpr int32_t kSms = 132;
  const QuantParams dense;
  EXPECT_TRUE(one_token_down(make_shape(1, 7168, 256, 256, 8), dense, kSms, false));
  EXPECT_TRUE(one_token_down(make_shape(1, 2048, 1408, 64, kOneTokenDownMinTopk), dense, kSms, false));
  EXPECT_FALSE(one_token_down(make_shape(2, 7168, 256, 256, 8), dense, kSms, false));       // two tokens on align's table
  EXPECT_TRUE(one_token_down(make_shape(2, 2048, 768, 128, 8), dense, kSms, true));         // a CTA row per token (direct)
  EXPECT_TRUE(one_token_down(make_shape(kDirectTableMaxTokens, 2048, 768, 128, 8), dense, kSms, true));
  EXPECT_FALSE(one_token_down(make_shape(kDirectTableMaxTokens + 1, 2048, 768, 128, 8), dense, kSms, true));
  EXPECT_FALSE(one_token_down(make_shape(2, 7168, 256, 256, 8), dense, kSms, true));  // I < kOneTokenDownPerTokenMinInter
  EXPECT_FALSE(one_token_down(make_shape(1, 4096, 14336, 8, 2), dense, kSms, false));       // top-2: measured slower
  EXPECT_FALSE(one_token_down(make_shape(1, 5120, 8192, 16, 1), dense, kSms, false));       // top-1: direct output already
  EXPECT_FALSE(one_token_down(make_shape(1, 2048, 768, 128, kOneTokenDownMaxTopk + 1), dense, kSms, false));  // past a CTA's warps
  QuantParams fp8 = fp8_quant(WeightFormat::kFP8PerChannel, ActQuant::kPerToken);
  // FP8 at one token (align's table, which x's quantizer writes) where I >= 512 (v66), or
  // under block scales.
  const QuantParams fp8_block = fp8_quant(WeightFormat::kFP8Block, ActQuant::kPerGroup);
  EXPECT_TRUE(one_token_down(make_shape(1, 2048, 768, 128, 8), fp8, kSms, false));   // Qwen3
  const QuantParams fp8_tensor = fp8_quant(WeightFormat::kFP8PerTensor, ActQuant::kPerTensorDynamic);
  EXPECT_TRUE(one_token_down(make_shape(1, 3584, 640, 64, 8), fp8_tensor, kSms, false));  // Qwen2 TP4
  EXPECT_FALSE(one_token_down(make_shape(1, 7168, 256, 256, 8), fp8, kSms, false));  // DeepSeek-V3 TP8: I < 512
  EXPECT_TRUE(one_token_down(make_shape(1, 7168, 256, 256, 8), fp8_block, kSms, false));
  // Two to four tokens on align's table (v69): at most 32 pairs, not under dynamic per-tensor
  // scales (the tensor's amax spans every token's rows).
  EXPECT_TRUE(one_token_down(make_shape(2, 2048, 768, 128, 8), fp8, kSms, false));
  EXPECT_TRUE(one_token_down(make_shape(kFp8FewTokensDownMaxTokens, 2048, 768, 128, 8), fp8, kSms, false));
  EXPECT_TRUE(one_token_down(make_shape(3, 7168, 256, 256, 8), fp8_block, kSms, false));
  EXPECT_FALSE(one_token_down(make_shape(kFp8FewTokensDownMaxTokens + 1, 2048, 768, 128, 4), fp8, kSms, false));
  EXPECT_FALSE(one_token_down(make_shape(3, 7168, 256, 256, 8), fp8, kSms, false));  // I < 512
  EXPECT_FALSE(one_token_down(make_shape(2, 3584, 640, 64, 8), fp8_tensor, kSms, false));
  QuantParams fp8_static = fp8_quant(WeightFormat::kFP8PerTensor, ActQuant::kPerTensorStatic);
  EXPECT_TRUE(one_token_down(make_shape(2, 3584, 640, 64, 8), fp8_static, kSms, false));
  static_assert(kFp8FewTokensDownMaxTokens * kOneTokenDownMaxTopk <= kernels::kWarpAlignPairs);
  // ... where the down weights streamed again for shared experts are at most 8 MiB: Qwen2 TP4
  // at M = 4 expects 5.5 repeated pairs of 3584 x 640 bytes (measured 1.02-1.03x slower).
  EXPECT_TRUE(one_token_down(make_shape(3, 3584, 640, 64, 8), fp8, kSms, false));
  EXPECT_FALSE(one_token_down(make_shape(4, 3584, 640, 64, 8), fp8, kSms, false));
  EXPECT_NEAR(expected_repeated_pairs(make_shape(4, 3584, 640, 64, 8)), 32.0 - 64.0 * (1.0 - std::pow(56.0 / 64.0, 4)), 1e-9);
  EXPECT_EQ(expected_repeated_pairs(make_shape(1, 3584, 640, 64, 8)), 0.0);
  EXPECT_FALSE(one_token_down(make_shape(1, 4096, 14336, 8, 2), fp8, kSms, false));  // top-2
  // The kernel quantizes the token's rows into its shared memory (v67): at most 48 KiB, and
  // group scales in teams of 8-32 lanes (groups of 64, 128 or 256 columns).
  EXPECT_TRUE(one_token_down(make_shape(1, 2048, 2048, 128, 8), fp8, kSms, false));
  EXPECT_FALSE(one_token_down(make_shape(1, 2048, 3072, 128, 8), fp8, kSms, false));  // 8 x 3080 x 2 bytes
  EXPECT_TRUE(one_token_down(make_shape(1, 2048, 3072, 128, 4), fp8, kSms, false));
  QuantParams block192 = fp8_block;
  block192.block_k = 192;
  EXPECT_FALSE(one_token_down(make_shape(1, 7168, 768, 256, 8), block192, kSms, false));
  for (int32_t group : {64, 128, 256}) {
    QuantParams q = fp8_block;
    q.block_k = group;
    EXPECT_TRUE(one_token_down(make_shape(1, 7168, 768, 256, 8), q, kSms, false)) << group;
    EXPECT_TRUE(kernels::fp8_one_token_down_supports(768, 8, true, group)) << group;
  }
  EXPECT_FALSE(kernels::fp8_one_token_down_supports(768, 8, true, 512));
  EXPECT_FALSE(kernels::fp8_one_token_down_supports(768, kOneTokenDownMinTopk - 1, false, 0));
  EXPECT_FALSE(kernels::fp8_one_token_down_supports(776, 8, false, 0));  // not whole 16-column steps
  EXPECT_EQ(kernels::fp8_one_token_down_smem(768, 8, true, 128), 8 * (768 + 8) * 2 + 8 * 6 * 4);
  EXPECT_EQ(kernels::fp8_one_token_down_smem(768, 8, false, 128), 8 * (768 + 8) * 2 + 8 * 4);
  // int4 where wna16_gemv reads it and its down GEMV would not split K more ways than the
  // one-token kernel's warps (v57): the bench shapes at top-8 in groups of 128 or per channel.
  const QuantParams g128 = integer_quant(WeightFormat::kGPTQ, 4, 128, true);
  const QuantParams awq = integer_quant(WeightFormat::kAWQ, 4, 128, true);
  EXPECT_TRUE(one_token_down(make_shape(1, 7168, 256, 256, 8), g128, kSms, false));   // DeepSeek-V3 TP8
  EXPECT_TRUE(one_token_down(make_shape(1, 2048, 768, 128, 8), awq, kSms, false));    // Qwen3
  EXPECT_TRUE(one_token_down(make_shape(1, 3584, 640, 64, 8), g128, kSms, false));    // Qwen2 TP4
  // Top-4: the one-token kernel splits K 2 ways, as the down GEMV does over K = 1408; at
  // top-6 its warps split 1 way and the down GEMV 2 (DeepSeek-V2-Lite's experts).
  EXPECT_TRUE(one_token_down(make_shape(1, 2048, 1408, 64, 4), g128, kSms, false));
  EXPECT_FALSE(one_token_down(make_shape(1, 2048, 1408, 64, 6), integer_quant(WeightFormat::kGPTQ, 4, -1, false), kSms, false));
  // Groups of 64 (one 128-k block per stage): Qwen3's down GEMV splits K 2 ways, the kernel 1.
  EXPECT_FALSE(one_token_down(make_shape(1, 2048, 768, 128, 8), integer_quant(WeightFormat::kAWQ, 4, 64, true), kSms, false));
  EXPECT_TRUE(one_token_down(make_shape(1, 7168, 256, 256, 8), integer_quant(WeightFormat::kAWQ, 4, 64, true), kSms, false));
  // int8: measured no faster at top-8 (v57), slower where its down GEMV splits K.
  EXPECT_FALSE(one_token_down(make_shape(1, 7168, 256, 256, 8), integer_quant(WeightFormat::kGPTQ, 8, 128, false), kSms, false));
  EXPECT_FALSE(one_token_down(make_shape(1, 768, 384, 16, 8), integer_quant(WeightFormat::kGPTQ, 4, 96, true), kSms, false));  // groups of 96: not wna16_gemv's
  EXPECT_FALSE(one_token_down(make_shape(1, 4096, 14336, 8, 2), awq, kSms, false));
  // The GPU test's one-token cases (QuantLayer.EdgeShapesAndFp16) all take it.
  for (int64_t topk : {4, 6, 8}) {
    EXPECT_TRUE(one_token_down(make_shape(1, 1000, 320, 16, topk), integer_quant(WeightFormat::kGPTQ, 4, -1, true), kSms, false));
    EXPECT_TRUE(one_token_down(make_shape(1, 512, 320, 8, topk), integer_quant(WeightFormat::kAWQ, 4, 64, true), kSms, false));
    EXPECT_TRUE(one_token_down(make_shape(1, 512, 320, 8, topk), integer_quant(WeightFormat::kGPTQ, 4, 32, false), kSms, false));
    EXPECT_TRUE(one_token_down(make_shape(1, 512, 256, 32, topk), g128, kSms, false));
  }
}

TEST(Planner, OneTokenInt4LayerWhereItsWeightsFitSharedMemory) {
  constexpr int32_t kSms = 132;
  const QuantParams g128 = integer_quant(WeightFormat::kGPTQ, 4, 128, true);
  const QuantParams channel = integer_quant(WeightFormat::kGPTQ, 4, -1, false);
  const QuantParams awq = integer_quant(WeightFormat::kAWQ, 4, 128, true, DType::kBF16);
  // The bench shapes whose CTA shares fit 227 KiB: Qwen3 (166 KiB per CTA), DeepSeek-V3 TP8
  // (208), Scout TP8 (82, but top-1: kOneTokenLayerMinTopk), and DeepSeek-V2-Lite's experts (221).
  EXPECT_TRUE(one_token_layer(make_shape(1, 2048, 768, 128, 8), g128, false, kSms));
  EXPECT_TRUE(one_token_layer(make_shape(1, 2048, 768, 128, 8), awq, false, kSms));
  EXPECT_TRUE(one_token_layer(make_shape(1, 7168, 256, 256, 8), g128, false, kSms));
  EXPECT_TRUE(one_token_layer_plan(make_shape(1, 5120, 1024, 16, 1), channel, kSms).fits);
  EXPECT_FALSE(one_token_layer(make_shape(1, 5120, 1024, 16, 1), channel, false, kSms));
  EXPECT_TRUE(one_token_layer(make_shape(1, 5120, 1024, 16, 2), channel, false, kSms));
  EXPECT_FALSE(one_token_layer(make_shape(1, 2048, 768, 128, 1), g128, false, kSms));
  EXPECT_TRUE(one_token_layer(make_shape(1, 2048, 768, 128, kOneTokenLayerMinTopk), g128, false, kSms));
  EXPECT_TRUE(one_token_layer(make_shape(1, 2048, 1408, 64, 6), g128, false, kSms));
  EXPECT_TRUE(one_token_layer(make_shape(1, 1024, 768, 16, 3), integer_quant(WeightFormat::kGPTQ, 4, 256, false), false, kSms));
  // Both GEMMs' codes resident from the start where they fit; Qwen2 TP4's (249 KiB together)
  // take turns: the down codes in the gate-up codes' place once that GEMM is done (180 KiB).
  EXPECT_FALSE(one_token_layer_plan(make_shape(1, 2048, 768, 128, 8), g128, kSms).dn_after_gu);
  EXPECT_FALSE(one_token_layer_plan(make_shape(1, 7168, 256, 256, 8), g128, kSms).dn_after_gu);
  EXPECT_TRUE(one_token_layer(make_shape(1, 3584, 640, 64, 8), g128, false, kSms));
  EXPECT_TRUE(one_token_layer_plan(make_shape(1, 3584, 640, 64, 8), g128, kSms).dn_after_gu);
  // Not: Mixtral (its gate-up share alone 896 KiB); two tokens; an expert map; act-order; int8;
  // groups of 32 / 64 / 96; H or I off 128; dense, FP8.
  EXPECT_FALSE(one_token_layer(make_shape(1, 4096, 14336, 8, 2), g128, false, kSms));
  EXPECT_FALSE(one_token_layer(make_shape(2, 2048, 768, 128, 8), g128, false, kSms));
  EXPECT_FALSE(one_token_layer(make_shape(1, 2048, 768, 128, 8), g128, true, kSms));
  QuantParams act_order = g128;
  act_order.has_g_idx = true;
  EXPECT_FALSE(one_token_layer(make_shape(1, 2048, 768, 128, 8), act_order, false, kSms));
  EXPECT_FALSE(one_token_layer(make_shape(1, 2048, 768, 128, 8), integer_quant(WeightFormat::kGPTQ, 8, 128, false), false, kSms));
  // groups of part of a 128-k block, or of three blocks (the kernel finds a block's group by a shift)
  for (int group : {32, 64, 96, 384}) {
    EXPECT_FALSE(one_token_layer(make_shape(1, 1536, 768, 128, 8), integer_quant(WeightFormat::kAWQ, 4, group, true), false, kSms));
  }
  EXPECT_TRUE(one_token_layer(make_shape(1, 1536, 768, 128, 8), integer_quant(WeightFormat::kAWQ, 4, 512, true), false, kSms));
  EXPECT_FALSE(one_token_layer(make_shape(1, 1000, 384, 16, 8), channel, false, kSms));
  EXPECT_FALSE(one_token_layer(make_shape(1, 1024, 320, 16, 8), channel, false, kSms));
  EXPECT_FALSE(one_token_layer(make_shape(1, 2048, 768, 128, 8), QuantParams(), false, kSms));
  EXPECT_FALSE(one_token_layer(make_shape(1, 2048, 768, 128, 8), fp8_quant(WeightFormat::kFP8Block, ActQuant::kPerGroup), false, kSms));
  // Fewer SMs, larger shares: on 114 (an H100 PCIe) Qwen3 needs 236 KiB per CTA with both GEMMs'
  // codes resident, so its down codes take the gate-up codes' place; Scout fits on 78.
  EXPECT_TRUE(one_token_layer(make_shape(1, 2048, 768, 128, 8), g128, false, 114));
  EXPECT_TRUE(one_token_layer_plan(make_shape(1, 2048, 768, 128, 8), g128, 114).dn_after_gu);
  EXPECT_TRUE(one_token_layer_plan(make_shape(1, 5120, 1024, 16, 1), g128, 78).fits);

  // The plan's invariants: every unit in exactly one CTA's range, at most gu_max / dn_max per
  // CTA; the shared-memory regions in order, 16-byte aligned, disjoint, within smem_bytes.
  const ProblemShape shapes[] = {make_shape(1, 2048, 768, 128, 8), make_shape(1, 7168, 256, 256, 8),
                                 make_shape(1, 5120, 1024, 16, 1), make_shape(1, 2048, 1408, 64, 6),
                                 make_shape(1, 1024, 768, 16, 3),   make_shape(1, 3584, 640, 64, 8)};
  for (const ProblemShape& s : shapes) {
    for (int32_t sms : {78, 114, 132, 144}) {
      for (const QuantParams& q : {g128, channel}) {
        const kernels::OneTokenLayerPlan p = one_token_layer_plan(s, q, sms);
        SCOPED_TRACE("H=" + std::to_string(s.hidden) + " I=" + std::to_string(s.inter) + " sms=" + std::to_string(sms));
        if (!p.fits) {
          EXPECT_GT(p.smem_bytes, kernels::kOneTokenLayerMaxSmem);
          continue;
        }
        EXPECT_EQ(p.gu_units, s.topk * s.inter / 8);
        EXPECT_EQ(p.dn_tiles, s.hidden / 16);
        int64_t gu_most = 0, dn_most = 0;
        for (int64_t c = 0; c < sms; ++c) {
          const int64_t gu = kernels::one_token_layer_first(c + 1, p.gu_units, sms) - kernels::one_token_layer_first(c, p.gu_units, sms);
          const int64_t dn = kernels::one_token_layer_first(c + 1, p.dn_tiles, sms) - kernels::one_token_layer_first(c, p.dn_tiles, sms);
          gu_most = std::max(gu_most, gu);
          dn_most = std::max(dn_most, dn);
        }
        EXPECT_EQ(kernels::one_token_layer_first(sms, p.gu_units, sms), p.gu_units);
        EXPECT_LE(gu_most, p.gu_max);
        EXPECT_LE(dn_most, p.dn_max);
        const int64_t groups13 = quant_groups(q, s.hidden), groups2 = quant_groups(q, s.inter);
        const int64_t gu = p.gu_max * p.gu_unit_bytes, dn = p.dn_max * s.topk * p.dn_slot_bytes, inter = s.topk * s.inter * 2;
        // Resident: the intermediate in the gate-up codes' place, then the down codes; else the
        // down codes in the gate-up codes' place, then the intermediate.
        EXPECT_EQ(p.gu_codes, 0);
        EXPECT_EQ(p.dn_after_gu ? p.dn_codes : p.inter, p.gu_codes);
        const int64_t ends[][2] = {
            {p.gu_codes, std::max(gu, p.dn_after_gu ? dn : inter)},
            {p.dn_after_gu ? p.inter : p.dn_codes, p.dn_after_gu ? inter : dn},
            {p.gu_params, p.gu_max * groups13 * kernels::kOneTokenLayerGroupBytes},
            {p.dn_params, p.dn_max * s.topk * groups2 * kernels::kOneTokenLayerGroupBytes},
            {p.x, s.hidden * 2},
            {p.partial, std::max(p.gu_max, p.dn_max) * kernels::kOneTokenLayerWarps * 16 * 4},
            {p.sums, (s.hidden / 128 + s.topk * (s.inter / 128)) * 4},
            {p.slots, kernels::kMaxTopk * 8},
            {p.bars, (p.gu_max + p.dn_max) * 8}};
        int64_t at = 0;
        for (const auto& r : ends) {
          EXPECT_EQ(r[0] % 16, 0);
          EXPECT_GE(r[0], at);
          at = r[0] + r[1];
        }
        EXPECT_LE(at, p.smem_bytes);
        EXPECT_LE(p.smem_bytes, kernels::kOneTokenLayerMaxSmem);
      }
    }
  }
}

TEST(Planner, FewTokensSkipAlignWithoutAMapOrActOrder) {
  const QuantParams dense;
  const QuantParams g128 = integer_quant(WeightFormat::kGPTQ, 4, 128, true);
  QuantParams act_order = g128;
  act_order.has_g_idx = true;
  for (int64_t topk : {1, 2, 6, 8}) {
    EXPECT_TRUE(direct_table(make_shape(1, 2048, 768, 128, topk), dense, false));
    EXPECT_TRUE(direct_table(make_shape(1, 2048, 768, 128, topk), g128, false));
    EXPECT_TRUE(direct_table(make_shape(1, 2048, 768, 128, topk), integer_quant(WeightFormat::kGPTQ, 8, -1, false), false));
    // FP8 keeps align (v58: its kernels slower with the direct table's prologue).
    EXPECT_FALSE(direct_table(make_shape(1, 2048, 768, 128, topk), fp8_quant(WeightFormat::kFP8Block, ActQuant::kPerGroup), false));
    EXPECT_FALSE(direct_table(make_shape(1, 2048, 768, 128, topk), fp8_quant(WeightFormat::kFP8PerTensor, ActQuant::kPerTensorDynamic), false));
    EXPECT_FALSE(direct_table(make_shape(1, 2048, 768, 128, topk), dense, true));      // the map: align's lookup
    EXPECT_FALSE(direct_table(make_shape(1, 2048, 768, 128, topk), act_order, false));  // x's columns by align's table
    EXPECT_FALSE(direct_table(make_shape(0, 2048, 768, 128, topk), dense, false));
    // More tokens: up to kDirectTableMaxTokens, within the identity order's pairs, on small
    // experts (no duplicate bytes to speak of).
    for (int64_t m = 2; m <= kDirectTableMaxTokens + 1; ++m) {
      const bool fits = m <= kDirectTableMaxTokens && m * topk <= kernels::kMaxDirectPairs;
      EXPECT_EQ(direct_table(make_shape(m, 256, 128, 128, topk), g128, false), fits) << m << " x " << topk;
      EXPECT_FALSE(direct_table(make_shape(m, 256, 128, 128, topk), dense, true));
    }
  }
  EXPECT_FALSE(direct_table(make_shape(2, 256, 128, 128, 20), dense, false));  // 40 pairs
  // At the bench shapes, by the expected duplicate bytes (at most 4 MiB; v65).
  const QuantParams int8 = integer_quant(WeightFormat::kGPTQ, 8, -1, false);
  const ProblemShape qwen3 = make_shape(2, 2048, 768, 128, 8);
  EXPECT_EQ(direct_table_duplicate_bytes(make_shape(1, 2048, 768, 128, 8), dense), 0.0);
  EXPECT_NEAR(direct_table_duplicate_bytes(qwen3, g128), 0.5 * 3 * 2048 * 768 * 0.5, 1.0);  // 16 - 15.5 instances
  EXPECT_TRUE(direct_table(qwen3, g128, false));
  EXPECT_TRUE(direct_table(qwen3, int8, false));
  EXPECT_FALSE(direct_table(qwen3, dense, false));  // 4.5 MiB
  EXPECT_TRUE(direct_table(make_shape(3, 2048, 768, 128, 8), g128, false));
  EXPECT_FALSE(direct_table(make_shape(4, 2048, 768, 128, 8), g128, false));
  EXPECT_TRUE(direct_table(make_shape(4, 7168, 256, 256, 8), g128, false));   // DeepSeek-V3 TP8
  EXPECT_TRUE(direct_table(make_shape(2, 7168, 256, 256, 8), dense, false));
  EXPECT_FALSE(direct_table(make_shape(3, 7168, 256, 256, 8), dense, false));
  EXPECT_TRUE(direct_table(make_shape(2, 3584, 640, 64, 8), g128, false));    // Qwen2 TP4
  EXPECT_FALSE(direct_table(make_shape(2, 3584, 640, 64, 8), int8, false));
  EXPECT_FALSE(direct_table(make_shape(2, 4096, 14336, 8, 2), g128, false));  // Mixtral
  EXPECT_TRUE(direct_table(make_shape(1, 4096, 14336, 8, 2), dense, false));
  EXPECT_TRUE(direct_table(make_shape(4, 5120, 1024, 16, 1), g128, false));   // Scout TP8
  EXPECT_TRUE(direct_table(make_shape(2, 5120, 1024, 16, 1), dense, false));
  EXPECT_FALSE(direct_table(make_shape(3, 5120, 1024, 16, 1), dense, false));
  // The one-token layer stays at one token.
  EXPECT_FALSE(one_token_layer(make_shape(2, 2048, 768, 128, 8), g128, false, 132));
}

TEST(Planner, SmallMSplitUnitIsTwoStagesOfTheGemv) {
  EXPECT_EQ(small_m_split_unit(QuantParams(), 2048), 128);
  EXPECT_EQ(small_m_split_unit(fp8_quant(WeightFormat::kFP8Block, ActQuant::kPerGroup), 2048), 128);
  EXPECT_EQ(small_m_split_unit(integer_quant(WeightFormat::kGPTQ, 4, 128, true), 2048), 2 * 128 * 2);
  EXPECT_EQ(small_m_split_unit(integer_quant(WeightFormat::kGPTQ, 4, -1, true), 2048), 2 * 128 * 2);
  EXPECT_EQ(small_m_split_unit(integer_quant(WeightFormat::kGPTQ, 4, 64, true), 2048), 2 * 128);
  EXPECT_EQ(small_m_split_unit(integer_quant(WeightFormat::kGPTQ, 4, 64, true), 64), 2 * 128 * 2);  // one group per row
  EXPECT_EQ(small_m_split_unit(integer_quant(WeightFormat::kGPTQ, 8, 128, true), 2048), 2 * 128);
}

TEST(Planner, Fp8PathByRowsPerExpertAndScaling) {
  QuantParams q = fp8_quant(WeightFormat::kFP8PerChannel, ActQuant::kPerToken);
  // Per-tensor / per-channel: fp8_gemv below 4 rows per active expert (inter <= 256 too).
  EXPECT_EQ(choose_path(q, 8 * (kFp8PathRule.rows - 1), 8, 14336, KernelPath::kAuto), KernelPath::kSmallM);
  EXPECT_EQ(choose_path(q, 8 * kFp8PathRule.rows, 8, 14336, KernelPath::kAuto), KernelPath::kGroupedSwapped);
  EXPECT_EQ(choose_path(q, 256 * 2, 256, 256, KernelPath::kAuto), KernelPath::kSmallM);  // DeepSeek M = 64
  EXPECT_EQ(choose_path(q, 256 * 4, 256, 256, KernelPath::kAuto), KernelPath::kGroupedSwapped);
  EXPECT_EQ(choose_path(q, 256 * kSwapMaxRows, 256, 256, KernelPath::kAuto), KernelPath::kGroupedGemm);
  // 128 x 128 blocks: fp8_gemv below 4 rows per active expert (2 with inter <= 256 or >= 8192) and below
  // kFp8BlockPathRule.max_small_pairs pairs.
  q.format = WeightFormat::kFP8Block;
  q.act_quant = ActQuant::kPerGroup;
  q.block_n = q.block_k = 128;
  EXPECT_EQ(choose_path(q, 2, 8, 14336, KernelPath::kAuto), KernelPath::kSmallM);        // Mixtral M = 1
  EXPECT_EQ(choose_path(q, 32, 8, 14336, KernelPath::kAuto), KernelPath::kGroupedSwapped);  // Mixtral M = 16, r = 4
  EXPECT_EQ(choose_path(q, 32, 128, 768, KernelPath::kAuto), KernelPath::kSmallM);       // Qwen3 M = 4
  EXPECT_EQ(choose_path(q, 512, 128, 768, KernelPath::kAuto), KernelPath::kGroupedSwapped);  // Qwen3 M = 64, r = 4
  EXPECT_EQ(choose_path(q, 128, 256, 256, KernelPath::kAuto), KernelPath::kSmallM);      // DeepSeek M = 16, r = 1
  const int64_t pairs = kFp8BlockPathRule.max_small_pairs;
  EXPECT_EQ(choose_path(q, pairs - 1, 256, 256, KernelPath::kAuto), KernelPath::kSmallM);
  EXPECT_EQ(choose_path(q, pairs, 256, 256, KernelPath::kAuto), KernelPath::kGroupedSwapped);  // DeepSeek M = 32, r = 1
  EXPECT_EQ(choose_path(q, 32, 16, 1024, KernelPath::kAuto), KernelPath::kSmallM);       // Scout M = 32, r = 2
  EXPECT_EQ(choose_path(q, 8, 8, 14336, KernelPath::kAuto), KernelPath::kSmallM);        // Mixtral M = 4, r = 1
  EXPECT_EQ(choose_path(q, 16, 8, 14336, KernelPath::kAuto), KernelPath::kGroupedSwapped);  // M = 8, r = 2: large experts
  EXPECT_EQ(choose_path(q, 8 * kSwapMaxRows, 8, 14336, KernelPath::kAuto), KernelPath::kGroupedGemm);
  // Other block shapes: fp8_gemv at any batch unless forced.
  q.block_n = 64;
  EXPECT_EQ(choose_path(q, 1 << 20, 8, 14336, KernelPath::kAuto), KernelPath::kSmallM);
  EXPECT_EQ(choose_path(q, 1, 8, 14336, KernelPath::kGroupedGemm), KernelPath::kGroupedGemm);  // forced
}

TEST(Planner, PreparedIntegerLayoutSizes) {
  QuantParams q = integer_quant(WeightFormat::kGPTQ, 4, 128, true);
  q.has_g_idx = true;
  const ProblemShape s = make_shape(1, 2880, 1408, 4, 2);  // K = 2880 is not a multiple of 128
  const PreparedQuantSizes w13 = prepared_quant_sizes(s, q, Projection::kW13);
  EXPECT_EQ(w13.codes, 4 * 2816 * 2944 / 2);  // rows padded to 2944 codes, 2 per byte
  EXPECT_EQ(w13.scales, 4 * (2880 / 128 + 0) * 2816 * 2);
  EXPECT_EQ(w13.zeros, 4 * (2880 / 128) * 2816);
  EXPECT_EQ(w13.g_idx, 4 * 2880 * 4);
  q.bits = 8;
  q.has_g_idx = false;
  const PreparedQuantSizes w2 = prepared_quant_sizes(s, q, Projection::kW2);
  EXPECT_EQ(w2.codes, 4 * 2880 * 1408);
  EXPECT_EQ(w2.zeros, 4 * 11 * 2880 * 2);  // uint16 zeros for int8
  EXPECT_EQ(w2.g_idx, 0);
  EXPECT_EQ(w2.total() % 256, 0);
}

TEST(Planner, BindPreparedWeightsPointsIntoStorage) {
  const QuantParams q = integer_quant(WeightFormat::kGPTQ, 4, 128, true);
  const ProblemShape s = make_shape(1, 1024, 512, 4, 2);
  const PreparedQuantSizes w13 = prepared_quant_sizes(s, q, Projection::kW13);
  const PreparedQuantSizes w2 = prepared_quant_sizes(s, q, Projection::kW2);
  const size_t bytes = static_cast<size_t>(w13.total() + w2.total());
  size_t want = 0;
  MoeWeights ck;
  ck.quant = q;
  static int32_t dummy[4];
  ck.w13.weight = ck.w13.scales = ck.w13.zeros = ck.w2.weight = ck.w2.scales = ck.w2.zeros = dummy;
  ASSERT_TRUE(prepared_weights_size(s, DType::kBF16, ck, &want).code() == StatusCode::kNotImplemented ||
              want == bytes);  // CPU-only builds have no kernel family to size for
  std::vector<unsigned char> buffer(bytes + 256);
  unsigned char* storage = buffer.data() + (256 - reinterpret_cast<uintptr_t>(buffer.data()) % 256) % 256;
  PreparedWeights w;
  ASSERT_TRUE(bind_prepared_weights(s, DType::kBF16, q, storage, bytes, &w).ok());
  const char* base = reinterpret_cast<const char*>(storage);
  EXPECT_EQ(static_cast<const char*>(w.w13.weight), base);
  EXPECT_EQ(static_cast<const char*>(w.w13.scales), base + w13.codes);  // 4 x 1024 x 1024 codes: a multiple of 256
  EXPECT_EQ(static_cast<const char*>(w.w2.weight), base + w13.total());
  EXPECT_EQ(w.w13.g_idx, nullptr);
  EXPECT_EQ(w.quant.format, WeightFormat::kGPTQ);
  EXPECT_EQ(bind_prepared_weights(s, DType::kBF16, q, storage, bytes - 1, &w).message(),
            "storage_bytes: expected >= " + std::to_string(bytes) + " (prepared_weights_size()), got " +
                std::to_string(bytes - 1));
  EXPECT_EQ(bind_prepared_weights(s, DType::kBF16, q, storage + 16, bytes, &w).code(), StatusCode::kInvalidArgument);
  QuantParams fp8 = fp8_quant(WeightFormat::kFP8PerChannel, ActQuant::kPerToken);
  EXPECT_EQ(bind_prepared_weights(s, DType::kBF16, fp8, storage, bytes, &w).message(),
            "quant.format: expected dense, gptq, awq or moe_wna16 (the formats with prepared storage), got fp8_per_channel");
  // Dense: w13 interleaved, then w2, each 2-byte elements (4 x 1024 x 1024 and 4 x 1024 x 512).
  const QuantParams dense;
  const size_t dense_bytes = prepared_quant_bytes(s, dense);
  EXPECT_EQ(dense_bytes, size_t{4} * 1024 * 1024 * 2 + size_t{4} * 1024 * 512 * 2);
  std::vector<unsigned char> dense_buffer(dense_bytes + 256);
  unsigned char* dense_storage =
      dense_buffer.data() + (256 - reinterpret_cast<uintptr_t>(dense_buffer.data()) % 256) % 256;
  ASSERT_TRUE(bind_prepared_weights(s, DType::kBF16, dense, dense_storage, dense_bytes, &w).ok());
  EXPECT_TRUE(w.gate_up_interleaved);
  EXPECT_EQ(static_cast<const unsigned char*>(w.w13.weight), dense_storage);
  EXPECT_EQ(static_cast<const unsigned char*>(w.w2.weight), dense_storage + size_t{4} * 1024 * 1024 * 2);
  EXPECT_EQ(w.w13.scales, nullptr);
  EXPECT_EQ(bind_prepared_weights(s, DType::kBF16, dense, dense_storage, dense_bytes - 1, &w).code(),
            StatusCode::kInvalidArgument);
}

TEST(Planner, DequantScratchOnTheIntegerGroupedPath) {
  QuantParams q = integer_quant(WeightFormat::kAWQ, 4, 128, true);
  // Mixtral: one expert's w13 is 2 * 14336 * 4096 * 2 bytes = 224 MiB: two fit 512 MiB.
  const ProblemShape mixtral = make_shape(4096, 4096, 14336, 8, 2);
  EXPECT_EQ(dequant_chunk_experts(mixtral, DType::kBF16), 2);
  WorkspaceLayout ws;
  ASSERT_TRUE(plan_workspace(inputs(4096, 4096, 14336, 8, 2, false), q, KernelPath::kGroupedGemm, 0, &ws).ok());
  EXPECT_EQ(ws.find("dequant_weights")->bytes, size_t{2} * 2 * 14336 * 4096 * 2);
  ASSERT_TRUE(plan_workspace(inputs(4, 4096, 14336, 8, 2, false), q, KernelPath::kSmallM, 0, &ws).ok());
  EXPECT_EQ(ws.find("dequant_weights"), nullptr);
  // The mixed-input GEMM dequantizes in registers: no scratch, and no CUTLASS arguments; the
  // grouped path's rows (row_of_pair for the combine, the intermediate, GEMM2's rows) remain.
  ASSERT_TRUE(plan_workspace(inputs(4096, 4096, 14336, 8, 2, false), q, KernelPath::kGroupedMixed, 0, &ws).ok());
  EXPECT_EQ(ws.find("dequant_weights"), nullptr);
  EXPECT_EQ(ws.find("gemm_workspace"), nullptr);
  EXPECT_EQ(ws.find("gate_up"), nullptr);
  ASSERT_NE(ws.find("row_of_pair"), nullptr);
  EXPECT_EQ(ws.find("intermediate")->bytes, size_t{4096} * 2 * 14336 * 2);
  EXPECT_EQ(ws.find("expert_out")->bytes, size_t{4096} * 2 * 4096 * 2);
  EXPECT_FALSE(path_rounds_gate_up(KernelPath::kGroupedMixed, q, false));  // GEMM1 activates fp32 sums
  // Its tiles: 256 token rows from 256 rows per active expert (Mixtral M = 1024), else 128.
  EXPECT_EQ(wna16_gemm_tile_tokens(2048, 8), 256);
  EXPECT_EQ(wna16_gemm_tile_tokens(2047, 8), 128);
  EXPECT_EQ(wna16_gemm_tile_tokens(8192, 128), 128);  // Qwen3 M = 1024: 64 per expert
  EXPECT_EQ(wna16_gemm_tile_tokens(300, 1), 256);
  EXPECT_EQ(wna16_gemm_tile_tokens(1, 8), 128);
  // Qwen3-30B-A3B: 6 MiB per expert, 85 of its 128 experts per chunk.
  EXPECT_EQ(dequant_chunk_experts(make_shape(1, 2048, 768, 128, 8), DType::kBF16), 85);
}

TEST(Planner, PlannedPathThroughTheApi) {
  PreparedWeights w;
  w.shape = make_shape(1, 4096, 14336, 8, 2);  // Mixtral
  MoeArguments args;
  args.weights = &w;
  args.inputs.shape = make_shape(8, 4096, 14336, 8, 2);
  KernelPath p = KernelPath::kAuto;
  ASSERT_TRUE(planned_path(args, &p).ok());
  EXPECT_EQ(p, KernelPath::kSmallM);
  args.inputs.shape.m = 32;
  ASSERT_TRUE(planned_path(args, &p).ok());
  EXPECT_EQ(p, KernelPath::kGroupedSwapped);
  args.inputs.shape.m = 256;  // 64 rows per expert
  ASSERT_TRUE(planned_path(args, &p).ok());
  EXPECT_EQ(p, KernelPath::kGroupedGemm);
  args.inputs.shape.m = 32;
  args.path = KernelPath::kSmallM;  // forced
  ASSERT_TRUE(planned_path(args, &p).ok());
  EXPECT_EQ(p, KernelPath::kSmallM);
  w.quant.format = WeightFormat::kAWQ;  // int4: wna16_gemv below 64 rows per expert
  w.quant.bits = 4;
  w.quant.group_size = 128;
  w.quant.has_zeros = true;
  args.path = KernelPath::kAuto;
  ASSERT_TRUE(planned_path(args, &p).ok()) << planned_path(args, &p).message();
  EXPECT_EQ(p, KernelPath::kSmallM);
  args.inputs.shape.m = 256;  // 64 rows per expert: the mixed-input GEMM
  ASSERT_TRUE(planned_path(args, &p).ok());
  EXPECT_EQ(p, KernelPath::kGroupedMixed);
  args.path = KernelPath::kGroupedGemm;  // the dequant path where forced
  ASSERT_TRUE(planned_path(args, &p).ok());
  EXPECT_EQ(p, KernelPath::kGroupedGemm);
  args.path = KernelPath::kAuto;
  w.quant = QuantParams();
  w.quant.format = WeightFormat::kFP8PerTensor;  // FP8: fp8_gemv, then the grouped GEMM
  w.quant.act_quant = ActQuant::kPerTensorDynamic;
  ASSERT_TRUE(planned_path(args, &p).ok());
  EXPECT_EQ(p, KernelPath::kGroupedGemm);
  args.inputs.shape.m = 4;
  ASSERT_TRUE(planned_path(args, &p).ok());
  EXPECT_EQ(p, KernelPath::kSmallM);
  args.inputs.shape.hidden = 2048;  // weights prepared for another shape
  EXPECT_EQ(planned_path(args, &p).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(planned_path(args, nullptr).message(), "out: expected non-null, got nullptr");
}

TEST(Planner, KernelPathNames) {
  KernelPath p = KernelPath::kAuto;
  ASSERT_TRUE(parse_kernel_path("grouped_gemm", &p).ok());
  EXPECT_EQ(p, KernelPath::kGroupedGemm);
  ASSERT_TRUE(parse_kernel_path("small_m", &p).ok());
  EXPECT_EQ(p, KernelPath::kSmallM);
  EXPECT_STREQ(to_string(KernelPath::kAuto), "auto");
  ASSERT_TRUE(parse_kernel_path("grouped_swapped", &p).ok());
  EXPECT_EQ(p, KernelPath::kGroupedSwapped);
  ASSERT_TRUE(parse_kernel_path("grouped_mixed", &p).ok());
  EXPECT_EQ(p, KernelPath::kGroupedMixed);
  EXPECT_STREQ(to_string(KernelPath::kGroupedMixed), "grouped_mixed");
  EXPECT_TRUE(is_grouped_path(KernelPath::kGroupedMixed));
  EXPECT_FALSE(is_grouped_path(KernelPath::kSmallM));
  EXPECT_EQ(parse_kernel_path("fast", &p).message(),
            "path: expected auto, small_m, grouped_gemm, grouped_swapped or grouped_mixed, got 'fast'");
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

TEST(Planner, DenseDownRingOnlyForShortSlices) {
  // The shapes of v30's measurement: Qwen2-57B TP4 down (K = 640) at split 4: 5 steps per
  // warp; Qwen3-30B (K = 768) at split 1: 24; DeepSeek-V3 TP8 (K = 256) at split 2: 4;
  // Mixtral (K = 14336) at split 4: 112.
  EXPECT_TRUE(dense_down_ring(640, 4));
  EXPECT_TRUE(dense_down_ring(768, 2));  // 12
  EXPECT_FALSE(dense_down_ring(768, 1));
  EXPECT_TRUE(dense_down_ring(256, 2));
  EXPECT_FALSE(dense_down_ring(14336, 4));
  // The bound itself, and a partial last step: K = 520 is 17 steps (16.25 rounded up).
  EXPECT_TRUE(dense_down_ring(32 * kDenseRingMaxSliceSteps, 1));
  EXPECT_FALSE(dense_down_ring(520, 1));
  EXPECT_TRUE(dense_down_ring(520, 2));
  EXPECT_FALSE(dense_down_ring(640, 0));
}

TEST(Planner, OneWaveSplitRuleStopsBeforeASecondWave) {
  // DeepSeek-V3 TP8 down projection at M = 1 under fp8_gemv's rule (2 resident CTAs per SM,
  // 264 slots): 448 CTAs at split 1 already pass one wave, so no split (the dense rule: 2).
  SmallMGemmConfig c = choose_small_m_config(448, 8, 8, 256, 132, 128, kFp8SplitRule);
  EXPECT_EQ(c.split_k, 1);
  EXPECT_EQ(c.ctas, 448);
  // Qwen3 gate-up at M = 1: 96 tiles on 8 experts, K = 2048: 96, 192, 384, 768 CTAs at
  // split 1..8: the largest within one wave is split 2 at 264 slots, split 4 at 396 (block
  // rule, 3 per SM); split 2 under the dense rule (one wave: 96 CTAs unsplit, within one per SM).
  c = choose_small_m_config(96, 8, 8, 2048, 132, 128, kFp8SplitRule);
  EXPECT_EQ(c.split_k, 2);
  EXPECT_EQ(c.ctas, 192);
  c = choose_small_m_config(96, 8, 8, 2048, 132, 128, kFp8BlockSplitRule);
  EXPECT_EQ(c.split_k, 4);
  EXPECT_EQ(c.ctas, 384);
  EXPECT_EQ(choose_small_m_config(96, 8, 8, 2048, 132).split_k, 2);
  // The dense rule takes one wave only while the unsplit grid has at most one CTA per SM:
  // Qwen3 gate-up at M = 1 above (96 CTAs unsplit) splits 2; Mixtral down at M = 1 (32 CTAs
  // per expert x 2) splits 4 (256 CTAs, within 2 per SM); Qwen2 down at M = 1 (224 CTAs) and
  // Mixtral gate-up at M = 1 (448) are multi-wave: split 4 (896 and 1792 CTAs).
  EXPECT_EQ(choose_small_m_config(224, 8, 8, 640, 132).split_k, 4);
  EXPECT_EQ(choose_small_m_config(256, 2, 2, 14336, 132).split_k, 4);
  EXPECT_EQ(choose_small_m_config(1792, 2, 2, 4096, 132).split_k, 4);
  // Qwen2 down at M = 4: 896 CTAs unsplit (6.8 per SM) stay unsplit under the FP8 rule.
  EXPECT_EQ(choose_small_m_config(224, 32, 32, 640, 132, 128, kFp8SplitRule).split_k, 1);
  // Past seven CTAs per SM unsplit, the multi-wave choice: DeepSeek gate-up at M = 32 (256
  // experts x 4 = 1024 CTAs) takes split 2 (2048 CTAs) as the dense rule does.
  EXPECT_EQ(choose_small_m_config(32, 256, 256, 7168, 132, 128, kFp8SplitRule).split_k, 2);
  EXPECT_EQ(choose_small_m_config(32, 256, 256, 7168, 132).split_k, 2);
  // Four n-tiles (Mixtral down at M = 64: 128 pairs on 8 experts, 256 CTAs unsplit): the
  // block kernel's rule is multi-wave there (1 resident CTA), the per-channel one one-wave.
  c = choose_small_m_config(256, 8, 128, 14336, 132, 128, kFp8BlockSplitRule);
  EXPECT_EQ(c.n_tiles, 4);
  EXPECT_EQ(c.split_k, 8);
  EXPECT_EQ(choose_small_m_config(256, 8, 128, 14336, 132, 128, kFp8SplitRule).split_k, 1);
  // Short K still caps the split (one expert of 128 tiles: 128 CTAs at split 8 would fit one
  // wave, K = 512 allows split 4).
  EXPECT_EQ(choose_small_m_config(128, 1, 1, 512, 132, 128, kFp8SplitRule).split_k, 4);
}

// A small-M GEMV config's token tiles, split and grid.
void expect_config(const SmallMGemmConfig& got, int32_t n_tiles, int32_t split_k, int64_t ctas) {
  EXPECT_EQ(got.n_tiles, n_tiles);
  EXPECT_EQ(got.split_k, split_k);
  EXPECT_EQ(got.ctas, ctas);
}

TEST(Planner, GateUpSplitsFromLongK) {
  // fp8_gemv's gate-up rule: split at least 2 from K = 3584, where the rule above stays
  // unsplit. Mixtral at M = 1 (1792 tiles on 2 experts, K = 4096): 448 CTAs unsplit, 896 at 2.
  expect_config(choose_small_m_config(1792, 2, 2, 4096, 132, 128, kFp8GateUpSplitRule), 1, 2, 896);
  expect_config(choose_small_m_config(1792, 2, 2, 4096, 132, 128, kFp8SplitRule), 1, 1, 448);
  // Qwen2 TP4 at M = 8 (80 tiles on 64 experts, K = 3584, the bound): 640 -> 1280 CTAs.
  expect_config(choose_small_m_config(80, 64, 64, 3584, 132, 128, kFp8GateUpSplitRule), 1, 2, 1280);
  // Below the bound (Qwen3's K = 2048 at M = 16) and where the rule already splits more
  // (Scout TP8 at M = 1: 128 tiles on one expert, K = 5120, split 8), the choice is the rule's.
  expect_config(choose_small_m_config(96, 128, 128, 2048, 132, 128, kFp8GateUpSplitRule), 1, 1, 1536);
  expect_config(choose_small_m_config(128, 1, 1, 5120, 132, 128, kFp8GateUpSplitRule), 1, 8, 128);
  // Not four n-tiles (Mixtral at M = 64: 128 pairs on 8 experts), and not where K cannot
  // give two slices of the split unit.
  EXPECT_EQ(choose_small_m_config(1792, 8, 128, 4096, 132, 128, kFp8GateUpSplitRule).split_k,
            choose_small_m_config(1792, 8, 128, 4096, 132, 128, kFp8SplitRule).split_k);
  EXPECT_EQ(choose_small_m_config(1792, 2, 2, 4096, 132, 4096, kFp8GateUpSplitRule).split_k, 1);
  // The layer's choice: gate-up takes it, down and the block kernels do not.
  const QuantParams channel = fp8_quant(WeightFormat::kFP8PerChannel, ActQuant::kPerToken);
  EXPECT_EQ(gemv_split_rule(channel, true).split_two_from_k, 3584);
  EXPECT_EQ(gemv_split_rule(channel, false).split_two_from_k, 0);
  // The dense gate-up rule from K = 2048: Qwen3 at M = 16 (1536 CTAs unsplit) splits 2.
  expect_config(choose_small_m_config(96, 128, 128, 2048, 132, 128, kDenseGateUpSplitRule), 1, 2, 3072);
  expect_config(choose_small_m_config(96, 128, 128, 2048, 132, 128, kDenseSplitRule), 1, 1, 1536);
  EXPECT_EQ(gemv_split_rule(QuantParams(), true).split_two_from_k, 2048);
  EXPECT_EQ(gemv_split_rule(QuantParams(), false).split_two_from_k, 0);
  EXPECT_EQ(gemv_split_rule(integer_quant(WeightFormat::kGPTQ, 4, 128, false), true).split_two_from_k, 0);
}

TEST(Planner, Wna16TilesPerWarp) {
  const auto down = [](int64_t max_active, int64_t pairs) {
    // the bench shapes' down GEMV: DeepSeek-V3 TP8 (H = 7168: 448 tiles, K = 256)
    return choose_small_m_config(448, max_active, pairs, 256, 132, 256, kWna16SplitRule);
  };
  // DeepSeek-V3 TP8 at M = 8 (64 experts x 56 CTAs = 3584, 13.6 waves of 264): four tiles a
  // warp; M = 4 (1792 CTAs, 6.8 waves): one.
  SmallMGemmConfig c = down(64, 64);
  ASSERT_EQ(c.n_tiles, 1);
  ASSERT_EQ(c.split_k, 1);
  ASSERT_EQ(c.ctas, 3584);
  EXPECT_EQ(wna16_tiles_per_warp(c, false, 132), kWna16DownTilesPerWarp);
  EXPECT_EQ(wna16_tiles_per_warp(down(32, 32), false, 132), 1);
  // 8 waves exactly: several tiles.
  SmallMGemmConfig eight = c;
  eight.ctas = kWna16MultiTileMinWaves * 264;
  EXPECT_EQ(wna16_tiles_per_warp(eight, false, 132), kWna16DownTilesPerWarp);
  --eight.ctas;
  EXPECT_EQ(wna16_tiles_per_warp(eight, false, 132), 1);
  // Gate-up keeps one; so does a grid of about one wave or less (Mixtral's down at M = 8: 8
  // experts x 32 CTAs = 256).
  EXPECT_EQ(wna16_tiles_per_warp(c, true, 132), 1);
  const SmallMGemmConfig mixtral = choose_small_m_config(256, 8, 16, 14336, 132, 256, kWna16SplitRule);
  EXPECT_EQ(mixtral.ctas, 256);
  EXPECT_EQ(wna16_tiles_per_warp(mixtral, false, 132), 1);
  // Only one n-tile at split 1 or 2.
  SmallMGemmConfig four = c;
  four.n_tiles = 4;
  EXPECT_EQ(wna16_tiles_per_warp(four, false, 132), 1);
  SmallMGemmConfig split4 = c;
  split4.split_k = 4;
  EXPECT_EQ(wna16_tiles_per_warp(split4, false, 132), 1);
  EXPECT_EQ(wna16_tiles_per_warp(c, false, 0), 1);
}

TEST(Planner, Wna16SplitRules) {
  // Mixtral down at M = 128 (256 pairs on 8 experts: four n-tiles; 32 CTAs per expert, 256
  // unsplit): the dense rule is multi-wave (split 8, 2048 CTAs), wna16_gemv's runs it unsplit
  // (the CTA's shared x, on eight n-tiles: 32 pairs per expert).
  SmallMGemmConfig c = choose_small_m_config(256, 8, 256, 14336, 132, 256, kDenseSplitRule);
  EXPECT_EQ(c.n_tiles, 4);
  EXPECT_EQ(c.split_k, 8);
  expect_config(choose_small_m_config(256, 8, 256, 14336, 132, 256, kWna16SplitRule), 8, 1, 256);
  // Exactly one CTA per SM unsplit: unsplit. One fewer: the dense rule's choice.
  EXPECT_EQ(choose_small_m_config(8 * 66, 2, 64, 4096, 132, 256, kWna16SplitRule).split_k, 1);
  for (int64_t tiles : {8 * 65, 64}) {
    const SmallMGemmConfig wna16 = choose_small_m_config(tiles, 2, 64, 4096, 132, 256, kWna16SplitRule);
    const SmallMGemmConfig dense = choose_small_m_config(tiles, 2, 64, 4096, 132, 256, kDenseSplitRule);
    EXPECT_EQ(wna16.n_tiles, 4);
    EXPECT_EQ(wna16.split_k, dense.split_k) << tiles;
    EXPECT_EQ(wna16.ctas, dense.ctas) << tiles;
  }
  // One n-tile: int4 and int8 (v50) are one-wave while the unsplit grid has at most two CTAs
  // per SM: Scout gate-up at M = 16 (16 experts x 16 CTAs = 256) runs unsplit (the dense rule:
  // multi-wave, split 8), Mixtral gate-up at M = 1 (448 CTAs) stays multi-wave.
  EXPECT_EQ(choose_small_m_config(128, 16, 16, 5120, 132, 256, kDenseSplitRule).split_k, 8);
  EXPECT_EQ(choose_small_m_config(1792, 2, 2, 4096, 132, 256, kWna16SplitRule).split_k,
            choose_small_m_config(1792, 2, 2, 4096, 132, 256, kDenseSplitRule).split_k);
  expect_config(choose_small_m_config(128, 16, 16, 5120, 132, 256, kWna16SplitRule), 1, 1, 256);
  // Four n-tiles above 6 pairs per active expert (the dense GEMV: 12): Qwen2 at M = 64 (512
  // pairs on 64 experts) and M = 48 (384, 6 per expert).
  EXPECT_EQ(choose_small_m_config(80, 64, 512, 3584, 132, 256, kWna16SplitRule).n_tiles, 4);
  EXPECT_EQ(choose_small_m_config(80, 64, 384, 3584, 132, 256, kWna16SplitRule).n_tiles, 1);
  EXPECT_EQ(choose_small_m_config(80, 64, 512, 3584, 132, 256, kDenseSplitRule).n_tiles, 1);
  // Eight n-tiles above 24 pairs per active expert where four would run unsplit: Mixtral at
  // M = 128 (256 pairs on 8 experts: 32 per expert) and M = 96 (24).
  expect_config(choose_small_m_config(1792, 8, 256, 4096, 132, 256, kWna16SplitRule), 8, 1, 1792);
  EXPECT_EQ(choose_small_m_config(1792, 8, 192, 4096, 132, 256, kWna16SplitRule).n_tiles, 4);
  EXPECT_EQ(choose_small_m_config(1792, 8, 256, 4096, 132, 256, kDenseSplitRule).n_tiles, 4);
  // Below one CTA per SM unsplit (the multi-wave split rule): four n-tiles, never eight.
  EXPECT_EQ(choose_small_m_config(64, 2, 256, 4096, 132, 256, kWna16SplitRule).n_tiles, 4);
  // Each format's rule (the layer's choice).
  EXPECT_EQ(gemv_split_rule(integer_quant(WeightFormat::kAWQ, 4, 128, true)).max_unsplit_ctas_per_sm,
            kWna16SplitRule.max_unsplit_ctas_per_sm);
  EXPECT_EQ(gemv_split_rule(integer_quant(WeightFormat::kGPTQ, 8, 128, false)).eight_tiles_above_rows,
            kWna16SplitRule.eight_tiles_above_rows);
  EXPECT_EQ(gemv_split_rule(integer_quant(WeightFormat::kGPTQ, 8, 128, false)).four_tiles_above_rows, 6);
  EXPECT_EQ(gemv_split_rule(QuantParams()).four_tiles_above_rows, kDenseSplitRule.four_tiles_above_rows);
  EXPECT_EQ(gemv_split_rule(fp8_quant(WeightFormat::kFP8PerChannel, ActQuant::kPerToken)).resident_four_tiles,
            kFp8SplitRule.resident_four_tiles);
}

TEST(Planner, Fp8BlockVariantByGrid) {
  struct Case {
    const char* what;
    int64_t tiles, max_active, pairs, k;
    int32_t split_k;
    int64_t ctas;
    int32_t ctas_per_sm;  // 3: the register-bound variant, 0: unbounded
  };
  const Case cases[] = {
      // One expert, 128 tiles, K = 5120: one wave of 2 at split 8.
      {"Llama-4 Scout gate-up, M = 1", 128, 1, 1, 5120, 8, 128, 0},
      // 448 CTAs unsplit: one wave of 3 (396) and a short second one.
      {"Mixtral gate-up, M = 1", 1792, 2, 2, 4096, 1, 448, 0},
      // 128 experts x 4 CTAs, 1.3 waves of 3; and 32 x 10, one wave of 3 but not of 2.
      {"DeepSeek-V3 gate-up, M = 16", 32, 128, 128, 7168, 1, 512, 3},
      {"Qwen2 gate-up, M = 4", 80, 32, 32, 3584, 1, 320, 3},
      // SmallMSplitK's GPU shapes (H = 2880, I = 1408, E = 16), gate-up and down: 7 tokens
      // top-2 on the register-bound variant, 3 tokens top-1 on the unbounded one.
      {"SmallMSplitK top-2 gate-up", 176, 14, 14, 2880, 1, 308, 3},
      {"SmallMSplitK top-2 down", 180, 14, 14, 1408, 1, 322, 3},
      {"SmallMSplitK top-1 gate-up", 176, 3, 3, 2880, 4, 264, 0},
      {"SmallMSplitK top-1 down", 180, 3, 3, 1408, 2, 135, 0},
      // Four n-tiles have one (unbounded) variant.
      {"Mixtral down, M = 64", 256, 8, 128, 14336, 8, 2048, 0},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    const SmallMGemmConfig got = choose_fp8_block_config(c.tiles, c.max_active, c.pairs, c.k, 132);
    EXPECT_EQ(got.split_k, c.split_k);
    EXPECT_EQ(got.ctas, c.ctas);
    EXPECT_EQ(got.ctas_per_sm, c.ctas_per_sm);
  }
}

}  // namespace
}  // namespace fusedmoe
