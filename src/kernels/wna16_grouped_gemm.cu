// wna16_grouped_gemm: both expert GEMMs over prepared int4/int8 weights at large batch, one
// launch per GEMM for all experts, the weights dequantized in registers and fed to the tensor
// cores as wgmma's register operand: no dense copy of the weights (the dequant path writes and
// re-reads 2 bytes per weight, the codes here are read once per tile at 0.5 or 1 byte).
//
// Operands (swapped, as the GEMVs and the swapped grouped GEMMs): the weights' rows on the
// MMA's M side, an expert's tokens on its N side. A tile is kTileRows weight rows (gate-up: 64
// gate and the 64 matching up rows, so that each thread holds gate and up of the same output
// column; down: 128 rows) by kTileTokens (128 or 256) rows of one expert, over the whole K, in
// 128-k blocks (one prepared block, docs/FORMATS.md) per pipeline stage. The kernel is
// persistent (one CTA per SM walks the tiles; the pipeline runs on from one tile to the next):
//  - warpgroup 0 (the producer) fills each stage: the token rows' 128 k, either (x by token:
//    GEMM1 on 128-token tiles where gather_topk > 0) copied by every thread with cp.async from
//    the tokens' rows of x (each thread the same chunk of 8 rows, their tokens looked up once
//    per tile, so that the layer needs no gathered copy of x), or (x by sorted position: GEMM2,
//    GEMM1 elsewhere) loaded by one thread by TMA (two 64-k boxes of kTileTokens rows);
//    either way in wgmma's 128-byte swizzle, zero-filled past K; rows past the tile's live ones
//    hold other rows' values, computed and never stored. Every thread also copies with
//    cp.async the block's codes of the tile's rows, its group scales and zero points. The
//    stage's full barrier completes once the TMA's bytes (if any) have landed and every
//    thread's copies have arrived (cp.async.mbarrier.arrive.noinc).
//  - warpgroups 1 and 2 (the consumers, 64 weight rows each) wait for the stage, read their
//    rows' codes from shared memory, dequantize them into wgmma's A fragment (thread (g, q) of
//    warp w: rows 16 w + g and + 8, k 2q, 2q + 1, 2q + 8, 2q + 9 of each 16-k slice), and issue
//    m64nNk16 wgmma (N = kTileTokens) with the tokens from shared memory as B, accumulating in
//    fp32 (N / 2 registers per thread). A slice's A registers are double-buffered: wgmma reads
//    them asynchronously, so the next slice's are written only after the one before the last
//    has completed (warpgroup_wait<1>). A stage is released to the producer once every wgmma
//    reading it has completed.
// The prepared layout was made for the GEMV's lanes (lane q of a quad holds 8 consecutive k);
// wgmma's natural k order wants k 2q and 2q + 1 of each 8-k run from one word, which with the
// nibble order {0,2,4,6,1,3,5,7} is `(w >> 4q) & 0x000F000F` (int4) or bytes 2q, 2q + 1 of
// the run's word q >> 1 (int8): the same words, read by the four lanes of a quad alike (a
// shared-memory broadcast; wna16_fragment.h).
//
// Dequantization (wna16_dequant.cuh): (magic + q) pairs by bit operations, q - zero exactly by
// one packed subtraction, then (q - zero) * scale rounded once to the activation type (the
// scale split into hi + lo parts of the type), as wna16_dequant writes the weights for the
// dense GEMM: one rounding per weight, fp32 accumulation. int8 with bf16 goes through fp32.
//
// Requires: group_size a multiple of 32 dividing 128 or a multiple of 128, or one group per
// row; groups contiguous in k (act-order: K in group order at load time); K and n_out
// multiples of 8; x 16-byte aligned.
#include <cuda.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <utility>

#include "cute/arch/copy_sm90_desc.hpp"
#include "cute/arch/copy_sm90_tma.hpp"
#include "cute/arch/mma_sm90_gmma.hpp"
#include "cutlass/arch/barrier.h"
#include "cutlass/arch/reg_reconfig.h"
#include "device_util.cuh"
#include "gemv_common.cuh"
#include "launch.h"
#include "wna16_dequant.cuh"
#include "wna16_fragment.h"

