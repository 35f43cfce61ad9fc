// sm90_grouped_gemm: D_e = A_e . B_e^T for every local expert e in one persistent launch.
//
// CUTLASS 3.x pieces on sm_90a: a warp-specialized cooperative kernel (one producer warp
// issuing TMA loads into a multi-stage shared-memory ring, two consumer warpgroups issuing
// wgmma), a persistent grouped tile scheduler that walks the experts' tiles in order, and a
// TMA-store epilogue. Expert e's problem is (rows_e, n, k); rows_e lives on the device only
// (expert_offsets from the align kernel), so the host never synchronizes: a small setup
// kernel writes the per-expert problem shapes, pointers and strides, and the scheduler skips
// experts without rows. The TMA descriptors are patched on the device per expert; the host
// builds parameters from the addresses of those arrays alone, so a captured CUDA graph stays
// valid for any routing.
//
// Three families share this code:
//  - bf16/fp16 (kScaleN = 0): 128 x 256 x 64 tiles, D = A . B^T.
//  - FP8 e4m3 A and B with scales that do not vary along k (kScaleN = kEpilogueScales: per-row
//    activation scales, weight scales per column or one per expert): CUTLASS's FP8 mainloop
//    (fp32 promotion of the wgmma sums every 128 k, no scales), 128 x 128 x 128 tiles, and
//    D = sa[row] * sb[col] * acc in the epilogue (a column- and a row-vector broadcast with
//    per-expert pointers; the weights' vector may be one scalar per expert): the activation
//    scales are the first 128-k block of SFA below, the weight scales the checkpoint's.
//  - FP8 e4m3 A and B with DeepSeek's scales (kScaleN = 128: 128 x 128 weight blocks, 1 x 128
//    activation groups): 128 x 128 x 128 tiles, CUTLASS's blockwise-scaled mainloop: each
//    128-k block's wgmma sums are promoted into fp32 accumulators times
//    sa[row, kb] * sb[n / kScaleN, kb]. Both scale tensors are MN-major per expert (CUTLASS's
//    layout for sm_90): SFA [kb][rows_e] from sfa + row0 * kbs, SFB [kb][ceil(n / kScaleN)]
//    from sfb + e * sfb_expert_stride; the quantize and fp8_weight_scales kernels (fp8.cu)
//    write them so. D in bf16/fp16.
//
// Swapped operands (kSwap, for experts with few rows): the kernel computes D_e^T = B_e . A_e^T,
// the weights' n rows filling the wgmma's 128-row M side and the expert's rows its N side
// (tile 128 x 64), so a 16-row expert no longer pays for 128 rows of MMA; D^T is stored
// column-major, which is D row-major. The scale roles swap with the operands (weights' SFB
// becomes the kernel's SFA) and keep their memory layouts.
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
#include "cutlass/gemm/kernel/gemm_universal.hpp"
#include "launch.h"

