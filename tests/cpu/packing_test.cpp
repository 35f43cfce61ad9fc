// Packers against hand-written words, as GPTQ, AutoAWQ and vLLM's moe_wna16 store them.
#include <gtest/gtest.h>

#include "fusedmoe_ref/packing.h"
#include "kernels/wna16_fragment.h"

namespace fusedmoe::ref {
namespace {

TEST(PackingGPTQ, Int4QweightPacksAlongK) {
  // K = 8 rows, N = 2 columns: column 0 holds 0..7 down K, column 1 holds 15..8.
  std::vector<uint32_t> codes;
  for (uint32_t k = 0; k < 8; ++k) {
    codes.push_back(k);
    codes.push_back(15 - k);
  }
  const std::vector<int32_t> words = pack_gptq_qweight(codes, 8, 2, 4);
  ASSERT_EQ(words.size(), 2u);
  EXPECT_EQ(static_cast<uint32_t>(words[0]), 0x76543210u);
  EXPECT_EQ(static_cast<uint32_t>(words[1]), 0x89abcdefu);
}

TEST(PackingGPTQ, Int8QweightPacksFourAlongK) {
  const std::vector<int32_t> words = pack_gptq_qweight({1, 2, 3, 200}, 4, 1, 8);
  ASSERT_EQ(words.size(), 1u);
  EXPECT_EQ(static_cast<uint32_t>(words[0]), 0xc8030201u);
}

TEST(PackingGPTQ, ClassicZerosStoreZeroMinusOne) {
  // True zeros 1..8 along N are stored as 0..7; a true zero of 0 wraps to 15.
  EXPECT_EQ(static_cast<uint32_t>(pack_gptq_qzeros({1, 2, 3, 4, 5, 6, 7, 8}, 1, 8, 4, true)[0]), 0x76543210u);
  EXPECT_EQ(static_cast<uint32_t>(pack_gptq_qzeros({0, 0, 0, 0, 0, 0, 0, 0}, 1, 8, 4, true)[0]), 0xffffffffu);
  // gptq_v2 stores the zero itself.
  EXPECT_EQ(static_cast<uint32_t>(pack_gptq_qzeros({1, 2, 3, 4, 5, 6, 7, 8}, 1, 8, 4, false)[0]), 0x87654321u);
  // Symmetric int4 checkpoints store 0x77777777: true zero 8 everywhere.
  EXPECT_EQ(static_cast<uint32_t>(pack_gptq_qzeros(std::vector<uint32_t>(8, 8), 1, 8, 4, true)[0]), 0x77777777u);
}

TEST(PackingAWQ, InterleavedNibbleOrder) {
  // Columns 0..7 with values 0..7: nibble i holds column {0,2,4,6,1,3,5,7}[i].
  EXPECT_EQ(static_cast<uint32_t>(pack_awq({0, 1, 2, 3, 4, 5, 6, 7}, 1, 8)[0]), 0x75316420u);
  // Two rows, 16 columns: one word per (row, 8 columns).
  std::vector<uint32_t> codes(32, 0);
  codes[16 + 8 + 1] = 0xa;  // row 1, column 9 -> word 3, nibble 4
  const std::vector<int32_t> w = pack_awq(codes, 2, 16);
  ASSERT_EQ(w.size(), 4u);
  EXPECT_EQ(static_cast<uint32_t>(w[3]), 0x000a0000u);
  EXPECT_EQ(w[0] | w[1] | w[2], 0);
}

TEST(PackingWNA16, LowNibbleFirst) {
  // qweight [N=2][K=4] 4-bit: bytes [n][k/2], even k in the low nibble.
  const std::vector<uint8_t> q = pack_wna16_qweight({3, 10, 1, 2, 15, 0, 7, 8}, 2, 4, 4);
  ASSERT_EQ(q.size(), 4u);
  EXPECT_EQ(q[0], 0xa3);
  EXPECT_EQ(q[1], 0x21);
  EXPECT_EQ(q[2], 0x0f);
  EXPECT_EQ(q[3], 0x87);
  // qzeros [N=2][G=1]: rows packed in pairs along N, even row low.
  EXPECT_EQ(pack_wna16_qzeros({5, 9}, 2, 1, 4)[0], 0x95);
  // int8: one value per byte.
  EXPECT_EQ(pack_wna16_qweight({200, 7}, 1, 2, 8), (std::vector<uint8_t>{200, 7}));
}

}  // namespace
}  // namespace fusedmoe::ref

