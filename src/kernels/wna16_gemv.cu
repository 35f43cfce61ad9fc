// wna16_gemv: both expert GEMMs over prepared int4/int8 weights at small and moderate batch,
// one launch per GEMM for all experts (the int counterpart of small_m_splitk, same grid, CTA
// split-K and epilogue: gemv_common.cuh).
//
// Several row tiles a warp (kMultiTile, the down GEMV at grids of many waves): see the kernel.
//
// Streaming: int4 codes are a quarter of bf16's bytes per k, so a lane needs four times the
// k in flight to keep HBM busy, more than registers hold. Each warp therefore runs its own
// kStages-deep cp.async ring in shared memory: a stage is kUnroll 128-k blocks of the warp's
// 16 rows (one 16-byte chunk per lane, row and block for int4, two for int8, each copy
// instruction whole sectors: ring_slot; docs/FORMATS.md, "Prepared integer layout") plus the
// blocks' scales and zero points (runs of 8 rows, copied by a few lanes). A lane waits for its
// own copies, and a __syncwarp makes the lanes' copies visible to each other and frees the
// oldest slot. With four token tiles unsplit, x's 32 rows stream through a ring of the CTA's
// beside them (kSharedX at the kernel).
//
// Dequantization: codes become exact integers q - zero in the MMA's element type with a few
// bit operations and one packed subtraction per pair:
//   int4:       (w >> 4i) & 0x000F000F | magic gives (magic + q) in both halves, magic =
//               128.0 (bf16 0x4300) or 1024.0 (fp16 0x6400), whose last mantissa bit is 1;
//               then minus (magic + zero). Nibble i holds k offset {0,2,4,6,1,3,5,7}[i], so
//               shift i gives the pair (2i, 2i + 1).
//   int8, fp16: a byte permute builds 1024 + q in both halves, then minus (1024 + zero).
//   int8, bf16: bf16 holds only 0..127 above 128 exactly, so via fp32 2^23 + q, minus
//               (2^23 + zero), then one rounding-free conversion of an integer <= 256.
// int4 in bf16 with one token tile (decode) skips the subtraction: see kFold at the kernel.
// The MMAs accumulate a group's partial sums in fp32; at the end of each group (or of the
// warp's K slice) they are multiplied by that group's scale and added to the result, so the
// weights are never rounded (the reference's (q - zero) * scale in full precision); eight
// n-tiles round them once instead (kScaled at the kernel).
// Requires group_size in {32, 64} or a multiple of 128, or one group per row, and groups
// contiguous in k (no act-order): the planner sends other layouts to the dequant path.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <type_traits>

#include "gemv_common.cuh"
#include "wna16_dequant.cuh"