namespace fusedmoe::kernels {

namespace {

using gemv::cp_async16_zfill;
using gemv::cp_async8_zfill;
using wna16::and_or;
using wna16::IntMagic;
using wna16::mul2_split;
using wna16::pack2_split;
using wna16::sub2;
using wna16::zero_operand;

constexpr int kMaxStages = 4;
constexpr size_t kMaxSmemBytes = 227 * 1024;  // dynamic shared memory of one CTA on sm_90
constexpr int kThreads = 384;        // producer warpgroup + two consumer warpgroups
constexpr int kTileRows = 128;       // weight rows per tile (64 per consumer warpgroup)
// setmaxnreg: the producer gives registers to the consumers. 256-token tiles: consumers use up
// to 183 (208 given), the producer 64. 128-token tiles, where GEMM1 may read x by token: the
// producer holds its rows' tokens (its stack at 64 registers 64-104 bytes, at 104 none for
// int4 and 24 bytes for int8, v56's cuobjdump), the consumers spill nothing at 200. Neither
// split may pass what the CTA holds from its launch: 168 per thread (65536 / 384, in steps of 8).
template <int kTileTokens>
struct RegSplit {
  static constexpr int kProducer = kTileTokens == 128 ? 104 : 64;
  static constexpr int kConsumer = kTileTokens == 128 ? 200 : 208;
  static_assert(128 * kProducer + 256 * kConsumer <= kThreads * 168, "the CTA's registers at launch");
};
constexpr int kMaxGroupsPerBlock = 4;  // groups of 32
// Up to this many experts the CTA keeps the token tiles' prefix sums in shared memory
// (find_tile_shared), else it scans the expert offsets for every tile (find_tile_global).
constexpr int kMaxPrefixExperts = 256;

// The CTA's shared memory (dynamic only, its start aligned to 1024 bytes at run time): the
// stages' token rows first, each stage's two 64-k halves in wgmma's 128-byte swizzle (which
// repeats every 8 rows of 128 bytes, on absolute addresses, so each stage starts at a 1024-byte
// boundary); then per stage the codes [row][block] (each row's 16-byte chunks XOR-swizzled so
// that the 8 rows a warp reads at once fall in different banks), the scales [group][row] in
// the checkpoint's type and the zero points [group][row]; then the stages' full and empty
// barriers and the tile.
template <int kBits, int kTileTokens>
struct SmemLayout {
  static constexpr int kXHalfBytes = kTileTokens * 128;  // 64 k of the token rows
  static constexpr int kXStageBytes = 2 * kXHalfBytes;
  static constexpr int kCodeRowBytes = 128 * kBits / 8;   // one row's block: 64 or 128
  static constexpr int kCodeChunks = kCodeRowBytes / 16;  // per row: 4 or 8
  static constexpr int kZeroBytes = kBits == 8 ? 2 : 1;  // per zero point: int8 uint16, int4 uint8
  static constexpr int kScaleRegion = kMaxGroupsPerBlock * kTileRows * 4;  // fp32 at most (row_group reads it so)
  // Per stage beside its token rows: codes, scales, zeros.
  static constexpr int kCodeOffset = 0;
  static constexpr int kScaleOffset = kTileRows * kCodeRowBytes;
  static constexpr int kZeroOffset = kScaleOffset + kScaleRegion;
  static constexpr int kSideBytes = kZeroOffset + kMaxGroupsPerBlock * kTileRows * kZeroBytes;
  static constexpr int kTailBytes = 2 * kMaxStages * 8 + 16 + (kMaxPrefixExperts + 1) * 4;
  static constexpr int kStages = (static_cast<int>(kMaxSmemBytes) - 1024 - kTailBytes) / (kXStageBytes + kSideBytes) < kMaxStages
                                     ? (static_cast<int>(kMaxSmemBytes) - 1024 - kTailBytes) / (kXStageBytes + kSideBytes)
                                     : kMaxStages;
  static_assert(kStages >= 2, "a double-buffered pipeline");
  static constexpr int kSideBase = kStages * kXStageBytes;
  static constexpr int kBarrierOffset = kSideBase + kStages * kSideBytes;  // full[kStages], empty[kStages]
  static constexpr int kTileOffset = kBarrierOffset + 2 * kMaxStages * 8;  // the live token tiles (int64)
  static constexpr int kPrefixOffset = kTileOffset + 16;                     // the tiles' prefix sums
  static constexpr size_t kSmemBytes = size_t{1} * kPrefixOffset + (kMaxPrefixExperts + 1) * 4 + 1024;  // + the alignment
  static_assert(kSideBytes % 16 == 0 && kBarrierOffset % 8 == 0 && kSmemBytes <= kMaxSmemBytes, "layout");
};
// As many stages as fit: 4 at 128 tokens; 256 tokens: int4 3, int8 2.
static_assert(SmemLayout<4, 128>::kStages == 4 && SmemLayout<8, 128>::kStages == 4 && SmemLayout<4, 256>::kStages == 3 &&
                  SmemLayout<8, 256>::kStages == 2,
              "the pipelines' depths");

// 16-byte chunk c of code row r within the row's block: c ^ swizzle (int4: rows r and r + 2
// are 128 bytes apart, so the XOR takes r / 2; int8: every row starts a 128-byte line).
template <int kBits>
__device__ __forceinline__ int code_swizzle(int r) {
  return kBits == 4 ? (r >> 1) & 3 : r & 7;
}

using gemv::smem_u32;


// wgmma's shared-memory descriptor of a K-major operand in the 128-byte swizzle: start address,
// leading offset 1 (unused by the swizzled layouts), 1024 bytes between 8-row groups.
__device__ __forceinline__ uint64_t smem_desc(uint32_t addr) {
  return static_cast<uint64_t>((addr & 0x3FFFF) >> 4) | (uint64_t{1} << 16) | (uint64_t{1024 >> 4} << 32) |
         (uint64_t{1} << 62);
}

// One m64nNk16 wgmma (N = 128 or 256 tokens), A from registers, B from shared memory, fp32
// accumulators (N / 2 per thread).
template <typename T, int N>
struct Wgmma;
using cute::SM90::GMMA::Major;
template <>
struct Wgmma<__nv_bfloat16, 128> {
  using Op = cute::SM90::GMMA::MMA_64x128x16_F32BF16BF16_RS<Major::K, Major::K>;
};
template <>
struct Wgmma<__half, 128> {
  using Op = cute::SM90::GMMA::MMA_64x128x16_F32F16F16_RS<Major::K, Major::K>;
};
template <>
struct Wgmma<__nv_bfloat16, 256> {
  using Op = cute::SM90::GMMA::MMA_64x256x16_F32BF16BF16_RS<Major::K, Major::K>;
};
template <>
struct Wgmma<__half, 256> {
  using Op = cute::SM90::GMMA::MMA_64x256x16_F32F16F16_RS<Major::K, Major::K>;
};
template <typename T, int N, size_t... I>
__device__ __forceinline__ void wgmma_call(const uint32_t (&a)[4], uint64_t desc, float (&d)[N / 2],
                                           std::index_sequence<I...>) {
  Wgmma<T, N>::Op::fma(a[0], a[1], a[2], a[3], desc, d[I]...);
}
template <typename T, int N>
__device__ __forceinline__ void wgmma(const uint32_t (&a)[4], uint64_t desc, float (&d)[N / 2]) {
  wgmma_call<T, N>(a, desc, d, std::make_index_sequence<N / 2>{});
}

// A scale of the checkpoint's type at p, as fp32.
__device__ __forceinline__ float load_scale(const unsigned char* p, ScaleType type) {
  if (type == ScaleType::kFP32) return *reinterpret_cast<const float*>(p);
  const uint16_t bits = *reinterpret_cast<const uint16_t*>(p);
  return type == ScaleType::kBF16 ? __uint_as_float(static_cast<uint32_t>(bits) << 16)
                                  : __half2float(__ushort_as_half(bits));
}

// The scale and zero operands of one row and group, as the dequantization takes them.
template <typename T, int kBits>
struct RowGroup {
  uint32_t zop;          // (magic + zero) pairs, or (int8, bf16) 2^23 + zero as fp32 bits
  uint32_t s_hi, s_lo;   // the scale as hi + lo packed pairs of T; (int8, bf16) s_hi: fp32 bits
};
// `params`: the stage's scales [group][row], the zero points [group][row] kScaleRegion bytes on.
template <typename T, int kBits>
__device__ __forceinline__ RowGroup<T, kBits> row_group(const unsigned char* params, int group, int row,
                                                        ScaleType type, bool has_zeros) {
  constexpr int kScaleRegion = kMaxGroupsPerBlock * kTileRows * 4;  // SmemLayout's
  RowGroup<T, kBits> r;
  const int slot = group * kTileRows + row;
  const int sb = type == ScaleType::kFP32 ? 4 : 2;
  const float s = load_scale(params + slot * sb, type);
  int zero = 1 << (kBits - 1);
  if (has_zeros) {
    zero = kBits == 4 ? params[kScaleRegion + slot] : reinterpret_cast<const uint16_t*>(params + kScaleRegion)[slot];
  }
  r.zop = zero_operand<T, kBits>(zero);
  if constexpr (kBits == 8 && std::is_same<T, __nv_bfloat16>::value) {
    r.s_hi = __float_as_uint(s);
    r.s_lo = 0;
  } else {
    pack2_split<T>(s, &r.s_hi, &r.s_lo);
  }
  return r;
}

// One register of the A fragment: the weights of k 2q, 2q + 1 of an 8-k run of one row,
// (q - zero) * scale. int4: `word` is the run's word shifted right by 4q; int8: the run's word
// holding codes 2q and 2q + 1, at bytes `byte` and `byte` + 1 (wgmma_fragment_word).
template <typename T, int kBits>
__device__ __forceinline__ uint32_t dequant_pair(uint32_t word, int byte, const RowGroup<T, kBits>& rg) {
  if constexpr (kBits == 4) {
    const uint32_t magic = IntMagic<T>::kHalf | (IntMagic<T>::kHalf << 16);
    const uint32_t v = and_or(word, 0x000F000Fu, magic);
    return mul2_split<T>(sub2<T>(v, rg.zop), rg.s_hi, rg.s_lo);
  } else if constexpr (std::is_same<T, __half>::value) {
    // result bytes: code 2q, 0x64, code 2q + 1, 0x64 (1024 + q in both halves)
    const uint32_t sel = static_cast<uint32_t>(byte) | 0x40u | (static_cast<uint32_t>(byte + 1) << 8) | 0x4000u;
    const uint32_t v = __byte_perm(word, 0x64646464u, sel);
    return mul2_split<T>(sub2<T>(v, rg.zop), rg.s_hi, rg.s_lo);
  } else {
    const float z = __uint_as_float(rg.zop), s = __uint_as_float(rg.s_hi);
    const float lo = (__uint_as_float(__byte_perm(word, 0x4B000000u, 0x7540u | byte)) - z) * s;
    const float hi = (__uint_as_float(__byte_perm(word, 0x4B000000u, 0x7540u | (byte + 1))) - z) * s;
    const __nv_bfloat162 b = __floats2bfloat162_rn(lo, hi);
    uint32_t out;
    memcpy(&out, &b, 4);
    return out;
  }
}

struct TileInfo {
  int expert;    // -1: past the live tiles
  int live;      // token rows of the expert in this tile
  int64_t row0;  // the tile's first row (absolute sorted position)
};

// Token tiles are numbered expert by expert, ceil(count / kTileTokens) per expert with rows.
// Up to kMaxPrefixExperts experts the CTA keeps the tiles' prefix sums in shared memory
// (prefix[e] = the first tile of expert e, prefix[E] = all of them), computed once; past that
// a warp scans the offsets, 32 experts at a time, for every tile.

template <int kTileTokens>
__device__ __forceinline__ int64_t tiles_of(const Wna16GemmParams& p, int e) {
  const int64_t count = p.expert_offsets[e + 1] - p.expert_offsets[e];
  return (count + kTileTokens - 1) / kTileTokens;
}

template <int kTileTokens>
__device__ TileInfo tile_info(const Wna16GemmParams& p, int e, int64_t first_tile, int64_t t) {
  TileInfo info;
  info.expert = e;
  const int64_t in_expert = t - first_tile;
  info.row0 = p.expert_offsets[e] + in_expert * kTileTokens;
  const int64_t left = p.expert_offsets[e + 1] - info.row0;
  info.live = static_cast<int>(left < kTileTokens ? left : kTileTokens);
  return info;
}

// Token tile t from the shared prefix sums (any thread): the last expert whose first tile is
// at most t (empty experts share their successor's first tile, so the last one is the one with
// rows).
template <int kTileTokens>
__device__ TileInfo find_tile_shared(const Wna16GemmParams& p, const int32_t* prefix, int64_t t) {
  int lo = 0, hi = p.num_experts - 1;  // prefix[lo] <= t < prefix[E]
  while (lo < hi) {
    const int mid = (lo + hi + 1) >> 1;
    if (prefix[mid] <= t) lo = mid; else hi = mid - 1;
  }
  return tile_info<kTileTokens>(p, lo, prefix[lo], t);
}

// The same by a whole warp from global memory; with t < 0 it returns the number of live tiles
// in `row0` instead.
template <int kTileTokens>
__device__ TileInfo find_tile_global(const Wna16GemmParams& p, int lane, int64_t t) {
  int64_t base = 0;
  for (int e0 = 0; e0 < p.num_experts; e0 += 32) {
    const int e = e0 + lane;
    const int64_t tiles = e < p.num_experts ? tiles_of<kTileTokens>(p, e) : 0;
    int64_t incl = tiles;
#pragma unroll
    for (int d = 1; d < 32; d *= 2) {
      const int64_t v = __shfl_up_sync(0xffffffffu, incl, d);
      if (lane >= d) incl += v;
    }
    const int64_t total = __shfl_sync(0xffffffffu, incl, 31);
    if (t >= 0 && t < base + total) {
      const int f = __ffs(__ballot_sync(0xffffffffu, t < base + incl)) - 1;
      const int64_t first = base + __shfl_sync(0xffffffffu, incl - tiles, f);
      return tile_info<kTileTokens>(p, e0 + f, first, t);
    }
    base += total;
  }
  return TileInfo{-1, 0, base};
}

// Persistent: CTA c takes tiles c, c + gridDim.x, ... of the (token tile, weight tile) space,
// weight tiles fastest (consecutive tiles share the token rows, which stay in L2), until the
// live token tiles end. The producer and the consumers walk the same tiles, each finding a
// tile's rows itself; their pipeline's stage counter runs on across tiles, so the producer
// loads the next tile while the consumers finish the current one and store it.
template <typename T, int kBits, bool kGateUp, int kTileTokens>
__global__ void __launch_bounds__(kThreads, 1) wna16_grouped_gemm_kernel(const Wna16GemmParams p, const QuantWeightsView w,
                                                                       const __grid_constant__ CUtensorMap x_map) {
  using L = SmemLayout<kBits, kTileTokens>;
  constexpr int kStages = L::kStages;
  constexpr int kAcc = kTileTokens / 2;  // accumulators per consumer thread
  extern __shared__ __align__(16) unsigned char smem_raw[];
  unsigned char* const smem = smem_raw + ((1024 - (smem_u32(smem_raw) & 1023)) & 1023);
  uint64_t* const full = reinterpret_cast<uint64_t*>(smem + L::kBarrierOffset);
  uint64_t* const empty = full + kMaxStages;
  int64_t* const s_live_tiles = reinterpret_cast<int64_t*>(smem + L::kTileOffset);
  int32_t* const s_prefix = reinterpret_cast<int32_t*>(smem + L::kPrefixOffset);

  const int tid = threadIdx.x;
  const int lane = tid & 31;
  const bool shared_prefix = p.num_experts <= kMaxPrefixExperts;
  // x by token (cp.async; GEMM1 on 128-token tiles, the launch checks), else by TMA.
  const bool gather = kGateUp && kTileTokens == 128 && p.gather_topk > 0;
  if (tid == 0) {
    for (int s = 0; s < kStages; ++s) {
      cutlass::arch::ClusterBarrier::init(&full[s], 128);   // every producer thread's copies (and the TMA's bytes)
      cutlass::arch::ClusterBarrier::init(&empty[s], 256);  // every consumer thread
    }
    cutlass::arch::fence_barrier_init();
  }
  // The live token tiles: per expert (all loads at once), then warp 0's scan.
  if (shared_prefix) {
    for (int e = tid; e < p.num_experts; e += kThreads) s_prefix[e + 1] = static_cast<int32_t>(tiles_of<kTileTokens>(p, e));
    __syncthreads();
    if (tid < 32) {
      int32_t carry = 0;
      for (int e0 = 0; e0 < p.num_experts; e0 += 32) {
        const int e = e0 + lane;
        int32_t incl = e < p.num_experts ? s_prefix[e + 1] : 0;
#pragma unroll
        for (int d = 1; d < 32; d *= 2) {
          const int32_t v = __shfl_up_sync(0xffffffffu, incl, d);
          if (lane >= d) incl += v;
        }
        if (e < p.num_experts) s_prefix[e + 1] = carry + incl;
        carry += __shfl_sync(0xffffffffu, incl, 31);
      }
      if (lane == 0) {
        s_prefix[0] = 0;
        *s_live_tiles = carry;
      }
    }
  } else if (tid < 32) {
    const TileInfo all = find_tile_global<kTileTokens>(p, lane, -1);
    if (lane == 0) *s_live_tiles = all.row0;
  }
  __syncthreads();

  const int64_t K = p.k;
  const int64_t rows_total = kGateUp ? 2 * p.n_out : p.n_out;  // weight rows of an expert
  const int64_t weight_tiles = kGateUp ? (p.n_out + kTileRows / 2 - 1) / (kTileRows / 2) : (p.n_out + kTileRows - 1) / kTileRows;
  const int64_t tiles = *s_live_tiles * weight_tiles;
  const int blocks = static_cast<int>((K + 127) / 128);
  const int64_t row_words = quant_row_words(K, kBits);
  const int sb = w.scale_type == ScaleType::kFP32 ? 4 : 2;
  // Groups per 128-k block as the stages hold them: 1 (a group spans whole blocks, or one group
  // per row), else 128 / group_size.
  const bool block_groups = wna16_block_groups(w.groups, w.group_size);
  const int groups_per_block = block_groups ? 1 : static_cast<int>(128 / w.group_size);
  // Shorter groups (32 or 64): 32-k steps per group - 1, as a mask, and its shift (step u of a
  // block is in the block's group u >> shift); a group spanning blocks: every step in group 0.
  const int step_shift = block_groups ? 2 : w.group_size == 64 ? 1 : 0;
  const int step_mask = (1 << step_shift) - 1;
  const uint32_t stage0 = smem_u32(smem);
  // Tile `idx`'s rows, by a whole warp (the global scan needs one).
  auto find = [&](int64_t idx) {
    const int64_t t = idx / weight_tiles;
    return shared_prefix ? find_tile_shared<kTileTokens>(p, s_prefix, t) : find_tile_global<kTileTokens>(p, lane, t);
  };
  // Its first output unit: gate-up column (64 per tile), down row (128).
  auto unit_of = [&](int64_t idx) { return (idx % weight_tiles) * (kGateUp ? kTileRows / 2 : kTileRows); };

  if (tid < 128) {
    // ---------------------------------------------------------------- producer
    cutlass::arch::warpgroup_reg_dealloc<RegSplit<kTileTokens>::kProducer>();
    if (tid == 0 && !gather) cute::prefetch_tma_descriptor(&x_map);
    // x by token: thread (xr = tid / 8, xc = tid % 8) copies chunk xc (8 k) of both 64-k halves
    // of the tile's token rows xr + 16 i (a warp instruction: four whole 128-byte row segments).
    // Row r's chunk c sits at r * 128 + 16 (c ^ (r & 7)) of a half (the 128-byte swizzle on
    // 1024-byte-aligned stages), and r & 7 = xr & 7 for all of a thread's rows.
    constexpr int kXRows = kTileTokens / 16;
    const int xc = tid & 7, xr = tid >> 3;
    const uint32_t x_dst = static_cast<uint32_t>(xr * 128 + 16 * (xc ^ (xr & 7)));
    const char* const x = static_cast<const char*>(p.x);
    const uint32_t x_row_bytes = static_cast<uint32_t>(K * sizeof(T));  // < 2^32, checked at launch
    // Codes: chunk c of row r for chunk index ci = tid + 128 i (a warp instruction covers whole
    // rows' blocks).
    constexpr int kCodeCopies = kTileRows * L::kCodeChunks / 128;
    const int cc = tid % L::kCodeChunks;
    const int c_row0 = tid / L::kCodeChunks;
    // Scales and zero points: per group of the block, two runs of 64 rows (gate-up: the gate
    // rows and the up rows of the tile's columns; down: rows 0-63 and 64-127), in 16-byte copies
    // of scales and 8-byte copies of zeros; copy ci = tid + 128 j (at most 192 per block). Which
    // group, run and part a thread copies is the same in every block, so it is worked out once.
    const int zb = kBits == 4 ? 1 : 2;
    const int scale_copies = 4 * sb;                          // per run
    const int zero_copies = w.zeros != nullptr ? 8 * zb : 0;  // per run
    const int per_run = scale_copies + zero_copies;
    const int side_total = groups_per_block * 2 * per_run;
    struct SideCopy {
      int gi, run, unit;    // group within the block, run, first unit (column / row) past the run's first
      int bytes, elem;      // 16 (scales) or 8 (zeros); bytes per element
      int chunk;            // byte offset within the run's row range
      uint32_t dst;         // shared-memory offset within the stage's side
      const char* base;     // w.scales or w.zeros
    };
    SideCopy sc[2];
#pragma unroll
    for (int j = 0; j < 2; ++j) {
      const int ci = tid + 128 * j;
      const int part = ci % per_run;
      const bool scale = part < scale_copies;
      const int zpart = part - scale_copies;
      sc[j].gi = ci / (2 * per_run);
      sc[j].run = (ci / per_run) & 1;
      sc[j].bytes = scale ? 16 : 8;
      sc[j].elem = scale ? sb : zb;
      sc[j].chunk = scale ? 16 * part : 8 * zpart;
      sc[j].unit = scale ? part * (16 / sb) : zpart * (8 / zb);
      sc[j].dst = scale ? L::kScaleOffset + (sc[j].gi * kTileRows + 64 * sc[j].run) * sb + 16 * part
                        : L::kZeroOffset + (sc[j].gi * kTileRows + 64 * sc[j].run) * zb + 8 * zpart;
      sc[j].base = static_cast<const char*>(scale ? w.scales : w.zeros);
    }
    // Block b's first group: b * groups_per_block, or (groups spanning blocks) b / blocks per
    // group, counted rather than divided; clamped to the last group (per-channel: 0; past K).
    const int blocks_per_group = block_groups && w.groups > 1 ? static_cast<int>(w.group_size / 128) : 1;
    int64_t it = 0;  // blocks issued, over all tiles: stage it % kStages
    for (int64_t idx = blockIdx.x; idx < tiles; idx += gridDim.x) {
      const TileInfo tile = find(idx);
      const int64_t unit0 = unit_of(idx);
      // Weight row of the tile's row r (clamped to the expert's last row; rows past the end
      // are computed and never stored).
      auto weight_row = [&](int r) -> int64_t {
        if (kGateUp) {
          const int64_t j = unit0 + (r & 63);
          return (r >= 64 ? p.n_out : 0) + (j < p.n_out ? j : p.n_out - 1);
        }
        const int64_t n = unit0 + r;
        return n < p.n_out ? n : p.n_out - 1;
      };
      // The tile's code rows (block 0) and scale / zero runs (group 0); per block and group
      // only an offset is added.
      const uint32_t* code_src[kCodeCopies];
      const uint32_t* const codes = w.codes + static_cast<int64_t>(tile.expert) * rows_total * row_words + 4 * cc;
#pragma unroll
      for (int i = 0; i < kCodeCopies; ++i) code_src[i] = codes + weight_row(c_row0 + i * (128 / L::kCodeChunks)) * row_words;
      const int64_t group0 = static_cast<int64_t>(tile.expert) * w.groups * rows_total;
      const char* side_src[2];
      bool side_ok[2];
#pragma unroll
      for (int j = 0; j < 2; ++j) {
        const int64_t run_unit = kGateUp ? unit0 : unit0 + 64 * sc[j].run;  // first column / row of the run
        const int64_t run_row = kGateUp ? sc[j].run * p.n_out + unit0 : unit0 + 64 * sc[j].run;
        side_ok[j] = tid + 128 * j < side_total && run_unit + sc[j].unit < p.n_out && sc[j].base != nullptr;
        side_src[j] = sc[j].base + (side_ok[j] ? (group0 + run_row) * sc[j].elem + sc[j].chunk : 0);
      }
      // x by token: the tokens of this thread's rows (a row past the tile's live ones reads the
      // tile's first token, computed and never stored), 32-bit, so that each copy's address is
      // one wide multiply-add.
      uint32_t x_tok[kXRows];
      if (gather) {
#pragma unroll
        for (int i = 0; i < kXRows; ++i) {
          const int r = xr + 16 * i;
          x_tok[i] = static_cast<uint32_t>(p.sorted_pairs[tile.row0 + (r < tile.live ? r : 0)] / p.gather_topk);
        }
      }
      int g_first = 0, g_step = 0;
      for (int b = 0; b < blocks; ++b, ++it) {
        const int s = static_cast<int>(it % kStages);
        if (it >= kStages) cutlass::arch::ClusterBarrier::wait(&empty[s], static_cast<uint32_t>((it / kStages) & 1) ^ 1u);
        const uint32_t side = stage0 + L::kSideBase + s * L::kSideBytes;  // codes, scales, zeros
        if (gather) {
          // The token rows' 128 k of block b, chunk xc of each half (K is a multiple of 8).
          const int k0 = 128 * b + 8 * xc;
          const bool ok0 = k0 < K, ok1 = k0 + 64 < K;
          const uint32_t st = stage0 + s * L::kXStageBytes + x_dst;
          const char* const xb = x + static_cast<int64_t>(k0) * sizeof(T);
#pragma unroll
          for (int i = 0; i < kXRows; ++i) {
            const char* src = xb + static_cast<uint64_t>(x_tok[i]) * x_row_bytes;
            cp_async16_zfill(st + 2048 * i, src, ok0);
            cp_async16_zfill(st + L::kXHalfBytes + 2048 * i, src + 128, ok1);
          }
        } else if (tid == 0) {
          // The token rows' 128 k of block b: two boxes of 64 k (rows < 2^31, checked at launch).
          cutlass::arch::ClusterTransactionBarrier::expect_transaction(&full[s], L::kXStageBytes);
          unsigned char* const st = smem + s * L::kXStageBytes;
          const int32_t row0 = static_cast<int32_t>(tile.row0);
          const uint64_t hint = static_cast<uint64_t>(cute::TMA::CacheHintSm90::EVICT_NORMAL);
          cute::SM90_TMA_LOAD_2D::copy(&x_map, &full[s], hint, st, 128 * b, row0);
          cute::SM90_TMA_LOAD_2D::copy(&x_map, &full[s], hint, st + L::kXHalfBytes, 128 * b + 64, row0);
        }
        // The codes of block b.
#pragma unroll
        for (int i = 0; i < kCodeCopies; ++i) {
          const int r = c_row0 + i * (128 / L::kCodeChunks);
          cp_async16_zfill(side + L::kCodeOffset + r * L::kCodeRowBytes + 16 * (cc ^ code_swizzle<kBits>(r)),
                           code_src[i] + b * (L::kCodeChunks * 4), true);
        }
        // The block's groups' scales and zero points.
#pragma unroll
        for (int j = 0; j < 2; ++j) {
          if (tid + 128 * j >= side_total) break;
          int64_t g = g_first + sc[j].gi;
          g = g < w.groups - 1 ? g : w.groups - 1;
          const char* src = side_src[j] + (side_ok[j] ? g * rows_total * sc[j].elem : 0);
          if (sc[j].bytes == 16) {
            cp_async16_zfill(side + sc[j].dst, src, side_ok[j]);
          } else {
            cp_async8_zfill(side + sc[j].dst, src, side_ok[j]);
          }
        }
        if (block_groups) {
          if (++g_step == blocks_per_group) g_step = 0, ++g_first;
        } else {
          g_first += groups_per_block;
        }
        cutlass::arch::cpasync_barrier_arrive_noinc(&full[s]);
      }
    }
    asm volatile("cp.async.wait_all;\n" ::: "memory");  // no copy outlives its thread
    return;
  }

  // ---------------------------------------------------------------- consumers
  cutlass::arch::warpgroup_reg_alloc<RegSplit<kTileTokens>::kConsumer>();
  const int cw = tid / 128 - 1;      // consumer warpgroup: 0 or 1
  const int wq = (tid / 32) & 3;     // warp within it
  const int g = lane >> 2, q = lane & 3;
  // This thread's two rows within the tile (the A fragment's rows 16 wq + g and + 8):
  // gate-up: gate row of column 32 cw + 8 wq + g, and its up row; down: 64 cw + 16 wq + g, + 8.
  const int r_lo = kGateUp ? 32 * cw + 8 * wq + g : 64 * cw + 16 * wq + g;
  const int r_hi = kGateUp ? 64 + r_lo : r_lo + 8;
  const int sw_lo = code_swizzle<kBits>(r_lo), sw_hi = code_swizzle<kBits>(r_hi);
  const int shift = wgmma_fragment_word(kBits, 0, 0, q).shift;  // int4: the pair's nibbles
  const int byte = wgmma_fragment_word(kBits, 0, 0, q).byte;    // int8: the pair's first byte
  const int word_sel = q >> 1;                                   // int8: the word past the run's first
  const bool has_zeros = w.zeros != nullptr;
  T* out = static_cast<T*>(p.out);
  uint32_t a[2][4];
#pragma unroll
  for (int i = 0; i < 4; ++i) a[0][i] = a[1][i] = 0u;

  int64_t it = 0;  // blocks consumed, over all tiles
  for (int64_t idx = blockIdx.x; idx < tiles; idx += gridDim.x) {
    float acc[kAcc];
#pragma unroll
    for (int i = 0; i < kAcc; ++i) acc[i] = 0.0f;
    for (int b = 0; b < blocks; ++b, ++it) {
      const int s = static_cast<int>(it % kStages);
      cutlass::arch::ClusterBarrier::wait(&full[s], static_cast<uint32_t>((it / kStages) & 1));
      // wgmma reads the token rows through the async proxy: the TMA's need no fence, the
      // producer's cp.async copies (x by token) one. CUTLASS's wait and fence have no memory
      // clobber: the codes' and scales' loads below must not be scheduled above them.
      if (gather) cutlass::arch::fence_view_async_shared();
      asm volatile("" ::: "memory");
      const unsigned char* side = smem + L::kSideBase + s * L::kSideBytes;
      const unsigned char* codes = side + L::kCodeOffset;
      const unsigned char* params = side + L::kScaleOffset;
      // The block's first group, for both halves (a group spanning the block: the only one).
      const RowGroup<T, kBits> g0_lo = row_group<T, kBits>(params, 0, r_lo, w.scale_type, has_zeros);
      const RowGroup<T, kBits> g0_hi = row_group<T, kBits>(params, 0, r_hi, w.scale_type, has_zeros);
      // Two halves: h = 0 takes quarters 0 and 1 of the block (the first 16 k of each 32-k
      // step), h = 1 quarters 2 and 3; slice 2u + h (k 32u + 16h) of each, so that a half's
      // codes fit in registers (the order of the slices does not matter to the sum).
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        constexpr int kWords = kBits == 4 ? 8 : 16;  // per row and half
        uint32_t wl[kWords], wh[kWords];
#pragma unroll
        for (int c = 0; c < kWords / 4; ++c) {
          const int chunk = h * (kWords / 4) + c;
          const uint4 vl = *reinterpret_cast<const uint4*>(codes + r_lo * L::kCodeRowBytes + 16 * (chunk ^ sw_lo));
          const uint4 vh = *reinterpret_cast<const uint4*>(codes + r_hi * L::kCodeRowBytes + 16 * (chunk ^ sw_hi));
          wl[4 * c] = vl.x, wl[4 * c + 1] = vl.y, wl[4 * c + 2] = vl.z, wl[4 * c + 3] = vl.w;
          wh[4 * c] = vh.x, wh[4 * c + 1] = vh.y, wh[4 * c + 2] = vh.z, wh[4 * c + 3] = vh.w;
        }
        RowGroup<T, kBits> g_lo = g0_lo, g_hi = g0_hi;
#pragma unroll
        for (int u = 0; u < 4; ++u) {
          const int slice = 2 * u + h;
          // The slice's group where groups are shorter than a block (group 0 at u = 0).
          if (u > 0 && (u & step_mask) == 0) {
            const int gi = u >> step_shift;
            g_lo = row_group<T, kBits>(params, gi, r_lo, w.scale_type, has_zeros);
            g_hi = row_group<T, kBits>(params, gi, r_hi, w.scale_type, has_zeros);
          }
          // Consecutive slices alternate between the two A buffers (u runs 0..3 in each half,
          // so the last slice of a half and the first of the next differ too).
          uint32_t* frag = a[u & 1];
          // Runs 0 and 1 of the slice (k + 0..7, + 8..15): quarters 2h and 2h + 1, step u, in
          // the half's words from kWords * h on (wgmma_fragment_word, checked on the CPU;
          // compile-time once the loops are unrolled).
          const int w0 = wgmma_fragment_word(kBits, slice, 0, 0).word - kWords * h;
          const int w1 = wgmma_fragment_word(kBits, slice, 1, 0).word - kWords * h;
          if constexpr (kBits == 4) {
            frag[0] = dequant_pair<T, 4>(wl[w0] >> shift, 0, g_lo);
            frag[1] = dequant_pair<T, 4>(wh[w0] >> shift, 0, g_hi);
            frag[2] = dequant_pair<T, 4>(wl[w1] >> shift, 0, g_lo);
            frag[3] = dequant_pair<T, 4>(wh[w1] >> shift, 0, g_hi);
          } else {
            // The word for q is w + (q >> 1): a select between the two, not an indexed register.
            frag[0] = dequant_pair<T, 8>(word_sel ? wl[w0 + 1] : wl[w0], byte, g_lo);
            frag[1] = dequant_pair<T, 8>(word_sel ? wh[w0 + 1] : wh[w0], byte, g_hi);
            frag[2] = dequant_pair<T, 8>(word_sel ? wl[w1 + 1] : wl[w1], byte, g_lo);
            frag[3] = dequant_pair<T, 8>(word_sel ? wh[w1 + 1] : wh[w1], byte, g_hi);
          }
          // B: the token rows' 16 k of this slice, in the 64-k half slice / 4, 32 bytes per
          // slice into the swizzle row.
          const uint32_t b_addr = stage0 + s * L::kXStageBytes + (slice >> 2) * L::kXHalfBytes + 32 * (slice & 3);
#pragma unroll
          for (int i = 0; i < kAcc; ++i) cute::warpgroup_fence_operand(acc[i]);
#pragma unroll
          for (int i = 0; i < 4; ++i) cute::warpgroup_fence_operand(frag[i]);
          cute::warpgroup_arrive();
          wgmma<T, kTileTokens>(a[u & 1], smem_desc(b_addr), acc);
          cute::warpgroup_commit_batch();
          cute::warpgroup_wait<1>();  // the slice before this one has completed: its A registers are free
#pragma unroll
          for (int i = 0; i < kAcc; ++i) cute::warpgroup_fence_operand(acc[i]);
          // The first wgmma of block b has waited for every wgmma of block b - 1: its stage is free.
          if (h == 0 && u == 0 && b > 0) cutlass::arch::ClusterBarrier::arrive(&empty[(it - 1) % kStages]);
        }
      }
    }
    cute::warpgroup_wait<0>();
#pragma unroll
    for (int i = 0; i < kAcc; ++i) cute::warpgroup_fence_operand(acc[i]);
    cutlass::arch::ClusterBarrier::arrive(&empty[(it - 1) % kStages]);  // the tile's last block

    // -------------------------------------------------------------- epilogue
    // acc[4 i + v]: v = 0, 1 row r_lo, tokens 8 i + 2q, + 1; v = 2, 3 row r_hi, the same tokens.
    const TileInfo tile = find(idx);
    const int64_t unit0 = unit_of(idx);
    const int64_t col_lo = kGateUp ? unit0 + 32 * cw + 8 * wq + g : unit0 + r_lo;
    const int64_t col_hi = kGateUp ? col_lo : unit0 + r_hi;
    // Thread (g, q) holds tokens 8 i + 2q + v (v = 0, 1): token 2q's element of its column, then
    // compile-time steps of rows; a token stores while it is one of the tile's live rows.
    const int64_t first = (tile.row0 + 2 * q) * p.n_out;
    const int live = tile.live - 2 * q;
    if constexpr (kGateUp) {
      if (p.topk_weights != nullptr) {  // the routed weight applied on the input: to g and u
#pragma unroll
        for (int i = 0; i < kTileTokens / 8; ++i) {
#pragma unroll
          for (int v = 0; v < 2; ++v) {
            if (8 * i + v >= live) continue;
            const float ws = p.topk_weights[p.sorted_pairs[tile.row0 + 8 * i + 2 * q + v]];
            acc[4 * i + v] *= ws;
            acc[4 * i + 2 + v] *= ws;
          }
        }
      }
      // One unrolled loop per activation, chosen once: a choice per value inlined GELU's erff
      // and tanhf 2 x 64 times (about 200 KB of code at 256 tokens; ncu put 27% of GEMM1's
      // samples in the epilogue, most of them instruction-fetch stalls).
      T* const dst = out + first + col_lo;
      const int n = col_lo < p.n_out ? live : 0;
      dispatch_act(p.act, [&](auto kind) {
        constexpr GatedAct kAct = decltype(kind)::value;
#pragma unroll
        for (int i = 0; i < kTileTokens / 8; ++i) {
#pragma unroll
          for (int v = 0; v < 2; ++v) {
            // computed for every token, stored for the live ones (a predicated store, no branch)
            const T h = Elem<T>::from_float(act_of<kAct>(acc[4 * i + v], acc[4 * i + 2 + v]));
            if (8 * i + v < n) dst[(8 * i + v) * p.n_out] = h;
          }
        }
      });
    } else {
      T* const lo = out + first + col_lo;
      T* const hi = out + first + col_hi;
      const int n_lo = col_lo < p.n_out ? live : 0, n_hi = col_hi < p.n_out ? live : 0;
#pragma unroll
      for (int i = 0; i < kTileTokens / 8; ++i) {
#pragma unroll
        for (int v = 0; v < 2; ++v) {
          if (8 * i + v < n_lo) lo[(8 * i + v) * p.n_out] = Elem<T>::from_float(acc[4 * i + v]);
          if (8 * i + v < n_hi) hi[(8 * i + v) * p.n_out] = Elem<T>::from_float(acc[4 * i + 2 + v]);
        }
      }
    }
  }
}

// cuTensorMapEncodeTiled from the driver (through the runtime: no link against libcuda), once.
using EncodeTiled = CUresult (*)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*, const cuuint64_t*, const cuuint64_t*,
                                 const cuuint32_t*, const cuuint32_t*, CUtensorMapInterleave, CUtensorMapSwizzle,
                                 CUtensorMapL2promotion, CUtensorMapFloatOOBfill);
