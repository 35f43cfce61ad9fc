// Reference alignment: invariants on random routings, expert parallelism and bad ids.
#include <gtest/gtest.h>

#include <vector>

#include "fusedmoe_ref/random.h"
#include "fusedmoe_ref/reference.h"

namespace fusedmoe::ref {
namespace {

void check_invariants(const std::vector<int32_t>& ids, int64_t m, int32_t k, int32_t global, const int32_t* map,
                      int32_t e_local, const Alignment& al) {
  const int32_t bm = al.block_m;
  std::vector<int> seen(static_cast<size_t>(m * k), 0);
  ASSERT_EQ(al.padded_offsets.back() % bm, 0);
  ASSERT_EQ(al.sorted_pairs.size(), static_cast<size_t>(al.padded_offsets.back()));
  ASSERT_EQ(al.tile_expert.size(), static_cast<size_t>(al.padded_offsets.back() / bm));
  int64_t skipped = 0;
  for (int64_t p = 0; p < m * k; ++p) skipped += (map && map[ids[p]] < 0) ? 1 : 0;
  EXPECT_EQ(al.skipped_pairs, skipped);
  for (int32_t e = 0; e < e_local; ++e) {
    const int64_t begin = al.padded_offsets[e], end = al.padded_offsets[e + 1];
    EXPECT_EQ(begin % bm, 0);
    EXPECT_EQ(al.expert_offsets[e + 1] - al.expert_offsets[e], al.expert_counts[e]);
    EXPECT_LT(end - begin - al.expert_counts[e], bm);  // less than one block of padding
    int32_t previous = -1;
    for (int64_t i = begin; i < end; ++i) {
      const int32_t p = al.sorted_pairs[i];
      if (i - begin >= al.expert_counts[e]) {
        EXPECT_EQ(p, Alignment::kPad) << "padding must follow the expert's pairs";
        continue;
      }
      ASSERT_GE(p, 0);
      ASSERT_LT(p, m * k);
      EXPECT_GT(p, previous) << "token order within an expert";
      previous = p;
      const int32_t local = map ? map[ids[p]] : ids[p];
      EXPECT_EQ(local, e);
      ++seen[p];
    }
    for (int64_t t = begin / bm; t < end / bm; ++t) EXPECT_EQ(al.tile_expert[t], e);
  }
  for (int64_t p = 0; p < m * k; ++p) {
    const bool local = !map || map[ids[p]] >= 0;
    EXPECT_EQ(seen[p], local ? 1 : 0) << "pair " << p;
  }
  (void)global;
}

TEST(Align, RandomRoutingInvariants) {
  Rng rng(21);
  for (int32_t bm : {1, 16, 64}) {
    for (int64_t m : {0, 1, 3, 64, 255}) {
      const int32_t e = 60, k = 4;
      std::vector<int32_t> ids(static_cast<size_t>(m * k));
      for (auto& id : ids) id = static_cast<int32_t>(rng.below(e));
      Alignment al;
      ASSERT_TRUE(align_tokens(ids.data(), m, k, e, nullptr, e, bm, &al).ok());
      check_invariants(ids, m, k, e, nullptr, e, al);
    }
  }
}

TEST(Align, AllTokensOnOneExpertAndEmptyExperts) {
  const int64_t m = 33;
  std::vector<int32_t> ids(static_cast<size_t>(m), 5);
  Alignment al;
  ASSERT_TRUE(align_tokens(ids.data(), m, 1, 8, nullptr, 8, 16, &al).ok());
  check_invariants(ids, m, 1, 8, nullptr, 8, al);
  EXPECT_EQ(al.expert_counts[5], 33);
  EXPECT_EQ(al.padded_offsets[8], 48);
  EXPECT_EQ(al.tile_expert, (std::vector<int32_t>{5, 5, 5}));
}

TEST(Align, ExpertMapSkipsAbsentExperts) {
  // 16 global experts, this GPU holds the odd ones as local 0..7.
  std::vector<int32_t> map(16);
  for (int g = 0; g < 16; ++g) map[g] = g % 2 ? g / 2 : -1;
  Rng rng(4);
  const int64_t m = 40;
  const int32_t k = 3;
  std::vector<int32_t> ids(static_cast<size_t>(m * k));
  for (auto& id : ids) id = static_cast<int32_t>(rng.below(16));
  Alignment al;
  ASSERT_TRUE(align_tokens(ids.data(), m, k, 16, map.data(), 8, 8, &al).ok());
  check_invariants(ids, m, k, 16, map.data(), 8, al);
  EXPECT_GT(al.skipped_pairs, 0);
}

TEST(Align, BadIdsAndMapsAreNamed) {
  std::vector<int32_t> ids = {0, 1, 2, 9};
  Alignment al;
  Status st = align_tokens(ids.data(), 2, 2, 8, nullptr, 8, 16, &al);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(st.message(), "topk_ids[1][1]: expected an expert id in 0..7, got 9");
  ids[3] = -2;
  st = align_tokens(ids.data(), 2, 2, 8, nullptr, 8, 16, &al);
  EXPECT_EQ(st.message(), "topk_ids[1][1]: expected an expert id in 0..7, got -2");
  std::vector<int32_t> map = {0, 1, 2, 3, -1, -1, -1, 4};
  ids[3] = 1;
  st = align_tokens(ids.data(), 2, 2, 8, map.data(), 4, 16, &al);
  EXPECT_EQ(st.message(), "expert_map[7]: expected -1 (not on this GPU) or a local expert 0..3, got 4");
  st = align_tokens(nullptr, 2, 2, 8, nullptr, 8, 16, &al);
  EXPECT_EQ(st.message(), "topk_ids: expected a pointer to [m, topk] int32, got nullptr");
}

}  // namespace
}  // namespace fusedmoe::ref
