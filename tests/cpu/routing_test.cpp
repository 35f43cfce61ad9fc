// Reference routing against brute force and hand-made cases.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "fusedmoe_ref/random.h"
#include "fusedmoe_ref/reference.h"
#include "fusedmoe_ref/synthetic.h"
#include "cpu/test_util.h"

namespace fusedmoe::ref {
namespace {

using testing_util::make_shape;

ProblemShape shape_of(int64_t m, int32_t e, int32_t k) {
  return make_shape(m, 8, 8, e, k);
}

TEST(Routing, SoftmaxTopkMatchesBruteForce) {
  const int64_t m = 37;
  const int32_t e = 12, k = 3;
  Rng rng(3);
  std::vector<float> logits(static_cast<size_t>(m * e));
  for (auto& l : logits) l = static_cast<float>(rng.normal());
  for (bool renorm : {false, true}) {
    RoutingConfig cfg;
    cfg.renormalize = renorm;
    cfg.routed_scaling_factor = 1.5f;
    Routing r;
    ASSERT_TRUE(route(shape_of(m, e, k), cfg, DType::kFP32, logits.data(), &r).ok());
    for (int64_t t = 0; t < m; ++t) {
      // Brute force: the k largest logits are the k largest softmax probabilities.
      std::vector<int> order(e);
      for (int i = 0; i < e; ++i) order[i] = i;
      std::sort(order.begin(), order.end(), [&](int a, int b) { return logits[t * e + a] > logits[t * e + b]; });
      double z = 0, chosen = 0;
      for (int i = 0; i < e; ++i) z += std::exp(static_cast<double>(logits[t * e + i]));
      for (int s = 0; s < k; ++s) chosen += std::exp(static_cast<double>(logits[t * e + order[s]])) / z;
      for (int s = 0; s < k; ++s) {
        EXPECT_EQ(r.ids[t * k + s], order[s]);
        const double p = std::exp(static_cast<double>(logits[t * e + order[s]])) / z;
        EXPECT_NEAR(r.weights[t * k + s], (renorm ? p / chosen : p) * 1.5, 1e-6);
      }
    }
  }
}

TEST(Routing, TiesGoToLowerIndex) {
  std::vector<float> logits = {1.0f, 2.0f, 2.0f, 2.0f};
  Routing r;
  ASSERT_TRUE(route(shape_of(1, 4, 2), RoutingConfig(), DType::kFP32, logits.data(), &r).ok());
  EXPECT_EQ(r.ids, (std::vector<int32_t>{1, 2}));
}

TEST(Routing, SigmoidBiasChoosesButDoesNotWeigh) {
  // Logit 0 for every expert: sigmoid 0.5 each. The bias alone decides the choice.
  std::vector<float> logits(4, 0.0f);
  std::vector<float> bias = {0.0f, 0.3f, -0.1f, 0.2f};
  RoutingConfig cfg;
  cfg.scoring = ScoringFunc::kSigmoid;
  cfg.correction_bias = bias.data();
  cfg.n_group = 2;
  cfg.topk_group = 2;
  Routing r;
  ASSERT_TRUE(route(shape_of(1, 4, 2), cfg, DType::kFP32, logits.data(), &r).ok());
  EXPECT_EQ(r.ids, (std::vector<int32_t>{1, 3}));
  EXPECT_FLOAT_EQ(r.weights[0], 0.5f);
  EXPECT_FLOAT_EQ(r.weights[1], 0.5f);
}

TEST(Routing, DeepSeekGroupedTopk) {
  // 8 experts in 4 groups of 2, topk_group 2, topk 2. With a bias, a group scores the sum of
  // its two biased scores. Logits put the single best expert (0) in a group whose partner is
  // poor, so group scores (not the best expert) decide.
  std::vector<float> logits = {4.0f, -4.0f, 1.0f, 1.0f, 0.5f, 0.5f, 2.0f, -3.0f};
  std::vector<float> bias(8, 0.0f);
  RoutingConfig cfg;
  cfg.scoring = ScoringFunc::kSigmoid;
  cfg.correction_bias = bias.data();
  cfg.n_group = 4;
  cfg.topk_group = 2;
  cfg.renormalize = true;
  cfg.routed_scaling_factor = 2.5f;
  Routing r;
  ASSERT_TRUE(route(shape_of(1, 8, 2), cfg, DType::kFP32, logits.data(), &r).ok());
  auto sig = [](double x) { return 1.0 / (1.0 + std::exp(-x)); };
  // group sums: g0 = s(4)+s(-4) = 1.0, g1 = 2 s(1) = 1.462, g2 = 2 s(.5) = 1.245, g3 = s(2)+s(-3) = 0.928
  // -> groups 1 and 2; best experts there: 2 and 3 (tie at s(1): lower index first).
  EXPECT_EQ(r.ids, (std::vector<int32_t>{2, 3}));
  EXPECT_NEAR(r.weights[0], 2.5 * 0.5, 1e-6);
  EXPECT_NEAR(r.weights[1], 2.5 * 0.5, 1e-6);
  // Without a bias a group scores its best expert: groups 0 (s(4)) and 3 (s(2)).
  cfg.correction_bias = nullptr;
  cfg.renormalize = false;
  ASSERT_TRUE(route(shape_of(1, 8, 2), cfg, DType::kFP32, logits.data(), &r).ok());
  EXPECT_EQ(r.ids, (std::vector<int32_t>{0, 6}));
  EXPECT_NEAR(r.weights[0], 2.5 * sig(4.0), 1e-6);
  EXPECT_NEAR(r.weights[1], 2.5 * sig(2.0), 1e-6);
}

TEST(Routing, GroupedRandomStaysInChosenGroups) {
  const int64_t m = 50;
  const int32_t e = 32, k = 8;
  Rng rng(8);
  std::vector<float> logits(static_cast<size_t>(m * e)), bias(e);
  for (auto& l : logits) l = static_cast<float>(rng.normal());
  for (auto& b : bias) b = static_cast<float>(0.1 * rng.normal());
  RoutingConfig cfg;
  cfg.scoring = ScoringFunc::kSigmoid;
  cfg.correction_bias = bias.data();
  cfg.n_group = 8;
  cfg.topk_group = 4;
  cfg.renormalize = true;
  Routing r;
  ASSERT_TRUE(route(shape_of(m, e, k), cfg, DType::kFP32, logits.data(), &r).ok());
  for (int64_t t = 0; t < m; ++t) {
    std::set<int> groups, ids;
    double sum = 0;
    for (int s = 0; s < k; ++s) {
      groups.insert(r.ids[t * k + s] / 4);
      ids.insert(r.ids[t * k + s]);
      sum += r.weights[t * k + s];
    }
    EXPECT_LE(groups.size(), 4u);
    EXPECT_EQ(ids.size(), static_cast<size_t>(k));
    EXPECT_NEAR(sum, 1.0, 1e-5);
  }
}

TEST(Routing, Bf16LogitsAreRead) {
  std::vector<uint16_t> logits = {0x3f80, 0x4000, 0xbf80};  // 1, 2, -1
  Routing r;
  ASSERT_TRUE(route(shape_of(1, 3, 1), RoutingConfig(), DType::kBF16, logits.data(), &r).ok());
  EXPECT_EQ(r.ids[0], 1);
}

// The bench's balanced synthetic routing: every expert m * topk / E pairs (rounded), distinct
// experts per token, at shapes whose pairs do and do not divide by E.
TEST(Routing, BalancedSyntheticRoutingFillsEveryExpertEqually) {
  struct Case {
    int64_t m;
    int32_t e, k;
  };
  for (const Case c : {Case{1024, 128, 8}, Case{256, 4, 1}, Case{13, 6, 4}, Case{3, 8, 8}}) {
    LayerData d;
    ASSERT_TRUE(make_random_inputs(shape_of(c.m, c.e, c.k), DType::kBF16, RoutingMode::kBalanced, 5, &d).ok());
    std::vector<int64_t> count(static_cast<size_t>(c.e), 0);
    for (int64_t t = 0; t < c.m; ++t) {
      const std::set<int32_t> token(d.topk_ids.begin() + t * c.k, d.topk_ids.begin() + (t + 1) * c.k);
      EXPECT_EQ(token.size(), static_cast<size_t>(c.k)) << "token " << t;
      for (int32_t id : token) ++count[static_cast<size_t>(id)];
    }
    const int64_t pairs = c.m * c.k;
    const auto [lo, hi] = std::minmax_element(count.begin(), count.end());
    EXPECT_EQ(*lo, pairs / c.e) << c.m << " x " << c.k << " on " << c.e;
    EXPECT_EQ(*hi, (pairs + c.e - 1) / c.e) << c.m << " x " << c.k << " on " << c.e;
  }
}

TEST(Routing, BadConfigsAreNamed) {
  std::vector<float> logits(16, 0.0f);
  Routing r;
  RoutingConfig cfg;
  cfg.n_group = 3;  // 16 experts do not split into 3 groups
  cfg.topk_group = 1;
  Status st = route(shape_of(1, 16, 2), cfg, DType::kFP32, logits.data(), &r);
  EXPECT_EQ(st.message(), "routing.n_group: expected a positive divisor of the global expert count 16, got 3");
  cfg.n_group = 64;  // divides 128 experts, but routing takes one group per lane
  st = route(shape_of(1, 128, 2), cfg, DType::kFP32, std::vector<float>(128, 0.0f).data(), &r);
  EXPECT_EQ(st.message(), "routing.n_group: expected <= 32 (one group per lane), got 64");
  cfg.n_group = 4;
  cfg.topk_group = 1;  // 4 eligible experts < topk 6
  st = route(shape_of(1, 16, 6), cfg, DType::kFP32, logits.data(), &r);
  EXPECT_EQ(st.message(), "shape.topk: expected <= topk_group * experts per group = 4, got 6");
  st = route(shape_of(2, 16, 2), RoutingConfig(), DType::kFP32, nullptr, &r);
  EXPECT_EQ(st.message(), "router_logits: expected a pointer to [m, global experts] data, got nullptr");
  st = route(shape_of(1, 16, 2), RoutingConfig(), DType::kInt32, logits.data(), &r);
  EXPECT_EQ(st.message(), "router_dtype: expected fp32, bf16 or fp16, got int32");
}

}  // namespace
}  // namespace fusedmoe::ref