EncodeTiled encode_tiled() {
  static const EncodeTiled fn = [] {
    void* f = nullptr;
    cudaDriverEntryPointQueryResult found{};
    const cudaError_t err = cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &f, 12000, cudaEnableDefault, &found);
    return err == cudaSuccess && found == cudaDriverEntryPointSuccess ? reinterpret_cast<EncodeTiled>(f) : nullptr;
  }();
  return fn;
}

// x [rows_bound, k] of T as TMA boxes of 64 k by kTileTokens rows in the 128-byte swizzle (one
// stage's half); reads past either extent are zero-filled.
template <typename T, int kTileTokens>
cudaError_t x_tensor_map(const Wna16GemmParams& p, CUtensorMap* map) {
  const EncodeTiled encode = encode_tiled();
  if (encode == nullptr) return cudaErrorNotSupported;
  const cuuint64_t dims[2] = {static_cast<cuuint64_t>(p.k), static_cast<cuuint64_t>(p.rows_bound)};
  const cuuint64_t strides[1] = {static_cast<cuuint64_t>(p.k) * sizeof(T)};
  const cuuint32_t box[2] = {64, kTileTokens};
  const cuuint32_t steps[2] = {1, 1};
  const CUtensorMapDataType type = std::is_same<T, __half>::value ? CU_TENSOR_MAP_DATA_TYPE_FLOAT16 : CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
  const CUresult r = encode(map, type, 2, const_cast<void*>(p.x), dims, strides, box, steps, CU_TENSOR_MAP_INTERLEAVE_NONE,
                            CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  return r == CUDA_SUCCESS ? cudaSuccess : cudaErrorInvalidValue;
}

template <typename T, int kBits, bool kGateUp, int kTileTokens>
cudaError_t launch_kernel(const Wna16GemmParams& p, const QuantWeightsView& w, cudaStream_t stream) {
  constexpr auto kernel = wna16_grouped_gemm_kernel<T, kBits, kGateUp, kTileTokens>;
  constexpr size_t smem = SmemLayout<kBits, kTileTokens>::kSmemBytes;
  static const cudaError_t opt_in = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem));
  if (opt_in != cudaSuccess) return opt_in;
  // x by token (gather_topk > 0) is never read by TMA, nor its map prefetched: none is built.
  CUtensorMap x_map{};
  if (p.gather_topk == 0) {
    const cudaError_t mapped = x_tensor_map<T, kTileTokens>(p, &x_map);
    if (mapped != cudaSuccess) return mapped;
  }
  // Persistent: at most one CTA per SM (one fits), over the tile space's host-known bound.
  const dim3 space = wna16_grouped_gemm_grid(p);
  const int64_t tiles = static_cast<int64_t>(space.x) * space.y;
  kernel<<<static_cast<unsigned>(tiles < p.sm_count ? tiles : p.sm_count), kThreads, smem, stream>>>(p, w, x_map);
  return cudaGetLastError();
}

