// sm90_grouped_gemm: D_e = A_e . B_e^T for every local expert e in one persistent launch.
//
// CUTLASS 3.x pieces on sm_90a: a warp-specialized cooperative kernel (one producer warp
// issuing TMA loads into a multi-stage shared-memory ring, two consumer warpgroups issuing
// wgmma on a 128 x 256 tile), a persistent grouped tile scheduler that walks the experts'
// tiles in order, and a TMA-store epilogue. Expert e's problem is (rows_e, n, k); rows_e lives
// on the device only (expert_offsets from the align kernel), so the host never synchronizes:
// a small setup kernel writes the per-expert problem shapes, pointers and strides, and the
// scheduler skips experts without rows. The TMA descriptors are patched on the device per
// expert; the host builds parameters from the addresses of those arrays alone, so a captured
// CUDA graph stays valid for any routing.
//
// Included by one translation unit per element type (sm90_grouped_gemm_{bf16,fp16}.cu).
#pragma once

#include <cuda_runtime.h>

#include "cute/tensor.hpp"
#include "cutlass/cutlass.h"
#include "cutlass/epilogue/collective/collective_builder.hpp"
#include "cutlass/gemm/collective/collective_builder.hpp"
#include "cutlass/gemm/device/gemm_universal_adapter.h"
#include "cutlass/gemm/group_array_problem_shape.hpp"
#include "cutlass/gemm/kernel/gemm_universal.hpp"
#include "launch.h"

namespace fusedmoe::kernels::sm90 {

template <typename Element>
struct GroupedGemm {
  using Elem = Element;
  using ProblemShape = cutlass::gemm::GroupProblemShape<cute::Shape<int, int, int>>;
  using Accum = float;
  static constexpr int kAlignment = 16 / sizeof(Element);  // 16-byte TMA rows
  using TileShape = cute::Shape<cute::_128, cute::_256, cute::_64>;
  using ClusterShape = cute::Shape<cute::_1, cute::_1, cute::_1>;

  // A: sorted activations, row-major [rows, k]; B: weights [n, k] (k contiguous, CUTLASS's
  // column-major B); D: row-major [rows, n]. No C operand.
  using LayoutA = cutlass::layout::RowMajor;
  using LayoutB = cutlass::layout::ColumnMajor;
  using LayoutD = cutlass::layout::RowMajor;

  using Epilogue = typename cutlass::epilogue::collective::CollectiveBuilder<
      cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, TileShape, ClusterShape,
      cutlass::epilogue::collective::EpilogueTileAuto, Accum, Accum, void, LayoutD*, kAlignment, Element,
      LayoutD*, kAlignment, cutlass::epilogue::PtrArrayTmaWarpSpecializedCooperative>::CollectiveOp;

  using Mainloop = typename cutlass::gemm::collective::CollectiveBuilder<
      cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, Element, LayoutA*, kAlignment, Element, LayoutB*,
      kAlignment, Accum, TileShape, ClusterShape,
      cutlass::gemm::collective::StageCountAutoCarveout<static_cast<int>(
          sizeof(typename Epilogue::SharedStorage))>,
      cutlass::gemm::KernelPtrArrayTmaWarpSpecializedCooperative>::CollectiveOp;

  using Kernel = cutlass::gemm::kernel::GemmUniversal<ProblemShape, Mainloop, Epilogue>;
  using Gemm = cutlass::gemm::device::GemmUniversalAdapter<Kernel>;

  using StrideA = typename Kernel::InternalStrideA;
  using StrideB = typename Kernel::InternalStrideB;
  using StrideD = typename Kernel::InternalStrideD;
  using Shape = typename ProblemShape::UnderlyingProblemShape;

  // Per-expert argument arrays, carved from GroupedGemmParams::args in this order.
  struct Arrays {
    Shape* shapes;
    const Element** a;
    const Element** b;
    Element** d;
    StrideA* stride_a;
    StrideB* stride_b;
    StrideD* stride_d;
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
    return off;
  }

  static typename Gemm::Arguments arguments(const GroupedGemmParams& p, const Arrays& arr) {
    cutlass::KernelHardwareInfo hw;
    hw.device_id = 0;
    hw.sm_count = p.sm_count;
    typename Gemm::Arguments args{
        cutlass::gemm::GemmUniversalMode::kGrouped,
        {p.num_groups, arr.shapes, nullptr},
        {arr.a, arr.stride_a, arr.b, arr.stride_b},
        {{}, nullptr, nullptr, arr.d, arr.stride_d},
        hw};
    args.epilogue.thread.alpha = 1.0f;
    args.epilogue.thread.beta = 0.0f;
    return args;
  }
};

// One thread per expert: its rows, pointers and strides (rows_e = 0 leaves no tiles).
template <typename G>
__global__ void setup_groups_kernel(GroupedGemmParams p, typename G::Arrays arr) {
  using Element = typename G::Elem;
  const int e = blockIdx.x * blockDim.x + threadIdx.x;
  if (e >= p.num_groups) return;
  const int64_t row0 = p.expert_offsets[e];
  const int64_t rows = p.expert_offsets[e + 1] - row0;
  arr.shapes[e] = typename G::Shape(static_cast<int>(rows), static_cast<int>(p.n), static_cast<int>(p.k));
  arr.a[e] = static_cast<const Element*>(p.a) + row0 * p.k;
  arr.b[e] = static_cast<const Element*>(p.b) + static_cast<int64_t>(e) * p.n * p.k;
  arr.d[e] = static_cast<Element*>(p.d) + row0 * p.n;
  arr.stride_a[e] = cute::make_stride(p.k, cute::Int<1>{}, cute::Int<0>{});
  arr.stride_b[e] = cute::make_stride(p.k, cute::Int<1>{}, cute::Int<0>{});
  arr.stride_d[e] = cute::make_stride(p.n, cute::Int<1>{}, cute::Int<0>{});
}

template <typename Element>
size_t workspace_bytes(int32_t num_groups, int32_t sm_count) {
  using G = GroupedGemm<Element>;
  typename G::Arrays arr{};
  GroupedGemmParams p;
  p.num_groups = num_groups;
  p.sm_count = sm_count;
  const size_t arrays = G::arrays_bytes(num_groups);
  return arrays + G::align_up(G::Gemm::get_workspace_size(G::arguments(p, arr)));
}

template <typename Element>
cudaError_t run(const GroupedGemmParams& p, cudaStream_t stream) {
  using G = GroupedGemm<Element>;
  if (p.workspace_bytes < workspace_bytes<Element>(p.num_groups, p.sm_count)) return cudaErrorInvalidValue;
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
