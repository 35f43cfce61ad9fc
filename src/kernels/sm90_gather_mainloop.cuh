// GatherRowsMainloop: CUTLASS's ptr-array TMA warp-specialized mainloop with its token operand
// (the activations: A, or B with swapped operands) read row by row from x in the layer's token
// order instead of from a gathered copy: row r of expert e's rows is token
// sorted_pairs[expert_offsets[e] + r] / topk of x [tokens, k]. The weights still come by TMA,
// and the consumers' wgmma code is CUTLASS's, unchanged; only the producer's load() differs
// (the class derives from CUTLASS's collective and replaces load(), load_init(),
// tensors_perform_update() and its arguments):
//  - at each tile the producer warp writes the tokens of the tile's rows (x's row index, 0
//    past the expert's rows) to a small shared array, in the order its lanes read them;
//  - for each k-tile (a ring stage) every lane waits for the stage, the leader arrives with the
//    weights' TMA bytes and issues their TMA load, and all 32 lanes copy the token tile with
//    16-byte cp.async (8 lanes per 128-byte row segment, coalesced), into the swizzled
//    shared-memory layout the TMA would write (the operand's 128-byte swizzle, two swizzled
//    addresses per lane and tile, the rest immediates), zero-filled past the expert's rows and
//    past k; then each lane's cp.async.mbarrier.arrive.noinc on the stage's full barrier.
//  - The full barrier therefore counts 33 arrivals (NumProducerThreadEvents, which the kernel
//    passes to the pipeline): the leader's arrive-and-expect-tx plus the 32 lanes' cp.async
//    arrivals, in any order; the consumers wait for all of them and the TMA bytes.
// The base is CUTLASS's bf16/fp16 collective or its FP8 one (the same producer interface; a k-tile
// of 128 e4m3 is 128 bytes, as one of 64 bf16). The layer then needs no gather kernel in front
// of GEMM1 and no gathered copy of x (FP8: no copy of x's codes per pair). The cost:
// one producer warp issues 16 (64-row token tiles) or 32 (128-row) cp.async per lane per
// k-step, about 5 instructions each (a 16-byte shared load per four, a wide multiply-add and a
// 64-bit add for the address, the bounds test, the copy), and reloads each token tile for
// every weight tile, where one TMA instruction loaded it; so it pays only where GEMM1 has few
// weight tiles or few token tiles per expert (planner.h, grouped_gemm1_gathers; PERF.md v37,
// v38).
#pragma once

#include <cstdint>
#include <type_traits>

#include "cute/tensor.hpp"
#include "cutlass/arch/barrier.h"
#include "cutlass/cutlass.h"

namespace fusedmoe::kernels::sm90 {

// kTokensAsB: the tokens are operand B (swapped operands: the weights' rows on the tile's M,
// the expert's tokens on its N), else operand A.
template <class Base, bool kTokensAsB = false>
struct GatherRowsMainloop : Base {
  using typename Base::ElementA;
  using typename Base::ElementB;
  using typename Base::MainloopPipeline;
  using typename Base::PipelineState;
  using typename Base::SmemLayoutA;
  using typename Base::SmemLayoutB;
  using typename Base::TileShape;
  using ElementX = std::conditional_t<kTokensAsB, ElementB, ElementA>;  // the tokens'
  using ElementW = std::conditional_t<kTokensAsB, ElementA, ElementB>;  // the weights'
  using SmemLayoutX = std::conditional_t<kTokensAsB, SmemLayoutB, SmemLayoutA>;
  using SmemLayoutW = std::conditional_t<kTokensAsB, SmemLayoutA, SmemLayoutB>;
  static constexpr int kTileRows = cute::size<kTokensAsB ? 1 : 0>(TileShape{});  // token rows per tile
  static constexpr int kTileK = cute::size<2>(TileShape{});
  static constexpr int kVecElems = 16 / sizeof(ElementX);  // one cp.async
  static constexpr int kLanesPerRow = kTileK / kVecElems;   // 8 for 16-bit elements, k = 64
  static constexpr int kRowsPerPass = 32 / kLanesPerRow;
  static_assert(32 % kLanesPerRow == 0 && kTileRows % kRowsPerPass == 0, "a warp copies whole row segments");
  static_assert(cute::size<1>(typename Base::DispatchPolicy::ClusterShape{}) == 1 &&
                    cute::size<0>(typename Base::DispatchPolicy::ClusterShape{}) == 1,
                "no multicast: one CTA per cluster");
  static_assert(std::is_same_v<std::conditional_t<kTokensAsB, typename Base::SmemLayoutAtomB, typename Base::SmemLayoutAtomA>,
                               cute::GMMA::Layout_K_SW128_Atom<ElementX>>,
                "the tokens' tiles K-major with the 128-byte swizzle that load() computes");

