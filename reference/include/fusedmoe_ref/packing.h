// Packers that write integer codes exactly as the checkpoint tools store them (GPTQ,
// AutoAWQ, vLLM moe_wna16). One expert at a time; inputs are row-major unsigned codes.
// They are the inverse of WeightView's unpacking and are tested against hand-written words.
#pragma once

#include <cstdint>
#include <vector>

namespace fusedmoe::ref {

/// GPTQ qweight: codes[K][N] (0 <= code < 2^bits) -> int32 words [K / (32/bits)][N]; value k
/// sits in bits (k % pack) * bits of word [k / pack][n].
std::vector<int32_t> pack_gptq_qweight(const std::vector<uint32_t>& codes, int64_t k, int64_t n, int bits);

/// GPTQ qzeros: zeros[G][N] (true zero points) -> int32 words [G][N / pack] packed along N.
/// minus_one: the classic format stores zero - 1 (wrapping 0 to 2^bits - 1, as GPTQ's int32
/// arithmetic does).
std::vector<int32_t> pack_gptq_qzeros(const std::vector<uint32_t>& zeros, int64_t g, int64_t n, int bits,
                                      bool minus_one);

/// AWQ qweight / qzeros: codes[R][N] (4-bit) -> int32 words [R][N / 8]; nibble i of a word
/// holds column 8 * (n / 8) + {0,2,4,6,1,3,5,7}[i].
std::vector<int32_t> pack_awq(const std::vector<uint32_t>& codes, int64_t rows, int64_t n);

/// moe_wna16 qweight: codes[N][K] -> uint8 [N][K / (8/bits)]; value k in bits (k % pack) * bits.
std::vector<uint8_t> pack_wna16_qweight(const std::vector<uint32_t>& codes, int64_t n, int64_t k, int bits);

/// moe_wna16 qzeros: zeros[N][G] -> uint8 [N / (8/bits)][G]; row n in bits (n % pack) * bits.
std::vector<uint8_t> pack_wna16_qzeros(const std::vector<uint32_t>& zeros, int64_t n, int64_t g, int bits);

}  // namespace fusedmoe::ref
