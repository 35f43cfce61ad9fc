#include "fusedmoe_ref/packing.h"

#include <cstddef>

namespace fusedmoe::ref {

namespace {

constexpr int kAwqOrder[8] = {0, 2, 4, 6, 1, 3, 5, 7};

uint32_t mask(int bits) { return (1u << bits) - 1u; }

}  // namespace

std::vector<int32_t> pack_gptq_qweight(const std::vector<uint32_t>& codes, int64_t k, int64_t n, int bits) {
  const int pack = 32 / bits;
  std::vector<uint32_t> words(static_cast<size_t>(k / pack * n), 0u);
  for (int64_t r = 0; r < k; ++r) {
    for (int64_t c = 0; c < n; ++c) {
      words[(r / pack) * n + c] |= (codes[r * n + c] & mask(bits)) << ((r % pack) * bits);
    }
  }
  return std::vector<int32_t>(words.begin(), words.end());
}

std::vector<int32_t> pack_gptq_qzeros(const std::vector<uint32_t>& zeros, int64_t g, int64_t n, int bits,
                                      bool minus_one) {
  const int pack = 32 / bits;
  std::vector<uint32_t> words(static_cast<size_t>(g * (n / pack)), 0u);
  for (int64_t r = 0; r < g; ++r) {
    for (int64_t c = 0; c < n; ++c) {
      const uint32_t stored = (zeros[r * n + c] - (minus_one ? 1u : 0u)) & mask(bits);
      words[r * (n / pack) + c / pack] |= stored << ((c % pack) * bits);
    }
  }
  return std::vector<int32_t>(words.begin(), words.end());
}

std::vector<int32_t> pack_awq(const std::vector<uint32_t>& codes, int64_t rows, int64_t n) {
  std::vector<uint32_t> words(static_cast<size_t>(rows * (n / 8)), 0u);
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c0 = 0; c0 < n; c0 += 8) {
      uint32_t word = 0;
      for (int i = 0; i < 8; ++i) word |= (codes[r * n + c0 + kAwqOrder[i]] & 0xfu) << (4 * i);
      words[r * (n / 8) + c0 / 8] = word;
    }
  }
  return std::vector<int32_t>(words.begin(), words.end());
}

std::vector<uint8_t> pack_wna16_qweight(const std::vector<uint32_t>& codes, int64_t n, int64_t k, int bits) {
  const int pack = 8 / bits;
  std::vector<uint8_t> bytes(static_cast<size_t>(n * (k / pack)), 0);
  for (int64_t r = 0; r < n; ++r) {
    for (int64_t c = 0; c < k; ++c) {
      bytes[r * (k / pack) + c / pack] |= static_cast<uint8_t>((codes[r * k + c] & mask(bits)) << ((c % pack) * bits));
    }
  }
  return bytes;
}

std::vector<uint8_t> pack_wna16_qzeros(const std::vector<uint32_t>& zeros, int64_t n, int64_t g, int bits) {
  const int pack = 8 / bits;
  std::vector<uint8_t> bytes(static_cast<size_t>(n / pack * g), 0);
  for (int64_t r = 0; r < n; ++r) {
    for (int64_t c = 0; c < g; ++c) {
      bytes[(r / pack) * g + c] |= static_cast<uint8_t>((zeros[r * g + c] & mask(bits)) << ((r % pack) * bits));
    }
  }
  return bytes;
}

}  // namespace fusedmoe::ref
