// A dynamic tile scheduler for the grouped GEMMs with swapped operands (sm90_grouped_gemm.cuh:
// bf16/fp16 tiles 128 x 64 x 64 and 256 x 64 x 64, FP8 128 x 64 x 128).
//
// CUTLASS's grouped scheduler is static: CTA i computes tiles i, i + grid, i + 2 grid, ...
// At the memory-bound middle (PERF.md v31) its GEMMs spend a tenth of their time in a tail
// where SMs that streamed more slowly still hold the same number of tiles. Here each CTA
// computes its first tile from blockIdx as before; every later tile comes from a global
// counter (grid + atomicAdd), so an SM that finishes early takes more (PERF.md v32: layers
// 1-4% faster at the bf16 swapped points, 0.5-5% at the FP8 ones).
//
// The ptr-array kernels (cooperative and pingpong alike) already hand work out through a
// scheduler warp: it writes each next tile into a shared-memory pipeline that the load warp
// and both MMA warp groups read, so the tile is claimed once per CTA and every role sees the
// same one. That pipeline is 8 deep; claiming as fast as it drains would let a CTA hoard 8
// tiles. So the scheduler warp claims a tile only after every role has taken the one
// `lookahead` entries back (the slot kPipelineStages - lookahead ahead is acquired first,
// which waits for that release): at most `lookahead` claimed tiles wait while one runs.
// lookahead_for() sizes it so that the load warp, which runs ahead of the MMAs by the
// shared-memory ring, finds its next tile already claimed.
//
// Claims are in increasing order per CTA, which the base's group walk (forward from the
// current group) needs. The counter lives in the layer's workspace (GroupedGemm::Arrays)
// and is zeroed by the setup kernel before each GEMM, so a captured graph replays. A CTA
// whose first tile is past the last one claims nothing.
#pragma once

#include <cstdint>

#include "cutlass/gemm/kernel/tile_scheduler.hpp"

namespace fusedmoe::kernels::sm90 {

template <class GroupProblemShape, int kPipelineStages>
class DynamicGroupScheduler
    : public cutlass::gemm::kernel::detail::PersistentTileSchedulerSm90Group<GroupProblemShape, kPipelineStages> {
  using Base = cutlass::gemm::kernel::detail::PersistentTileSchedulerSm90Group<GroupProblemShape, kPipelineStages>;

 public:
  using WorkTileInfo = typename Base::WorkTileInfo;
  using SchedulerResponse = typename Base::SchedulerResponse;

  struct Arguments : Base::Arguments {
    unsigned long long* next_tile = nullptr;  // the claim counter, zeroed before the launch
    int lookahead = 1;                        // claimed tiles that may wait behind the running one
  };
  struct Params : Base::Params {
    unsigned long long* next_tile = nullptr;
    int lookahead = 1;
  };

  // The load warp runs up to `mainloop_stages` k-blocks ahead of the MMAs, so with k_blocks
  // per tile it can want the tile floor(mainloop_stages / k_blocks) past the one the MMAs run:
  // one more than that may be claimed ahead. Under pingpong a warp group takes the entry of
  // the other's tile on its way to its own next one, so that entry is released only then:
  // one more again. Measured (v32) against fixed 1, 2 and 3 and the ceiling: DeepSeek-V3's
  // bf16 down GEMM (4 k-blocks) lost 1.5-2.8% with 1 and wins with 3; the long-K GEMMs were
  // best with 1; on FP8 this rule beat a fixed 2 by up to 2.6%.
  static int lookahead_for(int64_t k_blocks, int mainloop_stages, bool pingpong) {
    const int64_t ahead = (pingpong ? 2 : 1) + mainloop_stages / (k_blocks > 0 ? k_blocks : 1);
    return static_cast<int>(ahead < kPipelineStages - 1 ? ahead : kPipelineStages - 1);
  }

  template <class TileShape, class ClusterShape>
  static Params to_underlying_arguments(GroupProblemShape problem_shapes, TileShape tile_shape, ClusterShape cluster_shape,
                                        cutlass::KernelHardwareInfo const& hw_info, Arguments const& arguments,
                                        void* workspace = nullptr, const uint32_t epilogue_subtile = 1,
                                        uint32_t ktile_start_alignment_count = 1u) {
    Params params;
    static_cast<typename Base::Params&>(params) =
        Base::to_underlying_arguments(problem_shapes, tile_shape, cluster_shape, hw_info, arguments, workspace,
                                      epilogue_subtile, ktile_start_alignment_count);
    params.next_tile = arguments.next_tile;
    params.lookahead = arguments.lookahead;
    return params;
  }

  static bool can_implement(Arguments const& arguments) {
    return arguments.next_tile != nullptr && arguments.lookahead >= 1 && arguments.lookahead < kPipelineStages;
  }

  DynamicGroupScheduler() = default;

  CUTLASS_DEVICE DynamicGroupScheduler(Params const& params, SchedulerResponse* response)
      : Base(params, response), next_tile_(params.next_tile), lookahead_(params.lookahead) {
#if defined(__CUDA_ARCH__)
    grid_ = uint64_t(gridDim.x) * uint64_t(gridDim.y) * uint64_t(gridDim.z);
#endif
  }

  template <class ClusterShape>
  CUTLASS_DEVICE auto initial_work_tile_info(ClusterShape cluster_shape) {
    auto work = Base::initial_work_tile_info(cluster_shape);
    done_ = !work.is_valid();
    return work;
  }

  // Called by the scheduler warp (all 32 lanes) for each next tile.
  template <typename TileSchedulerPipeline, typename TileSchedulerPipelineState>
  CUTLASS_DEVICE auto advance_to_next_work(TileSchedulerPipeline& scheduler_pipeline,
                                           TileSchedulerPipelineState scheduler_pipe_producer_state,
                                           uint32_t = 1) {
    WorkTileInfo work = WorkTileInfo::invalid_work_tile();
    if (!done_) {
      // Wait until every role has taken the entry lookahead_ back: the slot that many entries
      // behind is the one kPipelineStages - lookahead_ ahead.
      TileSchedulerPipelineState behind = scheduler_pipe_producer_state;
      for (int i = 0; i < kPipelineStages - lookahead_; ++i) ++behind;
      scheduler_pipeline.producer_acquire(behind);
      unsigned long long claimed = 0;
      if ((threadIdx.x & 31) == 0) claimed = atomicAdd(next_tile_, 1ull);
      claimed = __shfl_sync(0xffffffffu, claimed, 0);
      work = this->get_current_work_for_linear_idx(grid_ + claimed);
      done_ = !work.is_valid();
    }
    scheduler_pipeline.producer_acquire(scheduler_pipe_producer_state);
    if (cute::elect_one_sync()) {
      this->response_ptr_[scheduler_pipe_producer_state.index()] = work;
      cutlass::arch::fence_view_async_shared();
      scheduler_pipeline.producer_commit(scheduler_pipe_producer_state);
    }
    return cute::make_tuple(work, true);
  }

 private:
  unsigned long long* next_tile_ = nullptr;
  int lookahead_ = 1;
  uint64_t grid_ = 0;
  bool done_ = false;
};

}  // namespace fusedmoe::kernels::sm90

