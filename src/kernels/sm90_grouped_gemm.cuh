// sm90_grouped_gemm: D_e = A_e . B_e^T for every local expert e in one persistent launch.
//
// CUTLASS 3.x pieces on sm_90a: a warp-specialized kernel (one producer warp issuing TMA loads
// into a multi-stage shared-memory ring, two consumer warpgroups issuing wgmma, sharing each
// tile (cooperative) or taking alternate tiles (pingpong, kPingpong)), a persistent grouped
// tile scheduler that walks the experts' tiles in order, and a TMA-store epilogue. Expert e's
// problem is (rows_e, n, k); rows_e lives on the device only (expert_offsets from the align
// kernel), so the host never synchronizes: a small setup kernel writes the per-expert problem
// shapes, pointers and strides (for both GEMMs of a layer in one launch before GEMM1:
// setup_pair), and the scheduler skips experts without rows. The TMA descriptors are patched
// on the device per expert; the host builds parameters from the addresses of those arrays
// alone, so a captured CUDA graph stays valid for any routing.
//
// Three families share this code:
//  - bf16/fp16 (kScaleN = 0): 128 x 256 x 64 tiles, or 64 x 256 x 64 (kTileM, planner.h
//    grouped_tile_rows), D = A . B^T.
//  - FP8 e4m3 A and B with scales that do not vary along k (kScaleN = kEpilogueScales: per-row
//    activation scales, weight scales per column or one per expert): CUTLASS's FP8 mainloop
//    (fp32 promotion of the wgmma sums every 128 k, no scales), 128 x 192 x 128 tiles (or 64 x
//    192 x 128 pingpong: fp8_grouped_tile_rows; 128 columns on 128-row tiles of experts with
//    few rows: kTileN, fp8_grouped_tile_cols), and
//    D = sa[row] * sb[col] * acc in the epilogue (a column- and a row-vector broadcast with
//    per-expert pointers; the weights' vector may be one scalar per expert): the activation
//    scales are the first 128-k block of SFA below, the weight scales the checkpoint's.
//  - FP8 e4m3 A and B with DeepSeek's scales (kScaleN = 128: 128 x 128 weight blocks, 1 x 128
//    activation groups): 128 x 128 x 128 tiles (or 64 x 128 x 128 pingpong:
//    fp8_grouped_tile_rows), CUTLASS's blockwise-scaled mainloop: each
//    128-k block's wgmma sums are promoted into fp32 accumulators times
//    sa[row, kb] * sb[n / kScaleN, kb]. Both scale tensors are MN-major per expert (CUTLASS's
//    layout for sm_90): SFA [kb][rows_e] from sfa + row0 * kbs, SFB [kb][ceil(n / kScaleN)]
//    from sfb + e * sfb_expert_stride; the quantize and fp8_weight_scales kernels (fp8.cu)
//    write them so. D in bf16/fp16.
//
// Swapped operands (kSwap, for experts with few rows): the kernel computes D_e^T = B_e . A_e^T,
// the weights' n rows filling the wgmma's 128-row M side and the expert's rows its N side
// (tile 128 x 64, or 256 x 64 for bf16/fp16 GEMMs with many rows per expert: kTileM), so a
// 16-row expert no longer pays for 128 rows of MMA; D^T is stored column-major, which is D
// row-major. The scale roles swap with the operands (weights' SFB becomes the kernel's SFA)
// and keep their memory layouts. Swapped tiles are handed out dynamically
// (sm90_dynamic_group_scheduler.cuh: a claim counter in the workspace, zeroed by the setup
// kernel) instead of by CUTLASS's static walk, token tiles first (raster along N).
//
// Gated (kGated, GEMM1 of the bf16/fp16 family on w13 interleaved as gate_up_row() says): the
// epilogue stores act(g) * u of each (gate, up) pair straight from the accumulators, I columns
// instead of 2I (GatedActEpilogue below), and the separate gated_act pass and its 2I-column
// round trip are gone.
//
// Included by one translation unit per instantiation (sm90_grouped_gemm_*.cu, sm90_fp8_*.cu).
#pragma once

#include <cuda_runtime.h>

#include <type_traits>

#include "cute/tensor.hpp"
#include "cutlass/cutlass.h"
#include "cutlass/detail/blockwise_scale_layout.hpp"
#include "cutlass/epilogue/collective/collective_builder.hpp"
#include "cutlass/gemm/collective/collective_builder.hpp"
#include "cutlass/gemm/device/gemm_universal_adapter.h"
#include "cutlass/gemm/group_array_problem_shape.hpp"
#include "cutlass/epilogue/collective/detail.hpp"
#include "cutlass/epilogue/thread/linear_combination.h"
#include "cutlass/gemm/kernel/gemm_universal.hpp"
#include "device_util.cuh"
#include "launch.h"
#include "sm90_block_scale_mainloop.cuh"
#include "sm90_dynamic_group_scheduler.cuh"
#include "sm90_gather_mainloop.cuh"

