// Device helpers shared by the kernels of src/kernels/ (not CUTLASS): element conversions,
// gated activations, cache-hinted loads and programmatic dependent launch.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstring>

#include "launch.h"

namespace fusedmoe::kernels {

constexpr int kVec = 8;  // 16-bit elements per 16-byte load

template <typename T>
struct Elem;
template <>
struct Elem<__nv_bfloat16> {
  __device__ static float to_float(__nv_bfloat16 v) { return __bfloat162float(v); }
  __device__ static __nv_bfloat16 from_float(float v) { return __float2bfloat16_rn(v); }
  __device__ static void unpack(const uint4& raw, float (&f)[kVec]) {
    const uint32_t w[4] = {raw.x, raw.y, raw.z, raw.w};
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      f[2 * i] = __uint_as_float(w[i] << 16);
      f[2 * i + 1] = __uint_as_float(w[i] & 0xffff0000u);
    }
  }
};
template <>
struct Elem<__half> {
  __device__ static float to_float(__half v) { return __half2float(v); }
  __device__ static __half from_float(float v) { return __float2half_rn(v); }
  __device__ static void unpack(const uint4& raw, float (&f)[kVec]) {
    const uint32_t w[4] = {raw.x, raw.y, raw.z, raw.w};
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      __half2 h;
      memcpy(&h, &w[i], sizeof h);
      const float2 v = __half22float2(h);
      f[2 * i] = v.x;
      f[2 * i + 1] = v.y;
    }
  }
};

// act(g) * u. SiLU divides with __fdividef (an approximate reciprocal and a multiply, within
// 2 ulp; g / inf = -0 for g below -88): the exact division cost GEMM1's activation epilogue
// tens of instructions per value.
template <GatedAct kAct>
__device__ __forceinline__ float act_of(float g, float u) {
  if constexpr (kAct == GatedAct::kSilu) {
    return __fdividef(g, 1.0f + __expf(-g)) * u;
  } else if constexpr (kAct == GatedAct::kGelu) {
    return 0.5f * g * (1.0f + erff(g * 0.70710678118654752f)) * u;
  } else {
    const float c = 0.7978845608028654f;  // sqrt(2 / pi)
    return 0.5f * g * (1.0f + tanhf(c * (g + 0.044715f * g * g * g))) * u;
  }
}

__device__ __forceinline__ float apply_act(GatedAct act, float g, float u) {
  return dispatch_act(act, [&](auto a) { return act_of<decltype(a)::value>(g, u); });
}

