// Reference dequantization of every checkpoint format, one output row at a time (integer
// formats also a few rows together, for the reference GEMMs).
// The formulas are the definitions of docs/FORMATS.md.
#include <algorithm>
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

// AWQ stores logical column c of each group of 8 in nibble kAwqNibble[c] (the packer writes
// columns in the order 0,2,4,6,1,3,5,7 into nibbles 0..7).
constexpr int kAwqNibble[8] = {0, 4, 1, 5, 2, 6, 3, 7};

inline uint32_t field(uint32_t word, int index, int bits) {
  return (word >> (index * bits)) & ((1u << bits) - 1u);
}

}  // namespace

Status WeightView::make(const ProblemShape& shape, DType act_dtype, const QuantParams& quant,
                        const ProjectionWeights& weights, Projection which, WeightView* out) {
  if (out == nullptr) return invalid_argument("out", "non-null", "nullptr");
  std::vector<TensorSpec> specs;
  FUSEDMOE_RETURN_IF_ERROR(describe_weight_tensors(shape, act_dtype, quant, which, &specs));
  for (const TensorSpec& spec : specs) {
    const std::string field_name = spec.name.substr(spec.name.find('.') + 1);
    const void* p = field_name == "weight"        ? weights.weight
                    : field_name == "scales"      ? weights.scales
                    : field_name == "zeros"       ? weights.zeros
                    : field_name == "g_idx"       ? static_cast<const void*>(weights.g_idx)
                                                  : static_cast<const void*>(weights.input_scale);
    if (p == nullptr) return invalid_argument("weights." + spec.name, "a host pointer", "nullptr");
  }
  out->q_ = quant;
  out->w_ = weights;
  out->act_dtype_ = act_dtype;
  out->n_ = projection_rows(shape, which);
  out->k_ = projection_cols(shape, which);
  out->groups_ = quant_groups(quant, out->k_);
  if (quant.format == WeightFormat::kGPTQ && quant.has_g_idx) {
    const int64_t total = static_cast<int64_t>(shape.num_experts) * out->k_;
    for (int64_t i = 0; i < total; ++i) {
      const int32_t g = weights.g_idx[i];
      if (g < 0 || g >= out->groups_) {
        return invalid_argument(std::string(to_string(which)) + ".g_idx[" + str(i / out->k_) + "][" +
                                    str(i % out->k_) + "]",
                                "a group in 0.." + str(out->groups_ - 1), str(g));
      }
    }
  }
  return Status();
}