namespace fusedmoe::kernels {

namespace {

using gemv::cp_async16;
using gemv::cp_async16_zfill;
using gemv::cp_async8;
using gemv::cp_async_commit;
using gemv::cp_async_wait;
using gemv::kThreads;
using gemv::mma_16816;
using wna16::and_or;
using wna16::dequant_step;
using wna16::IntMagic;
using wna16::mul2_split;
using wna16::pack2_split;
using wna16::sub2;
using wna16::zero_operand;

// 128 + v (0 <= v < 16, an int4 zero point) as fp32, exactly: the bf16 pattern widened.
__device__ __forceinline__ float magic_float(int v) {
  return __uint_as_float((IntMagic<__nv_bfloat16>::kHalf + static_cast<uint32_t>(v)) << 16);
}

// p, through a register the compiler cannot trace back: under the 128-register bound ptxas
// otherwise rebuilds a token row's 64-bit address from the kernel parameters at every load.
template <typename P>
__device__ __forceinline__ const P* opaque(const P* p) {
  uint64_t v = reinterpret_cast<uint64_t>(p);
  asm volatile("mov.b64 %0, %0;" : "+l"(v));
  return reinterpret_cast<const P*>(v);
}

__device__ __forceinline__ uint32_t opaque_u32(uint32_t v) {
  asm volatile("mov.b32 %0, %0;" : "+r"(v));
  return v;
}

constexpr int kStages = 4;  // cp.async ring depth per warp
// With the CTA's shared x (kSharedX below) the ring is as deep as two CTAs per SM allow (at
// most kStages): shared memory per CTA at most kSharedXMaxCtaBytes.
constexpr size_t kSharedXMaxCtaBytes = 113 * 1024;

// One group's scales and zero points of a warp's 16 rows, as copied: runs of 8 rows (lo:
// the lanes' first rows, hi: their second rows), scales in their checkpoint type (2 or 4
// bytes), zeros uint8 (int4) or uint16 (int8).
struct GroupParams {
  uint4 scale_lo[2], scale_hi[2];
  uint4 zero_lo, zero_hi;
};
// Lane part p (0..5) of a group's copy writes the 16 bytes at 16 * p (part 1 and 3: the second
// halves of fp32 scale runs; 4 and 5: the zero runs).
static_assert(sizeof(GroupParams) == 96 && offsetof(GroupParams, scale_hi) == 32 && offsetof(GroupParams, zero_lo) == 64,
              "GroupParams: lane part p copies bytes [16 p, 16 p + 16)");


// The shared-memory rings of one CTA. kNTiles: 8-token tiles per pass; with kSharedX the
// pass's 8 * kNTiles x rows have a ring of the CTA's (eight n-tiles: one block per stage, so
// that the deeper ring fits).
template <typename T, int kBits, int kGpb, bool kSharedX, int kNTiles>
struct StageLayout {
  static constexpr int kVecs = kBits / 4;  // 16-byte chunks per lane, row and block
  static constexpr int kUnroll = kNTiles == 8 ? 1 : wna16_stage_blocks(kBits, kGpb == 1);
  static constexpr int kCodeChunks = kUnroll * 2 * kVecs;  // per lane and stage
  static constexpr int kXTokens = kSharedX ? 8 * kNTiles : 0;
  static constexpr uint32_t kXBlockBytes = kXTokens * 128 * 2;  // one 128-k block of the x rows
  // Bytes of a ring of `ring` slots: a warp's codes and group parameters; the CTA's x rows
  // (after the warps' rings: [slot][block][token][128 k]); the whole CTA's.
  static constexpr size_t code_bytes(int ring) { return size_t{1} * ring * kCodeChunks * 32 * 16; }
  static constexpr size_t param_bytes(int ring) { return size_t{1} * ring * kUnroll * kGpb * sizeof(GroupParams); }
  static constexpr size_t x_bytes(int ring) { return size_t{1} * ring * kUnroll * kXBlockBytes; }
  static constexpr size_t cta_bytes(int ring) { return (code_bytes(ring) + param_bytes(ring)) * gemv::kWarps + x_bytes(ring); }
  static constexpr int shared_x_ring() {
    int ring = kStages;
    while (ring > 2 && cta_bytes(ring) > kSharedXMaxCtaBytes) --ring;
    return ring;
  }
  // Ring slots (stages); four n-tiles keep the three v48 measured.
  static constexpr int kRing = !kSharedX ? kStages : kNTiles == 4 ? 3 : shared_x_ring();
  static constexpr size_t kCodeBytes = code_bytes(kRing);  // per warp
  static constexpr size_t kWarpBytes = kCodeBytes + param_bytes(kRing);
  static constexpr size_t kCtaBytes = cta_bytes(kRing);
  static_assert(!kSharedX || kCtaBytes <= kSharedXMaxCtaBytes, "shared x: two CTAs per SM");
};

// A block's code chunks in a warp's ring slot, per 8-row run (lo rows g, hi rows g + 8): the
// run's chunk c (16 bytes) of row g sits at 16-byte slot ring_slot(c, g). Lane (g, q) copies
// chunks q and (int8) 4 + q of its rows, so that each copy instruction reads 64 whole bytes of
// each row: with the lane's own chunks 2q and 2q + 1 (its k, docs/FORMATS.md) every copy read
// half of each 32-byte sector and L2 served each sector twice (v50: L2 88% busy at 40% of
// DRAM's peak). The lane then reads its chunks 2q + v where other lanes put them (visible
// after the ring's __syncwarp / __syncthreads); the XOR keeps those reads free of bank
// conflicts. int4 (4 chunks per row and block): slot 4g + c, the lane's own.
constexpr int kCopyChunkStride = 4;
__device__ __forceinline__ int ring_slot(int c, int g) { return (c >> 2) * 32 + g * 4 + ((c & 3) ^ ((c >> 2) & 1)); }

__device__ __forceinline__ float scale_at(const GroupParams& gp, bool hi, int row, ScaleType type) {
  const uint4* run = hi ? gp.scale_hi : gp.scale_lo;
  const float f32 = reinterpret_cast<const float*>(run)[row];
  const uint16_t bits = reinterpret_cast<const uint16_t*>(run)[row];
  const float from_bf16 = __uint_as_float(static_cast<uint32_t>(bits) << 16);
  const float from_fp16 = __half2float(__ushort_as_half(bits));
  return type == ScaleType::kFP32 ? f32 : type == ScaleType::kBF16 ? from_bf16 : from_fp16;
}

template <int kBits>
__device__ __forceinline__ int zero_at(const GroupParams& gp, bool hi, int row) {
  const uint4& run = hi ? gp.zero_hi : gp.zero_lo;
  if constexpr (kBits == 4) return reinterpret_cast<const uint8_t*>(&run)[row];
  return reinterpret_cast<const uint16_t*>(&run)[row];
}

// kGroupsPerBlock: 1 when a group spans whole 128-k blocks (group_size a multiple of 128, or
// one group per row): one scale and zero per row and block; 4 for groups of 32 or 64: one per
// 32-k step (steps of one 64-group copy the same values).
//
// kFold (int4, bf16, one n-tile, the decode case): the zero points leave the dequantization.
// The MMAs take (magic + q) as it comes out of the and-or, and a third pair of MMAs with
// all-ones weights sums each token's activations over the group (X); at the group's end the
// partial sum becomes s * (P - (magic + zero) * X). Per 32-k step that trades eight packed
// subtractions for two MMAs, on a pipe the GEMV leaves mostly idle. The products are exact in
// fp32, but P grows like (magic + q) * sum(x) over the whole group, and the tensor cores' fp32
// sum is believed to truncate: for one group per row at K = 14336 a CPU model of that puts the
// error at 2.5e-4 to 4.4e-4 of the output's rms, under bf16's half ulp (2e-3) but above fp16's
// (2.4e-4, where magic is 1024), so fp16 keeps the subtraction (v27 review).
//
// kSharedX (four n-tiles, no split: every warp of the CTA runs the same expert, tokens and K):
// the pass's 32 x rows are copied once per CTA into a shared ring beside the codes (each
// thread two 16-byte chunks of one row per block, 128 bytes apart so that each copy
// instruction reads whole sectors; zero-filled past K and past the expert's tokens), and
// the warps read their fragments from it, instead of each warp loading all 32 rows from
// global memory right before its MMAs (8 bytes of x per byte of codes per warp). The ring's
// slots are then the CTA's: a __syncthreads where each warp's ring had a __syncwarp. Within
// a block, token row r's 16-byte chunk c sits at chunk c ^ 4 (r & 1), so that the two rows a
// quarter-warp reads fall in different banks.
//
// Eight n-tiles (64 tokens per pass: the planner's eight_tiles_above_rows): shared x
// as above, one 128-k block per stage (x's 16 KiB per block leave room for a deeper ring
// only so), and the weights dequantized with their scales (kScaled): (q - zero) * scale in T,
// with the scale split into hi + lo parts of T so that each weight is rounded once, as the
// grouped path's dequantization rounds it, and the MMAs accumulate into the result directly.
// The exact form's per-group partial sums would double the accumulators to 64 registers.
// Tiles 4-7 are skipped (warp-uniform) when the pass has at most 32 tokens.
//
// kOneToken (down, one n-tile: launch_wna16_one_token_down): one token's down GEMV with the
// top-k combine folded in, as small_m_splitk's one_token_down_kernel: the CTA covers one
// 16-row tile of out's row for all of the token's live experts (warp w: live expert
// w / kSplitK, K slice w % kSplitK; gemv::WarpPlace::init_one_token), each warp on its own ring
// as above; the warps' products meet in shared memory (gemv::OneTokenSums). A warp with no live
// expert copies nothing and runs one empty pass, so that every warp reaches the CTA's barrier.
template <typename T, int kBits, int kGroupsPerBlock, int kSplitK, int kNTiles, bool kGateUp, bool kSharedX,
          bool kOneToken = false, bool kMultiTile = false>
__global__ void __launch_bounds__(kThreads, kGemvCtasPerSm) wna16_gemv_kernel(GroupedGemvParams p, QuantWeightsView qw) {
  static_assert(!kSharedX || (kSplitK == 1 && (kNTiles == 4 || kNTiles == 8)), "shared x: four or eight n-tiles, no split");
  static_assert(kNTiles != 8 || kSharedX, "eight n-tiles: shared x");
  static_assert(!kOneToken || (!kGateUp && kNTiles == 1 && !kSharedX), "one token: down, one n-tile");
  static_assert(!kMultiTile || (!kGateUp && kNTiles == 1 && !kSharedX && !kOneToken),
                "tiles per warp: down, one n-tile, global x");
  // Eight n-tiles: the weights dequantized with their scales (kScaled, below).
  constexpr bool kScaled = kNTiles == 8;
  constexpr int kTokensPerPass = 8 * kNTiles;
  constexpr int kGpb = kGroupsPerBlock;
  constexpr bool kFold = kBits == 4 && kNTiles == 1 && std::is_same<T, __nv_bfloat16>::value;
  static_assert(!(kFold && kScaled), "the folded zero points need the exact integers");
  using L = StageLayout<T, kBits, kGpb, kSharedX, kNTiles>;
  constexpr int kRing = L::kRing;
  constexpr int kVecs = L::kVecs;
  constexpr int kUnroll = L::kUnroll;
  constexpr uint32_t kStageChunkBytes = 2 * kVecs * 32 * 16;  // one block's code chunks of a warp
  __shared__ gemv::PartialSums<kSplitK, kNTiles> s_partial;
  __shared__ std::conditional_t<kOneToken, gemv::OneTokenSums<kSplitK>, char> s_sums;
  extern __shared__ __align__(16) unsigned char s_ring[];

  gemv::WarpPlace<kSplitK, kGateUp> w;
  if constexpr (kOneToken) {
    s_sums.zero();
    __syncthreads();
    w.init_one_token(p);
  } else if (!w.template start<T>(p)) {
    return;  // waits for the predecessor where it must (down: later)
  }
  // kMultiTile (launch_wna16_gemv's tiles_per_warp > 1; the grid's x shrunk to match, the tile
  // count derived back from it): the warp streams n_tpw row tiles, tile0, + kUnitRows, ..., as
  // one slice of n_tpw x stages stages, the ring carried across (each tile's first stages
  // copied under the last of the tile before), each tile its own epilogue; tiles from n_valid
  // on lie past n_out, copy nothing and store nothing. The launcher takes it for down only and
  // where every tile below n_out is whole (n_out a multiple of 16), so that a tile's sources
  // are the one before's plus a fixed step. PERF.md v63: each CTA pays about 2 us of serial latency
  // (launch, the expert lookups, the first bytes, the epilogue), which a warp pays once so.
  constexpr int kRowTiles = gemv::kWarps / kSplitK;
  constexpr int kUnitRows = 16;  // kMultiTile: down's rows per tile
  int n_tpw = 1, n_valid = 1;
  if constexpr (kMultiTile) {
    const int64_t groups = (grouped_gemv_tiles(false, p.n_out) + kRowTiles - 1) / kRowTiles;
    n_tpw = static_cast<int>((groups + gridDim.x - 1) / gridDim.x);
    w.place(p, (static_cast<int64_t>(blockIdx.x) * kRowTiles + w.tile) * n_tpw * kUnitRows);  // tile 0
    const int64_t left = (p.n_out - w.unit0 + kUnitRows - 1) / kUnitRows;
    n_valid = left < 0 ? 0 : left < n_tpw ? static_cast<int>(left) : n_tpw;
  }
  const int64_t tile0 = w.unit0;
  const int64_t K = p.k;
  const int64_t rows = kGateUp ? 2 * p.n_out : p.n_out;
  const int64_t row_words = quant_row_words(K, kBits);
  const uint32_t* codes = qw.codes + static_cast<int64_t>(w.e) * rows * row_words;
  // The lane's first copy (chunk q of its lo row's block; int8's second is chunk 4 + q: see
  // kCopyChunkStride) and where the lane reads its own chunks back (ring_read).
  const uint4* c_lo = reinterpret_cast<const uint4*>(codes + w.row_lo * row_words) + w.q;
  const int64_t c_hi_delta = (w.row_hi - w.row_lo) * row_words / 4;  // uint4 from the lo row's chunk to the hi row's
  // This warp's ring: code chunks [stage][block][lo, hi rows][ring_slot], then GroupParams
  // [stage][block][group].
  uint4* ring = reinterpret_cast<uint4*>(s_ring + w.warp * L::kWarpBytes);
  GroupParams* params = reinterpret_cast<GroupParams*>(s_ring + w.warp * L::kWarpBytes + L::kCodeBytes);
  // First rows of the two 8-row runs whose scales and zeros this warp copies (in range: rows
  // and n_out are multiples of 8; tiles past the end read the last run, unused).
  const int64_t run = w.unit0 < p.n_out ? w.unit0 : p.n_out - 8;
  const int64_t run_lo = run;
  const int64_t run_hi = kGateUp ? p.n_out + run : (run + 16 <= p.n_out ? run + 8 : run);
  // This lane's share of each group's parameter copy, the same for every block (uniform
  // code: no branch per lane in the loop): lanes 8u + part copy group u of a block (kGpb 4) or
  // of block's only group (u = 0); part 0/2 the scale run lo/hi (1/3: their second 16 bytes,
  // fp32 scales only), 4/5 the zero runs lo/hi. p_bytes 0: this lane copies nothing.
  const int pu = w.lane >> 3, part = w.lane & 7;
  const int64_t group0 = static_cast<int64_t>(w.e) * qw.groups * rows;  // element index of (e, group 0, row 0)
  int p_bytes = 0;
  const char* p_src = nullptr;  // source of group 0
  uint32_t p_stride = 0;        // bytes from one group to the next
  int p_tile_step = 0;          // kMultiTile: bytes from one tile's source to the next's
  if (pu < kGpb) {
    const int64_t run_row = (part & 2) != 0 || part == 5 ? run_hi : run_lo;
    if (part < 4 && ((part & 1) == 0 || qw.scale_type == ScaleType::kFP32)) {
      const int sb = qw.scale_type == ScaleType::kFP32 ? 4 : 2;
      p_bytes = 16;
      p_src = static_cast<const char*>(qw.scales) + (group0 + run_row) * sb + 16 * (part & 1);
      p_stride = static_cast<uint32_t>(rows * sb);
      p_tile_step = kUnitRows * sb;
    } else if (part >= 4 && part < 6 && qw.zeros != nullptr) {
      constexpr int zb = kBits == 4 ? 1 : 2;  // bytes per zero point
      p_bytes = 8 * zb;
      p_src = static_cast<const char*>(qw.zeros) + (group0 + run_row) * zb;
      p_stride = static_cast<uint32_t>(rows * zb);
      p_tile_step = kUnitRows * zb;
    }
  }
  // kGpb == 4: step u of block j is in group (4j + u) >> spg_shift; kGpb == 1: blocks per
  // group (0: one group per row, which ends only with the slice), groups stepped, not divided.
  // 32-bit from here on: K < 2^30 (checked at launch).
  const int spg_shift = kGpb == 4 && qw.group_size == 64 ? 1 : 0;
  const int bpg = kGpb == 4 || qw.groups == 1 ? 0 : static_cast<int>(qw.group_size / 128);
  const uint32_t last_group = static_cast<uint32_t>(qw.groups) - 1;
  const int kk = static_cast<int>(K);
  const bool has_zeros = qw.zeros != nullptr;
  int64_t slice_begin = 0, slice_end = 0;
  w.slice((K + 127) / 128, &slice_begin, &slice_end);
  // One token: a warp with no live expert copies nothing.
  const int b_begin = static_cast<int>(slice_begin);
  const int b_end = kOneToken && w.count == 0 ? b_begin : static_cast<int>(slice_end);
  const int stages = (b_end - b_begin + kUnroll - 1) / kUnroll;
  const int first_group = bpg > 0 ? b_begin / bpg : 0, first_rem = bpg > 0 ? b_begin % bpg : 0;

  // Copies of stage st (blocks b_begin + st * kUnroll ...) into ring slot st % kRing; one
  // commit group per stage, empty past the slice. Stages are issued in order from 0 each
  // pass: (ig, ir) = group and block within it of the next block to copy (kGpb == 1).
  int ig = first_group, ir = first_rem;
  // kSharedX: this thread copies kXChunks 16-byte chunks (2 at four n-tiles, 4 at eight) of
  // token row xt of each block, chunks xc + kXThreadsPerRow c, so that each copy instruction
  // reads whole 32-byte sectors of a row (L2 serves each once; as the codes, ring_slot), into
  // 16-byte slot (chunk ^ x_sw) of the row; x_src: chunk xc of block 0 (per pass), x_ok: the
  // token is the expert's.
  const uint32_t x_ring_s =
      kSharedX ? opaque_u32(static_cast<uint32_t>(__cvta_generic_to_shared(s_ring + gemv::kWarps * L::kWarpBytes))) : 0u;
  constexpr int kXChunks = kSharedX ? L::kXTokens / 16 : 1;
  constexpr int kXThreadsPerRow = 16 / kXChunks;
  const int xt = threadIdx.x / kXThreadsPerRow, xc = threadIdx.x % kXThreadsPerRow;
  const uint32_t x_dst = x_ring_s + xt * 256;
  const int x_sw = 4 * (xt & 1);
  // Where this lane reads: token row g's chunk q of step 0, and the swizzle of row g (64 bytes
  // = 4 chunks where g is odd).
  const uint32_t x_lane_s = x_ring_s + w.g * 256 + 16 * w.q;
  const uint32_t x_swz = 64 * (w.g & 1);
  const T* x_src = static_cast<const T*>(p.x);
  bool x_ok = false;
  auto issue_x = [&](int st) {
    const uint32_t slot = static_cast<uint32_t>(st) % kRing;
#pragma unroll
    for (int i = 0; i < kUnroll; ++i) {
      const int j = b_begin + st * kUnroll + i;
      if (j < b_end) {
        const int k0 = 128 * j + 8 * xc;  // the first k of this thread's first chunk
        const uint32_t dst = x_dst + (slot * kUnroll + i) * L::kXBlockBytes;
#pragma unroll
        for (int c = 0; c < kXChunks; ++c) {
          const int dk = 8 * kXThreadsPerRow * c;
          cp_async16_zfill(dst + 16 * ((kXThreadsPerRow * c + xc) ^ x_sw), x_src + 128 * j + dk, x_ok && k0 + dk < kk);
        }
      }
    }
  };
  // Shared-memory addresses of this lane's first code chunk and of its part of the first
  // GroupParams (32-bit, computed once; opaque, so that ptxas keeps them rather than rebuild
  // them from the CTA's shared window at every copy).
  const uint32_t ring_s = opaque_u32(static_cast<uint32_t>(__cvta_generic_to_shared(ring + w.lane)));
  const int ring_read = kVecs == 1 ? w.lane : ring_slot(2 * w.q, w.g);  // ring_read ^ v: chunk 2q + v
  const uint32_t param_s = opaque_u32(
      static_cast<uint32_t>(__cvta_generic_to_shared(params + (pu < kGpb ? pu : 0))) + 16 * part);
  const uint4* const c_first0 = opaque(c_lo + b_begin * (4 * kVecs));  // the slice's first chunk
  const char* const p_src0 = p_src;
  const uint4* c_first = c_first0;
  // kMultiTile: the issue side's tile it and its stage is (stages issued in order from 0 each
  // pass), the sources stepping a tile at a time.
  int it = 0, is = 0;
  const int64_t c_tile_step = kUnitRows * row_words / 4;  // uint4
  auto issue = [&](int st, bool with_x) {
    const uint32_t slot = static_cast<uint32_t>(st) % kRing;
#pragma unroll
    for (int i = 0; i < kUnroll; ++i) {
      const int jr = (kMultiTile ? is : st) * kUnroll + i;  // block within the slice
      if ((!kMultiTile || it < n_valid) && b_begin + jr < b_end) {
        const uint32_t dst = ring_s + (slot * kUnroll + i) * kStageChunkBytes;
        const uint4* src = c_first + jr * (4 * kVecs);
#pragma unroll
        for (int v = 0; v < kVecs; ++v) {
          // Chunk 4v + q of rows g and g + 8, at ring_slot(4v + q, g) = 32v + (lane ^ v).
          const uint32_t at = static_cast<uint32_t>((v * 32 + (w.lane ^ v) - w.lane) * 16);
          cp_async16(dst + at, src + kCopyChunkStride * v);
          cp_async16(dst + kVecs * 32 * 16 + at, src + c_hi_delta + kCopyChunkStride * v);
        }
        uint32_t g = kGpb == 4 ? static_cast<uint32_t>(4 * (b_begin + jr) + pu) >> spg_shift : static_cast<uint32_t>(ig);
        g = g < last_group ? g : last_group;  // steps past K
        const uint32_t pdst = param_s + (slot * kUnroll + i) * kGpb * static_cast<uint32_t>(sizeof(GroupParams));
        const char* psrc = p_src + static_cast<uint64_t>(g) * p_stride;
        if (p_bytes == 16) cp_async16(pdst, psrc);
        if (p_bytes == 8) cp_async8(pdst, psrc);
        if (kGpb == 1 && ++ir == bpg) ir = 0, ++ig;
      }
    }
    if constexpr (kMultiTile) {
      if (++is == stages) {  // the next tile's stages follow
        is = 0;
        ++it;
        c_first += c_tile_step;
        p_src += p_tile_step;
        ig = first_group;
        ir = first_rem;
      }
    }
    if constexpr (kSharedX) {
      if (with_x) issue_x(st);
    }
    cp_async_commit();
  };

  for (int c0 = 0; c0 < w.count || (kOneToken && c0 == 0); c0 += kTokensPerPass) {
    // The previous pass's last reads of the ring are done.
    if constexpr (kSharedX) {
      __syncthreads();
    } else {
      __syncwarp();
    }
    ig = first_group;
    ir = first_rem;
    if constexpr (kMultiTile) {
      it = is = 0;
      c_first = c_first0;
      p_src = p_src0;
    }
#pragma unroll
    for (int st = 0; st < kRing - 1; ++st) issue(st, false);
    w.wait_for_activations(c0);
    if constexpr (kSharedX) {
      // The first stages' x, after down's wait, in one more commit group (the first stage
      // below waits for every group).
      const int tok = c0 + xt;
      x_ok = tok < w.count;
      const int64_t pos = w.begin + (x_ok ? tok : 0);
      const int64_t xr = kGateUp ? p.sorted_pairs[pos] / p.topk : pos;
      x_src = opaque(static_cast<const T*>(p.x) + xr * K + 8 * xc);
#pragma unroll
      for (int st = 0; st < kRing - 1; ++st) issue_x(st);
      cp_async_commit();
    }
    // Token rows: a lane past the expert's tokens reads its first token's row (token_rows),
    // which only feeds that lane's MMA column, never stored.
    const uint4* xv[kNTiles];  // this lane's 8 k of each token row, in 16-byte units
    if constexpr (!kSharedX) {
      const T* x_row[kNTiles];
      bool x_valid[kNTiles];
      w.template token_rows<T, kNTiles>(p, c0, x_row, x_valid);
      (void)x_valid;
#pragma unroll
      for (int nt = 0; nt < kNTiles; ++nt) xv[nt] = opaque(reinterpret_cast<const uint4*>(x_row[nt] + 8 * w.q));
    }
    float acc[kNTiles][4], part_sum[kNTiles][4], xsum[kNTiles][4];
#pragma unroll
    for (int nt = 0; nt < kNTiles; ++nt)
#pragma unroll
      for (int i = 0; i < 4; ++i) acc[nt][i] = part_sum[nt][i] = xsum[nt][i] = 0.0f;
    int cr = first_rem;  // block within its group of the next block consumed (kGpb == 1)
    const bool upper = kNTiles < 8 || c0 + 32 < w.count;  // tiles 4-7 hold tokens (uniform)

    // One n-tile from global x (x is not in the ring): block i's x is loaded a stage ahead,
    // right after block i of the stage before has used its own, so that the loads' latency runs
    // under a whole stage and the ring's wait (v62: loaded after the wait, as the volatile loads
    // were, the first MMA of every block waited on them; loaded just ahead of the wait, ptxas
    // sank them below it again).
    constexpr bool kEarlyX = !kSharedX && kNTiles == 1;
    uint4 x_early[kUnroll][4];
    auto load_early = [&](int sj, bool valid, int i) {  // block i of a tile's stage sj
      if constexpr (kEarlyX) {
        const int j = b_begin + sj * kUnroll + i;
        const int k_left = kk - 128 * j - 8 * w.q;
        if (valid) {
#pragma unroll
          for (int u = 0; u < 4; ++u) x_early[i][u] = load_act_if(xv[0] + 16 * j + 4 * u, j < b_end && 32 * u < k_left);
        }
      }
    };
#pragma unroll
    for (int i = 0; i < kUnroll; ++i) load_early(0, 0 < stages, i);
    // kMultiTile: stage cs of tile ct is the pass's stage st (its ring slot st % kRing).
    for (int ct = 0; ct < n_tpw; ++ct) {
      for (int cs = 0; cs < stages; ++cs) {
        const int st = kMultiTile ? ct * stages + cs : cs;
        // This thread's copies of stage st have landed; then so have the other lanes' (threads'),
        // and slot (st - 1) is free.
        if constexpr (kSharedX) {
          if (st == 0) {
            cp_async_wait<0>();  // the first stages' x came in the last group
          } else {
            cp_async_wait<kRing - 2>();
          }
          __syncthreads();
        } else {
          cp_async_wait<kRing - 2>();
          __syncwarp();
        }
        issue(st + kRing - 1, true);
        const int slot = st % kRing;
#pragma unroll
        for (int i = 0; i < kUnroll; ++i) {
          const int j = b_begin + cs * kUnroll + i;  // (cs = st but with several tiles a warp)
          const bool block_ok = j < b_end;
          // kSharedX: past the slice's end (uniform) the slot may hold no x at all; inside it, x's
          // ring is zero past K and past the expert's tokens, so its loads need no predicate.
          if (kSharedX && !block_ok) break;
          const int k_left = kk - 128 * j - 8 * w.q;  // step u is inside K when 32 u < k_left
          uint4 lo[kVecs], hi[kVecs];
#pragma unroll
          for (int v = 0; v < kVecs; ++v) {
            const uint4* src = ring + (slot * kUnroll + i) * 2 * kVecs * 32 + (ring_read ^ v);
            lo[v] = src[0];
            hi[v] = src[kVecs * 32];
          }
          const GroupParams* gps = params + (slot * kUnroll + i) * kGpb;
          uint32_t z_lo[kGpb], z_hi[kGpb];
          float s_lo[kGpb], s_hi[kGpb];
          uint32_t s2_lo[kGpb][2], s2_hi[kGpb][2];  // kScaled: the scales as packed pairs of T, hi and lo
#pragma unroll
          for (int u = 0; u < kGpb; ++u) {
            const int zl = has_zeros ? zero_at<kBits>(gps[u], false, w.g) : 1 << (kBits - 1);
            const int zh = has_zeros ? zero_at<kBits>(gps[u], true, w.g) : 1 << (kBits - 1);
            if constexpr (kFold) {
              z_lo[u] = __float_as_uint(magic_float(zl));
              z_hi[u] = __float_as_uint(magic_float(zh));
            } else {
              z_lo[u] = zero_operand<T, kBits>(zl);
              z_hi[u] = zero_operand<T, kBits>(zh);
            }
            // Past the slice the ring holds stale bytes: select 0, never multiply them.
            s_lo[u] = block_ok ? scale_at(gps[u], false, w.g, qw.scale_type) : 0.0f;
            s_hi[u] = block_ok ? scale_at(gps[u], true, w.g, qw.scale_type) : 0.0f;
            if constexpr (kScaled) {
              pack2_split<T>(s_lo[u], &s2_lo[u][0], &s2_lo[u][1]);
              pack2_split<T>(s_hi[u], &s2_hi[u][0], &s2_hi[u][1]);
            }
          }
          bool block_ends_group = false;
          if (kGpb == 1 && block_ok && ++cr == bpg) cr = 0, block_ends_group = true;
          const uint4* xb[kNTiles];
          if constexpr (!kSharedX) {
#pragma unroll
            for (int nt = 0; nt < kNTiles; ++nt) xb[nt] = xv[nt] + 16 * j;
          }
          // kSharedX: this lane's fragment of token row g of the block (chunk 4 u + q, swizzled).
          const uint32_t xs = x_lane_s + (slot * kUnroll + i) * L::kXBlockBytes;
#pragma unroll
          for (int u = 0; u < 4; ++u) {
            const int gu = kGpb == 1 ? 0 : u;  // compile-time index
            const bool ok = block_ok && 32 * u < k_left;
            uint32_t words_lo[kVecs == 1 ? 1 : 2], words_hi[kVecs == 1 ? 1 : 2];
            if constexpr (kBits == 4) {
              words_lo[0] = u == 0 ? lo[0].x : u == 1 ? lo[0].y : u == 2 ? lo[0].z : lo[0].w;
              words_hi[0] = u == 0 ? hi[0].x : u == 1 ? hi[0].y : u == 2 ? hi[0].z : hi[0].w;
            } else {
              const uint4& vl = lo[u >> 1];
              const uint4& vh = hi[u >> 1];
              words_lo[0] = (u & 1) ? vl.z : vl.x;
              words_lo[1] = (u & 1) ? vl.w : vl.y;
              words_hi[0] = (u & 1) ? vh.z : vh.x;
              words_hi[1] = (u & 1) ? vh.w : vh.y;
            }
            uint32_t a_lo[4], a_hi[4];
            dequant_step<T, kBits, kFold>(words_lo, z_lo[gu], a_lo);
            dequant_step<T, kBits, kFold>(words_hi, z_hi[gu], a_hi);
            if constexpr (kScaled) {
#pragma unroll
              for (int r = 0; r < 4; ++r) {
                a_lo[r] = mul2_split<T>(a_lo[r], s2_lo[gu][0], s2_lo[gu][1]);
                a_hi[r] = mul2_split<T>(a_hi[r], s2_hi[gu][0], s2_hi[gu][1]);
              }
            }
#pragma unroll
            for (int nt = 0; nt < kNTiles; ++nt) {
              if (nt >= 4 && !upper) continue;  // eight n-tiles: the second half has no token
              const uint4 x = kSharedX             ? gemv::ld_shared16(xs + nt * 8 * 256 + ((64 * u) ^ x_swz))
                              : kEarlyX           ? x_early[i][u]
                                                  : load_act_if(xb[nt] + 4 * u, ok);
              float (&sum)[4] = kScaled ? acc[nt] : part_sum[nt];
              mma_16816<T>(sum, a_lo[0], a_hi[0], a_lo[1], a_hi[1], x.x, x.y);
              mma_16816<T>(sum, a_lo[2], a_hi[2], a_lo[3], a_hi[3], x.z, x.w);
              if constexpr (kFold) {
                constexpr uint32_t one = IntMagic<T>::kOne;
                mma_16816<T>(xsum[nt], one, one, one, one, x.x, x.y);
                mma_16816<T>(xsum[nt], one, one, one, one, x.z, x.w);
              }
            }
            // Step u ends its group, or the slice: scale the group's sums into the result.
            const bool last = u == 3 && j + 1 >= b_end;
            const bool group_end = kGpb == 4 ? (u & spg_shift) == spg_shift : u == 3 && block_ends_group;
            if (!kScaled && (group_end || last)) {
#pragma unroll
              for (int nt = 0; nt < kNTiles; ++nt) {
                if constexpr (kFold) {
                  const float zl = __uint_as_float(z_lo[gu]), zh = __uint_as_float(z_hi[gu]);
                  part_sum[nt][0] = fmaf(-zl, xsum[nt][0], part_sum[nt][0]);
                  part_sum[nt][1] = fmaf(-zl, xsum[nt][1], part_sum[nt][1]);
                  part_sum[nt][2] = fmaf(-zh, xsum[nt][2], part_sum[nt][2]);
                  part_sum[nt][3] = fmaf(-zh, xsum[nt][3], part_sum[nt][3]);
                }
                acc[nt][0] += s_lo[gu] * part_sum[nt][0];
                acc[nt][1] += s_lo[gu] * part_sum[nt][1];
                acc[nt][2] += s_hi[gu] * part_sum[nt][2];
                acc[nt][3] += s_hi[gu] * part_sum[nt][3];
#pragma unroll
                for (int r = 0; r < 4; ++r) part_sum[nt][r] = xsum[nt][r] = 0.0f;
              }
            }
          }
          // the next stage's block i, now that this one has taken its x (kMultiTile: maybe the
          // next tile's first)
          if constexpr (kMultiTile) {
            load_early(cs + 1 == stages ? 0 : cs + 1, st + 1 < n_tpw * stages, i);
          } else {
            load_early(st + 1, st + 1 < stages, i);
          }
        }
      }
      if (ct + 1 == n_tpw) cp_async_wait<0>();  // the pass's last tile
      if constexpr (kOneToken) {
        s_sums.add(p, w, acc[0]);  // one pass: at most 8 pairs
      } else {
        if constexpr (kMultiTile) w.unit0 = tile0 + ct * kUnitRows;
        gemv::finish_pass<T, kSplitK, kNTiles, kGateUp>(p, w, c0, acc, s_partial);
      }
      if constexpr (kMultiTile) {
#pragma unroll
        for (int i = 0; i < 4; ++i) acc[0][i] = part_sum[0][i] = xsum[0][i] = 0.0f;
        cr = first_rem;
      }
    }
  }
  if constexpr (kOneToken) {
    allow_successor();
    __syncthreads();
    s_sums.template store<T>(p, w.unit0);
  }
}

template <auto kKernel>
cudaError_t launch_ring(size_t smem, const GroupedGemvParams& p, const QuantWeightsView& w, cudaStream_t stream,
                        dim3 grid) {
  // Above the default 48 KiB of dynamic shared memory a kernel must opt in (once per kernel).
  static const cudaError_t opt_in =
      cudaFuncSetAttribute(kKernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem));
  if (opt_in != cudaSuccess) return opt_in;
  return launch_with_pdl_smem(kKernel, grid, dim3(kThreads), smem, stream, p, w);
}
template <auto kKernel>
cudaError_t launch_ring(size_t smem, const GroupedGemvParams& p, const QuantWeightsView& w, cudaStream_t stream) {
  return launch_ring<kKernel>(smem, p, w, stream, gemv::grid_for(p));
}

// The down GEMV at one n-tile with `tpw` row tiles per warp (> 1; split 1 or 2): the grid's x
// shrunk to match, from which the kernel derives tpw back (kMultiTile).
template <typename T, int kBits, int kGpb>
cudaError_t launch_multi_tile(const GroupedGemvParams& p, const QuantWeightsView& w, cudaStream_t stream, int tpw) {
  const size_t smem = StageLayout<T, kBits, kGpb, false, 1>::kCtaBytes;
  const dim3 unit = gemv::grid_for(p);
  const dim3 grid((unit.x + tpw - 1) / tpw, unit.y);
  return p.split_k == 1
             ? launch_ring<wna16_gemv_kernel<T, kBits, kGpb, 1, 1, false, false, false, true>>(smem, p, w, stream, grid)
             : launch_ring<wna16_gemv_kernel<T, kBits, kGpb, 2, 1, false, false, false, true>>(smem, p, w, stream, grid);
}

template <typename T, int kBits, int kGpb, int kNTiles, bool kGateUp>
cudaError_t launch_tiles(const GroupedGemvParams& p, const QuantWeightsView& w, cudaStream_t stream, int tpw) {
  if constexpr (kNTiles == 1 && !kGateUp) {
    if (tpw > 1) return launch_multi_tile<T, kBits, kGpb>(p, w, stream, tpw);
  }
  if constexpr (kNTiles == 8) {  // eight n-tiles: unsplit, shared x
    if (p.split_k != 1) return cudaErrorInvalidValue;
    return launch_ring<wna16_gemv_kernel<T, kBits, kGpb, 1, 8, kGateUp, true>>(
        StageLayout<T, kBits, kGpb, true, 8>::kCtaBytes, p, w, stream);
  } else {
    const size_t smem = StageLayout<T, kBits, kGpb, false, kNTiles>::kCtaBytes;
    switch (p.split_k) {
      case 1:
        if constexpr (kNTiles == 4) {  // four n-tiles unsplit: the CTA's shared x
          return launch_ring<wna16_gemv_kernel<T, kBits, kGpb, 1, 4, kGateUp, true>>(
              StageLayout<T, kBits, kGpb, true, 4>::kCtaBytes, p, w, stream);
        }
        return launch_ring<wna16_gemv_kernel<T, kBits, kGpb, 1, kNTiles, kGateUp, false>>(smem, p, w, stream);
      case 2: return launch_ring<wna16_gemv_kernel<T, kBits, kGpb, 2, kNTiles, kGateUp, false>>(smem, p, w, stream);
      case 4: return launch_ring<wna16_gemv_kernel<T, kBits, kGpb, 4, kNTiles, kGateUp, false>>(smem, p, w, stream);
      case 8: return launch_ring<wna16_gemv_kernel<T, kBits, kGpb, 8, kNTiles, kGateUp, false>>(smem, p, w, stream);
      default: return cudaErrorInvalidValue;
    }
  }
}

template <typename T, int kBits, int kGpb>
cudaError_t launch_groups(const GroupedGemvParams& p, const QuantWeightsView& w, cudaStream_t stream, int tpw) {
  if (p.n_tiles == 1) {
    return p.gate_up ? launch_tiles<T, kBits, kGpb, 1, true>(p, w, stream, tpw)
                     : launch_tiles<T, kBits, kGpb, 1, false>(p, w, stream, tpw);
  }
  if (p.n_tiles == 4) {
    return p.gate_up ? launch_tiles<T, kBits, kGpb, 4, true>(p, w, stream, 1) : launch_tiles<T, kBits, kGpb, 4, false>(p, w, stream, 1);
  }
  if (p.n_tiles == 8) {  // eight n-tiles (PERF.md v49, int4 from v53)
    return p.gate_up ? launch_tiles<T, kBits, kGpb, 8, true>(p, w, stream, 1) : launch_tiles<T, kBits, kGpb, 8, false>(p, w, stream, 1);
  }
  return cudaErrorInvalidValue;
}

template <typename T, int kBits>
cudaError_t launch_bits(const GroupedGemvParams& p, const QuantWeightsView& w, cudaStream_t stream, int tpw) {
  return wna16_block_groups(w.groups, w.group_size) ? launch_groups<T, kBits, 1>(p, w, stream, tpw)
                                                    : launch_groups<T, kBits, 4>(p, w, stream, tpw);
}

// One token's down GEMV with the combine (kOneToken): one CTA per 16 rows of out and token, its
// 8 warps one_token_down_experts(topk) experts by one_token_down_split(topk) K slices.
template <typename T, int kBits, int kGpb>
cudaError_t launch_one_token_groups(const GroupedGemvParams& p, const QuantWeightsView& w, cudaStream_t stream) {
  const size_t smem = StageLayout<T, kBits, kGpb, false, 1>::kCtaBytes;
  const dim3 grid(static_cast<unsigned>((p.n_out + 15) / 16), static_cast<unsigned>(gemv::one_token_down_tokens(p)));
  return one_token_down_split(p.topk) == 1
             ? launch_ring<wna16_gemv_kernel<T, kBits, kGpb, 1, 1, false, false, true>>(smem, p, w, stream, grid)
             : launch_ring<wna16_gemv_kernel<T, kBits, kGpb, 2, 1, false, false, true>>(smem, p, w, stream, grid);
}

template <typename T, int kBits>
cudaError_t launch_one_token_bits(const GroupedGemvParams& p, const QuantWeightsView& w, cudaStream_t stream) {
  return wna16_block_groups(w.groups, w.group_size) ? launch_one_token_groups<T, kBits, 1>(p, w, stream)
                                                    : launch_one_token_groups<T, kBits, 4>(p, w, stream);
}

// The checks both launchers share: K < 2^30 and N < 2^27 (the kernel's block, group and
// parameter-stride arithmetic is 32-bit), a layout the kernel reads, an expert table.
bool gemv_args_ok(const GroupedGemvParams& p, const QuantWeightsView& w) {
  return p.k % kVec == 0 && p.k < (int64_t{1} << 30) && p.n_out > 0 && p.n_out < (int64_t{1} << 27) && p.max_active > 0 &&
         p.max_active <= 65535 && wna16_register_layout(w) && gemv_table_ok(p);
}

}  // namespace

