// BlockScaleMainloop: CUTLASS 4.2's ptr-array blockwise-scaled FP8 mainloop (the
// sm90_fp8_grouped_gemm_blockscale family) with two parts of its own; the producer's TMA loads
// of the operands and the kernel around it are CUTLASS's.
//
// 1. The auxiliary producer warp's scale loads (load_auxiliary). CUTLASS copies a tile's scales
//    of each operand with a 32-thread tiled copy over the tile's rows (A) or columns (B), thread
//    t taking rows t, t + 32, ..., and lets only the threads below ScaleMsPerTile /
//    ScaleNsPerTile copy: right where each thread's rows hold distinct scales or the tile has
//    one, wrong in between (8 columns per scale over 192 columns: threads 24-31, the only ones
//    covering scales 3, 7, ..., 23, never copy; PERF.md v41's non-finite outputs, v42). Here
//    lane l copies scales l, l + 32, ... of each operand, one 4-byte cp.async each from the
//    first row or column the scale covers, predicated on it lying inside the problem; then every
//    lane arrives (noinc) on the stage's full barrier, as CUTLASS's does (its 33 producer
//    events: the TMA leader and the 32 lanes).
// 2. The consumers' mainloop (mma) where both operands have several scales per tile (per-row
//    activation scales and more than one weight scale across the tile: the 192-column tile at
//    64 columns per scale). CUTLASS's promotion there costs two multiplies per accumulator and
//    compiles only at 8 columns per scale (its scale fragments must have the accumulator's
//    layout); ours adds temp * (sa * sb), the products formed once per row and scale block
//    while the wgmma batch runs, so that the promotion is one FFMA per accumulator (PERF.md
//    v42, the layer against 128-column tiles: up to 1.14x slower with CUTLASS's promotion at 8
//    columns per scale, 0.84-0.98x with ours at 64).
#pragma once

#include <cstdint>

#include "cute/tensor.hpp"
#include "cutlass/arch/barrier.h"
#include "cutlass/arch/memory_sm80.h"
#include "cutlass/cutlass.h"

namespace fusedmoe::kernels::sm90 {

template <class Base>
struct BlockScaleMainloop : Base {
  using typename Base::MainloopPipeline;
  using typename Base::PipelineState;
  using typename Base::Params;
  using typename Base::SmemLayoutSFA;
  using typename Base::SmemLayoutSFB;
  using typename Base::TensorStorage;
  using typename Base::TileShape;
  using typename Base::SmemLayoutA;
  using typename Base::SmemLayoutB;
  static constexpr int kScalesA = Base::ScaleMsPerTile;  // distinct scales per tile and k-block
  static constexpr int kScalesB = Base::ScaleNsPerTile;
  static constexpr int kGranularityA = Base::ScaleGranularityM;  // rows (columns) per scale
  static constexpr int kGranularityB = Base::ScaleGranularityN;
  static_assert(Base::NumProducerThreadEvents == 33, "the TMA leader and the auxiliary warp's 32 lanes");
  static_assert(kScalesA * kGranularityA == cute::size<0>(TileShape{}) &&
                    kScalesB * kGranularityB == cute::size<1>(TileShape{}),
                "whole scale blocks per tile");

  // The consumers' own mainloop where both operands have several scales per tile (per-row
  // activation scales and more than one weight scale across the tile's columns): mma() below.
  static constexpr bool kOwnPromotion = kScalesA > 1 && kScalesB > 1;

  // Lane `lane`'s share of one operand's kScales scales of a k-tile: scales lane, lane + 32, ...,
  // each from the first of its kGranularity rows (columns) at k offset 0 (a scale block spans
  // the whole k-tile: the granularity in k is the tile's k), skipped outside the problem.
  template <int kScales, int kGranularity, class SmemScales, class GmemScales, class Coords, class Shape, class KTile>
  CUTLASS_DEVICE static void copy_scales(SmemScales s_scales, GmemScales g_scales, Coords coords, Shape const& shape,
                                         int stage, KTile k_tile, int lane) {
    CUTLASS_PRAGMA_UNROLL
    for (int i = lane; i < kScales; i += 32) {
      const int first = i * kGranularity;
      cutlass::arch::cp_async<4, cutlass::arch::CacheOperation::Always>(
          cute::raw_pointer_cast(&s_scales(first, 0, stage)), cute::raw_pointer_cast(&g_scales(first, 0, k_tile)),
          cute::elem_less(coords(first, 0, k_tile), shape));
    }
  }