// Integer formats: each row's zero and scale of every group first (G lookups instead of K),
// then the codes word by word, rows side by side (GPTQ's and AWQ's words of neighbouring rows
// share cache lines), the group advanced by a counter or read from g_idx; the same
// (q - z) * s as the definitions.
void WeightView::dequant_integer_rows(int64_t e, int64_t n0, int64_t count, double* out, int64_t ld) const {
  const int64_t N = n_, K = k_, G = groups_;
  const int bits = q_.bits;
  const int64_t group_len = q_.group_size == -1 ? K : q_.group_size;
  const uint32_t midpoint = 1u << (bits - 1);
  std::vector<double> zero(static_cast<size_t>(count * G), static_cast<double>(midpoint));
  std::vector<double> scale(static_cast<size_t>(count * G));
  const int32_t* gi = q_.format == WeightFormat::kGPTQ && q_.has_g_idx ? w_.g_idx + e * K : nullptr;
  for (int64_t r = 0; r < count; ++r) {
    const int64_t n = n0 + r;
    for (int64_t g = 0; g < G; ++g) {
      double& z = zero[r * G + g];
      double& s = scale[r * G + g];
      switch (q_.format) {
        case WeightFormat::kGPTQ: {
          const int pack = 32 / bits;
          const auto* qz = static_cast<const uint32_t*>(w_.zeros);
          if (q_.has_zeros) {
            z = static_cast<double>(field(qz[(e * G + g) * (N / pack) + n / pack], static_cast<int>(n % pack), bits) +
                                    (q_.gptq_zeros_minus_one ? 1u : 0u));
          }
          s = load_as_double(w_.scales, q_.scale_dtype, (e * G + g) * N + n);
          break;
        }
        case WeightFormat::kAWQ: {
          const auto* qz = static_cast<const uint32_t*>(w_.zeros);
          if (q_.has_zeros) z = static_cast<double>(field(qz[(e * G + g) * (N / 8) + n / 8], kAwqNibble[n % 8], 4));
          s = load_as_double(w_.scales, q_.scale_dtype, (e * G + g) * N + n);
          break;
        }
        default: {  // moe_wna16: qzeros[E, N/pack, G] bytes, scales [E, N, G]
          const int pack = 8 / bits;
          const auto* qz = static_cast<const uint8_t*>(w_.zeros);
          if (q_.has_zeros) {
            z = static_cast<double>(field(qz[(e * (N / pack) + n / pack) * G + g], static_cast<int>(n % pack), bits));
          }
          s = load_as_double(w_.scales, q_.scale_dtype, (e * N + n) * G + g);
          break;
        }
      }
    }
  }
  int64_t g = 0, left = group_len;  // the group of column k without g_idx, and its columns left
  auto group_of = [&](int64_t k) {
    if (left == 0) {
      ++g;
      left = group_len;
    }
    --left;
    return gi ? static_cast<int64_t>(gi[k]) : g;
  };
  auto put = [&](int64_t r, int64_t k, int64_t gk, uint32_t q) {
    out[r * ld + k] = (static_cast<double>(q) - zero[r * G + gk]) * scale[r * G + gk];
  };
  switch (q_.format) {
    case WeightFormat::kGPTQ: {
      // qweight[E, K/pack, N]: value k of column n is field k % pack of word [k / pack][n].
      const int pack = 32 / bits;
      const auto* qw = static_cast<const uint32_t*>(w_.weight) + e * (K / pack) * N + n0;
      for (int64_t kw = 0; kw < K / pack; ++kw) {
        for (int j = 0; j < pack; ++j) {
          const int64_t k = kw * pack + j, gk = group_of(k);
          for (int64_t r = 0; r < count; ++r) put(r, k, gk, field(qw[kw * N + r], j, bits));
        }
      }
      return;
    }
    case WeightFormat::kAWQ: {
      // qweight[E, K, N/8]: column n is nibble kAwqNibble[n % 8] of word [k][n / 8].
      const auto* qw = static_cast<const uint32_t*>(w_.weight) + e * K * (N / 8);
      for (int64_t k = 0; k < K; ++k) {
        const int64_t gk = group_of(k);
        for (int64_t r = 0; r < count; ++r) {
          const int64_t n = n0 + r;
          put(r, k, gk, field(qw[k * (N / 8) + n / 8], kAwqNibble[n % 8], 4));
        }
      }
      return;
    }
    default: {
      // moe_wna16 qweight[E, N, K/pack] bytes: value k is field k % pack of byte [n][k / pack] (low first).
      const int pack = 8 / bits;
      for (int64_t kb = 0; kb < K / pack; ++kb) {
        for (int j = 0; j < pack; ++j) {
          const int64_t k = kb * pack + j, gk = group_of(k);
          for (int64_t r = 0; r < count; ++r) {
            const auto* qw = static_cast<const uint8_t*>(w_.weight) + (e * N + n0 + r) * (K / pack);
            put(r, k, gk, field(qw[kb], j, bits));
          }
        }
      }
      return;
    }
  }
}

void WeightView::dequant_rows(int64_t e, int64_t n0, int64_t count, double* out, int64_t ld) const {
  if (is_integer_format(q_.format)) {
    dequant_integer_rows(e, n0, count, out, ld);
    return;
  }
  for (int64_t r = 0; r < count; ++r) dequant_row(e, n0 + r, out + r * ld);
}

void WeightView::dequant_row(int64_t e, int64_t n, double* row) const {
  const int64_t N = n_, K = k_;
  switch (q_.format) {
    case WeightFormat::kDense:
      for (int64_t k = 0; k < K; ++k) row[k] = load_as_double(w_.weight, act_dtype_, (e * N + n) * K + k);
      return;
    case WeightFormat::kFP8PerTensor:
    case WeightFormat::kFP8PerChannel:
    case WeightFormat::kFP8Block: {
      const auto* w = static_cast<const uint8_t*>(w_.weight) + (e * N + n) * K;
      const auto* s = static_cast<const float*>(w_.scales);
      const int64_t kb = (K + q_.block_k - 1) / q_.block_k;
      const int64_t nb = (N + q_.block_n - 1) / q_.block_n;
      const bool block = q_.format == WeightFormat::kFP8Block;
      const int64_t span = block ? q_.block_k : K;  // columns sharing one scale
      for (int64_t k0 = 0; k0 < K; k0 += span) {
        const double scale = q_.format == WeightFormat::kFP8PerTensor    ? s[e]
                             : q_.format == WeightFormat::kFP8PerChannel ? s[e * N + n]
                                                                         : s[(e * nb + n / q_.block_n) * kb + k0 / span];
        for (int64_t k = k0; k < std::min(K, k0 + span); ++k) row[k] = static_cast<double>(fp8e4m3_to_float(w[k])) * scale;
      }
      return;
    }
    case WeightFormat::kGPTQ:
    case WeightFormat::kAWQ:
    case WeightFormat::kMoeWNA16:
      dequant_integer_rows(e, n, 1, row, K);
      return;
  }
}

}  // namespace fusedmoe::ref