  // The weights' bytes per stage: the TMA's share of the full barrier's transaction count.
  static constexpr uint32_t kTmaBytesW = static_cast<uint32_t>(
      cute::size<0>(SmemLayoutW{}) * cute::size<1>(SmemLayoutW{}) * cutlass::sizeof_bits<ElementW>::value / 8);
  static constexpr int NumProducerThreadEvents = 1 + 32;

  // The kernel lays out the mainloop's shared memory from TensorStorage (with
  // TensorMapStorage and PipelineStorage, the base's); kExtraSmemBytes is what this adds to the
  // base's, which its stage count must leave room for (sm90_grouped_gemm.cuh's carveout).
  static constexpr int kPasses = kTileRows / kRowsPerPass;  // cp.async per lane per k-tile
  struct TensorStorage : Base::TensorStorage {
    alignas(16) uint32_t src_token[kTileRows];  // the tile's rows' tokens, in the lanes' order (load())
  };
  static constexpr int kExtraSmemBytes = static_cast<int>(sizeof(TensorStorage) - sizeof(typename Base::TensorStorage));

  struct Gather {
    const ElementX* x = nullptr;             // [tokens, k]
    const int32_t* sorted_pairs = nullptr;   // row -> pair (token * topk + slot)
    const int64_t* expert_offsets = nullptr; // [groups + 1]
    int32_t topk = 1;
    int64_t k = 0;
  };
  struct Arguments : Base::Arguments {
    Gather gather;
  };
  struct Params : Base::Params {
    Gather gather;
  };

  template <class ProblemShape>
  static Params to_underlying_arguments(ProblemShape const& problem_shapes, Arguments const& args, void* workspace) {
    Params p{Base::to_underlying_arguments(problem_shapes, args, workspace), args.gather};
    p.tma_transaction_bytes = kTmaBytesW;
    return p;
  }

  template <class ProblemShape>
  static bool can_implement(ProblemShape const& problem_shapes, Arguments const& args) {
    return Base::can_implement(problem_shapes, args) && args.gather.x != nullptr && args.gather.sorted_pairs != nullptr &&
           args.gather.expert_offsets != nullptr && args.gather.topk > 0 && args.gather.k % kVecElems == 0 &&
           args.gather.k <= static_cast<int64_t>(UINT32_MAX / sizeof(ElementX)) &&
           reinterpret_cast<uintptr_t>(args.gather.x) % 16 == 0;
  }

  // CUTLASS's (gA, gB) and the group whose tiles the producer is loading (the kernel calls
  // tensors_perform_update at each change of group).
  template <class ProblemShape_MNKL>
  CUTLASS_DEVICE auto load_init(ProblemShape_MNKL const& problem_shape_mnkl, Params const& params) const {
    auto ab = Base::load_init(problem_shape_mnkl, params);
    return cute::make_tuple(cute::get<0>(ab), cute::get<1>(ab), int32_t{0});
  }
  template <class InputTensors, class ProblemShape_MNKL>
  CUTLASS_DEVICE auto tensors_perform_update(InputTensors const& inputs, Params const&, ProblemShape_MNKL,
                                             int32_t next_batch) {
    return cute::make_tuple(cute::get<0>(inputs), cute::get<1>(inputs), next_batch);
  }