// Streamed once: keep weights out of L1 and low in L2's priority.
__device__ __forceinline__ uint4 load_weight(const uint4* p) { return __ldcs(p); }
// Data an earlier kernel of the layer wrote (activations, their scales, the intermediate, the
// down GEMM's rows): cached in L1, never through the non-coherent path (`ld.global.nc`,
// `__ldg`). Under PDL a kernel starts while its predecessor still writes, and ptxas may move a
// `.nc` load above `griddepcontrol.wait` (a read-only load, it assumes, cannot see a write):
// down's ring GEMV at one n-tile loaded its first activations before the wait and read the
// intermediate the gate-up GEMV had not yet written (whole CTAs of NaN at DeepSeek-V3 M = 3,
// PERF.md v40). scripts/sass_pdl_check.py checks the built kernels for such loads.
__device__ __forceinline__ uint4 load_act(const uint4* p) {
  uint4 v;
  asm volatile("ld.global.v4.u32 {%0, %1, %2, %3}, [%4];" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
  return v;
}
__device__ __forceinline__ float load_act(const float* p) {
  float v;
  asm volatile("ld.global.f32 %0, [%1];" : "=f"(v) : "l"(p));
  return v;
}

// The same loads when `ok`, else zeros, as one predicated instruction: a select around the
// load (`ok ? load(p) : 0`) compiled to a branch per load, and under a register bound each
// branch rebuilt its address (fp8_gemv, v18: 150-210 instructions per 64-k step).
#define FUSEDMOE_LOAD16_IF(op, addr_constraint, addr)                                             \
  uint4 v = make_uint4(0, 0, 0, 0);                                                              \
  asm volatile("{\n\t.reg .pred p;\n\tsetp.ne.b32 p, %5, 0;\n\t@p " op                             \
               ".v4.u32 {%0, %1, %2, %3}, [%4];\n\t}"                                             \
               : "+r"(v.x), "+r"(v.y), "+r"(v.z), "+r"(v.w)                                      \
               : addr_constraint(addr), "r"(static_cast<int>(ok)));                              \
  return v
__device__ __forceinline__ uint4 load_weight_if(const uint4* p, bool ok) { FUSEDMOE_LOAD16_IF("ld.global.cs", "l", p); }
__device__ __forceinline__ uint4 load_act_if(const uint4* p, bool ok) { FUSEDMOE_LOAD16_IF("ld.global", "l", p); }
// A shared-memory address (a 32-bit shared-window offset, as cvta.to.shared gives).
__device__ __forceinline__ uint4 load_shared_if(uint32_t smem, bool ok) { FUSEDMOE_LOAD16_IF("ld.shared", "r", smem); }
#undef FUSEDMOE_LOAD16_IF

// The local expert of a routed id: the expert map's entry (the id itself without a map), -1
// where the id or its entry falls outside the ranges (an expert on another GPU, or a malformed
// map entry, device data the host cannot check). Align and the combine both decide with it,
// so the combine reads only rows of pairs that align placed.
__device__ __forceinline__ int local_expert_of(int32_t id, const int32_t* expert_map, int32_t global_experts,
                                               int32_t num_experts) {
  if (id < 0 || id >= global_experts) return -1;
  const int e = expert_map ? expert_map[id] : id;
  return e >= 0 && e < num_experts ? e : -1;
}

// local_expert_of for kN ids at once (loaded by the caller, all in flight together), every
// map entry loaded before any is used. Called on each id in turn in an unrolled loop, the
// range check on an id before its map load put a branch on each id's load in front of the
// next one, a round trip per id (v71: align at 2048 pairs and the combine).
template <int kN>
__device__ __forceinline__ void local_experts_of(const int32_t (&id)[kN], const int32_t* expert_map,
                                                 int32_t global_experts, int32_t num_experts, int (&e)[kN]) {
  int32_t mapped[kN];
#pragma unroll
  for (int j = 0; j < kN; ++j) mapped[j] = id[j];
  if (expert_map != nullptr) {  // uniform
#pragma unroll
    for (int j = 0; j < kN; ++j) {
      if (id[j] >= 0 && id[j] < global_experts) mapped[j] = expert_map[id[j]];
    }
  }
#pragma unroll
  for (int j = 0; j < kN; ++j) {
    e[j] = id[j] >= 0 && id[j] < global_experts && mapped[j] >= 0 && mapped[j] < num_experts ? mapped[j] : -1;
  }
}

// |v| as bits that order like the values (non-negative floats), for atomicMax on a float
// amax; 0 for NaN, which the amax skips as fmaxf (the per-row and per-group quantizers) and
// the reference do.
__device__ __forceinline__ unsigned int abs_bits(float v) {
  const unsigned int u = __float_as_uint(fabsf(v));
  return u > 0x7f800000u ? 0u : u;
}
// The max of m over the warp, in every lane (the whole warp takes part).
__device__ __forceinline__ unsigned int warp_max_bits(unsigned int m) {
#pragma unroll
  for (int off = 16; off > 0; off >>= 1) m = max(m, __shfl_xor_sync(0xffffffffu, m, off));
  return m;
}
// *amax_bits = max(*amax_bits, m over the CTA's threads): every thread of the CTA takes part
// (a barrier; blockDim.x a multiple of 32, at most 1024). One atomic per CTA, and none where
// the amax already holds as much (a plain read first): a same-address atomic per warp
// serializes in L2 (about 100k of them at Qwen3 M = 4096's activation).
__device__ __forceinline__ void cta_atomic_max(unsigned int* amax_bits, unsigned int m) {
  __shared__ unsigned int s_max[32];
  m = warp_max_bits(m);
  if ((threadIdx.x & 31) == 0) s_max[threadIdx.x >> 5] = m;
  __syncthreads();
  if (threadIdx.x == 0) {
    for (unsigned int w = 1; w < blockDim.x / 32; ++w) m = max(m, s_max[w]);
    if (m != 0 && m > *reinterpret_cast<volatile unsigned int*>(amax_bits)) atomicMax(amax_bits, m);
  }
}

// Programmatic dependent launch: a kernel launched with the PDL attribute may start while its
// predecessor drains; it waits here before reading what the predecessor wrote, and lets its
// own successor launch once its main loop is done.
__device__ __forceinline__ void wait_for_predecessor() { asm volatile("griddepcontrol.wait;" ::: "memory"); }
__device__ __forceinline__ void allow_successor() { asm volatile("griddepcontrol.launch_dependents;" :::); }

// A launch with one launch attribute (programmatic serialization, cooperative, ...).
template <typename Kernel, typename... Args>
cudaError_t launch_with_attribute(cudaLaunchAttribute attribute, Kernel kernel, dim3 grid, dim3 block,
                                  size_t dynamic_smem, cudaStream_t stream, Args... args) {
  cudaLaunchConfig_t config = {};
  config.gridDim = grid;
  config.blockDim = block;
  config.dynamicSmemBytes = dynamic_smem;
  config.stream = stream;
  config.attrs = &attribute;
  config.numAttrs = 1;
  return cudaLaunchKernelEx(&config, kernel, args...);
}

template <typename Kernel, typename... Args>
cudaError_t launch_with_pdl_smem(Kernel kernel, dim3 grid, dim3 block, size_t dynamic_smem, cudaStream_t stream,
                                 Args... args) {
  cudaLaunchAttribute attribute = {};
  attribute.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attribute.val.programmaticStreamSerializationAllowed = 1;
  return launch_with_attribute(attribute, kernel, grid, block, dynamic_smem, stream, args...);
}

template <typename Kernel, typename... Args>
cudaError_t launch_with_pdl(Kernel kernel, dim3 grid, dim3 block, cudaStream_t stream, Args... args) {
  return launch_with_pdl_smem(kernel, grid, block, 0, stream, args...);
}

// A programmatic dependent launch (pdl) or one in stream order.
template <typename Kernel, typename... Args>
cudaError_t launch_maybe_pdl_smem(bool pdl, Kernel kernel, dim3 grid, dim3 block, size_t dynamic_smem,
                                  cudaStream_t stream, Args... args) {
  if (pdl) return launch_with_pdl_smem(kernel, grid, block, dynamic_smem, stream, args...);
  kernel<<<grid, block, dynamic_smem, stream>>>(args...);
  return cudaGetLastError();
}

template <typename Kernel, typename... Args>
cudaError_t launch_maybe_pdl(bool pdl, Kernel kernel, dim3 grid, dim3 block, cudaStream_t stream, Args... args) {
  return launch_maybe_pdl_smem(pdl, kernel, grid, block, 0, stream, args...);
}

}  // namespace fusedmoe::kernels