template <typename T, int kBits>
cudaError_t launch_bits(const Wna16GemmParams& p, const QuantWeightsView& w, cudaStream_t stream) {
  if (p.tile_tokens == 256) {
    return p.gate_up ? launch_kernel<T, kBits, true, 256>(p, w, stream) : launch_kernel<T, kBits, false, 256>(p, w, stream);
  }
  return p.gate_up ? launch_kernel<T, kBits, true, 128>(p, w, stream) : launch_kernel<T, kBits, false, 128>(p, w, stream);
}

template <typename T>
cudaError_t launch_type(const Wna16GemmParams& p, const QuantWeightsView& w, cudaStream_t stream) {
  return w.bits == 4 ? launch_bits<T, 4>(p, w, stream) : launch_bits<T, 8>(p, w, stream);
}

}  // namespace

cudaError_t launch_wna16_grouped_gemm(const Wna16GemmParams& p, const QuantWeightsView& w, cudaStream_t stream) {
  // The TMA's row coordinate is 32-bit; its base address 16-byte aligned; x by token: GEMM1 on
  // 128-token tiles, a row's bytes 32-bit (K < 2^30).
  if (!wna16_register_layout(w) || p.k <= 0 || p.k != w.k || p.k % 8 != 0 || p.n_out <= 0 || p.n_out % 8 != 0 ||
      p.num_experts <= 0 || p.rows_bound < 0 || p.rows_bound >= (int64_t{1} << 31) || p.expert_offsets == nullptr ||
      p.x == nullptr || reinterpret_cast<uintptr_t>(p.x) % 16 != 0 || p.out == nullptr ||
      ((p.topk_weights != nullptr || p.gather_topk > 0) && p.sorted_pairs == nullptr) || p.gather_topk < 0 ||
      (p.gather_topk > 0 && (!p.gate_up || p.tile_tokens != 128 || p.k >= (int64_t{1} << 30))) ||
      (p.tile_tokens != 128 && p.tile_tokens != 256) || p.sm_count <= 0 ||
      w.n != (p.gate_up ? 2 * p.n_out : p.n_out)) {
    return cudaErrorInvalidValue;
  }
  if (wna16_grouped_gemm_grid(p).x == 0) return cudaSuccess;  // no rows
  return p.elem == ElemType::kBF16 ? launch_type<__nv_bfloat16>(p, w, stream) : launch_type<__half>(p, w, stream);
}

}  // namespace fusedmoe::kernels