namespace fusedmoe::kernels::sm90 {

// A: sorted activations, row-major [rows, k]; B: weights [n, k] (k contiguous, CUTLASS's
// column-major B); D: row-major [rows, n]. No C operand. Swapped: A the weights [n, k]
// (row-major), B the activations [rows, k] (column-major), D^T [n, rows] column-major.
using LayoutA = cutlass::layout::RowMajor;
using LayoutB = cutlass::layout::ColumnMajor;
using ClusterShape = cute::Shape<cute::_1, cute::_1, cute::_1>;

// The mainloop of each family, and its scale layouts (int where there are none). kScaleM /
// kScaleN: the scale granularity along the kernel's M and N (1 for the activations' rows).
// kPingpong: the two consumer warp groups take alternate tiles (one's epilogue under the
// other's mainloop) instead of sharing each tile (cooperative).
template <typename ElementAB, int kScaleM, int kScaleN, typename TileShape, int kCarveout, bool kPingpong>
struct Mainloop {  // FP8 with blockwise scales
  static constexpr int kAlignment = 16 / sizeof(ElementAB);
  using ScaleConfig = cutlass::detail::Sm90BlockwiseScaleConfig<kScaleM, kScaleN, 128>;
  using LayoutSFA = decltype(ScaleConfig::deduce_layoutSFA());
  using LayoutSFB = decltype(ScaleConfig::deduce_layoutSFB());
  // CUTLASS's collective with its scale loads replaced (sm90_block_scale_mainloop.cuh).
  using Op = BlockScaleMainloop<typename cutlass::gemm::collective::CollectiveBuilder<
      cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, ElementAB, cute::tuple<LayoutA*, LayoutSFA*>, kAlignment,
      ElementAB, cute::tuple<LayoutB*, LayoutSFB*>, kAlignment, float, TileShape, ClusterShape,
      cutlass::gemm::collective::StageCountAutoCarveout<kCarveout>,
      std::conditional_t<kPingpong, cutlass::gemm::KernelPtrArrayTmaWarpSpecializedPingpongFP8BlockScaledAccum,
                         cutlass::gemm::KernelPtrArrayTmaWarpSpecializedCooperativeFP8BlockScaledAccum>>::CollectiveOp>;
};
template <typename ElementAB, typename TileShape, int kCarveout, bool kPingpong>
struct Mainloop<ElementAB, 0, 0, TileShape, kCarveout, kPingpong> {  // bf16/fp16, FP8 scaled in the epilogue
  static constexpr int kAlignment = 16 / sizeof(ElementAB);
  using ScaleConfig = void;
  using LayoutSFA = int;
  using LayoutSFB = int;
  using Schedule = std::conditional_t<kPingpong, cutlass::gemm::KernelPtrArrayTmaWarpSpecializedPingpong,
                                      cutlass::gemm::KernelPtrArrayTmaWarpSpecializedCooperative>;
  using Op = typename cutlass::gemm::collective::CollectiveBuilder<
      cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, ElementAB, LayoutA*, kAlignment, ElementAB, LayoutB*,
      kAlignment, float, TileShape, ClusterShape, cutlass::gemm::collective::StageCountAutoCarveout<kCarveout>,
      Schedule>::CollectiveOp;
};

// kScaleN of the epilogue-scaled FP8 family.
inline constexpr int kEpilogueScales = -1;

// The epilogue of the epilogue-scaled FP8 family: D = colscale[m] * (rowscale[n] * acc), both
// vectors through per-expert pointers; each may be a scalar per expert (its stride's bool
// false). Along the kernel's M: the activations' row scales (the weights' with swapped
// operands); along N: the weights' column scales (the activations').
template <typename TileShape, typename ElementD>
struct EpilogueScales {
  using ColStride = cute::Stride<bool, cute::_0, int64_t>;
  using RowStride = cute::Stride<cute::_0, bool, int64_t>;
  using Col = cutlass::epilogue::fusion::Sm90ColBroadcast<0, TileShape, float*, float, ColStride, 1>;
  using Row = cutlass::epilogue::fusion::Sm90RowBroadcast<0, TileShape, float*, float, RowStride, 1>;
  static constexpr auto kRound = cutlass::FloatRoundStyle::round_to_nearest;
  using RowTimesAcc = cutlass::epilogue::fusion::Sm90EVT<
      cutlass::epilogue::fusion::Sm90Compute<cutlass::multiplies, float, float, kRound>, Row,
      cutlass::epilogue::fusion::Sm90AccFetch>;
  using Callbacks = cutlass::epilogue::fusion::Sm90EVT<
      cutlass::epilogue::fusion::Sm90Compute<cutlass::multiplies, ElementD, float, kRound>, Col, RowTimesAcc>;
};

// GEMM1's epilogue on interleaved w13 (the CUTLASS no-shared-memory epilogue interface, run by
// the consumer warpgroups on their accumulators): with w13's 16-row blocks holding 8 gate rows
// and then their 8 up rows, every thread's wgmma fragment holds the gate and the up sum of each
// output it writes: columns n and n + 8 (fragment values v and v + 4: layout (2 columns, 2 row
// halves, n / 8 chunks)), or with swapped operands weight rows m and m + 8 (values v and v + 2).
// Output column j = (w / 16) * 8 + w % 8 of gate row w; D is row-major [rows, ld] from the
// expert's first row (expert_offsets, as the mainloop's A), in the activation dtype. The
// cooperative kernel runs this while the tensor cores idle (pingpong, on 64-row tiles, under
// the other warp group's mainloop), so it is lean: one activation's unrolled code per tile,
// and 16-byte stores (PERF.md v20: 4-byte stores and a per-value activation switch made GEMM1
// 7-10% slower than GEMM1 plus a separate activation pass).
template <typename ElementD_, bool kSwap>
class GatedActEpilogue {
 public:
  using EpilogueSchedule = cutlass::epilogue::PtrArrayNoSmemWarpSpecialized;
  using DispatchPolicy = EpilogueSchedule;
  using ThreadEpilogueOp = cutlass::epilogue::thread::LinearCombination<ElementD_, 1, float, float>;
  using ElementOutput = ElementD_;
  using ElementAccumulator = float;
  using ElementCompute = float;
  using ElementScalar = float;
  using ElementC = void;
  using StrideC = cute::Stride<int64_t, cute::_1, cute::_0>*;
  using InternalStrideC = cute::remove_pointer_t<StrideC>;
  using ElementD = ElementD_;
  using StrideD = StrideC;
  using InternalStrideD = InternalStrideC;
  using GmemTiledCopyC = void;
  using GmemTiledCopyD = void;
  struct SharedStorage {};
  using TensorMapStorage = SharedStorage;

  struct Arguments {
    ElementD* d = nullptr;
    int64_t ld = 0;  // I
    const int64_t* expert_offsets = nullptr;
    const int32_t* sorted_pairs = nullptr;
    const float* topk_weights = nullptr;  // set: the routed weight scales g and u first
    GatedAct act = GatedAct::kSilu;
  };
  using Params = Arguments;