  template <class TensorA, class TensorB, class TensorSFA, class TensorSFB, class KTileIterator, class BlockCoord>
  CUTLASS_DEVICE void load_auxiliary(Params const& /*mainloop_params*/, MainloopPipeline pipeline,
                                     PipelineState smem_pipe_write,
                                     cute::tuple<TensorA, TensorB, TensorSFA, TensorSFB> const& load_inputs,
                                     BlockCoord const& blk_coord, KTileIterator k_tile_iter, int k_tile_count,
                                     int thread_idx, uint32_t /*block_rank_in_cluster*/,
                                     TensorStorage& shared_tensors) {
    using namespace cute;
    using X = Underscore;
    Tensor sSFA = make_tensor(make_smem_ptr(shared_tensors.smem_SFA.data()), SmemLayoutSFA{});  // (BLK_M,BLK_K,P)
    Tensor sSFB = make_tensor(make_smem_ptr(shared_tensors.smem_SFB.data()), SmemLayoutSFB{});  // (BLK_N,BLK_K,P)
    auto [m_coord, n_coord, k_coord, l_coord] = blk_coord;
    Tensor mSFA_mkl = get<2>(load_inputs);  // the expert's scales, (m,k,l) and (n,k,l)
    Tensor mSFB_nkl = get<3>(load_inputs);
    auto shape_sfa = shape(mSFA_mkl.layout());
    auto shape_sfb = shape(mSFB_nkl.layout());
    Tensor gSFA_k = local_tile(mSFA_mkl, TileShape{}, make_coord(_, _, _), Step<_1, X, _1>{})(_, _, m_coord, _, l_coord);
    Tensor gSFB_k = local_tile(mSFB_nkl, TileShape{}, make_coord(_, _, _), Step<X, _1, _1>{})(_, _, n_coord, _, l_coord);
    Tensor cSFA_k = local_tile(make_identity_tensor(shape_sfa), TileShape{}, make_coord(_, _, _),
                               Step<_1, X, _1>{})(_, _, m_coord, _, l_coord);  // (BLK_M,BLK_K,k) coordinates
    Tensor cSFB_k = local_tile(make_identity_tensor(shape_sfb), TileShape{}, make_coord(_, _, _),
                               Step<X, _1, _1>{})(_, _, n_coord, _, l_coord);

    CUTLASS_PRAGMA_NO_UNROLL
    for (; k_tile_count > 0; --k_tile_count) {
      pipeline.producer_acquire(smem_pipe_write);
      const int stage = smem_pipe_write.index();
      const auto k_tile = *k_tile_iter;
      copy_scales<kScalesA, kGranularityA>(sSFA, gSFA_k, cSFA_k, shape_sfa, stage, k_tile, thread_idx);
      copy_scales<kScalesB, kGranularityB>(sSFB, gSFB_k, cSFB_k, shape_sfb, stage, k_tile, thread_idx);
      pipeline.producer_commit(smem_pipe_write, cutlass::arch::cpasync_barrier_arrive_noinc);
      ++k_tile_iter;
      ++smem_pipe_write;
    }
  }