cudaError_t launch_wna16_gemv(const GroupedGemvParams& p, const QuantWeightsView& w, cudaStream_t stream,
                              int32_t tiles_per_warp) {
  if (!gemv_args_ok(p, w) || tiles_per_warp < 1 || tiles_per_warp > kWna16MaxTilesPerWarp) return cudaErrorInvalidValue;
  // Several tiles per warp where the kernel has them (wna16_multi_tile_ok); else one.
  const int tpw = wna16_multi_tile_ok(p) ? tiles_per_warp : 1;
  if (p.elem == ElemType::kBF16) {
    return w.bits == 4 ? launch_bits<__nv_bfloat16, 4>(p, w, stream, tpw) : launch_bits<__nv_bfloat16, 8>(p, w, stream, tpw);
  }
  return w.bits == 4 ? launch_bits<__half, 4>(p, w, stream, tpw) : launch_bits<__half, 8>(p, w, stream, tpw);
}

cudaError_t launch_wna16_one_token_down(const GroupedGemvParams& p, const QuantWeightsView& w, cudaStream_t stream) {
  // One token: its experts are at most top-k, which one CTA's warps cover. int4 only (int8 was
  // no faster than the down GEMV and the combine: planner.h, one_token_down).
  if (!gemv_args_ok(p, w) || w.bits != 4 || p.gate_up || p.topk < kOneTokenDownMinTopk || p.topk > kOneTokenDownMaxTopk ||
      p.num_experts <= 0 || gemv::one_token_down_tokens(p) <= 0) {
    return cudaErrorInvalidValue;
  }
  return p.elem == ElemType::kBF16 ? launch_one_token_bits<__nv_bfloat16, 4>(p, w, stream)
                                   : launch_one_token_bits<__half, 4>(p, w, stream);
}

}  // namespace fusedmoe::kernels