  template <class ProblemShape>
  static constexpr Params to_underlying_arguments(ProblemShape const&, Arguments const& args, void*) {
    return args;
  }
  template <class ProblemShape>
  static size_t get_workspace_size(ProblemShape const&, Arguments const&, int) {
    return 0;
  }
  template <class ProblemShape>
  static cutlass::Status initialize_workspace(ProblemShape const&, Arguments const&, void*, cudaStream_t,
                                              cutlass::CudaHostAdapter* = nullptr) {
    return cutlass::Status::kSuccess;
  }
  template <class ProblemShape>
  static bool can_implement(ProblemShape const&, Arguments const& args) {
    return args.d != nullptr && args.expert_offsets != nullptr && args.ld % 8 == 0 &&
           (args.topk_weights == nullptr || args.sorted_pairs != nullptr);
  }

  CUTLASS_HOST_DEVICE explicit GatedActEpilogue(Params const& params) : params_(params) {}
  CUTLASS_DEVICE bool is_source_needed() { return false; }

  template <class ProblemShapeMNKL, class BlockShapeMNK, class BlockCoordMNKL, class FrgEngine, class FrgLayout,
            class TiledMma, class ResidueMNK>
  CUTLASS_DEVICE void operator()(ProblemShapeMNKL problem_shape_mnkl, BlockShapeMNK blk_shape_mnk,
                                 BlockCoordMNKL blk_coord_mnkl, cute::Tensor<FrgEngine, FrgLayout> const& acc,
                                 TiledMma tiled_mma, ResidueMNK, int thread_idx, char*) {
    using namespace cute;
    const int M = get<0>(problem_shape_mnkl);
    const int N = get<1>(problem_shape_mnkl);
    Tensor tile = local_tile(make_identity_tensor(make_shape(M, N)), take<0, 2>(blk_shape_mnk),
                             make_coord(get<0>(blk_coord_mnkl), get<1>(blk_coord_mnkl)));
    Tensor coord = tiled_mma.get_thread_slice(thread_idx).partition_C(tile);  // (m, n) of each value
    static_assert(is_static<FrgLayout>::value, "the accumulator layout must be static");
    const Tile t{M, N, params_.expert_offsets[static_cast<int>(get<3>(blk_coord_mnkl))]};
    // One copy of the unrolled store per activation, chosen once per tile.
    dispatch_act(params_.act, [&](auto a) { store<decltype(a)::value>(t, acc, coord); });
  }

 private:
  struct Tile {
    int M, N;      // the expert's problem
    int64_t row0;  // its first row in D
  };

  CUTLASS_DEVICE float scale_of(int64_t row) const {
    return params_.topk_weights != nullptr ? params_.topk_weights[params_.sorted_pairs[row]] : 1.0f;
  }

  template <GatedAct kAct, class Acc, class Coord>
  CUTLASS_DEVICE void store(const Tile& t, const Acc& acc, const Coord& coord) const {
    using namespace cute;
    if constexpr (!kSwap) {
      // Values (j, h, c) = j + 2h + 4c: columns 8c + 2q + j of rows g + 8h (a 64 x N atom per
      // warpgroup, one per thread's fragment). Gate chunk 2k and up chunk 2k + 1 give outputs
      // 8k + 2q + j: one 32-bit word per (h, k). A quad's four lanes then transpose their words
      // of four consecutive k (two shfl_xor rounds), so each lane stores 16 bytes: outputs
      // 8k..8k+7 of one row for its own k.
      static_assert(size(Acc{}) % 32 == 0, "unexpected wgmma accumulator layout");
      constexpr int kChunks = size(Acc{}) / 4;
      const int q = threadIdx.x & 3;
      CUTLASS_PRAGMA_UNROLL
      for (int h = 0; h < 2; ++h) {
        const int m = get<0>(coord(2 * h));
        const bool row_ok = m < t.M;
        const int64_t row = t.row0 + (row_ok ? m : 0);
        const float s = row_ok ? scale_of(row) : 0.0f;
        ElementD* out = params_.d + row * params_.ld;
        CUTLASS_PRAGMA_UNROLL
        for (int k0 = 0; k0 < kChunks / 2; k0 += 4) {
          uint32_t w[4];
          CUTLASS_PRAGMA_UNROLL
          for (int i = 0; i < 4; ++i) {
            const int v = 2 * h + 8 * (k0 + i);  // gate (j = 0) of chunk 2(k0 + i)
            ElementD pair[2] = {ElementD(act_of<kAct>(acc(v) * s, acc(v + 4) * s)),
                                ElementD(act_of<kAct>(acc(v + 1) * s, acc(v + 5) * s))};
            memcpy(&w[i], pair, sizeof w[i]);
          }
          // 4 x 4 transpose across the quad: lane q ends with word q' = lane q''s word q.
          CUTLASS_PRAGMA_UNROLL
          for (int i = 0; i < 2; ++i) {
            const bool hi = (q & 2) != 0;
            const uint32_t got = __shfl_xor_sync(0xffffffffu, hi ? w[i] : w[i + 2], 2);
            if (hi) w[i] = got; else w[i + 2] = got;
          }
          CUTLASS_PRAGMA_UNROLL
          for (int i = 0; i < 4; i += 2) {
            const bool odd = (q & 1) != 0;
            const uint32_t got = __shfl_xor_sync(0xffffffffu, odd ? w[i] : w[i + 1], 1);
            if (odd) w[i] = got; else w[i + 1] = got;
          }
          const int n = get<1>(coord(8 * k0)) - 2 * q + 16 * q;  // gate column 16 k of this lane's k
          if (row_ok && n < t.N) {
            *reinterpret_cast<uint4*>(out + (n / 16) * 8) = make_uint4(w[0], w[1], w[2], w[3]);
          }
        }
      }
    } else {
      // Values (j, h, c): weight rows g + 8h (gate h = 0, up h = 1) of tokens 8c + 2q + j.
      static_assert(size(Acc{}) % 4 == 0, "unexpected wgmma accumulator layout");
      CUTLASS_PRAGMA_UNROLL
      for (int v = 0; v < size(Acc{}); v += 4) {
        const int m = get<0>(coord(v));
        const int n = get<1>(coord(v));
        if (m < t.M) {
          const int64_t j = (m / 16) * 8 + m % 8;
          CUTLASS_PRAGMA_UNROLL
          for (int i = 0; i < 2; ++i) {
            if (n + i < t.N) {
              const int64_t row = t.row0 + n + i;
              const float s = scale_of(row);
              params_.d[row * params_.ld + j] = ElementD(act_of<kAct>(acc(v + i) * s, acc(v + i + 2) * s));
            }
          }
        }
      }
    }
  }