namespace fusedmoe::kernels::sm90 {

// A: sorted activations, row-major [rows, k]; B: weights [n, k] (k contiguous, CUTLASS's
// column-major B); D: row-major [rows, n]. No C operand. Swapped: A the weights [n, k]
// (row-major), B the activations [rows, k] (column-major), D^T [n, rows] column-major.
using LayoutA = cutlass::layout::RowMajor;
using LayoutB = cutlass::layout::ColumnMajor;
using ClusterShape = cute::Shape<cute::_1, cute::_1, cute::_1>;

// The mainloop of each family, and its scale layouts (int where there are none). kScaleM /
// kScaleN: the scale granularity along the kernel's M and N (1 for the activations' rows).
template <typename ElementAB, int kScaleM, int kScaleN, typename TileShape, int kCarveout>
struct Mainloop {  // FP8 with blockwise scales
  static constexpr int kAlignment = 16 / sizeof(ElementAB);
  using ScaleConfig = cutlass::detail::Sm90BlockwiseScaleConfig<kScaleM, kScaleN, 128>;
  using LayoutSFA = decltype(ScaleConfig::deduce_layoutSFA());
  using LayoutSFB = decltype(ScaleConfig::deduce_layoutSFB());
  using Op = typename cutlass::gemm::collective::CollectiveBuilder<
      cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, ElementAB, cute::tuple<LayoutA*, LayoutSFA*>, kAlignment,
      ElementAB, cute::tuple<LayoutB*, LayoutSFB*>, kAlignment, float, TileShape, ClusterShape,
      cutlass::gemm::collective::StageCountAutoCarveout<kCarveout>,
      cutlass::gemm::KernelPtrArrayTmaWarpSpecializedCooperativeFP8BlockScaledAccum>::CollectiveOp;
};
template <typename ElementAB, typename TileShape, int kCarveout>
struct Mainloop<ElementAB, 0, 0, TileShape, kCarveout> {  // bf16/fp16
  static constexpr int kAlignment = 16 / sizeof(ElementAB);
  using ScaleConfig = void;
  using LayoutSFA = int;
  using LayoutSFB = int;
  using Op = typename cutlass::gemm::collective::CollectiveBuilder<
      cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, ElementAB, LayoutA*, kAlignment, ElementAB, LayoutB*,
      kAlignment, float, TileShape, ClusterShape, cutlass::gemm::collective::StageCountAutoCarveout<kCarveout>,
      cutlass::gemm::KernelPtrArrayTmaWarpSpecializedCooperative>::CollectiveOp;
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

template <typename ElementAB, typename ElementD, int kScaleN, bool kSwapOperands = false>
struct GroupedGemm {
  static constexpr bool kScaled = kScaleN > 0;  // blockwise scales in the mainloop
  static constexpr bool kEpilogueScaled = kScaleN == kEpilogueScales;
  static constexpr bool kFp8 = kScaled || kEpilogueScaled;
  static constexpr bool kSwap = kSwapOperands;
  static constexpr int kScaleK = 128;
  using ElemAB = ElementAB;
  using ElemD = ElementD;
  using ProblemShape = cutlass::gemm::GroupProblemShape<cute::Shape<int, int, int>>;
  using Accum = float;
  static constexpr int kAlignmentD = 16 / sizeof(ElementD);  // 16-byte TMA rows
  using LayoutD = std::conditional_t<kSwap, cutlass::layout::ColumnMajor, cutlass::layout::RowMajor>;
  using TileShape = std::conditional_t<
      kSwap, std::conditional_t<kFp8, cute::Shape<cute::_128, cute::_64, cute::_128>,
                                cute::Shape<cute::_128, cute::_64, cute::_64>>,
      std::conditional_t<kFp8, cute::Shape<cute::_128, cute::_128, cute::_128>,
                         cute::Shape<cute::_128, cute::_256, cute::_64>>>;
  using Scales = EpilogueScales<TileShape, ElementD>;
  // The other families: the epilogue builder's default fusion (D = acc, no source).
  using Fusion = std::conditional_t<kEpilogueScaled, typename Scales::Callbacks,
                                    cutlass::epilogue::fusion::LinearCombination<ElementD, Accum, void, Accum>>;

  using Epilogue = typename cutlass::epilogue::collective::CollectiveBuilder<
      cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, TileShape, ClusterShape,
      cutlass::epilogue::collective::EpilogueTileAuto, Accum, Accum, void, LayoutD*, kAlignmentD, ElementD,
      LayoutD*, kAlignmentD, cutlass::epilogue::PtrArrayTmaWarpSpecializedCooperative, Fusion>::CollectiveOp;
  using Main = Mainloop<ElementAB, kScaled ? (kSwap ? kScaleN : 1) : 0, kScaled ? (kSwap ? 1 : kScaleN) : 0, TileShape,
                        static_cast<int>(sizeof(typename Epilogue::SharedStorage))>;

  using Kernel = cutlass::gemm::kernel::GemmUniversal<ProblemShape, typename Main::Op, Epilogue>;
  using Gemm = cutlass::gemm::device::GemmUniversalAdapter<Kernel>;