  // Consumer: CUTLASS's where a tile has one scale per operand or one on either side; where both
  // have several (kOwnPromotion, part 2 above), each k-tile's wgmma batch goes to a temporary
  // (zeroed by the first wgmma) and is added as temp * (sa * sb). The products repeat for every
  // accumulator of one (row, scale block), so after unrolling each is computed once (a thread's
  // 2 rows x 3 column blocks: 5 shared loads and 6 multiplies beside the wgmma batch in the
  // SASS, then 96 FFMA). The stage is released as soon as its batch has completed (its scales
  // are in registers by then), so mma_tail has nothing left to release.
  template <class FrgTensorC>
  CUTLASS_DEVICE void mma(MainloopPipeline pipeline, PipelineState smem_pipe_read, FrgTensorC& accum, int k_tile_count,
                          int thread_idx, TensorStorage& shared_tensors, Params const& mainloop_params) {
    if constexpr (!kOwnPromotion) {
      Base::mma(pipeline, smem_pipe_read, accum, k_tile_count, thread_idx, shared_tensors, mainloop_params);
    } else {
      using namespace cute;
      using TiledMma = typename Base::TiledMma;
      using ElementScale = typename Base::ElementBlockScale;
      Tensor sA = make_tensor(make_smem_ptr(shared_tensors.smem_A.data()), SmemLayoutA{});  // (BLK_M,BLK_K,P)
      Tensor sB = make_tensor(make_smem_ptr(shared_tensors.smem_B.data()), SmemLayoutB{});  // (BLK_N,BLK_K,P)
      // The scales as (BLK_M,BLK_N,(BLK_K,P)) tensors, each broadcast along the other operand.
      Tensor sSFA = make_tensor(
          make_smem_ptr(shared_tensors.smem_SFA.data()),
          make_layout(make_shape(shape<0>(SmemLayoutSFA{}), get<1>(TileShape{}),
                                 make_shape(shape<1>(SmemLayoutSFA{}), shape<2>(SmemLayoutSFA{}))),
                      make_stride(stride<0>(SmemLayoutSFA{}), _0{},
                                  make_stride(stride<1>(SmemLayoutSFA{}), stride<2>(SmemLayoutSFA{})))));
      Tensor sSFB = make_tensor(
          make_smem_ptr(shared_tensors.smem_SFB.data()),
          make_layout(make_shape(get<0>(TileShape{}), shape<0>(SmemLayoutSFB{}),
                                 make_shape(shape<1>(SmemLayoutSFB{}), shape<2>(SmemLayoutSFB{}))),
                      make_stride(_0{}, stride<0>(SmemLayoutSFB{}),
                                  make_stride(stride<1>(SmemLayoutSFB{}), stride<2>(SmemLayoutSFB{})))));

      TiledMma tiled_mma;
      constexpr int kThreadsPerWarpGroup = cutlass::NumThreadsPerWarpGroup;
      const int warp_group = __shfl_sync(0xffffffff, thread_idx / kThreadsPerWarpGroup, 0);
      auto wg_mma = tiled_mma.get_slice(warp_group * kThreadsPerWarpGroup);  // the warp group's share of A and B
      Tensor tCrA = wg_mma.make_fragment_A(wg_mma.partition_A(sA));           // (MMA,MMA_M,MMA_K,P) descriptors
      Tensor tCrB = wg_mma.make_fragment_B(wg_mma.partition_B(sB));           // (MMA,MMA_N,MMA_K,P)
      auto thr_mma = tiled_mma.get_slice(thread_idx);
      Tensor tCsSFA = thr_mma.partition_C(sSFA);  // (MMA,MMA_M,MMA_N,(BLK_K,P)), the accumulators' scales
      Tensor tCsSFB = thr_mma.partition_C(sSFB);
      // Registers only for the distinct scales (the broadcast modes keep stride 0).
      Tensor tCrSFA = make_tensor_like<ElementScale>(tCsSFA(_, _, _, _0{}));
      Tensor tCrSFB = make_tensor_like<ElementScale>(tCsSFB(_, _, _, _0{}));
      Tensor temp = make_fragment_like(accum);
      CUTE_STATIC_ASSERT_V(size(temp) == size(tCrSFA) && size(temp) == size(tCrSFB));  // a scale per accumulator
      clear(accum);

      CUTLASS_PRAGMA_NO_UNROLL
      for (; k_tile_count > 0; --k_tile_count) {
        pipeline.consumer_wait(smem_pipe_read);
        const int stage = smem_pipe_read.index();
        copy(tCsSFA(_, _, _, make_coord(_0{}, stage)), tCrSFA);
        copy(tCsSFB(_, _, _, make_coord(_0{}, stage)), tCrSFB);
        warpgroup_fence_operand(temp);
        warpgroup_arrive();
        tiled_mma.accumulate_ = GMMA::ScaleOut::Zero;
        CUTLASS_PRAGMA_UNROLL
        for (int k_block = 0; k_block < size<2>(tCrA); ++k_block) {
          cute::gemm(tiled_mma, tCrA(_, _, k_block, stage), tCrB(_, _, k_block, stage), temp);
          tiled_mma.accumulate_ = GMMA::ScaleOut::One;
        }
        warpgroup_commit_batch();
        warpgroup_wait<0>();
        warpgroup_fence_operand(temp);
        pipeline.consumer_release(smem_pipe_read);
        ++smem_pipe_read;
        CUTLASS_PRAGMA_UNROLL
        for (int i = 0; i < size(accum); ++i) {
          accum(i) += temp(i) * (tCrSFA(i) * tCrSFB(i));
        }
      }
    }
  }

  CUTLASS_DEVICE void mma_tail(MainloopPipeline pipeline, PipelineState smem_pipe_release, int k_tile_count) {
    if constexpr (!kOwnPromotion) Base::mma_tail(pipeline, smem_pipe_release, k_tile_count);
  }
};

}  // namespace fusedmoe::kernels::sm90