namespace fusedmoe::kernels {
namespace {

// One row's 128-k block in the prepared integer layout as docs/FORMATS.md defines it: quarter
// q of the block holds, for steps u = 0..3, the 8 codes of k = 32 u + 8 q + (0..7); int4 one
// word per step, nibble i holding k offset {0,2,4,6,1,3,5,7}[i]; int8 two words per step,
// bytes in k order.
std::vector<uint32_t> prepared_block(const std::vector<uint32_t>& codes, int bits) {
  static const int kOffset[8] = {0, 2, 4, 6, 1, 3, 5, 7};
  std::vector<uint32_t> words(bits == 4 ? 16 : 32, 0u);
  for (int q = 0; q < 4; ++q) {
    for (int u = 0; u < 4; ++u) {
      const int k0 = 32 * u + 8 * q;
      for (int i = 0; i < 8; ++i) {
        if (bits == 4) {
          words[4 * q + u] |= codes[k0 + kOffset[i]] << (4 * i);
        } else {
          words[8 * q + 2 * u + i / 4] |= codes[k0 + i] << (8 * (i % 4));
        }
      }
    }
  }
  return words;
}

TEST(PreparedLayout, WgmmaFragmentsReadNaturalK) {
  // wna16_grouped_gemm's thread q reads k 16 s + 8 r + 2q and + 1 of slice s, run r, from the
  // word wgmma_fragment_word names, (w >> 4q) & 0x000F000F (int4) or two bytes (int8); the
  // kernel keeps half h = s & 1 of a block's words in registers (int4 8, int8 16 per row) and
  // takes int8's word for q as the one for q = 0 plus q >> 1, the shift and byte from slice 0.
  for (int bits : {4, 8}) {
    SCOPED_TRACE(bits);
    std::vector<uint32_t> codes(128);
    for (int k = 0; k < 128; ++k) codes[k] = static_cast<uint32_t>((k * 7 + 3) % (1 << bits));
    const std::vector<uint32_t> words = prepared_block(codes, bits);
    const int half_words = bits == 4 ? 8 : 16;
    for (int s = 0; s < 8; ++s) {
      for (int r = 0; r < 2; ++r) {
        for (int q = 0; q < 4; ++q) {
          const FragmentWord f = wgmma_fragment_word(bits, s, r, q);
          const int k = 16 * s + 8 * r + 2 * q;
          const uint32_t w = words[f.word];
          if (bits == 4) {
            const uint32_t pair = (w >> f.shift) & 0x000F000Fu;
            EXPECT_EQ(pair & 0xFu, codes[k]) << s << " " << r << " " << q;
            EXPECT_EQ(pair >> 16, codes[k + 1]) << s << " " << r << " " << q;
          } else {
            EXPECT_EQ((w >> (8 * f.byte)) & 0xFFu, codes[k]) << s << " " << r << " " << q;
            EXPECT_EQ((w >> (8 * (f.byte + 1))) & 0xFFu, codes[k + 1]) << s << " " << r << " " << q;
          }
          const int local = wgmma_fragment_word(bits, s, r, 0).word - half_words * (s & 1);
          EXPECT_GE(local, 0);
          EXPECT_LT(local + (bits == 8 ? q >> 1 : 0), half_words);
          EXPECT_EQ(f.word, wgmma_fragment_word(bits, s, r, 0).word + (bits == 8 ? q >> 1 : 0));
          EXPECT_EQ(f.shift, wgmma_fragment_word(bits, 0, 0, q).shift);
          EXPECT_EQ(f.byte, wgmma_fragment_word(bits, 0, 0, q).byte);
        }
      }
    }
  }
}

}  // namespace
}  // namespace fusedmoe::kernels