 private:
  Params params_;
};

// kTileM: the tile's M of the bf16/fp16 kernels: with swapped operands weight rows, 128 or 256
// (planner.h, swapped_tile_rows); else token rows, 128 (cooperative: the two consumer warp
// groups split the tile) or 64 (pingpong: each its own 64 x 256 tile; grouped_tile_rows); and
// of the unswapped FP8 families (epilogue or block scales), 128 (cooperative) or 64 (pingpong,
// 64 x 128 x 128; fp8_grouped_tile_rows). The swapped FP8 families have one tile shape each.
// kGatherA: GEMM1 reading x's rows in token order itself (sm90_gather_mainloop.cuh) instead
// of a gathered copy, as A or (swapped) as B: the bf16/fp16 gated families, and the
// epilogue-scaled FP8 family (x's e4m3 codes once per token, each row's scale in SFA's first
// block at the row's place in expert order, as the quantizer stores them).
// kTileN: the tile's N where it is not the family's own (below).
template <typename ElementAB, typename ElementD, int kScaleN, bool kSwapOperands = false, bool kGatedOut = false,
          int kTileM = 128, bool kGatherRows = false, int kTileN = 0>
struct GroupedGemm {
  static constexpr bool kGated = kGatedOut;
  static constexpr bool kGatherA = kGatherRows;
  static constexpr bool kScaled = kScaleN > 0;  // blockwise scales in the mainloop
  static constexpr bool kEpilogueScaled = kScaleN == kEpilogueScales;
  static constexpr bool kFp8 = kScaled || kEpilogueScaled;
  static constexpr bool kSwap = kSwapOperands;
  static constexpr int kScaleK = 128;
  static constexpr int kScaleNArg = kScaleN;  // the family, for instantiations of its other heights
  using ElemAB = ElementAB;
  using ElemD = ElementD;
  using ProblemShape = cutlass::gemm::GroupProblemShape<cute::Shape<int, int, int>>;
  using Accum = float;
  static constexpr int kAlignmentD = 16 / sizeof(ElementD);  // 16-byte TMA rows
  using LayoutD = std::conditional_t<kSwap, cutlass::layout::ColumnMajor, cutlass::layout::RowMajor>;
  using TileShape = std::conditional_t<
      kSwap, std::conditional_t<kFp8, cute::Shape<cute::_128, cute::_64, cute::_128>,
                                cute::Shape<cute::Int<kTileM>, cute::_64, cute::_64>>,
      std::conditional_t<kFp8, cute::Shape<cute::Int<kTileM>, cute::Int<kTileN == 0 ? 128 : kTileN>, cute::_128>,
                         cute::Shape<cute::Int<kTileM>, cute::_256, cute::_64>>>;
  // Pingpong for the epilogue-scaled FP8 family with swapped operands: its tiles are short
  // (64 rows of few tokens, k = 128 per stage), so the epilogue is a large share of each;
  // pingpong hides it under the other warp group's mainloop. 2-4% faster than cooperative at
  // M = 64-1024 on three of the bench shapes, 0-1.3% slower on Mixtral and Scout (v23). Unswapped, it
  // needs 64 x 128 tiles (two promoted accumulator sets of a 128 x 128 tile spill), which
  // lost up to 35% at M = 4096 (v23); v35 gives it 64-row tiles per GEMM only where they pay
  // (fp8_grouped_tile_rows), v36 to the block-scaled family's GEMM2 too (168 registers, no
  // spills). And for the bf16/fp16 64-row tiles: each warp group's 64 x 256 accumulator is the
  // atom it holds under cooperative, the gated epilogue unchanged.
  static constexpr bool kPingpong = (kEpilogueScaled && kSwap) || (!kSwap && kTileM == 64);
  using Scales = EpilogueScales<TileShape, ElementD>;
  // The other families: the epilogue builder's default fusion (D = acc, no source).
  using Fusion = std::conditional_t<kEpilogueScaled, typename Scales::Callbacks,
                                    cutlass::epilogue::fusion::LinearCombination<ElementD, Accum, void, Accum>>;