// The swapped tiles (bf16/fp16 128 x 64 x 64 and 256 x 64 x 64, FP8 128 x 64 x 128) take the
// dynamic scheduler.
// The unswapped bf16/fp16 128 x 256 x 64 tile keeps CUTLASS's: there the dynamic one lost
// 0.4-4.3% at 6 of 15 bench points (Mixtral M = 1024, and M = 4096 but on Mixtral) and won
// 0.5-2% at the others (v32). The unswapped bf16/fp16 64 x 256 x 64 tile (v34) and FP8 tiles
// (128 x 128 x 128 and 64 x 128 x 128) keep it too: with the dynamic one on every tile shape
// (v36) bf16 was 1.6-10.8% slower at each of 10 unswapped bench points, fp8_channel 0.4-4.1%
// slower at 9 of 10.
// Claims of 2-8 consecutive tiles (fewer expert changes per CTA) were slower still (v36).
namespace cutlass::gemm::kernel::detail {
template <class ClusterShape>
struct TileSchedulerSelector<GroupScheduler, arch::Sm90, cute::Shape<cute::_128, cute::_64, cute::_64>, ClusterShape, 8u,
                             cutlass::gemm::GroupProblemShape<cute::Shape<int, int, int>>> {
  using Scheduler = fusedmoe::kernels::sm90::DynamicGroupScheduler<cutlass::gemm::GroupProblemShape<cute::Shape<int, int, int>>, 8>;
};
template <class ClusterShape>
struct TileSchedulerSelector<GroupScheduler, arch::Sm90, cute::Shape<cute::_128, cute::_64, cute::_128>, ClusterShape, 8u,
                             cutlass::gemm::GroupProblemShape<cute::Shape<int, int, int>>> {
  using Scheduler = fusedmoe::kernels::sm90::DynamicGroupScheduler<cutlass::gemm::GroupProblemShape<cute::Shape<int, int, int>>, 8>;
};
template <class ClusterShape>
struct TileSchedulerSelector<GroupScheduler, arch::Sm90, cute::Shape<cute::_256, cute::_64, cute::_64>, ClusterShape, 8u,
                             cutlass::gemm::GroupProblemShape<cute::Shape<int, int, int>>> {
  using Scheduler = fusedmoe::kernels::sm90::DynamicGroupScheduler<cutlass::gemm::GroupProblemShape<cute::Shape<int, int, int>>, 8>;
};
}  // namespace cutlass::gemm::kernel::detail
