// The reference layer against a straightforward formula: for every token and slot,
// y += w * W2[e] . round(act(W13[e] . x)), with the weights fully dequantized first and no
// alignment, grouping or sampling. Every precision, routing variant and edge shape.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "fusedmoe_ref/numeric.h"
#include "fusedmoe_ref/reference.h"
#include "fusedmoe_ref/synthetic.h"
#include "fusedmoe_ref/tolerance.h"
#include "cpu/test_util.h"

namespace fusedmoe::ref {
namespace {

using testing_util::make_shape;

// Dense fp64 copy of a projection: [E][N][K].
std::vector<double> dense(const ProblemShape& s, DType act, const MoeWeights& w, Projection p) {
  WeightView v;
  EXPECT_TRUE(WeightView::make(s, act, w.quant, p == Projection::kW13 ? w.w13 : w.w2, p, &v).ok());
  std::vector<double> out(static_cast<size_t>(s.num_experts * v.rows() * v.cols()));
  for (int64_t e = 0; e < s.num_experts; ++e) {
    for (int64_t n = 0; n < v.rows(); ++n) v.dequant_row(e, n, &out[(e * v.rows() + n) * v.cols()]);
  }
  return out;
}

// Per-token fp8 quantization written out (the per-row modes); per-tensor modes go through
// the same helper with one scale.
void quantize_rows(const QuantParams& q, float static_scale, std::vector<double>* rows, int64_t cols) {
  if (q.act_quant == ActQuant::kNone) return;
  const int64_t n_rows = static_cast<int64_t>(rows->size()) / cols;
  auto quant_span = [](double* v, int64_t len, float scale) {
    for (int64_t i = 0; i < len; ++i) {
      v[i] = fp8e4m3_to_float(float_to_fp8e4m3(static_cast<float>(v[i]) / scale)) * static_cast<double>(scale);
    }
  };
  auto amax_scale = [](const double* v, int64_t len) {
    double a = 0;
    for (int64_t i = 0; i < len; ++i) a = std::max(a, std::fabs(v[i]));
    return a > 0 ? std::max(static_cast<float>(a) / 448.0f, 0x1p-64f) : 1.0f;
  };
  if (q.act_quant == ActQuant::kPerTensorStatic) {
    quant_span(rows->data(), static_cast<int64_t>(rows->size()), static_scale);
  } else if (q.act_quant == ActQuant::kPerTensorDynamic) {
    quant_span(rows->data(), static_cast<int64_t>(rows->size()), amax_scale(rows->data(), static_cast<int64_t>(rows->size())));
  } else {
    const int64_t g = q.act_quant == ActQuant::kPerToken ? cols : q.block_k;
    for (int64_t r = 0; r < n_rows; ++r) {
      for (int64_t c = 0; c < cols; c += g) {
        double* span = rows->data() + r * cols + c;
        const int64_t len = std::min(g, cols - c);
        quant_span(span, len, amax_scale(span, len));
      }
    }
  }
}

std::vector<double> naive_layer(const LayerData& d, const Checkpoint& ck, const Routing& routing) {
  const MoeInputs& in = d.inputs;
  const ProblemShape& s = in.shape;
  const QuantParams& q = ck.weights.quant;
  const int64_t H = s.hidden, I = s.inter, k = s.topk;
  const std::vector<double> w13 = dense(s, in.act_dtype, ck.weights, Projection::kW13);
  const std::vector<double> w2 = dense(s, in.act_dtype, ck.weights, Projection::kW2);
  std::vector<double> x(static_cast<size_t>(s.m * H));
  for (int64_t i = 0; i < s.m * H; ++i) x[i] = load_as_double(in.x, in.act_dtype, i);
  quantize_rows(q, q.act_quant == ActQuant::kPerTensorStatic ? ck.weights.w13.input_scale[0] : 0.0f, &x, H);
  // Intermediate rows per (token, slot) of local experts, in pair order.
  std::vector<double> act;
  std::vector<int64_t> pair_of_row;
  for (int64_t p = 0; p < s.m * k; ++p) {
    const int32_t id = routing.ids[p];
    const int32_t e = in.expert_map ? in.expert_map[id] : id;
    if (e < 0) continue;
    const double w_in = in.apply_router_weight_on_input ? routing.weights[p] : 1.0;
    for (int64_t c = 0; c < I; ++c) {
      double g = 0, u = 0;
      for (int64_t h = 0; h < H; ++h) {
        g += w13[(e * 2 * I + c) * H + h] * x[(p / k) * H + h];
        u += w13[(e * 2 * I + I + c) * H + h] * x[(p / k) * H + h];
      }
      act.push_back(apply_activation(in.activation, g * w_in, u * w_in));
    }
    pair_of_row.push_back(p);
  }
  // Stored in the activation dtype, then (FP8) quantized from there (docs/FORMATS.md).
  for (double& a : act) a = round_to(in.act_dtype, a);
  if (q.act_quant != ActQuant::kNone) {
    quantize_rows(q, q.act_quant == ActQuant::kPerTensorStatic ? ck.weights.w2.input_scale[0] : 0.0f, &act, I);
  }
  std::vector<double> out(static_cast<size_t>(s.m * H), 0.0);
  for (size_t r = 0; r < pair_of_row.size(); ++r) {
    const int64_t p = pair_of_row[r];
    const int32_t e = in.expert_map ? in.expert_map[routing.ids[p]] : routing.ids[p];
    const double w_out = in.apply_router_weight_on_input ? 1.0 : routing.weights[p];
    for (int64_t h = 0; h < H; ++h) {
      double y = 0;
      for (int64_t c = 0; c < I; ++c) y += w2[(e * H + h) * I + c] * act[r * I + c];
      out[(p / k) * H + h] += y * w_out;
    }
  }
  return out;
}

struct LayerCase {
  std::string precision;
  int64_t m;
  int32_t e;
  int64_t h;
  int64_t i;
  int32_t topk;
  std::string routing;  // softmax, softmax_renorm, grouped, on_input, uniform, skewed, one_expert, ep_half
};

std::string case_name(const LayerCase& c) {
  return c.precision + "_m" + std::to_string(c.m) + "_e" + std::to_string(c.e) + "_h" + std::to_string(c.h) + "_i" +
         std::to_string(c.i) + "_k" + std::to_string(c.topk) + "_" + c.routing;
}

void PrintTo(const LayerCase& c, std::ostream* os) { *os << case_name(c); }

class ReferenceLayer : public ::testing::TestWithParam<LayerCase> {};

TEST_P(ReferenceLayer, MatchesNaiveFormula) {
  const LayerCase c = GetParam();
  Precision prec;
  ASSERT_TRUE(find_precision(c.precision, &prec).ok());
  ProblemShape s = make_shape(c.m, c.h, c.i, c.e, c.topk);
  const bool ep = c.routing == "ep_half";
  if (ep) s.global_num_experts = 2 * c.e;
  const uint64_t seed = std::hash<std::string>()(case_name(c));
  RoutingMode mode = RoutingMode::kRouter;
  if (c.routing == "uniform" || ep) mode = RoutingMode::kUniform;
  if (c.routing == "skewed") mode = RoutingMode::kSkewed;
  if (c.routing == "one_expert") mode = RoutingMode::kOneExpert;
  LayerData d;
  ASSERT_TRUE(make_random_inputs(s, prec.act_dtype, mode, seed, &d).ok());
  if (c.routing == "softmax_renorm") d.inputs.routing.renormalize = true;
  if (c.routing == "grouped") {
    d.inputs.routing.scoring = ScoringFunc::kSigmoid;
    d.inputs.routing.n_group = 4;
    d.inputs.routing.topk_group = 2;
    d.inputs.routing.renormalize = true;
    d.inputs.routing.routed_scaling_factor = 2.5f;
    d.inputs.routing.correction_bias = d.correction_bias.data();
  }
  if (c.routing == "on_input") {
    d.inputs.routing.scoring = ScoringFunc::kSigmoid;
    d.inputs.apply_router_weight_on_input = true;
  }
  if (ep) {  // this GPU holds the odd global experts
    d.expert_map.resize(static_cast<size_t>(2 * c.e));
    for (int32_t g = 0; g < 2 * c.e; ++g) d.expert_map[g] = g % 2 ? g / 2 : -1;
    bind(&d);
  }
  Checkpoint ck;
  ASSERT_TRUE(make_random_checkpoint(s, prec.act_dtype, prec.quant, seed + 1, &ck).ok());

  std::vector<double> got;
  const Status st = run_layer(d.inputs, ck.weights, LayerOptions(), &got);
  ASSERT_TRUE(st.ok()) << st.message();
  Routing routing;
  if (d.inputs.router_logits) {
    ASSERT_TRUE(route(s, d.inputs.routing, d.inputs.router_dtype, d.inputs.router_logits, &routing).ok());
  } else {
    routing.ids = d.topk_ids;
    routing.weights = d.topk_weights;
  }
  const std::vector<double> want = naive_layer(d, ck, routing);
  ASSERT_EQ(got.size(), want.size());
  if (c.m == 0) return;
  // Same function, other summation order: agreement far below any output rounding, except
  // where an fp8 or bf16 rounding of the intermediate can flip (bounded by the tolerance).
  const Comparison cmp = compare(want, got, Tolerance{"reference-vs-naive", 1e-9, 1e-8});
  const bool rounding_flip_possible = prec.quant.act_quant != ActQuant::kNone;
  if (rounding_flip_possible) {
    EXPECT_TRUE(compare(want, got, tolerance_for(prec.act_dtype, prec.quant)).pass) << case_name(c) << " " << cmp.describe();
  } else {
    EXPECT_TRUE(cmp.pass) << case_name(c) << " " << cmp.describe();
  }
  double rms = 0;
  for (double v : want) rms += v * v;
  EXPECT_GT(rms, 0.0) << "a layer with tokens should not be all zeros";
  // Sampled rows equal the full computation's rows.
  if (c.m >= 3 && prec.quant.act_quant != ActQuant::kPerTensorDynamic) {
    LayerOptions opt;
    opt.tokens = {c.m - 1, 0};
    std::vector<double> sampled;
    ASSERT_TRUE(run_layer(d.inputs, ck.weights, opt, &sampled).ok());
    for (int64_t h = 0; h < c.h; ++h) {
      EXPECT_DOUBLE_EQ(sampled[h], got[(c.m - 1) * c.h + h]);
      EXPECT_DOUBLE_EQ(sampled[c.h + h], got[h]);
    }
  }
}

std::vector<LayerCase> layer_cases() {
  std::vector<LayerCase> cases;
  // Every precision on a shape every format accepts (group 128 divides H = 256 and I = 128).
  for (const Precision& p : known_precisions()) {
    cases.push_back({p.name, 5, 8, 256, 128, 2, "softmax_renorm"});
  }
  // Routing variants and edge shapes.
  for (const char* prec : {"bf16", "fp16", "w4a16_awq", "fp8_block"}) {
    cases.push_back({prec, 0, 8, 256, 128, 2, "softmax"});
    cases.push_back({prec, 1, 8, 256, 128, 2, "softmax"});
    cases.push_back({prec, 7, 16, 256, 128, 4, "grouped"});
    cases.push_back({prec, 9, 8, 256, 128, 1, "on_input"});
    cases.push_back({prec, 11, 8, 256, 128, 3, "one_expert"});
    cases.push_back({prec, 13, 8, 256, 128, 2, "skewed"});
    cases.push_back({prec, 6, 8, 256, 128, 2, "ep_half"});
  }
  // Dims that are not multiples of any tile (dense and fp8 accept them).
  cases.push_back({"bf16", 3, 5, 72, 40, 2, "uniform"});
  cases.push_back({"fp8_block", 3, 5, 200, 136, 2, "uniform"});
  cases.push_back({"fp8_channel", 4, 5, 72, 40, 2, "uniform"});
  cases.push_back({"fp8_tensor", 4, 5, 72, 40, 2, "uniform"});
  return cases;
}

INSTANTIATE_TEST_SUITE_P(AllPrecisions, ReferenceLayer, ::testing::ValuesIn(layer_cases()),
                         [](const ::testing::TestParamInfo<LayerCase>& info) { return case_name(info.param); });

TEST(ReferenceLayer, StaticFp8ScalesAndGeluActivations) {
  ProblemShape s = make_shape(4, 64, 32, 4, 2);
  QuantParams q;
  q.format = WeightFormat::kFP8PerTensor;
  q.act_quant = ActQuant::kPerTensorStatic;
  Checkpoint ck;
  ASSERT_TRUE(make_random_checkpoint(s, DType::kBF16, q, 5, &ck).ok());
  for (Activation a : {Activation::kGeluAndMul, Activation::kGeluTanhAndMul, Activation::kSiluAndMul}) {
    LayerData d;
    ASSERT_TRUE(make_random_inputs(s, DType::kBF16, RoutingMode::kUniform, 6, &d).ok());
    d.inputs.activation = a;
    std::vector<double> got;
    ASSERT_TRUE(run_layer(d.inputs, ck.weights, LayerOptions(), &got).ok());
    Routing r{d.topk_ids, d.topk_weights};
    EXPECT_TRUE(compare(naive_layer(d, ck, r), got, kToleranceFP8).pass) << to_string(a);
  }
}

TEST(ReferenceLayer, GateUpRoundingOnlyWhereAsked) {
  // The grouped path's store of GEMM1's sums in the activation dtype: a bf16-sized change,
  // off by default.
  const ProblemShape s = make_shape(5, 64, 32, 4, 2);
  Checkpoint ck;
  ASSERT_TRUE(make_random_checkpoint(s, DType::kBF16, QuantParams(), 7, &ck).ok());
  LayerData d;
  ASSERT_TRUE(make_random_inputs(s, DType::kBF16, RoutingMode::kUniform, 8, &d).ok());
  std::vector<double> plain, rounded;
  ASSERT_TRUE(run_layer(d.inputs, ck.weights, LayerOptions(), &plain).ok());
  LayerOptions opt;
  opt.round_gate_up = true;
  ASSERT_TRUE(run_layer(d.inputs, ck.weights, opt, &rounded).ok());
  EXPECT_NE(plain, rounded);
  EXPECT_TRUE(compare(plain, rounded, kToleranceBF16).pass);
}

TEST(ReferenceLayer, ActivationFunctions) {
  EXPECT_NEAR(apply_activation(Activation::kSiluAndMul, 1.0, 2.0), 2.0 / (1.0 + std::exp(-1.0)), 1e-15);
  EXPECT_NEAR(apply_activation(Activation::kGeluAndMul, 1.0, 1.0), 0.8413447460685429, 1e-12);
  EXPECT_NEAR(apply_activation(Activation::kGeluTanhAndMul, 1.0, 1.0), 0.8411919906082768, 1e-12);
}

TEST(ReferenceLayer, Fp8FakeQuantizeHandValues) {
  // Per-token: row amax 448 -> scale 1: values keep their nearest e4m3.
  std::vector<double> v = {448.0, 1.0625, -3.3, 0.0};
  ASSERT_TRUE(fake_quantize_fp8(ActQuant::kPerToken, 0, 0.0f, 1, 4, v.data()).ok());
  EXPECT_EQ(v, (std::vector<double>{448.0, 1.0, -3.25, 0.0}));
  // An all-zero row stays zero (scale 1, not a division by zero).
  std::vector<double> z(8, 0.0);
  ASSERT_TRUE(fake_quantize_fp8(ActQuant::kPerGroup, 4, 0.0f, 1, 8, z.data()).ok());
  EXPECT_EQ(z, std::vector<double>(8, 0.0));
  // Groups of 2: each group scaled by its own amax.
  std::vector<double> g = {896.0, 0.3, 0.5, 0.25};
  ASSERT_TRUE(fake_quantize_fp8(ActQuant::kPerGroup, 2, 0.0f, 1, 4, g.data()).ok());
  EXPECT_EQ(g[0], 896.0);
  EXPECT_EQ(g[1], 0.3125);  // scale 2: 0.15 rounds to the e4m3 value 0.15625
  // Scale 0.5f / 448 is inexact in fp32: 0.5 / s lands next to 448, not on it.
  EXPECT_NEAR(g[2], 0.5, 1e-6);
  EXPECT_NEAR(g[3], 0.25, 1e-6);
  const Status st = fake_quantize_fp8(ActQuant::kPerTensorStatic, 0, -1.0f, 1, 4, g.data());
  EXPECT_EQ(st.message(), "input_scale: expected finite and > 0, got -1");
}

TEST(ReferenceLayer, EmptyBatchGivesEmptyOutput) {
  ProblemShape s = make_shape(0, 64, 32, 4, 2);
  Checkpoint ck;
  ASSERT_TRUE(make_random_checkpoint(s, DType::kBF16, QuantParams(), 1, &ck).ok());
  MoeInputs in;
  in.shape = s;  // no x, no routing: nothing is read for m = 0
  std::vector<double> out = {1.0};
  ASSERT_TRUE(run_layer(in, ck.weights, LayerOptions(), &out).ok());
  EXPECT_TRUE(out.empty());
}

}  // namespace
}  // namespace fusedmoe::ref
