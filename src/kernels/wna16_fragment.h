// Where wgmma's register operand finds its codes in the prepared integer layout
// (docs/FORMATS.md, "Prepared integer layout"; wna16_grouped_gemm.cu). Plain constexpr
// arithmetic, no CUDA headers (device code calls it through --expt-relaxed-constexpr): the
// CPU tests check it against the layout's definition.
#pragma once

namespace fusedmoe::kernels {

/// Thread (g, q) of a wgmma warp holds, for 16-k slice `slice` (0..7) of a 128-k block, the
/// weights of k 16 slice + 2q, + 1 (run 0) and 16 slice + 8 + 2q, + 1 (run 1). Each run's
/// pair comes from one word of the row's block: `word` (0..15 for int4, 0..31 for int8), at
/// `(w >> 4q) & 0x000F000F` for int4 (shift = 4q: nibbles q and 4 + q hold k offsets 2q and
/// 2q + 1 of the word's 8-k run), bytes `byte` and `byte + 1` for int8.
struct FragmentWord {
  int word;
  int shift;  // int4
  int byte;   // int8
};
constexpr FragmentWord wgmma_fragment_word(int bits, int slice, int run, int q) {
  // The run's 8 k start at 16 slice + 8 run = 32 step + 8 quarter: quarter 2 (slice & 1) + run, step slice / 2.
  const int quarter = 2 * (slice & 1) + run, step = slice >> 1;
  if (bits == 4) return FragmentWord{4 * quarter + step, 4 * q, 0};
  return FragmentWord{8 * quarter + 2 * step + (q >> 1), 0, (2 * q) & 3};
}

}  // namespace fusedmoe::kernels
