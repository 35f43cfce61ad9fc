// ScalePrefetchMainloop: the epilogue-scaled FP8 family's mainloop (CUTLASS's FP8 ptr-array
// collective, or GatherRowsMainloop over it) whose producer warp, where the planner asks
// (GroupedGemmParams::prefetch_w_scales: fp8_prefetches_weight_scales, per-column weight scales
// under a short k), also prefetches at each tile the cache lines of the weights' scales that the
// tile's epilogue will read: the tile's slice of the expert's per-column vector (BLK_N floats
// at w_scales + e * stride + n0, or BLK_M at m0 with swapped operands) into L1 (and so L2) by
// `prefetch.global.L1`, one lane per 128-byte line, bounded by the weights' n; then the base's
// load() unchanged (a base that tracks the tile's group, GatherRowsMainloop, gets its own
// inputs back; CUTLASS's gets (gA, gB), the group kept here).
// Why: the epilogue loads its vectors only when the tile's mainloop is done (the row vector with
// a synchronous load into shared memory and a barrier, the column vector into registers), and
// the weights' per-column scales of an (expert, column block) are read by that block's tiles
// alone, so the first of them waited a DRAM round trip behind its last MMA. The producer runs
// stages ahead of the consumers, so its prefetch lands before they need it. Where the
// consumers bound the tile (DeepSeek-V3 TP8's GEMM2, k = 256: two k-steps per 128 x 192 tile,
// one tile per expert and column block) that wait was on the critical path: its GEMM2 477.0 ->
// 448.5 us at M = 4096 (PERF.md v45). The addresses come from the kernel's parameters and the
// tile's coordinates alone: a first version that also prefetched the activations' row scales
// loaded an expert offset and a per-expert pointer in front of the prefetch, which held the
// producer a round trip per tile before its first TMA and cost 1-5% at memory-bound points.
// The activations' row scales are left alone: the quantizer wrote them just before, in L2.
#pragma once

#include <cstdint>
#include <type_traits>

#include "cute/tensor.hpp"
#include "cutlass/cutlass.h"

namespace fusedmoe::kernels::sm90 {

template <class Base, bool kSwapOperands>
struct ScalePrefetchMainloop : Base {
  using typename Base::MainloopPipeline;
  using typename Base::PipelineState;
  using typename Base::TensorStorage;
  using typename Base::TileShape;
  // The weights' side of the tile, and the lines a slice of it touches at any 4-byte alignment.
  static constexpr int kTileW = cute::size<kSwapOperands ? 0 : 1>(TileShape{});
  static constexpr int kLines = kTileW / (128 / sizeof(float)) + 1;
  static_assert(kLines <= 32, "one prefetch per lane");

  struct Scales {
    const float* w_scales = nullptr;  // [E, n] per column, or [E] one per expert
    int64_t expert_stride = 0;        // n, or 1
    int64_t n = 0;                    // the weights' rows (the layer GEMM's n)
    bool per_column = false;
    bool enabled = false;             // the planner's fp8_prefetches_weight_scales
  };
  struct Arguments : Base::Arguments {
    Scales scales;
  };
  struct Params : Base::Params {
    Scales scales;
  };

  template <class ProblemShape>
  static Params to_underlying_arguments(ProblemShape const& problem_shapes, Arguments const& args, void* workspace) {
    return Params{Base::to_underlying_arguments(problem_shapes, args, workspace), args.scales};
  }
  template <class ProblemShape>
  static bool can_implement(ProblemShape const& problem_shapes, Arguments const& args) {
    return Base::can_implement(problem_shapes, args) && args.scales.w_scales != nullptr && args.scales.n > 0;
  }

  // The base's (gA, gB) and the group whose tiles the producer loads (the kernel calls
  // tensors_perform_update at each change of group); GatherRowsMainloop tracks it already.
  template <class T, class = void>
  struct TracksGroup : std::false_type {};
  template <class T>
  struct TracksGroup<T, std::void_t<typename T::Gather>> : std::true_type {};
  static constexpr bool kBaseTracksGroup = TracksGroup<Base>::value;

  template <class ProblemShape_MNKL>
  CUTLASS_DEVICE auto load_init(ProblemShape_MNKL const& problem_shape_mnkl, Params const& params) const {
    auto inputs = Base::load_init(problem_shape_mnkl, params);
    if constexpr (kBaseTracksGroup) {
      return inputs;
    } else {
      return cute::make_tuple(cute::get<0>(inputs), cute::get<1>(inputs), int32_t{0});
    }
  }
  template <class InputTensors, class ProblemShape_MNKL>
  CUTLASS_DEVICE auto tensors_perform_update(InputTensors const& inputs, Params const& params,
                                             ProblemShape_MNKL problem_shape_mnkl, int32_t next_batch) {
    if constexpr (kBaseTracksGroup) {
      return Base::tensors_perform_update(inputs, params, problem_shape_mnkl, next_batch);
    } else {
      return cute::make_tuple(cute::get<0>(inputs), cute::get<1>(inputs), next_batch);
    }
  }

  template <class TensorA, class TensorB, class TensorMapA, class TensorMapB, class KTileIterator, class BlockCoord>
  CUTLASS_DEVICE void load(Params const& params, MainloopPipeline pipeline, PipelineState smem_pipe_write,
                           cute::tuple<TensorA, TensorB, int32_t> const& load_inputs,
                           cute::tuple<TensorMapA, TensorMapB> const& input_tensormaps, BlockCoord const& blk_coord,
                           KTileIterator k_tile_iter, int k_tile_count, int lane, uint32_t block_rank_in_cluster,
                           TensorStorage& shared_tensors) {
    const Scales& s = params.scales;
    const int64_t group = cute::get<2>(load_inputs);
    const int64_t w0 = static_cast<int64_t>(cute::get<kSwapOperands ? 0 : 1>(blk_coord)) * kTileW;
    // The tile's elements [first, last) of the expert's scales; a scalar: its one line.
    const float* v = s.w_scales + group * s.expert_stride;
    const int64_t first = s.per_column ? w0 : 0;
    const int64_t last = s.per_column ? (w0 + kTileW < s.n ? w0 + kTileW : s.n) : 1;
    const uintptr_t at = (reinterpret_cast<uintptr_t>(v + first) & ~uintptr_t{127}) + static_cast<uintptr_t>(lane) * 128;
    if (s.enabled && lane < kLines && first < last && at < reinterpret_cast<uintptr_t>(v + last)) {
      asm volatile("prefetch.global.L1 [%0];\n" ::"l"(at));
    }
    __syncwarp();  // the base's load elects one lane of the whole warp
    if constexpr (kBaseTracksGroup) {
      Base::load(params, pipeline, smem_pipe_write, load_inputs, input_tensormaps, blk_coord, k_tile_iter,
                 k_tile_count, lane, block_rank_in_cluster, shared_tensors);
    } else {
      Base::load(params, pipeline, smem_pipe_write, cute::make_tuple(cute::get<0>(load_inputs), cute::get<1>(load_inputs)),
                 input_tensormaps, blk_coord, k_tile_iter, k_tile_count, lane, block_rank_in_cluster, shared_tensors);
    }
  }
};

}  // namespace fusedmoe::kernels::sm90
