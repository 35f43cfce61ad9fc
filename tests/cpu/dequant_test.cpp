// WeightView against the definition written out independently: the test draws integer
// codes, zeros and scales, packs them with the (separately tested) packers, and expects
// (code - zero) * scale computed from its own arrays, never from unpacked words. And the
// round trip dense -> quantize_checkpoint -> WeightView for every integer format.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#include "fusedmoe_ref/numeric.h"
#include "fusedmoe_ref/packing.h"
#include "fusedmoe_ref/random.h"
#include "fusedmoe_ref/reference.h"
#include "fusedmoe_ref/synthetic.h"
#include "fusedmoe_ref/tolerance.h"
#include "cpu/test_util.h"

namespace fusedmoe::ref {
namespace {

using testing_util::make_shape;

struct IntCase {
  WeightFormat format;
  int bits;
  int group;  // -1: per-channel
  bool zeros;
  bool g_idx;
  bool minus_one;
  DType scale_dtype;
};

std::string name_of(const IntCase& c) {
  return std::string(to_string(c.format)) + "_int" + std::to_string(c.bits) + "_g" + (c.group == -1 ? std::string("channel") : std::to_string(c.group)) +
         (c.zeros ? "_zp" : "_sym") + (c.g_idx ? "_actorder" : "") + (c.minus_one ? "" : "_v2") + "_" +
         to_string(c.scale_dtype);
}

void PrintTo(const IntCase& c, std::ostream* os) { *os << name_of(c); }

QuantParams quant_of(const IntCase& c) {
  QuantParams q;
  q.format = c.format;
  q.bits = c.bits;
  q.group_size = c.group;
  q.has_zeros = c.zeros;
  q.has_g_idx = c.g_idx;
  q.gptq_zeros_minus_one = c.minus_one;
  q.scale_dtype = c.scale_dtype;
  return q;
}

class IntegerDequant : public ::testing::TestWithParam<IntCase> {};

TEST_P(IntegerDequant, MatchesDefinition) {
  const IntCase c = GetParam();
  // w2 of a layer with H = 64 rows (N) and I = 64 columns (K); E = 2.
  ProblemShape shape = make_shape(1, 64, 64, 2, 1);
  const int64_t n = 64, k = 64, e_count = 2;
  const int64_t group_len = c.group == -1 ? k : c.group;
  const int64_t g = k / group_len;
  const uint32_t levels = 1u << c.bits;
  const QuantParams q = quant_of(c);

  Rng rng(1234);
  std::vector<int32_t> qweight32, qzeros32, g_idx_all;
  std::vector<uint8_t> qweight8, qzeros8, scales_bytes;
  std::vector<double> expected(static_cast<size_t>(e_count * n * k));
  const int64_t scale_count = e_count * g * n;
  scales_bytes.resize(static_cast<size_t>(scale_count * dtype_size(c.scale_dtype)));
  for (int64_t e = 0; e < e_count; ++e) {
    std::vector<uint32_t> codes_kn(static_cast<size_t>(k * n)), zeros_gn(static_cast<size_t>(g * n), levels / 2);
    std::vector<double> scale_gn(static_cast<size_t>(g * n));
    for (auto& v : codes_kn) v = static_cast<uint32_t>(rng.below(levels));
    if (c.zeros) {
      for (auto& z : zeros_gn) z = 1 + static_cast<uint32_t>(rng.below(levels - 1));
    }
    std::vector<int32_t> g_idx(static_cast<size_t>(k));
    for (int64_t i = 0; i < k; ++i) g_idx[i] = static_cast<int32_t>(c.g_idx ? rng.below(static_cast<uint64_t>(g)) : i / group_len);
    for (int64_t gi = 0; gi < g; ++gi) {
      for (int64_t ni = 0; ni < n; ++ni) {
        // Scales over orders of magnitude, rounded to their stored dtype.
        const double s = round_to(c.scale_dtype, std::exp2(rng.uniform(-12.0, 4.0)));
        scale_gn[gi * n + ni] = s;
        const int64_t idx = c.format == WeightFormat::kMoeWNA16 ? (e * n + ni) * g + gi : (e * g + gi) * n + ni;
        store_from_double(scales_bytes.data(), c.scale_dtype, idx, s);
      }
    }
    for (int64_t ni = 0; ni < n; ++ni) {
      for (int64_t ki = 0; ki < k; ++ki) {
        const int64_t gi = g_idx[ki];
        expected[(e * n + ni) * k + ki] =
            (static_cast<double>(codes_kn[ki * n + ni]) - zeros_gn[gi * n + ni]) * scale_gn[gi * n + ni];
      }
    }
    if (c.format == WeightFormat::kGPTQ) {
      auto w = pack_gptq_qweight(codes_kn, k, n, c.bits);
      qweight32.insert(qweight32.end(), w.begin(), w.end());
      // The classic format stores zero - 1; this test stores whatever the case says.
      auto z = pack_gptq_qzeros(zeros_gn, g, n, c.bits, c.minus_one);
      qzeros32.insert(qzeros32.end(), z.begin(), z.end());
      g_idx_all.insert(g_idx_all.end(), g_idx.begin(), g_idx.end());
    } else if (c.format == WeightFormat::kAWQ) {
      auto w = pack_awq(codes_kn, k, n);
      qweight32.insert(qweight32.end(), w.begin(), w.end());
      auto z = pack_awq(zeros_gn, g, n);
      qzeros32.insert(qzeros32.end(), z.begin(), z.end());
    } else {
      std::vector<uint32_t> codes_nk(codes_kn.size()), zeros_ng(zeros_gn.size());
      for (int64_t ki = 0; ki < k; ++ki) for (int64_t ni = 0; ni < n; ++ni) codes_nk[ni * k + ki] = codes_kn[ki * n + ni];
      for (int64_t gi = 0; gi < g; ++gi) for (int64_t ni = 0; ni < n; ++ni) zeros_ng[ni * g + gi] = zeros_gn[gi * n + ni];
      auto w = pack_wna16_qweight(codes_nk, n, k, c.bits);
      qweight8.insert(qweight8.end(), w.begin(), w.end());
      auto z = pack_wna16_qzeros(zeros_ng, n, g, c.bits);
      qzeros8.insert(qzeros8.end(), z.begin(), z.end());
    }
  }
  ProjectionWeights pw;
  pw.weight = qweight32.empty() ? static_cast<const void*>(qweight8.data()) : qweight32.data();
  pw.zeros = qzeros32.empty() ? static_cast<const void*>(qzeros8.data()) : qzeros32.data();
  pw.scales = scales_bytes.data();
  pw.g_idx = g_idx_all.empty() ? nullptr : g_idx_all.data();
  WeightView view;
  const Status st = WeightView::make(shape, DType::kBF16, q, pw, Projection::kW2, &view);
  ASSERT_TRUE(st.ok()) << st.message();
  ASSERT_EQ(view.rows(), n);
  ASSERT_EQ(view.cols(), k);
  std::vector<double> row(static_cast<size_t>(k));
  for (int64_t e = 0; e < e_count; ++e) {
    for (int64_t ni = 0; ni < n; ++ni) {
      view.dequant_row(e, ni, row.data());
      for (int64_t ki = 0; ki < k; ++ki) {
        ASSERT_EQ(row[ki], expected[(e * n + ni) * k + ki]) << name_of(c) << " e=" << e << " n=" << ni << " k=" << ki;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Formats, IntegerDequant,
    ::testing::Values(IntCase{WeightFormat::kGPTQ, 4, 32, false, false, true, DType::kFP16},
                      IntCase{WeightFormat::kGPTQ, 4, 64, true, false, true, DType::kFP16},
                      IntCase{WeightFormat::kGPTQ, 4, 32, true, false, false, DType::kBF16},
                      IntCase{WeightFormat::kGPTQ, 4, 16, true, true, true, DType::kFP16},
                      IntCase{WeightFormat::kGPTQ, 4, -1, false, false, true, DType::kFP32},
                      IntCase{WeightFormat::kGPTQ, 8, 32, false, false, true, DType::kFP16},
                      IntCase{WeightFormat::kGPTQ, 8, 64, true, true, true, DType::kBF16},
                      IntCase{WeightFormat::kAWQ, 4, 64, true, false, true, DType::kFP16},
                      IntCase{WeightFormat::kAWQ, 4, 32, true, false, true, DType::kBF16},
                      IntCase{WeightFormat::kMoeWNA16, 4, 32, true, false, true, DType::kBF16},
                      IntCase{WeightFormat::kMoeWNA16, 4, 64, false, false, true, DType::kFP16},
                      IntCase{WeightFormat::kMoeWNA16, 8, 32, true, false, true, DType::kFP16}),
    [](const ::testing::TestParamInfo<IntCase>& info) { return name_of(info.param); });

// Round trip: dense bf16 weights quantized (RTN, as the checkpoint tools store them), read
// back through WeightView: every weight within one quantization step of the original, and
// the layer close to the dense layer.
class QuantizeRoundTrip : public ::testing::TestWithParam<IntCase> {};

TEST_P(QuantizeRoundTrip, WithinOneStepOfTheDenseWeights) {
  const IntCase c = GetParam();
  const QuantParams q = quant_of(c);
  const ProblemShape s = make_shape(5, 256, 128, 3, 2);
  Checkpoint dense, quant;
  ASSERT_TRUE(make_random_checkpoint(s, DType::kBF16, QuantParams(), 42, &dense).ok());
  const Status st = quantize_checkpoint(s, DType::kBF16, dense, q, &quant);
  ASSERT_TRUE(st.ok()) << st.message();
  const double maxq = static_cast<double>((1 << c.bits) - 1);
  for (Projection which : {Projection::kW13, Projection::kW2}) {
    WeightView dv, qv;
    ASSERT_TRUE(WeightView::make(s, DType::kBF16, QuantParams(), which == Projection::kW13 ? dense.weights.w13 : dense.weights.w2,
                                 which, &dv).ok());
    ASSERT_TRUE(WeightView::make(s, DType::kBF16, q, which == Projection::kW13 ? quant.weights.w13 : quant.weights.w2,
                                 which, &qv).ok());
    const int64_t k = dv.cols();
    std::vector<double> d(static_cast<size_t>(k)), w(static_cast<size_t>(k));
    double err2 = 0.0, ref2 = 0.0;
    for (int64_t e = 0; e < s.num_experts; ++e) {
      for (int64_t n = 0; n < dv.rows(); ++n) {
        dv.dequant_row(e, n, d.data());
        qv.dequant_row(e, n, w.data());
        double amax = 0.0;
        for (double v : d) amax = std::max(amax, std::fabs(v));
        // A step is at most 2 amax / maxq (symmetric) or (max - min) / maxq <= 2 amax / maxq;
        // rounding moves a weight by half a step, clamping (classic GPTQ's zero >= 1) by one.
        const double step = 2.0 * amax / maxq * 1.01;
        for (int64_t i = 0; i < k; ++i) {
          ASSERT_LE(std::fabs(w[i] - d[i]), step) << to_string(which) << " e=" << e << " n=" << n << " k=" << i;
          err2 += (w[i] - d[i]) * (w[i] - d[i]);
          ref2 += d[i] * d[i];
        }
      }
    }
    // RTN error is about a step / sqrt(12) against weights spread over ~ 2 amax.
    EXPECT_LT(std::sqrt(err2 / ref2), c.bits == 4 ? 0.15 : 0.01) << to_string(which);
  }
  // The layer on the quantized weights stays close to the dense layer.
  LayerData data;
  ASSERT_TRUE(make_random_inputs(s, DType::kBF16, RoutingMode::kUniform, 7, &data).ok());
  std::vector<double> want, got;
  ASSERT_TRUE(run_layer(data.inputs, dense.weights, LayerOptions(), &want).ok());
  ASSERT_TRUE(run_layer(data.inputs, quant.weights, LayerOptions(), &got).ok());
  EXPECT_LT(compare(want, got, kToleranceBF16).rel_l2, c.bits == 4 ? 0.25 : 0.02);
}

INSTANTIATE_TEST_SUITE_P(
    Formats, QuantizeRoundTrip,
    ::testing::Values(IntCase{WeightFormat::kGPTQ, 4, 128, false, false, true, DType::kFP16},
                      IntCase{WeightFormat::kGPTQ, 4, 64, true, true, true, DType::kFP16},
                      IntCase{WeightFormat::kGPTQ, 4, 32, true, false, false, DType::kBF16},
                      IntCase{WeightFormat::kGPTQ, 8, -1, true, false, true, DType::kFP32},
                      IntCase{WeightFormat::kAWQ, 4, 64, true, false, true, DType::kFP16},
                      IntCase{WeightFormat::kMoeWNA16, 4, 128, true, false, true, DType::kBF16},
                      IntCase{WeightFormat::kMoeWNA16, 8, 128, false, false, true, DType::kFP16}),
    [](const ::testing::TestParamInfo<IntCase>& info) { return name_of(info.param); });

class Fp8Dequant : public ::testing::TestWithParam<WeightFormat> {};

TEST_P(Fp8Dequant, CodeTimesScale) {
  // w13 of E = 2, I = 100 (N = 200 rows, two partial 128-row blocks), H = 160 (K: partial block).
  ProblemShape shape = make_shape(1, 160, 100, 2, 1);
  const int64_t n = 200, k = 160;
  QuantParams q;
  q.format = GetParam();
  q.act_quant = q.format == WeightFormat::kFP8Block ? ActQuant::kPerGroup : ActQuant::kPerToken;
  Rng rng(99);
  std::vector<uint8_t> w(static_cast<size_t>(2 * n * k));
  for (auto& v : w) {
    do v = static_cast<uint8_t>(rng.below(256)); while ((v & 0x7f) == 0x7f);  // no NaN codes
  }
  const int64_t nb = (n + 127) / 128, kb = (k + 127) / 128;
  const int64_t count = q.format == WeightFormat::kFP8PerTensor ? 2 : q.format == WeightFormat::kFP8PerChannel ? 2 * n : 2 * nb * kb;
  std::vector<float> s(static_cast<size_t>(count));
  for (auto& v : s) v = static_cast<float>(std::exp2(rng.uniform(-10, 2)));
  ProjectionWeights pw;
  pw.weight = w.data();
  pw.scales = s.data();
  WeightView view;
  ASSERT_TRUE(WeightView::make(shape, DType::kBF16, q, pw, Projection::kW13, &view).ok());
  std::vector<double> row(static_cast<size_t>(k));
  for (int64_t e = 0; e < 2; ++e) {
    for (int64_t r = 0; r < n; ++r) {
      view.dequant_row(e, r, row.data());
      for (int64_t c = 0; c < k; ++c) {
        const float scale = q.format == WeightFormat::kFP8PerTensor ? s[e]
                            : q.format == WeightFormat::kFP8PerChannel ? s[e * n + r]
                                                                       : s[e * nb * kb + (r / 128) * kb + c / 128];
        ASSERT_EQ(row[c], static_cast<double>(fp8e4m3_to_float(w[(e * n + r) * k + c])) * scale) << r << "," << c;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Formats, Fp8Dequant,
                         ::testing::Values(WeightFormat::kFP8PerTensor, WeightFormat::kFP8PerChannel,
                                           WeightFormat::kFP8Block),
                         [](const ::testing::TestParamInfo<WeightFormat>& info) { return to_string(info.param); });

TEST(DequantErrors, GIdxOutOfRangeIsNamed) {
  ProblemShape shape = make_shape(1, 64, 32, 1, 1);
  QuantParams q;
  q.format = WeightFormat::kGPTQ;
  q.group_size = 32;
  q.has_g_idx = true;
  std::vector<int32_t> qweight(64 / 8 * 64), g_idx(64, 0);
  std::vector<uint16_t> scales(2 * 64);
  g_idx[5] = 2;  // only groups 0 and 1 exist
  ProjectionWeights pw;
  pw.weight = qweight.data();
  pw.scales = scales.data();
  pw.g_idx = g_idx.data();
  WeightView view;
  const Status st = WeightView::make(shape, DType::kBF16, q, pw, Projection::kW13, &view);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(st.message(), "w13.g_idx[0][5]: expected a group in 0..1, got 2");
}

// The synthetic weights put experts and rows at different magnitudes, so the FP8 scales of
// neighbouring experts (per-tensor) and rows (per-channel) differ by more than 10%: a kernel
// that applied one expert's or row's scale to another would fail its comparison.
TEST(SyntheticWeights, ExpertsAndRowsAtDifferentScales) {
  const ProblemShape s = make_shape(1, 256, 128, 5, 1);
  Checkpoint dense;
  ASSERT_TRUE(make_random_checkpoint(s, DType::kBF16, QuantParams(), 5, &dense).ok());
  for (WeightFormat format : {WeightFormat::kFP8PerTensor, WeightFormat::kFP8PerChannel}) {
    SCOPED_TRACE(to_string(format));
    QuantParams q;
    q.format = format;
    q.act_quant = format == WeightFormat::kFP8PerTensor ? ActQuant::kPerTensorDynamic : ActQuant::kPerToken;
    Checkpoint fp8;
    ASSERT_TRUE(quantize_checkpoint(s, DType::kBF16, dense, q, &fp8).ok());
    for (Projection which : {Projection::kW13, Projection::kW2}) {
      const float* scales = static_cast<const float*>(which == Projection::kW13 ? fp8.weights.w13.scales
                                                                                 : fp8.weights.w2.scales);
      const int64_t rows = which == Projection::kW13 ? 2 * s.inter : s.hidden;
      std::vector<float> v;  // per-tensor: experts 0..4; per-channel: rows 0..2 of expert 0
      for (int64_t i = 0; i < (format == WeightFormat::kFP8PerTensor ? s.num_experts : 3); ++i) v.push_back(scales[i]);
      ASSERT_LE(static_cast<int64_t>(v.size()), format == WeightFormat::kFP8PerTensor ? s.num_experts : rows);
      for (size_t i = 1; i < v.size(); ++i) {
        const double ratio = std::max(v[i], v[i - 1]) / std::min(v[i], v[i - 1]);
        EXPECT_GT(ratio, 1.1) << "scales " << i - 1 << " and " << i << ": " << v[i - 1] << ", " << v[i];
      }
    }
  }
}

// The reference on given per-tensor scales (what the GPU checks use for per-tensor dynamic
// activations): with its own dynamic scales as static ones it computes the same layer, bit for
// bit, and it reports those scales (x's over every token, the intermediate's before quantizing).
TEST(ReferenceFp8, DynamicScalesAsStaticOnesGiveTheSameLayer) {
  const ProblemShape s = make_shape(7, 384, 256, 6, 2);
  Checkpoint dense, fp8;
  ASSERT_TRUE(make_random_checkpoint(s, DType::kBF16, QuantParams(), 11, &dense).ok());
  QuantParams q;
  q.format = WeightFormat::kFP8PerTensor;
  q.act_quant = ActQuant::kPerTensorDynamic;
  ASSERT_TRUE(quantize_checkpoint(s, DType::kBF16, dense, q, &fp8).ok());
  LayerData data;
  ASSERT_TRUE(make_random_inputs(s, DType::kBF16, RoutingMode::kUniform, 12, &data).ok());
  float scales[2] = {0.0f, 0.0f}, again[2] = {0.0f, 0.0f};
  LayerOptions opt;
  opt.dynamic_act_scales = scales;
  std::vector<double> dynamic, fixed;
  ASSERT_TRUE(run_layer(data.inputs, fp8.weights, opt, &dynamic).ok());
  double amax = 0.0;
  for (int64_t i = 0; i < s.m * s.hidden; ++i) amax = std::max(amax, std::fabs(load_as_double(data.x.data(), DType::kBF16, i)));
  EXPECT_EQ(scales[0], fp8_dynamic_scale(amax));
  EXPECT_GT(scales[1], 0.0f);
  opt.dynamic_act_scales = again;
  ASSERT_TRUE(run_layer(data.inputs, with_static_act_scales(fp8.weights, scales), opt, &fixed).ok());
  EXPECT_EQ(again[0], scales[0]);
  EXPECT_EQ(again[1], scales[1]);
  ASSERT_EQ(dynamic.size(), fixed.size());
  for (size_t i = 0; i < dynamic.size(); ++i) ASSERT_EQ(dynamic[i], fixed[i]) << i;
  // Another intermediate scale changes the layer, and by a lot: every e4m3 rounding of the
  // intermediate moves (3.1e-2 here for 1.5%; the GPU's 3.4e-2 miss on its own dynamic scale).
  const float other[2] = {scales[0], scales[1] * 1.015f};
  ASSERT_TRUE(run_layer(data.inputs, with_static_act_scales(fp8.weights, other), LayerOptions(), &fixed).ok());
  const double moved = compare(dynamic, fixed, kToleranceFP8).rel_l2;
  std::printf("[          ] a 1.5%% larger intermediate scale moves the layer by rel_l2 %.3g\n", moved);
  EXPECT_GT(moved, 1e-2);
}

// FP8 from dense weights: every weight within half an e4m3 step of the original (3 mantissa
// bits: 2^-4 relative, or the subnormal step 2^-9 s), and the whole W8A8 layer (weights and
// activations quantized) within the expected few percent of the bf16 layer, per scaling mode.
TEST(QuantizeRoundTripFp8, WithinHalfAStepAndAFewPercentOfTheBf16Layer) {
  const ProblemShape s = make_shape(9, 384, 256, 4, 2);  // 384 = 3 blocks of 128, 256 = 2
  Checkpoint dense;
  ASSERT_TRUE(make_random_checkpoint(s, DType::kBF16, QuantParams(), 43, &dense).ok());
  LayerData data;
  ASSERT_TRUE(make_random_inputs(s, DType::kBF16, RoutingMode::kUniform, 8, &data).ok());
  std::vector<double> want;
  ASSERT_TRUE(run_layer(data.inputs, dense.weights, LayerOptions(), &want).ok());
  const std::pair<WeightFormat, ActQuant> modes[] = {{WeightFormat::kFP8PerTensor, ActQuant::kPerTensorDynamic},
                                                      {WeightFormat::kFP8PerChannel, ActQuant::kPerToken},
                                                      {WeightFormat::kFP8Block, ActQuant::kPerGroup}};
  for (const auto& [format, act] : modes) {
    SCOPED_TRACE(to_string(format));
    QuantParams q;
    q.format = format;
    q.act_quant = act;
    Checkpoint fp8;
    ASSERT_TRUE(quantize_checkpoint(s, DType::kBF16, dense, q, &fp8).ok());
    for (Projection which : {Projection::kW13, Projection::kW2}) {
      WeightView dv, qv;
      ASSERT_TRUE(WeightView::make(s, DType::kBF16, QuantParams(),
                                   which == Projection::kW13 ? dense.weights.w13 : dense.weights.w2, which, &dv).ok());
      ASSERT_TRUE(WeightView::make(s, DType::kBF16, q, which == Projection::kW13 ? fp8.weights.w13 : fp8.weights.w2,
                                   which, &qv).ok());
      std::vector<double> d(static_cast<size_t>(dv.cols())), w(static_cast<size_t>(dv.cols()));
      for (int64_t e = 0; e < s.num_experts; ++e) {
        for (int64_t n = 0; n < dv.rows(); ++n) {
          dv.dequant_row(e, n, d.data());
          qv.dequant_row(e, n, w.data());
          double amax = 0.0;
          for (double v : d) amax = std::max(amax, std::fabs(v));
          const double subnormal_step = amax / 448.0 * std::ldexp(1.0, -9);  // the smallest s a row can have
          for (int64_t i = 0; i < dv.cols(); ++i) {
            ASSERT_LE(std::fabs(w[i] - d[i]), std::fabs(d[i]) * 0.0625 + subnormal_step * 1.01) << i;
          }
        }
      }
    }
    std::vector<double> got;
    ASSERT_TRUE(run_layer(data.inputs, fp8.weights, LayerOptions(), &got).ok());
    const double rel = compare(want, got, kToleranceFP8).rel_l2;
    std::printf("[          ] %s layer vs bf16: relative L2 %.3g\n", to_string(format), rel);
    // An e4m3 rounding is off by ~2^-4 / sqrt(3) = 3.6% rms; four quantized operands in series
    // (x, w13, the intermediate, w2) give ~7%. Measured here: 6.4-6.9%.
    EXPECT_LT(rel, 0.09);
  }
}

}  // namespace
}  // namespace fusedmoe::ref
