// Reference MoE layer: route -> align -> GEMM1 -> activation -> GEMM2 * weight -> combine,
// in fp64, parallel over output columns with OpenMP. Weights are dequantized one row at a
// time, so memory stays at a few rows per thread whatever the model size.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "check.h"
#include "fusedmoe_ref/numeric.h"
#include "fusedmoe_ref/reference.h"
#include "validate.h"

namespace fusedmoe::ref {

using detail::invalid_argument;
using detail::str;

namespace {

// fp64 dot product; the AVX2+FMA clone makes the M = 64 layers of real models take seconds.
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
__attribute__((target_clones("arch=haswell", "default")))
#endif
double dot(const double* a, const double* b, int64_t n) {
  double acc = 0.0;
#pragma omp simd reduction(+ : acc)
  for (int64_t i = 0; i < n; ++i) acc += a[i] * b[i];
  return acc;
}

// Four fp64 dot products of a with b[0..3], a read once (the reference GEMMs are bound by
// streaming the activations, not by the multiplies).
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
__attribute__((target_clones("arch=haswell", "default")))
#endif
void dot4(const double* a, const double* b0, const double* b1, const double* b2, const double* b3, int64_t n,
          double* out) {
  double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
#pragma omp simd reduction(+ : s0, s1, s2, s3)
  for (int64_t i = 0; i < n; ++i) {
    const double x = a[i];
    s0 += x * b0[i];
    s1 += x * b1[i];
    s2 += x * b2[i];
    s3 += x * b3[i];
  }
  out[0] = s0;
  out[1] = s1;
  out[2] = s2;
  out[3] = s3;
}

// out[j * ld + r] = a_j . rows[r * n ..] for the np activation rows a_j = act(j) and nr <= 4
// weight rows of length n, stored one after another.
template <typename Act>
void dots_with_rows(const double* rows, int64_t nr, int64_t n, int64_t np, Act act, double* out, int64_t ld) {
  for (int64_t j = 0; j < np; ++j) {
    if (nr == 4) {
      double d[4];
      dot4(act(j), rows, rows + n, rows + 2 * n, rows + 3 * n, n, d);
      for (int r = 0; r < 4; ++r) out[j * ld + r] = d[r];
    } else {
      for (int64_t r = 0; r < nr; ++r) out[j * ld + r] = dot(act(j), rows + r * n, n);
    }
  }
}

double amax_of(const double* v, int64_t n) {
  double a = 0.0;
  for (int64_t i = 0; i < n; ++i) a = std::max(a, std::fabs(v[i]));
  return a;
}

// Quantizes v[0..n) with one scale and writes back q * s.
void quantize_span(double* v, int64_t n, float scale) {
  for (int64_t i = 0; i < n; ++i) {
    const uint8_t q = float_to_fp8e4m3(static_cast<float>(v[i]) / scale);
    v[i] = static_cast<double>(fp8e4m3_to_float(q)) * static_cast<double>(scale);
  }
}

}  // namespace

double apply_activation(Activation activation, double gate, double up) {
  switch (activation) {
    case Activation::kSiluAndMul: return gate / (1.0 + std::exp(-gate)) * up;
    case Activation::kGeluAndMul: return 0.5 * gate * (1.0 + std::erf(gate / std::sqrt(2.0))) * up;
    case Activation::kGeluTanhAndMul: {
      const double c = std::sqrt(2.0 / 3.141592653589793);
      return 0.5 * gate * (1.0 + std::tanh(c * (gate + 0.044715 * gate * gate * gate))) * up;
    }
  }
  return std::nan("");
}

MoeWeights with_static_act_scales(const MoeWeights& weights, const float* scales) {
  MoeWeights w = weights;
  w.quant.act_quant = ActQuant::kPerTensorStatic;
  w.w13.input_scale = scales;
  w.w2.input_scale = scales + 1;
  return w;
}

float fp8_dynamic_scale(double amax) {
  const float s = static_cast<float>(amax) / kFP8E4M3Max;
  return s > 0.0f ? std::max(s, 0x1p-64f) : 1.0f;  // the floor: docs/FORMATS.md
}

Status fake_quantize_fp8(ActQuant mode, int32_t group, float static_scale, int64_t rows, int64_t cols,
                         double* data) {
  if (rows < 0 || cols < 0) return invalid_argument("rows/cols", ">= 0", str(rows) + "/" + str(cols));
  switch (mode) {
    case ActQuant::kPerTensorDynamic:
      quantize_span(data, rows * cols, fp8_dynamic_scale(amax_of(data, rows * cols)));
      return Status();
    case ActQuant::kPerTensorStatic:
      if (!(std::isfinite(static_scale) && static_scale > 0.0f)) {
        return invalid_argument("input_scale", "finite and > 0", str(static_scale));
      }
      quantize_span(data, rows * cols, static_scale);
      return Status();
    case ActQuant::kPerToken:
    case ActQuant::kPerGroup: {
      const int64_t g = mode == ActQuant::kPerToken ? cols : group;
      if (g <= 0) return invalid_argument("group", "> 0", str(g));
#pragma omp parallel for schedule(static)
      for (int64_t r = 0; r < rows; ++r) {
        for (int64_t c0 = 0; c0 < cols; c0 += g) {
          double* span = data + r * cols + c0;
          const int64_t len = std::min(g, cols - c0);
          quantize_span(span, len, fp8_dynamic_scale(amax_of(span, len)));
        }
      }
      return Status();
    }
    case ActQuant::kNone: return Status();
  }
  return invalid_argument("act_quant", "an ActQuant value", str(static_cast<int>(mode)));
}

Status run_layer(const MoeInputs& in, const MoeWeights& w, const LayerOptions& opt, std::vector<double>* out) {
  if (out == nullptr) return invalid_argument("out", "non-null", "nullptr");
  FUSEDMOE_RETURN_IF_ERROR(validate_inputs(in));
  const ProblemShape& s = in.shape;
  const QuantParams& q = w.quant;
  WeightView v13, v2;
  FUSEDMOE_RETURN_IF_ERROR(WeightView::make(s, in.act_dtype, q, w.w13, Projection::kW13, &v13));
  FUSEDMOE_RETURN_IF_ERROR(WeightView::make(s, in.act_dtype, q, w.w2, Projection::kW2, &v2));
  const int64_t H = s.hidden, I = s.inter, k = s.topk;

  // Output rows: all tokens, or the requested sample.
  std::vector<int64_t> tokens = opt.tokens;
  if (tokens.empty()) {
    tokens.resize(static_cast<size_t>(s.m));
    for (int64_t t = 0; t < s.m; ++t) tokens[t] = t;
  } else if (q.act_quant == ActQuant::kPerTensorDynamic) {
    return invalid_argument("options.tokens", "empty with per_tensor_dynamic activations (the "
                            "intermediate's scale depends on every token)", str(tokens.size()) + " tokens");
  }
  std::vector<int64_t> out_row(static_cast<size_t>(s.m), -1);
  for (size_t r = 0; r < tokens.size(); ++r) {
    if (tokens[r] < 0 || tokens[r] >= s.m || out_row[tokens[r]] != -1) {
      return invalid_argument("options.tokens[" + str(r) + "]", "a distinct token in 0.." + str(s.m - 1),
                              str(tokens[r]));
    }
    out_row[tokens[r]] = static_cast<int64_t>(r);
  }
  out->assign(tokens.size() * static_cast<size_t>(H), 0.0);
  if (s.m == 0) return Status();

  // Routing and alignment by local expert.
  Routing routing;
  if (in.router_logits != nullptr) {
    FUSEDMOE_RETURN_IF_ERROR(route(s, in.routing, in.router_dtype, in.router_logits, &routing));
  } else {
    routing.ids.assign(in.topk_ids, in.topk_ids + s.m * k);
    routing.weights.assign(in.topk_weights, in.topk_weights + s.m * k);
  }
  Alignment al;
  FUSEDMOE_RETURN_IF_ERROR(align_tokens(routing.ids.data(), s.m, s.topk, global_experts(s), in.expert_map,
                                        s.num_experts, 1, &al));

  // x of the wanted tokens in fp64, quantized as the FP8 path quantizes it.
  std::vector<double> x(tokens.size() * static_cast<size_t>(H));
  for (size_t r = 0; r < tokens.size(); ++r) {
    for (int64_t c = 0; c < H; ++c) x[r * H + c] = load_as_double(in.x, in.act_dtype, tokens[r] * H + c);
  }
  ActQuant x_mode = q.act_quant;
  float x_scale = 0.0f;
  const bool fp8 = q.act_quant != ActQuant::kNone;
  if (q.act_quant == ActQuant::kPerTensorDynamic || (fp8 && opt.dynamic_act_scales != nullptr)) {
    double amax = 0.0;  // over every token, not only the wanted ones
    for (int64_t i = 0; i < s.m * H; ++i) amax = std::max(amax, std::fabs(load_as_double(in.x, in.act_dtype, i)));
    if (opt.dynamic_act_scales != nullptr) opt.dynamic_act_scales[0] = fp8_dynamic_scale(amax);
    if (q.act_quant == ActQuant::kPerTensorDynamic) {
      x_mode = ActQuant::kPerTensorStatic;
      x_scale = fp8_dynamic_scale(amax);
    }
  }
  if (q.act_quant == ActQuant::kPerTensorStatic) {
    x_scale = w.w13.input_scale[0];
  }
  FUSEDMOE_RETURN_IF_ERROR(
      fake_quantize_fp8(x_mode, q.block_k, x_scale, static_cast<int64_t>(tokens.size()), H, x.data()));

  // The wanted pairs of each expert, and their rows in the intermediate.
  std::vector<std::vector<int32_t>> pairs_of(s.num_experts);
  int64_t wanted_pairs = 0;
  for (int32_t e = 0; e < s.num_experts; ++e) {
    for (int64_t i = al.expert_offsets[e]; i < al.expert_offsets[e + 1]; ++i) {
      const int32_t p = al.sorted_pairs[i];
      if (out_row[p / k] >= 0) pairs_of[e].push_back(p);
    }
    wanted_pairs += static_cast<int64_t>(pairs_of[e].size());
  }
  std::vector<double> act(static_cast<size_t>(wanted_pairs * I));

  // GEMM1 and the activation, expert by expert.
  int64_t base = 0;
  for (int32_t e = 0; e < s.num_experts; ++e) {
    const std::vector<int32_t>& pairs = pairs_of[e];
    const int64_t np = static_cast<int64_t>(pairs.size());
    if (np == 0) continue;
    std::vector<double> h(static_cast<size_t>(np * 2 * I));
#pragma omp parallel
    {
      std::vector<double> rows(static_cast<size_t>(4 * H));
      auto x_of = [&](int64_t j) { return &x[out_row[pairs[j] / k] * H]; };
#pragma omp for schedule(static)
      for (int64_t n0 = 0; n0 < 2 * I; n0 += 4) {  // four weight rows per pass over the activations
        const int64_t nr = std::min<int64_t>(4, 2 * I - n0);
        v13.dequant_rows(e, n0, nr, rows.data(), H);
        dots_with_rows(rows.data(), nr, H, np, x_of, &h[n0], 2 * I);
      }
    }
    if (opt.round_gate_up) {
      for (double& v : h) v = round_to(in.act_dtype, v);
    }
    for (int64_t j = 0; j < np; ++j) {
      const double scale = in.apply_router_weight_on_input ? routing.weights[pairs[j]] : 1.0;
      for (int64_t c = 0; c < I; ++c) {
        act[(base + j) * I + c] = apply_activation(in.activation, h[j * 2 * I + c] * scale, h[j * 2 * I + I + c] * scale);
      }
    }
    base += np;
  }

  // What the GPU stores between the GEMMs: the activation dtype, then (FP8) e4m3.
  if (opt.round_intermediate) {
    for (double& a : act) a = round_to(in.act_dtype, a);
  }
  if (fp8 && opt.dynamic_act_scales != nullptr) {
    opt.dynamic_act_scales[1] = fp8_dynamic_scale(amax_of(act.data(), static_cast<int64_t>(act.size())));
  }
  if (q.act_quant != ActQuant::kNone) {
    const float a2_scale = q.act_quant == ActQuant::kPerTensorStatic ? w.w2.input_scale[0] : 0.0f;
    FUSEDMOE_RETURN_IF_ERROR(fake_quantize_fp8(q.act_quant, q.block_k, a2_scale, wanted_pairs, I, act.data()));
  }

  // GEMM2 with the routed weight, summed into each token's output row.
  base = 0;
  for (int32_t e = 0; e < s.num_experts; ++e) {
    const std::vector<int32_t>& pairs = pairs_of[e];
    const int64_t np = static_cast<int64_t>(pairs.size());
    if (np == 0) continue;
#pragma omp parallel
    {
      std::vector<double> rows(static_cast<size_t>(4 * I));
      std::vector<double> y(static_cast<size_t>(np * 4));
      auto act_of = [&](int64_t j) { return &act[(base + j) * I]; };
#pragma omp for schedule(static)
      for (int64_t n0 = 0; n0 < H; n0 += 4) {
        const int64_t nr = std::min<int64_t>(4, H - n0);
        v2.dequant_rows(e, n0, nr, rows.data(), I);
        dots_with_rows(rows.data(), nr, I, np, act_of, y.data(), 4);
        for (int64_t j = 0; j < np; ++j) {
          const double weight = in.apply_router_weight_on_input ? 1.0 : routing.weights[pairs[j]];
          for (int64_t r = 0; r < nr; ++r) (*out)[out_row[pairs[j] / k] * H + n0 + r] += y[j * 4 + r] * weight;
        }
      }
    }
    base += np;
  }
  return Status();
}

}  // namespace fusedmoe::ref