  using TmaEpilogue = typename cutlass::epilogue::collective::CollectiveBuilder<
      cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, TileShape, ClusterShape,
      cutlass::epilogue::collective::EpilogueTileAuto, Accum, Accum, void, LayoutD*, kAlignmentD, ElementD,
      LayoutD*, kAlignmentD,
      std::conditional_t<kPingpong, cutlass::epilogue::PtrArrayTmaWarpSpecializedPingpong,
                         cutlass::epilogue::PtrArrayTmaWarpSpecializedCooperative>,
      Fusion>::CollectiveOp;
  static_assert(!kGated || !kFp8, "the gated epilogue serves the bf16/fp16 family");
  static_assert(!kGatherA || kGated || kEpilogueScaled,
                "the gathering mainloop serves the gated GEMM1 and the epilogue-scaled FP8 GEMM1");
  using Epilogue = std::conditional_t<
      kGated, cutlass::epilogue::collective::detail::Sm90TmaWarpSpecializedAdapter<GatedActEpilogue<ElementD, kSwap>>,
      TmaEpilogue>;
  // The gathering mainloop's shared array of the tile's tokens (its kExtraSmemBytes, 4 bytes
  // per token row; 8 reserved, as measured) is carved out with the epilogue's storage before
  // the stage count is chosen.
  static constexpr int kGatherSmemBytes = kGatherA ? cute::size<kSwap ? 1 : 0>(TileShape{}) * 8 + 128 : 0;
  // Weight columns per block scale in the unswapped mainloop: by the tile's width (fp8_geometry.h).
  static constexpr int kScaleNGranularity = fp8_weight_scale_cols(cute::size<1>(TileShape{}));
  using Main = Mainloop<ElementAB, kScaled ? (kSwap ? kScaleN : 1) : 0, kScaled ? (kSwap ? 1 : kScaleNGranularity) : 0, TileShape,
                        static_cast<int>(sizeof(typename Epilogue::SharedStorage)) + kGatherSmemBytes, kPingpong>;
  using MainOp = std::conditional_t<kGatherA, GatherRowsMainloop<typename Main::Op, kSwap>, typename Main::Op>;
  static_assert(!kGatherA || GatherRowsMainloop<typename Main::Op, kSwap>::kExtraSmemBytes <= kGatherSmemBytes,
                "the carveout covers the gathering mainloop's shared array");

  using Kernel = cutlass::gemm::kernel::GemmUniversal<ProblemShape, MainOp, Epilogue>;
  // The swapped tiles come from sm90_dynamic_group_scheduler.cuh's scheduler.
  static constexpr bool kDynamicTiles = kSwap;
  static_assert(kDynamicTiles == std::is_same_v<typename Kernel::TileScheduler, DynamicGroupScheduler<ProblemShape, 8>>,
                "the dynamic scheduler serves exactly the swapped tile shapes");
  using Gemm = cutlass::gemm::device::GemmUniversalAdapter<Kernel>;

  using StrideA = typename Kernel::InternalStrideA;
  using StrideB = typename Kernel::InternalStrideB;
  using StrideD = typename Kernel::InternalStrideD;
  using LayoutSFA = typename Main::LayoutSFA;
  using LayoutSFB = typename Main::LayoutSFB;
  using Shape = typename ProblemShape::UnderlyingProblemShape;
  // The family's instantiation without the gated epilogue: setup_groups_kernel writes the
  // per-expert arrays through its types for both GEMMs of a layer (the gated GEMM1 reads the
  // same fields at the same offsets, and ignores D's).
  // A block-scaled kernel on 192 columns is its own: its scale layout differs from 128's.
  using Plain = GroupedGemm<ElementAB, ElementD, kScaleN, kSwapOperands, false, kTileM, false, kScaled ? kTileN : 0>;
  static_assert(kTileM == 128 || (!kFp8 && kTileM == (kSwap ? 256 : 64)) || (kFp8 && !kSwap && kTileM == 64),
                "other tile heights: bf16/fp16, and 64 rows for the unswapped FP8 families");
  // kTileN: the unswapped FP8 families' tile width, 192 (0: the family's own, 128 for FP8); 256
  // would spill the promoted accumulators. With block scales (128-row tiles) the mainloop
  // takes the weights' scales per kFp8WideTileScaleCols columns, each 128-column block's scale
  // repeated (fp8_weight_scales), so that a tile spans whole scale blocks.
  static_assert(kTileN == 0 || (!kSwap && kTileN == 192 && (kEpilogueScaled || (kScaled && kTileM == 128))),
                "192 columns: the unswapped FP8 families only (block scales on 128-row tiles)");

  // Per-expert argument arrays, carved from the workspace in this order.
  struct Arrays {
    Shape* shapes;
    const ElementAB** a;
    const ElementAB** b;
    ElementD** d;
    StrideA* stride_a;
    StrideB* stride_b;
    StrideD* stride_d;
    const float** sfa;  // FP8 only (epilogue-scaled: the kernel's M-side and N-side vectors)
    const float** sfb;
    LayoutSFA* layout_sfa;
    LayoutSFB* layout_sfb;
    unsigned long long* next_tile;  // kDynamicTiles: the scheduler's claim counter, zeroed by the setup
  };

  static size_t align_up(size_t v) { return (v + 255) / 256 * 256; }

  static size_t arrays_bytes(int64_t groups, Arrays* out = nullptr, void* base = nullptr) {
    char* p = static_cast<char*>(base);
    size_t off = 0;
    auto take = [&](auto** field, size_t elem) {
      if (out) *field = reinterpret_cast<std::remove_pointer_t<decltype(field)>>(p + off);
      off = align_up(off + elem * static_cast<size_t>(groups));
    };
    Arrays dummy{};
    Arrays& a = out ? *out : dummy;
    take(&a.shapes, sizeof(Shape));
    take(&a.a, sizeof(void*));
    take(&a.b, sizeof(void*));
    take(&a.d, sizeof(void*));
    take(&a.stride_a, sizeof(StrideA));
    take(&a.stride_b, sizeof(StrideB));
    take(&a.stride_d, sizeof(StrideD));
    if constexpr (kFp8) {
      take(&a.sfa, sizeof(void*));
      take(&a.sfb, sizeof(void*));
    }
    if constexpr (kScaled) {
      take(&a.layout_sfa, sizeof(LayoutSFA));
      take(&a.layout_sfb, sizeof(LayoutSFB));
    }
    if constexpr (kDynamicTiles) {  // one counter per GEMM, not per group
      if (out) a.next_tile = reinterpret_cast<unsigned long long*>(p + off);
      off = align_up(off + sizeof(unsigned long long));
    }
    return off;
  }