  using StrideA = typename Kernel::InternalStrideA;
  using StrideB = typename Kernel::InternalStrideB;
  using StrideD = typename Kernel::InternalStrideD;
  using LayoutSFA = typename Main::LayoutSFA;
  using LayoutSFB = typename Main::LayoutSFB;
  using Shape = typename ProblemShape::UnderlyingProblemShape;

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
    } else {
      args = {cutlass::gemm::GemmUniversalMode::kGrouped,
              {p.num_groups, arr.shapes, nullptr},
              {arr.a, arr.stride_a, arr.b, arr.stride_b},
              {{}, nullptr, nullptr, arr.d, arr.stride_d},
              hw};
    }
    if constexpr (kEpilogueScaled) {
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

// One thread per expert: its rows, pointers, strides and scale views (rows_e = 0 leaves no
// tiles).
template <typename G>
__global__ void setup_groups_kernel(GroupedGemmParams p, typename G::Arrays arr) {
  using ElementAB = typename G::ElemAB;
  using ElementD = typename G::ElemD;
  const int e = blockIdx.x * blockDim.x + threadIdx.x;
  if (e >= p.num_groups) return;
  const int64_t row0 = p.expert_offsets[e];
  const int64_t rows = p.expert_offsets[e + 1] - row0;
  const ElementAB* x = static_cast<const ElementAB*>(p.a) + row0 * p.k;
  const ElementAB* w = static_cast<const ElementAB*>(p.b) + static_cast<int64_t>(e) * p.n * p.k;
  const typename G::Shape shape = G::kSwap
      ? typename G::Shape(static_cast<int>(p.n), static_cast<int>(rows), static_cast<int>(p.k))
      : typename G::Shape(static_cast<int>(rows), static_cast<int>(p.n), static_cast<int>(p.k));
  arr.shapes[e] = shape;
  arr.a[e] = G::kSwap ? w : x;
  arr.b[e] = G::kSwap ? x : w;
  arr.d[e] = static_cast<ElementD*>(p.d) + row0 * p.n;
  arr.stride_a[e] = cute::make_stride(p.k, cute::Int<1>{}, cute::Int<0>{});
  arr.stride_b[e] = cute::make_stride(p.k, cute::Int<1>{}, cute::Int<0>{});
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
  const size_t arrays = G::arrays_bytes(num_groups);
  return arrays + G::align_up(G::Gemm::get_workspace_size(G::arguments(p, arr)));
}

template <typename G>
cudaError_t run(const GroupedGemmParams& p, cudaStream_t stream) {
  if (p.workspace_bytes < workspace_bytes<G>(p.num_groups, p.sm_count)) return cudaErrorInvalidValue;
  if (G::kFp8 && (p.sfa == nullptr || p.sfb == nullptr)) return cudaErrorInvalidValue;
  typename G::Arrays arr{};
  const size_t arrays = G::arrays_bytes(p.num_groups, &arr, p.workspace);
  setup_groups_kernel<G><<<(p.num_groups + 127) / 128, 128, 0, stream>>>(p, arr);
  cudaError_t err = cudaGetLastError();
  if (err != cudaSuccess) return err;
  typename G::Gemm gemm;
  const typename G::Gemm::Arguments args = G::arguments(p, arr);
  if (gemm.can_implement(args) != cutlass::Status::kSuccess) return cudaErrorInvalidValue;
  void* cutlass_ws = static_cast<char*>(p.workspace) + arrays;
  if (gemm.initialize(args, cutlass_ws, stream) != cutlass::Status::kSuccess) return cudaErrorLaunchFailure;
  if (gemm.run(stream) != cutlass::Status::kSuccess) {
    err = cudaGetLastError();
    return err != cudaSuccess ? err : cudaErrorLaunchFailure;
  }
  return cudaSuccess;
}

}  // namespace fusedmoe::kernels::sm90

// The two entry points of one instantiation, for its translation unit.
#define FUSEDMOE_GROUPED_GEMM_INSTANCE(name, ElementAB, ElementD, kScaleN, kSwap)                       \
  namespace fusedmoe::kernels {                                                                          \
  size_t name##_workspace_bytes(int32_t num_groups, int32_t sm_count) {                                  \
    return sm90::workspace_bytes<sm90::GroupedGemm<ElementAB, ElementD, kScaleN, kSwap>>(num_groups, sm_count); \
  }                                                                                                      \
  cudaError_t launch_##name(const GroupedGemmParams& p, cudaStream_t stream) {                           \
    return sm90::run<sm90::GroupedGemm<ElementAB, ElementD, kScaleN, kSwap>>(p, stream);                 \
  }                                                                                                      \
  }