  template <class TensorA, class TensorB, class TensorMapA, class TensorMapB, class KTileIterator, class BlockCoord>
  CUTLASS_DEVICE void load(Params const& params, MainloopPipeline pipeline, PipelineState smem_pipe_write,
                           cute::tuple<TensorA, TensorB, int32_t> const& load_inputs,
                           cute::tuple<TensorMapA, TensorMapB> const& input_tensormaps, BlockCoord const& blk_coord,
                           KTileIterator k_tile_iter, int k_tile_count, int lane, uint32_t,
                           TensorStorage& shared_tensors) {
    using namespace cute;
    const int leader = cute::elect_one_sync();
    const Gather& g = params.gather;
    const int32_t group = get<2>(load_inputs);
    const auto x_coord = get<kTokensAsB ? 1 : 0>(blk_coord);  // the token tile
    const auto w_coord = get<kTokensAsB ? 0 : 1>(blk_coord);  // the weight tile

    // The tile's rows' tokens, in the order the lanes read them: lane (row_in_pass, chunk)
    // copies chunk `chunk` of rows row_in_pass + kRowsPerPass * pass, pass = 0..kPasses-1,
    // whose tokens sit at src_token[row_in_pass * kPasses + pass] (one 16-byte load per four
    // passes). Rows past the expert's hold token 0, a valid address that the zero-fill skips.
    // The previous tile's passes read the array: every lane is past those reads before any
    // lane rewrites it.
    __syncwarp();
    const int64_t row0 = g.expert_offsets[group];
    const int64_t first = static_cast<int64_t>(x_coord) * kTileRows;
    const int64_t left = g.expert_offsets[group + 1] - row0 - first;
    const int live = static_cast<int>(left < 0 ? 0 : left < kTileRows ? left : kTileRows);  // rows holding pairs
    CUTLASS_PRAGMA_UNROLL
    for (int r = lane; r < kTileRows; r += 32) {
      shared_tensors.src_token[(r % kRowsPerPass) * kPasses + r / kRowsPerPass] =
          r < live ? static_cast<uint32_t>(g.sorted_pairs[row0 + first + r] / g.topk) : 0u;
    }
    __syncwarp();

    // The weights' TMA (operand B, or A with the tokens as B).
    Tensor sW = make_tensor(make_smem_ptr(kTokensAsB ? shared_tensors.smem_A.data() : shared_tensors.smem_B.data()),
                            SmemLayoutW{});                                           // (BLK, BLK_K, PIPE)
    Tensor gW = get<kTokensAsB ? 0 : 1>(load_inputs)(_, _, w_coord, _, 0);            // (BLK, BLK_K, k)
    auto const& tma_w = [&]() -> auto const& {
      if constexpr (kTokensAsB) {
        return params.tma_load_a;
      } else {
        return params.tma_load_b;
      }
    }();
    auto tma_slice = tma_w.get_slice(0);
    Tensor tWgW = tma_slice.partition_S(gW);
    Tensor tWsW = tma_slice.partition_D(sW);

    // Element (m, k) of stage s sits at byte (s * kTileRows + m) * kRowBytes + k *
    // sizeof(ElementX) of the tokens' buffer before the 128-byte swizzle (K-major atoms of 8
    // rows x 128 bytes stacked along the rows, then stages), which XORs address bits [4, 7)
    // (the chunk) with bits [7, 10) (the row mod 8), on the absolute address as CuTe's
    // swizzled pointers do. Adding a multiple of 1024 bytes leaves bits [7, 10) alone, so the
    // swizzled address of pass p in stage s is that of pass p % 2 in stage 0 plus s *
    // kStageBytes + (p / 2) * 1024: two swizzles per tile, and the rest immediates of the
    // unrolled passes.
    static_assert(kTileK * sizeof(ElementX) == 128, "one 128-byte swizzle row per k-tile row");
    static_assert(cute::cosize_v<SmemLayoutX> == kTileRows * kTileK * MainloopPipeline::Stages,
                  "stages of kTileRows x kTileK elements");
    constexpr uint32_t kRowBytes = 128;
    static_assert(kRowsPerPass * kRowBytes * 2 == 1024 && kPasses % 4 == 0, "two passes per swizzle period");
    constexpr uint32_t kStageBytes = kTileRows * kRowBytes;
    const int chunk = lane % kLanesPerRow;
    const int row_in_pass = lane / kLanesPerRow;
    const int lane_live = live - row_in_pass;  // pass p holds a pair iff kRowsPerPass * p < lane_live
    auto swizzle = [](uint32_t at) { return at ^ (((at >> 7) & 7u) << 4); };
    const uint32_t smem_x =
        cute::cast_smem_ptr_to_uint(kTokensAsB ? shared_tensors.smem_B.data() : shared_tensors.smem_A.data()) +
        static_cast<uint32_t>(row_in_pass) * kRowBytes + static_cast<uint32_t>(chunk) * 16;
    const uint32_t dst_even = swizzle(smem_x), dst_odd = swizzle(smem_x + kRowsPerPass * kRowBytes);
    const uint4* tokens = reinterpret_cast<const uint4*>(shared_tensors.src_token + row_in_pass * kPasses);
    const uint32_t row_bytes = static_cast<uint32_t>(g.k * sizeof(ElementX));  // can_implement: fits
    CUTLASS_PRAGMA_NO_UNROLL
    for (; k_tile_count > 0; --k_tile_count) {
      pipeline.producer_acquire(smem_pipe_write);  // every lane waits; the leader arrives with the weights' bytes
      const int stage = smem_pipe_write.index();
      uint64_t* full = pipeline.producer_get_barrier(smem_pipe_write);
      const int k_tile = *k_tile_iter;
      if (leader) {
        copy(tma_w.with(get<kTokensAsB ? 0 : 1>(input_tensormaps), *full, uint16_t{0}), tWgW(_, _, _, k_tile),
             tWsW(_, _, _, stage));
      }
      const int64_t col = static_cast<int64_t>(k_tile) * kTileK + chunk * kVecElems;
      const bool col_ok = col < g.k;
      // Row 0's chunk where this lane's column is past k (every copy then zero-filled).
      const uint64_t base = reinterpret_cast<uint64_t>(g.x) + static_cast<uint64_t>(col_ok ? col : 0) * sizeof(ElementX);
      const uint32_t stage_off = static_cast<uint32_t>(stage) * kStageBytes;
      const uint32_t at_even = dst_even + stage_off, at_odd = dst_odd + stage_off;
      CUTLASS_PRAGMA_UNROLL
      for (int quad = 0; quad < kPasses / 4; ++quad) {
        const uint4 t = tokens[quad];
        const uint32_t token[4] = {t.x, t.y, t.z, t.w};
        CUTLASS_PRAGMA_UNROLL
        for (int j = 0; j < 4; ++j) {
          const int pass = quad * 4 + j;
          const bool ok = col_ok && kRowsPerPass * pass < lane_live;
          const uint64_t src = base + static_cast<uint64_t>(token[j]) * row_bytes;
          const uint32_t dst = (pass % 2 ? at_odd : at_even) + static_cast<uint32_t>(pass / 2) * 1024u;
          asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(ok ? 16 : 0));
        }
      }
      cutlass::arch::cpasync_barrier_arrive_noinc(full);
      ++k_tile_iter;
      ++smem_pipe_write;
    }
  }
};

}  // namespace fusedmoe::kernels::sm90