  static typename Gemm::Arguments arguments(const GroupedGemmParams& p, const Arrays& arr) {
    cutlass::KernelHardwareInfo hw;
    hw.device_id = 0;
    hw.sm_count = p.sm_count;
    typename Gemm::Arguments args;
    if constexpr (kScaled) {
      args = {cutlass::gemm::GemmUniversalMode::kGrouped,
              {p.num_groups, arr.shapes, nullptr},
              {arr.a, arr.stride_a, arr.b, arr.stride_b, arr.sfa, arr.layout_sfa, arr.sfb, arr.layout_sfb},
              {{}, nullptr, nullptr, arr.d, arr.stride_d},
              hw};
    } else if constexpr (kGatherA) {
      typename MainOp::Gather gather;
      gather.x = static_cast<const ElementAB*>(p.a);
      gather.sorted_pairs = p.sorted_pairs;
      gather.expert_offsets = p.expert_offsets;
      gather.topk = p.gather_topk;
      gather.k = p.k;
      args = {cutlass::gemm::GemmUniversalMode::kGrouped,
              {p.num_groups, arr.shapes, nullptr},
              {{arr.a, arr.stride_a, arr.b, arr.stride_b}, gather},
              {},
              hw};
      if constexpr (!kGated) args.epilogue = {{}, nullptr, nullptr, arr.d, arr.stride_d};  // FP8: the scales below
    } else if constexpr (kGated) {
      args = {cutlass::gemm::GemmUniversalMode::kGrouped,
              {p.num_groups, arr.shapes, nullptr},
              {arr.a, arr.stride_a, arr.b, arr.stride_b},
              {},
              hw};
    } else {
      args = {cutlass::gemm::GemmUniversalMode::kGrouped,
              {p.num_groups, arr.shapes, nullptr},
              {arr.a, arr.stride_a, arr.b, arr.stride_b},
              {{}, nullptr, nullptr, arr.d, arr.stride_d},
              hw};
    }
    if constexpr (kDynamicTiles) {
      constexpr int64_t kBlockK = cute::size<2>(TileShape{});
      args.scheduler.next_tile = arr.next_tile;
      args.scheduler.lookahead =
          Kernel::TileScheduler::lookahead_for((p.k + kBlockK - 1) / kBlockK, Main::Op::DispatchPolicy::Stages, kPingpong);
      // Tiles in order along N, the tokens of the swapped operands: the token tiles of one weight
      // tile are claimed one after another, so where an expert has more than one token tile its
      // weight tile is read by CTAs running at about the same time and the later reads hit L2.
      // v33 against CUTLASS's default (along M): 0.987-1.001 at the swapped bench points
      // (DeepSeek-V3 TP8 bf16 M = 1024 0.987), 0.77 at Mixtral M = 256 forced swapped (r = 64).
      args.scheduler.raster_order = decltype(args.scheduler.raster_order)::AlongN;
    }
    if constexpr (kGated) {
      args.epilogue = {static_cast<ElementD*>(p.d), p.n / 2, p.expert_offsets, p.sorted_pairs, p.topk_weights, p.act};
    } else if constexpr (kEpilogueScaled) {
      // Activations: one scale per row; weights: per column, or one per expert.
      const bool m_vector = kSwap ? p.sfb_per_column : true;
      const bool n_vector = kSwap ? true : p.sfb_per_column;
      typename Scales::Col::Arguments col{arr.sfa, 0.0f, {m_vector, cute::_0{}, int64_t{0}}};
      typename Scales::Row::Arguments row{arr.sfb, 0.0f, {cute::_0{}, n_vector, int64_t{0}}};
      args.epilogue.thread = {col, {row, {}, {}}, {}};
    } else {
      args.epilogue.thread.alpha = 1.0f;
      args.epilogue.thread.beta = 0.0f;
    }
    return args;
  }
};

// The per-expert arrays of one GEMM, set `set` of the workspace: sets 0 and 1 (GEMM1's and
// GEMM2's, setup_pair), then CUTLASS's own workspace.
template <typename G>
typename G::Arrays arrays_of(const GroupedGemmParams& p, int set) {
  typename G::Arrays arr{};
  const size_t bytes = G::arrays_bytes(p.num_groups);
  G::arrays_bytes(p.num_groups, &arr, static_cast<char*>(p.workspace) + static_cast<size_t>(set) * bytes);
  return arr;
}

template <typename G>
struct SetupArgs {
  GroupedGemmParams p[2];
  typename G::Arrays arr[2];
};

// One thread per (GEMM, expert): its rows, pointers, strides and scale views (rows_e = 0
// leaves no tiles). blockIdx.y picks the GEMM. A plain launch (its predecessors are complete
// when it starts) that lets a GEMM launched early after it (launch_early) start at once: that
// GEMM waits for this grid's end before it reads anything.
template <typename G>
__global__ void setup_groups_kernel(SetupArgs<G> args) {
  allow_successor();
  using ElementAB = typename G::ElemAB;
  using ElementD = typename G::ElemD;
  const GroupedGemmParams& p = args.p[blockIdx.y];
  const typename G::Arrays& arr = args.arr[blockIdx.y];
  const int e = blockIdx.x * blockDim.x + threadIdx.x;
  if constexpr (G::kDynamicTiles) {
    if (e == 0) *arr.next_tile = 0;  // the dynamic scheduler's next claim
  }
  if (e >= p.num_groups) return;
  const int64_t row0 = p.expert_offsets[e];
  const int64_t rows = p.expert_offsets[e + 1] - row0;
  // A gathering GEMM1 reads x's rows itself; its A pointer only seeds the TMA descriptor it
  // does not use.
  const ElementAB* x = static_cast<const ElementAB*>(p.a) + (p.gather_topk > 0 ? 0 : row0 * p.k);
  const ElementAB* w = static_cast<const ElementAB*>(p.b) + static_cast<int64_t>(e) * p.n * p.k;
  const typename G::Shape shape = G::kSwap
      ? typename G::Shape(static_cast<int>(p.n), static_cast<int>(rows), static_cast<int>(p.k))
      : typename G::Shape(static_cast<int>(rows), static_cast<int>(p.n), static_cast<int>(p.k));
  arr.shapes[e] = shape;
  arr.a[e] = G::kSwap ? w : x;
  arr.b[e] = G::kSwap ? x : w;
  arr.stride_a[e] = cute::make_stride(p.k, cute::Int<1>{}, cute::Int<0>{});
  arr.stride_b[e] = cute::make_stride(p.k, cute::Int<1>{}, cute::Int<0>{});
  // A gated GEMM1 finds D from expert_offsets itself and ignores these two.
  arr.d[e] = static_cast<ElementD*>(p.d) + row0 * p.n;
  if constexpr (G::kSwap) {
    arr.stride_d[e] = cute::make_stride(cute::Int<1>{}, p.n, cute::Int<0>{});  // D^T [n, rows], n contiguous
  } else {
    arr.stride_d[e] = cute::make_stride(p.n, cute::Int<1>{}, cute::Int<0>{});
  }
  if constexpr (G::kFp8) {
    // Blockwise: SFA [kb][rows_e] and SFB; epilogue-scaled: SFA's first block (one scale per
    // row) and the expert's weight scales.
    const int64_t kbs = (p.k + G::kScaleK - 1) / G::kScaleK;
    const float* x_scales = p.sfa + row0 * kbs;
    const float* w_scales = p.sfb + static_cast<int64_t>(e) * p.sfb_expert_stride;
    arr.sfa[e] = G::kSwap ? w_scales : x_scales;
    arr.sfb[e] = G::kSwap ? x_scales : w_scales;
  }
  if constexpr (G::kScaled) {
    using Config = typename G::Main::ScaleConfig;
    arr.layout_sfa[e] = Config::tile_atom_to_shape_SFA(cute::append<4>(shape, 1));
    arr.layout_sfb[e] = Config::tile_atom_to_shape_SFB(cute::append<4>(shape, 1));
  }
}

template <typename G>
size_t workspace_bytes(int32_t num_groups, int32_t sm_count) {
  typename G::Arrays arr{};
  GroupedGemmParams p;
  p.num_groups = num_groups;
  p.sm_count = sm_count;
  return 2 * G::arrays_bytes(num_groups) + G::align_up(G::Gemm::get_workspace_size(G::arguments(p, arr)));
}

// The arrays of `sets` GEMMs (sets 0 and, if two, 1 of their shared workspace) in one launch,
// through the family's plain instantiation G::Plain.
template <typename G>
cudaError_t launch_setup(const GroupedGemmParams* p, int sets, cudaStream_t stream) {
  using P = typename G::Plain;
  SetupArgs<P> args;
  for (int set = 0; set < sets; ++set) {
    args.p[set] = p[set];
    args.arr[set] = arrays_of<P>(p[set], set);
  }
  setup_groups_kernel<P><<<dim3((p[0].num_groups + 127) / 128, sets), 128, 0, stream>>>(args);
  return cudaGetLastError();
}

// Whether instantiations A and B carve the per-expert arrays alike (arrays_bytes: fields of
// the same types, or of the same size where only A's or B's kernel reads them, in the same
// order), so that the setup through one writes the arrays the other reads.
template <typename A, typename B>
inline constexpr bool kSameArrays =
    std::is_same_v<typename A::Shape, typename B::Shape> && std::is_same_v<typename A::StrideA, typename B::StrideA> &&
    std::is_same_v<typename A::StrideB, typename B::StrideB> &&
    sizeof(typename A::StrideD) == sizeof(typename B::StrideD) &&
    std::is_same_v<typename A::LayoutSFA, typename B::LayoutSFA> &&
    std::is_same_v<typename A::LayoutSFB, typename B::LayoutSFB> && A::kFp8 == B::kFp8 && A::kScaled == B::kScaled &&
    A::kDynamicTiles == B::kDynamicTiles;

// Both GEMMs' arrays in one launch (sets 0 and 1 of their shared workspace).
template <typename G>
cudaError_t setup_pair(const GroupedGemmParams& gemm1, const GroupedGemmParams& gemm2, cudaStream_t stream) {
  using P = typename G::Plain;
  // A gated GEMM ignores D's fields, so its StrideD needs only the plain one's size.
  static_assert(kSameArrays<G, P>, "a gated GEMM reads its arrays where its plain instantiation writes them");
  if constexpr (!(G::kFp8 && G::kSwap)) {  // the families with two tile heights
    // Either tile height's entry sets up both GEMMs (run_grouped picks the height per GEMM).
    using Tall = GroupedGemm<typename G::ElemAB, typename G::ElemD, G::kScaleNArg, G::kSwap, false, 128>;
    using Other = GroupedGemm<typename G::ElemAB, typename G::ElemD, G::kScaleNArg, G::kSwap, false, G::kSwap ? 256 : 64>;
    static_assert(kSameArrays<Tall, Other> && std::is_same_v<typename Tall::StrideD, typename Other::StrideD>,
                  "the tile heights of one operand order share the per-expert arrays' layout");
  }
  if (gemm1.workspace != gemm2.workspace || gemm1.num_groups != gemm2.num_groups || gemm1.num_groups <= 0) {
    return cudaErrorInvalidValue;
  }
  if (gemm1.workspace_bytes < workspace_bytes<G>(gemm1.num_groups, gemm1.sm_count)) return cudaErrorInvalidValue;
  const GroupedGemmParams both[2] = {gemm1, gemm2};
  return launch_setup<G>(both, 2, stream);
}

// CUTLASS's device_kernel with the grid dependency control CUTLASS 4.2's ptr-array kernels
// lack: every CTA first waits for its predecessor grid's end and memory (at once in a plain
// launch), then, where release_successor, lets a programmatic dependent successor launch. That
// successor can launch only once every CTA of this grid has started, so its CTAs take only the
// SMs this grid's persistent CTAs leave, and it waits for this grid's end before it reads.
template <typename Operator>
__global__ void __launch_bounds__(Operator::MaxThreadsPerBlock, Operator::MinBlocksPerMultiprocessor)
    pdl_gemm_kernel(CUTLASS_GRID_CONSTANT typename Operator::Params const params, int release_successor) {
  wait_for_predecessor();
  if (release_successor) allow_successor();
  extern __shared__ char smem[];
  Operator op;
  op(params, smem);
}

// One GEMM: its arrays from setup_pair (p.arrays_set 0 or 1), or written here first (set 0).
template <typename G>
cudaError_t run(const GroupedGemmParams& p, cudaStream_t stream) {
  if (p.workspace_bytes < workspace_bytes<G>(p.num_groups, p.sm_count)) return cudaErrorInvalidValue;
  if (G::kFp8 && (p.sfa == nullptr || p.sfb == nullptr)) return cudaErrorInvalidValue;
  if (p.arrays_set > 1 || G::kGatherA != (p.gather_topk > 0)) return cudaErrorInvalidValue;
  cudaError_t err = cudaSuccess;
  if (p.arrays_set < 0) {
    err = launch_setup<G>(&p, 1, stream);
    if (err != cudaSuccess) return err;
  }
  const typename G::Arrays arr = arrays_of<G>(p, p.arrays_set < 0 ? 0 : p.arrays_set);
  const typename G::Gemm::Arguments args = G::arguments(p, arr);
  if (G::Gemm::can_implement(args) != cutlass::Status::kSuccess) return cudaErrorInvalidValue;
  void* cutlass_ws = static_cast<char*>(p.workspace) + 2 * G::arrays_bytes(p.num_groups);
  // GemmUniversalAdapter's initialize and run for a 1x1x1 cluster, through pdl_gemm_kernel
  // instead of CUTLASS's device_kernel: the same parameters, grid, block and shared memory.
  using Kernel = typename G::Gemm::GemmKernel;
  static_assert(cute::size(typename Kernel::DispatchPolicy::ClusterShape{}) == 1, "launched without a cluster");
  if (Kernel::initialize_workspace(args, cutlass_ws, stream) != cutlass::Status::kSuccess) return cudaErrorLaunchFailure;
  const typename Kernel::Params params = Kernel::to_underlying_arguments(args, cutlass_ws);
  const int smem = static_cast<int>(Kernel::SharedStorageSize);
  err = cudaFuncSetAttribute(pdl_gemm_kernel<Kernel>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
  if (err != cudaSuccess) return err;
  return launch_maybe_pdl_smem(p.launch_early, pdl_gemm_kernel<Kernel>, Kernel::get_grid_shape(params),
                               Kernel::get_block_shape(), static_cast<size_t>(smem), stream, params,
                               p.release_successor ? 1 : 0);
}

}  // namespace fusedmoe::kernels::sm90

// The entry points of one instantiation, for its translation unit.
#define FUSEDMOE_GROUPED_GEMM_INSTANCE(name, ElementAB, ElementD, kScaleN, kSwap, kGated) \
  FUSEDMOE_GROUPED_GEMM_INSTANCE_ROWS(name, ElementAB, ElementD, kScaleN, kSwap, kGated, 128)
#define FUSEDMOE_GROUPED_GEMM_INSTANCE_ROWS(name, ElementAB, ElementD, kScaleN, kSwap, kGated, kTileM)               \
  FUSEDMOE_GROUPED_GEMM_INSTANCE_TYPE(name, (sm90::GroupedGemm<ElementAB, ElementD, kScaleN, kSwap, kGated, kTileM>))
// The gated GEMM1 reading x's rows itself (kGatherA), on tiles of kTileM token rows, or
// (kSwap) of kTileM weight rows and 64 tokens.
#define FUSEDMOE_GROUPED_GEMM_INSTANCE_GATHER(name, ElementAB, kTileM, kSwap) \
  FUSEDMOE_GROUPED_GEMM_INSTANCE_TYPE(name, (sm90::GroupedGemm<ElementAB, ElementAB, 0, kSwap, true, kTileM, true>))
// The epilogue-scaled FP8 GEMM1 reading x's e4m3 rows itself (kGatherA): unswapped on kTileM x
// kTileN x 128 tiles (64 x 192), or (kSwap) on the swapped family's 128 x 64 x 128 (kTileM 128,
// kTileN 0).
#define FUSEDMOE_GROUPED_GEMM_INSTANCE_FP8_GATHER(name, ElementD, kSwap, kTileM, kTileN)                   \
  FUSEDMOE_GROUPED_GEMM_INSTANCE_TYPE(name, (sm90::GroupedGemm<cutlass::float_e4m3_t, ElementD, sm90::kEpilogueScales, \
                                                               kSwap, false, kTileM, true, kTileN>))
// An unswapped FP8 GEMM (kScaleN: sm90::kEpilogueScales or 128) on kTileM x kTileN x 128 tiles.
#define FUSEDMOE_GROUPED_GEMM_INSTANCE_COLS(name, ElementD, kScaleN, kTileM, kTileN) \
  FUSEDMOE_GROUPED_GEMM_INSTANCE_TYPE(                                                \
      name, (sm90::GroupedGemm<cutlass::float_e4m3_t, ElementD, kScaleN, false, false, kTileM, false, kTileN>))
#define FUSEDMOE_GROUPED_GEMM_UNPAREN(...) __VA_ARGS__
#define FUSEDMOE_GROUPED_GEMM_INSTANCE_TYPE(name, type)                                                              \
  namespace fusedmoe::kernels {                                                                                      \
  using name##_type = FUSEDMOE_GROUPED_GEMM_UNPAREN type;                                                            \
  size_t name##_workspace_bytes(int32_t num_groups, int32_t sm_count) {                                              \
    return sm90::workspace_bytes<name##_type>(num_groups, sm_count);                                                 \
  }                                                                                                                  \
  cudaError_t launch_##name(const GroupedGemmParams& p, cudaStream_t stream) {                                       \
    return sm90::run<name##_type>(p, stream);                                                                        \
  }                                                                                                                  \
  cudaError_t name##_setup_pair(const GroupedGemmParams& gemm1, const GroupedGemmParams& gemm2, cudaStream_t stream) { \
    return sm90::setup_pair<name##_type>(gemm1, gemm2, stream);                                                      \
  }                                                                                                                  \
  }
