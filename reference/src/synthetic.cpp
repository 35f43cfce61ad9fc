// Random checkpoints in every format, and random layer inputs.
#include "fusedmoe_ref/synthetic.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>

#include "check.h"
#include "fusedmoe_ref/numeric.h"
#include "fusedmoe_ref/packing.h"
#include "fusedmoe_ref/random.h"
#include "fusedmoe_ref/reference.h"
#include "validate.h"

namespace fusedmoe::ref {

using detail::invalid_argument;

ByteBuffer* Checkpoint::find(const std::string& name) {
  for (size_t i = 0; i < specs.size(); ++i) {
    if (specs[i].name == name) return &data[i];
  }
  return nullptr;
}

namespace {

// Writes one expert's slice of a tensor whose leading dimension is E.
template <typename T>
void put_expert(ByteBuffer* buf, int64_t e, const std::vector<T>& slice) {
  const size_t bytes = slice.size() * sizeof(T);
  std::memcpy(buf->data() + static_cast<size_t>(e) * bytes, slice.data(), bytes);
}

void put_scales(ByteBuffer* buf, DType dtype, int64_t e, const std::vector<double>& values) {
  const int64_t base = e * static_cast<int64_t>(values.size());
  for (size_t i = 0; i < values.size(); ++i) store_from_double(buf->data(), dtype, base + static_cast<int64_t>(i), values[i]);
}

// Packs one expert's codes [k][n], zeros [g][n] and scales [g][n] (as GPTQ/AWQ see them)
// into the format's tensors of `ck` (moe_wna16 transposes to its [n][..] layouts).
void put_integer_expert(Checkpoint* ck, const std::string& p, const QuantParams& q, int64_t e, int64_t n, int64_t k,
                        const std::vector<uint32_t>& codes, const std::vector<uint32_t>& zeros,
                        const std::vector<double>& s) {
  const int bits = q.bits;
  const int64_t g = quant_groups(q, k);
  ByteBuffer* weight = ck->find(p + ".weight");
  ByteBuffer* scales = ck->find(p + ".scales");
  if (q.format == WeightFormat::kMoeWNA16) {
    std::vector<uint32_t> t(codes.size()), zt(zeros.size());
    std::vector<double> st(s.size());
    for (int64_t r = 0; r < k; ++r) for (int64_t c = 0; c < n; ++c) t[c * k + r] = codes[r * n + c];
    for (int64_t r = 0; r < g; ++r) for (int64_t c = 0; c < n; ++c) { zt[c * g + r] = zeros[r * n + c]; st[c * g + r] = s[r * n + c]; }
    put_expert(weight, e, pack_wna16_qweight(t, n, k, bits));
    put_scales(scales, q.scale_dtype, e, st);
    if (q.has_zeros) put_expert(ck->find(p + ".zeros"), e, pack_wna16_qzeros(zt, n, g, bits));
    return;
  }
  put_scales(scales, q.scale_dtype, e, s);
  if (q.format == WeightFormat::kAWQ) {
    put_expert(weight, e, pack_awq(codes, k, n));
    if (q.has_zeros) put_expert(ck->find(p + ".zeros"), e, pack_awq(zeros, g, n));
    return;
  }
  put_expert(weight, e, pack_gptq_qweight(codes, k, n, bits));
  if (q.has_zeros) put_expert(ck->find(p + ".zeros"), e, pack_gptq_qzeros(zeros, g, n, bits, q.gptq_zeros_minus_one));
}

// Act-order groups: channel perm[i] (i-th in the order) belongs to group i / group_len.
std::vector<int32_t> g_idx_from_order(const std::vector<int32_t>& perm, const QuantParams& q) {
  const int64_t k = static_cast<int64_t>(perm.size());
  const int64_t group_len = q.group_size == -1 ? k : q.group_size;
  std::vector<int32_t> g_idx(static_cast<size_t>(k));
  for (int64_t i = 0; i < k; ++i) g_idx[perm[i]] = static_cast<int32_t>(i / group_len);
  return g_idx;
}

// FP8 weights of one expert from their values w [n, k]: the scale grid of the format
// (per-tensor: one block, per-channel: 1 x K rows, blocks of block_n x block_k), e4m3 codes of
// w / s, in the checkpoint's tensors.
void put_fp8_expert(Checkpoint* ck, const std::string& p, const QuantParams& q, int64_t e, int64_t n, int64_t k,
                    const float* w) {
  const int64_t bn = q.format == WeightFormat::kFP8Block ? q.block_n : (q.format == WeightFormat::kFP8PerChannel ? 1 : n);
  const int64_t bk = q.format == WeightFormat::kFP8Block ? q.block_k : k;
  const int64_t nb = (n + bn - 1) / bn, kb = (k + bk - 1) / bk;
  std::vector<float> s(static_cast<size_t>(nb * kb));
  for (int64_t i = 0; i < nb; ++i) {
    for (int64_t j = 0; j < kb; ++j) {
      double amax = 0.0;
      for (int64_t r = i * bn; r < std::min(n, (i + 1) * bn); ++r) {
        for (int64_t c = j * bk; c < std::min(k, (j + 1) * bk); ++c) amax = std::max(amax, std::fabs(double(w[r * k + c])));
      }
      s[i * kb + j] = fp8_dynamic_scale(amax);
    }
  }
  // The codes straight into the checkpoint's tensor (a temporary of n * k bytes per expert
  // cost a page-faulted allocation each time).
  uint8_t* codes = ck->find(p + ".weight")->data() + e * n * k;
  for (int64_t r = 0; r < n; ++r) {  // block by block: no divisions per element
    const float* scales = s.data() + (r / bn) * kb;
    const float* wr = w + r * k;
    uint8_t* cr = codes + r * k;
    for (int64_t j = 0; j < kb; ++j) {
      const float scale = scales[j];
      for (int64_t c = j * bk; c < std::min(k, (j + 1) * bk); ++c) cr[c] = float_to_fp8e4m3(wr[c] / scale);
    }
  }
  put_expert(ck->find(p + ".scales"), e, s);
}

// A per-thread scratch of n floats, kept between experts (one n * k allocation per expert
// page-faulted gigabytes in total on the bench shapes).
float* fp8_scratch(int64_t n) {
  thread_local std::vector<float> scratch;
  if (scratch.size() < static_cast<size_t>(n)) scratch.resize(static_cast<size_t>(n));
  return scratch.data();
}

// The magnitude of row r of expert e's projection p: experts and rows at different scales, as
// in trained checkpoints, so that a kernel applying one expert's or one row's scale (FP8
// per-tensor, per-channel) to another fails the comparison; with equal magnitudes the scales
// were equal to six digits and such a mix-up passed. w13 rows x f_e x g_r, w2 rows x g_r / f_e^2
// (f_e = 2^((e mod 5 - 2) / 4), 0.71..1.41; g_r 0.8, 1, 1.25 by r mod 3): the layer's output
// stays on one order for every expert.
double weight_magnitude(const std::string& p, int64_t e, int64_t r) {
  const double f = std::exp2(static_cast<double>(e % 5 - 2) / 4.0);
  const double g = r % 3 == 0 ? 1.0 : (r % 3 == 1 ? 0.8 : 1.25);
  return p == "w2" ? g / (f * f) : g * f;
}

// One projection of one expert.
void fill_projection(Checkpoint* ck, const std::string& p, const QuantParams& q, DType act, int64_t e,
                     int64_t n, int64_t k, uint64_t seed) {
  Rng rng(seed);
  const double inv_sqrt_k = 1.0 / std::sqrt(static_cast<double>(k));
  // Weight values: uniform with variance 1/K times weight_magnitude^2 (uniform: a tenth of the
  // cost of normals, which matters at billions of values); zero mean, like trained weights.
  const double half_width = std::sqrt(3.0) * inv_sqrt_k;
  ByteBuffer* weight = ck->find(p + ".weight");
  switch (q.format) {
    case WeightFormat::kDense: {
      for (int64_t r = 0; r < n; ++r) {
        const double hw = half_width * weight_magnitude(p, e, r);
        for (int64_t c = 0; c < k; ++c) store_from_double(weight->data(), act, (e * n + r) * k + c, rng.uniform(-hw, hw));
      }
      return;
    }
    case WeightFormat::kFP8PerTensor:
    case WeightFormat::kFP8PerChannel:
    case WeightFormat::kFP8Block: {
      float* w = fp8_scratch(n * k);
      for (int64_t r = 0; r < n; ++r) {
        const double hw = half_width * weight_magnitude(p, e, r);
        for (int64_t c = 0; c < k; ++c) w[r * k + c] = static_cast<float>(rng.uniform(-hw, hw));
      }
      put_fp8_expert(ck, p, q, e, n, k, w);
      return;
    }
    case WeightFormat::kGPTQ:
    case WeightFormat::kAWQ:
    case WeightFormat::kMoeWNA16: {
      const int bits = q.bits;
      const uint32_t levels = 1u << bits;
      const int64_t g = quant_groups(q, k);
      // codes[k][n] as GPTQ/AWQ see them (K rows); moe_wna16 wants [n][k], transposed below.
      std::vector<uint32_t> codes(static_cast<size_t>(k * n));
      for (uint32_t& c : codes) c = static_cast<uint32_t>(rng.below(levels));
      std::vector<uint32_t> zeros(static_cast<size_t>(g * n), levels / 2);
      if (q.has_zeros) {
        // Away from the midpoint; the classic GPTQ format cannot store a zero of 0.
        const bool classic = q.format == WeightFormat::kGPTQ && q.gptq_zeros_minus_one;
        for (uint32_t& z : zeros) z = classic ? 1 + static_cast<uint32_t>(rng.below(levels - 1)) : static_cast<uint32_t>(rng.below(levels));
      }
      // (code - zero) has std about levels / sqrt(12); the base scale makes w ~ N(0, 1/K)-sized.
      const double base = inv_sqrt_k * std::sqrt(12.0) / levels;
      std::vector<double> s(static_cast<size_t>(g * n));
      for (double& v : s) v = base * std::exp2(rng.uniform(-2.0, 2.0));
      put_integer_expert(ck, p, q, e, n, k, codes, zeros, s);
      if (q.has_g_idx) {
        // Act-order: channels sorted by a random "importance" fill the groups in turn.
        std::vector<int32_t> perm(static_cast<size_t>(k));
        std::iota(perm.begin(), perm.end(), 0);
        for (int64_t i = k - 1; i > 0; --i) std::swap(perm[i], perm[rng.below(static_cast<uint64_t>(i + 1))]);
        put_expert(ck->find(p + ".g_idx"), e, g_idx_from_order(perm, q));
      }
      return;
    }
  }
}

void point_weights(Checkpoint* ck, Projection which, ProjectionWeights* w) {
  const std::string p = to_string(which);
  auto ptr = [&](const char* field) -> const void* {
    ByteBuffer* b = ck->find(p + "." + field);
    return b ? b->data() : nullptr;
  };
  w->weight = ptr("weight");
  w->scales = ptr("scales");
  w->zeros = ptr("zeros");
  w->g_idx = static_cast<const int32_t*>(ptr("g_idx"));
  w->input_scale = static_cast<const float*>(ptr("input_scale"));
}

// The tensors of `quant`'s format, zero-filled, in out->specs / out->data (w13's, then w2's).
Status allocate_checkpoint(const ProblemShape& shape, DType act_dtype, const QuantParams& quant, Checkpoint* out) {
  std::vector<TensorSpec> w13, w2;
  FUSEDMOE_RETURN_IF_ERROR(describe_weight_tensors(shape, act_dtype, quant, Projection::kW13, &w13));
  FUSEDMOE_RETURN_IF_ERROR(describe_weight_tensors(shape, act_dtype, quant, Projection::kW2, &w2));
  out->specs = w13;
  out->specs.insert(out->specs.end(), w2.begin(), w2.end());
  out->data.assign(out->specs.size(), {});
  for (size_t i = 0; i < out->specs.size(); ++i) out->data[i].assign(static_cast<size_t>(out->specs[i].bytes()), 0);
  return Status();
}

// out->weights pointing at out's tensors.
void finish_checkpoint(const QuantParams& quant, Checkpoint* out) {
  out->weights = MoeWeights();
  out->weights.quant = quant;
  point_weights(out, Projection::kW13, &out->weights.w13);
  point_weights(out, Projection::kW2, &out->weights.w2);
}

constexpr Projection kProjections[2] = {Projection::kW13, Projection::kW2};

}  // namespace

Status make_random_checkpoint(const ProblemShape& shape, DType act_dtype, const QuantParams& quant, uint64_t seed,
                              Checkpoint* out) {
  if (out == nullptr) return invalid_argument("out", "non-null", "nullptr");
  FUSEDMOE_RETURN_IF_ERROR(allocate_checkpoint(shape, act_dtype, quant, out));
#pragma omp parallel for collapse(2) schedule(dynamic)
  for (int pi = 0; pi < 2; ++pi) {
    for (int64_t e = 0; e < shape.num_experts; ++e) {
      const Projection which = kProjections[pi];
      fill_projection(out, to_string(which), quant, act_dtype, e, projection_rows(shape, which),
                      projection_cols(shape, which), mix_seed(seed, static_cast<uint64_t>(pi) + 1, static_cast<uint64_t>(e)));
    }
  }
  // Static activation scales: x ~ N(0,1) stays within +-5; the activation output within +-10.
  if (quant.act_quant == ActQuant::kPerTensorStatic) {
    const float a13 = 5.0f / kFP8E4M3Max, a2 = 10.0f / kFP8E4M3Max;
    std::memcpy(out->find("w13.input_scale")->data(), &a13, sizeof a13);
    std::memcpy(out->find("w2.input_scale")->data(), &a2, sizeof a2);
  }
  finish_checkpoint(quant, out);
  return Status();
}

namespace {

// A value as its stored dtype holds it.
double round_to(DType dtype, double v) {
  uint64_t tmp = 0;
  store_from_double(&tmp, dtype, 0, v);
  return load_as_double(&tmp, dtype, 0);
}

// RTN quantization of one expert's projection (dense w [n][k] in `act`) into `ck`.
void quantize_projection(const void* dense, DType act, const QuantParams& q, int64_t e, int64_t n, int64_t k,
                         Checkpoint* ck, const std::string& p) {
  const int64_t g = quant_groups(q, k);
  const int64_t group_len = q.group_size == -1 ? k : q.group_size;
  const uint32_t maxq = (1u << q.bits) - 1;
  const uint32_t midpoint = 1u << (q.bits - 1);
  // The classic GPTQ format stores zero - 1 and cannot hold a zero of 0.
  const uint32_t min_zero = q.format == WeightFormat::kGPTQ && q.gptq_zeros_minus_one ? 1 : 0;
  std::vector<double> w(static_cast<size_t>(n * k));
  for (int64_t i = 0; i < n * k; ++i) w[i] = load_as_double(dense, act, e * n * k + i);
  // Channel order: natural, or (act-order) by descending column norm.
  std::vector<int32_t> perm(static_cast<size_t>(k));
  std::iota(perm.begin(), perm.end(), 0);
  if (q.has_g_idx) {
    std::vector<double> norm(static_cast<size_t>(k), 0.0);
    for (int64_t r = 0; r < n; ++r) for (int64_t c = 0; c < k; ++c) norm[c] += w[r * k + c] * w[r * k + c];
    std::stable_sort(perm.begin(), perm.end(), [&](int32_t a, int32_t b) { return norm[a] > norm[b]; });
  }
  std::vector<uint32_t> codes(static_cast<size_t>(k * n)), zeros(static_cast<size_t>(g * n), midpoint);
  std::vector<double> s(static_cast<size_t>(g * n));
  for (int64_t r = 0; r < n; ++r) {
    for (int64_t gi = 0; gi < g; ++gi) {
      double lo = 0.0, hi = 0.0;  // the range includes 0, as GPTQ's and AWQ's do
      for (int64_t i = gi * group_len; i < (gi + 1) * group_len; ++i) {
        lo = std::min(lo, w[r * k + perm[i]]);
        hi = std::max(hi, w[r * k + perm[i]]);
      }
      double scale = 1.0;
      uint32_t zero = midpoint;
      if (q.has_zeros) {
        if (hi > lo) scale = round_to(q.scale_dtype, (hi - lo) / maxq);
        zero = static_cast<uint32_t>(std::clamp(std::nearbyint(-lo / scale), double(min_zero), double(maxq)));
      } else {
        const double amax = std::max(-lo, hi);
        if (amax > 0.0) scale = round_to(q.scale_dtype, 2.0 * amax / maxq);
      }
      s[gi * n + r] = scale;
      zeros[gi * n + r] = zero;
      for (int64_t i = gi * group_len; i < (gi + 1) * group_len; ++i) {
        const int64_t c = perm[i];
        const double code = std::nearbyint(w[r * k + c] / scale) + zero;
        codes[c * n + r] = static_cast<uint32_t>(std::clamp(code, 0.0, double(maxq)));
      }
    }
  }
  put_integer_expert(ck, p, q, e, n, k, codes, zeros, s);
  if (q.has_g_idx) put_expert(ck->find(p + ".g_idx"), e, g_idx_from_order(perm, q));
}

}  // namespace

Status quantize_checkpoint(const ProblemShape& shape, DType act_dtype, const Checkpoint& dense, const QuantParams& quant,
                           Checkpoint* out) {
  if (out == nullptr) return invalid_argument("out", "non-null", "nullptr");
  if (quant.format == WeightFormat::kDense) {
    return invalid_argument("quant.format", "a quantized format (gptq, awq, moe_wna16, fp8_*)", to_string(quant.format));
  }
  if (dense.weights.quant.format != WeightFormat::kDense || dense.weights.w13.weight == nullptr ||
      dense.weights.w2.weight == nullptr) {
    return invalid_argument("dense", "a dense checkpoint", to_string(dense.weights.quant.format));
  }
  FUSEDMOE_RETURN_IF_ERROR(allocate_checkpoint(shape, act_dtype, quant, out));
#pragma omp parallel for collapse(2) schedule(dynamic)
  for (int pi = 0; pi < 2; ++pi) {
    for (int64_t e = 0; e < shape.num_experts; ++e) {
      const Projection which = kProjections[pi];
      const void* src = which == Projection::kW13 ? dense.weights.w13.weight : dense.weights.w2.weight;
      const int64_t n = projection_rows(shape, which), k = projection_cols(shape, which);
      if (quant.format == WeightFormat::kFP8PerTensor || quant.format == WeightFormat::kFP8PerChannel ||
          quant.format == WeightFormat::kFP8Block) {
        float* w = fp8_scratch(n * k);
        for (int64_t i = 0; i < n * k; ++i) w[i] = static_cast<float>(load_as_double(src, act_dtype, e * n * k + i));
        put_fp8_expert(out, to_string(which), quant, e, n, k, w);
      } else {
        quantize_projection(src, act_dtype, quant, e, n, k, out, to_string(which));
      }
    }
  }
  finish_checkpoint(quant, out);
  return Status();
}

void bind(LayerData* d) {
  MoeInputs& in = d->inputs;
  in.x = d->x.empty() ? nullptr : d->x.data();
  in.router_logits = in.router_logits ? d->router_logits.data() : nullptr;
  in.routing.correction_bias = in.routing.correction_bias ? d->correction_bias.data() : nullptr;
  in.topk_ids = in.topk_ids ? d->topk_ids.data() : nullptr;
  in.topk_weights = in.topk_weights ? d->topk_weights.data() : nullptr;
  in.expert_map = d->expert_map.empty() ? nullptr : d->expert_map.data();
}

Status make_random_inputs(const ProblemShape& shape, DType act_dtype, RoutingMode mode, uint64_t seed, LayerData* out) {
  if (out == nullptr) return invalid_argument("out", "non-null", "nullptr");
  FUSEDMOE_RETURN_IF_ERROR(validate_shape(shape));
  if (act_dtype != DType::kBF16 && act_dtype != DType::kFP16) {
    return invalid_argument("act_dtype", "bf16 or fp16", to_string(act_dtype));
  }
  const int32_t global = global_experts(shape);
  const int64_t m = shape.m, k = shape.topk;
  *out = LayerData();
  out->inputs.shape = shape;
  out->inputs.act_dtype = act_dtype;
  out->x.resize(static_cast<size_t>(m * shape.hidden));
#pragma omp parallel for schedule(static)
  for (int64_t t = 0; t < m; ++t) {  // a stream per token: large M is made in parallel
    Rng row_rng(mix_seed(seed, 0x5eed, static_cast<uint64_t>(t)));
    for (int64_t c = 0; c < shape.hidden; ++c) store_from_double(out->x.data(), act_dtype, t * shape.hidden + c, row_rng.normal());
  }
  Rng rng(mix_seed(seed, 0x5eed));
  out->correction_bias.resize(static_cast<size_t>(global));
  for (float& b : out->correction_bias) b = static_cast<float>(0.1 * rng.normal());
  if (mode == RoutingMode::kRouter) {
    out->router_logits.resize(static_cast<size_t>(m * global));
    for (float& l : out->router_logits) l = static_cast<float>(rng.normal());
    out->inputs.router_logits = out->router_logits.data();
    out->inputs.router_dtype = DType::kFP32;
    bind(out);
    return Status();
  }
  std::vector<double> cumulative(static_cast<size_t>(global));
  double total = 0.0;
  for (int32_t e = 0; e < global; ++e) {
    total += mode == RoutingMode::kSkewed ? 1.0 + 0.3 * std::cos(static_cast<double>(e)) : 1.0;
    cumulative[e] = total;
  }
  out->topk_ids.resize(static_cast<size_t>(m * k));
  out->topk_weights.resize(static_cast<size_t>(m * k));
  for (int64_t t = 0; t < m; ++t) {
    for (int64_t s = 0; s < k; ++s) {
      int32_t id;
      bool repeated;
      do {  // distinct experts per token, as every router gives
        if (mode == RoutingMode::kOneExpert && s == 0) {
          id = 0;
        } else if (mode == RoutingMode::kBalanced) {  // distinct within a token: topk <= E
          id = static_cast<int32_t>((t * k + s) % global);
        } else {
          const double u = rng.uniform() * total;
          id = static_cast<int32_t>(std::upper_bound(cumulative.begin(), cumulative.end(), u) - cumulative.begin());
          id = std::min(id, global - 1);
        }
        repeated = std::find(&out->topk_ids[t * k], &out->topk_ids[t * k] + s, id) != &out->topk_ids[t * k] + s;
      } while (repeated);
      out->topk_ids[t * k + s] = id;
      out->topk_weights[t * k + s] = static_cast<float>(rng.uniform(0.1, 1.0));
    }
  }
  out->inputs.topk_ids = out->topk_ids.data();
  out->inputs.topk_weights = out->topk_weights.data();
  bind(out);
  return Status();
}

}  // namespace fusedmoe::ref
