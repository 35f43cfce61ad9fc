// GPU machine only (label gpu): the FP8 activation quantizer (kernels/fp8.cu) against the
// reference's rounding, bit for bit: every value's e4m3 code is e4m3(v / s) with the fp32
// division, and every scale is the reference's (amax / 448 at least 2^-64, 1 for a zero
// span, or the static scale). The layer tests compare outputs within a tolerance, where a
// wrong code in a tiny row or a wrong scale floor would not show. Rows span the magnitudes a
// span can have (zero, bf16 subnormals, amaxes below 448 x 2^-64, huge, an outlier among
// small values), on each kernel: the per-row one with a CTA per row (few rows) and a warp per
// row (many: rows held in registers or read twice), the span kernel for groups and per-tensor
// scales, and static scales from a subnormal one to 1e20. First run on the H200 (74800b6): every
// code and scale equal (its one failure was this file's 1e20 static scale on fp16 values,
// where every code is 0).
#include <gtest/gtest.h>

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "fusedmoe_ref/numeric.h"
#include "fusedmoe_ref/random.h"
#include "fusedmoe_ref/reference.h"
#include "gpu/gpu_test_util.h"
#include "kernels/fp8_one_pass.h"
#include "kernels/launch.h"

namespace fusedmoe {
namespace {

using kernels::ElemType;
using kernels::Fp8ActScale;

using testing_util::DeviceBuffer;
using testing_util::to_host;

// Row r's magnitude by r % 8 (bf16; fp16 keeps the classes inside its range).
float row_magnitude(int64_t r, ElemType elem) {
  static const float kBf16[8] = {1.0f, 0.0f, 1e-37f, 1e-39f, 1e30f, 3e37f, -1.0f, 0x1p-100f};
  static const float kFp16[8] = {1.0f, 0.0f, 1e-6f, 3e-7f, 1e3f, 1e2f, -1.0f, 0x1p-12f};
  return (elem == ElemType::kBF16 ? kBf16 : kFp16)[r % 8];
}

struct Matrix {
  ElemType elem;
  int64_t rows, cols;
  std::vector<uint16_t> bits;
  float value(int64_t i) const {
    return elem == ElemType::kBF16 ? ref::bf16_to_float(bits[i]) : ref::fp16_to_float(bits[i]);
  }
};

// specials: a NaN in row 0 (the amaxes skip it) and an infinity in row 6 (its span's scale is
// infinite: every finite value of the span gives 0, the infinity NaN).
Matrix make_matrix(ElemType elem, int64_t rows, int64_t cols, uint64_t seed, bool specials) {
  Matrix m{elem, rows, cols, std::vector<uint16_t>(static_cast<size_t>(rows * cols))};
  ref::Rng rng(seed);
  for (int64_t r = 0; r < rows; ++r) {
    const float mag = row_magnitude(r, elem);
    for (int64_t c = 0; c < cols; ++c) {
      // Class 6: small values around one large outlier per row.
      float v = mag < 0 ? (c == (r * 7) % cols ? 1e3f : static_cast<float>(rng.normal()) * 1e-3f)
                        : static_cast<float>(rng.normal()) * mag;
      if (elem == ElemType::kFP16) v = std::fmax(std::fmin(v, 6e4f), -6e4f);
      m.bits[r * cols + c] = elem == ElemType::kBF16 ? ref::float_to_bf16(v) : ref::float_to_fp16(v);
    }
  }
  if (specials && rows > 6 && cols > 5) {
    const float nan = std::nanf(""), inf = std::numeric_limits<float>::infinity();
    m.bits[3] = elem == ElemType::kBF16 ? ref::float_to_bf16(nan) : ref::float_to_fp16(nan);
    m.bits[6 * cols + 5] = elem == ElemType::kBF16 ? ref::float_to_bf16(inf) : ref::float_to_fp16(inf);
  }
  return m;
}

struct QuantCase {
  ElemType elem = ElemType::kBF16;
  int64_t rows = 0, cols = 0;
  Fp8ActScale kind = Fp8ActScale::kRow;
  int32_t group = 128;
  bool static_scale = false;
  float scale = 1.0f;  // static
  bool specials = false;  // a NaN and an infinity (make_matrix)
  bool whole = false;     // kTensor dynamic through whole_tensor (one CTA, no amax pass)
  int64_t live = -1;      // >= 0: a device live-row count (rows past it neither read nor written)
  bool one_pass = false;  // kTensor dynamic through launch_fp8_quantize_one_pass (no amax pass)
  std::string describe() const {
    static const char* kKinds[3] = {"tensor", "row", "group"};
    return std::string(elem == ElemType::kBF16 ? "bf16" : "fp16") + " rows " + std::to_string(rows) + " cols " +
           std::to_string(cols) + " " + kKinds[static_cast<int>(kind)] +
           (kind == Fp8ActScale::kGroup ? " group " + std::to_string(group) : "") +
           (static_scale ? " static " + std::to_string(scale) : "") + (specials ? " nan/inf" : "") +
           (whole ? " whole tensor" : "") + (live >= 0 ? " live " + std::to_string(live) : "") +
           (one_pass ? " one pass" : "");
  }
};

void check_quantizer(const QuantCase& c, uint64_t seed) {
  SCOPED_TRACE(c.describe());
  const Matrix x = make_matrix(c.elem, c.rows, c.cols, seed, c.specials);
  const int64_t n = c.rows * c.cols;
  const int64_t spans_per_row = c.kind == Fp8ActScale::kGroup ? (c.cols + c.group - 1) / c.group : 1;
  const int64_t n_scales = c.kind == Fp8ActScale::kTensor ? 1 : c.rows * spans_per_row;
  DeviceBuffer<uint16_t> in(n), out(n);
  DeviceBuffer<float> scales(n_scales), amax(1), tensor_scale(1);
  DeviceBuffer<int64_t> live_rows(1);
  const int64_t live = c.live >= 0 ? std::min(c.live, c.rows) : c.rows;
  CUDA_OK(cudaMemcpy(live_rows.p, &live, sizeof live, cudaMemcpyHostToDevice));
  CUDA_OK(cudaMemset(amax.p, 0xff, sizeof(float)));  // poisoned: the whole tensor's amax_out must write it
  CUDA_OK(cudaMemcpy(in.p, x.bits.data(), n * sizeof(uint16_t), cudaMemcpyHostToDevice));
  CUDA_OK(cudaMemset(out.p, 0x7f, n * sizeof(uint16_t)));  // poisoned: fp16 NaN
  CUDA_OK(cudaMemset(scales.p, 0xff, n_scales * sizeof(float)));
  CUDA_OK(cudaMemcpy(tensor_scale.p, &c.scale, sizeof(float), cudaMemcpyHostToDevice));

  kernels::Fp8QuantParams p;
  p.elem = c.elem;
  p.in = in.p;
  p.rows = c.rows;
  p.cols = c.cols;
  p.kind = c.kind;
  p.group = c.group;
  p.out = out.p;
  p.scales = scales.p;
  if (c.live >= 0) p.live_rows = live_rows.p;
  if (c.kind == Fp8ActScale::kTensor && c.static_scale) p.tensor_scale = tensor_scale.p;
  if (c.whole) {
    p.whole_tensor = true;
    p.amax_out = amax.p;
  } else if (c.one_pass) {
    p.amax_out = amax.p;
  } else if (c.kind == Fp8ActScale::kTensor && !c.static_scale) {
    CUDA_OK(kernels::launch_fp8_amax(c.elem, in.p, c.rows, c.cols, p.live_rows, amax.p, nullptr));
    p.amax = amax.p;
  }
  if (c.one_pass) {
    DeviceBuffer<float> partials(kernels::kFp8OnePassMaxCtas);
    CUDA_OK(cudaMemset(partials.p, 0xff, kernels::kFp8OnePassMaxCtas * sizeof(float)));  // poisoned: NaN
    CUDA_OK(kernels::launch_fp8_quantize_one_pass(p, partials.p, testing_util::sm_count(), nullptr));
    CUDA_OK(cudaDeviceSynchronize());
  } else {
    CUDA_OK(kernels::launch_fp8_quantize(p, nullptr));
  }
  CUDA_OK(cudaDeviceSynchronize());
  std::vector<uint16_t> got(static_cast<size_t>(n));
  std::vector<float> got_scales(static_cast<size_t>(n_scales));
  CUDA_OK(cudaMemcpy(got.data(), out.p, n * sizeof(uint16_t), cudaMemcpyDeviceToHost));
  CUDA_OK(cudaMemcpy(got_scales.data(), scales.p, n_scales * sizeof(float), cudaMemcpyDeviceToHost));

  // The reference's scales: per span, in fp32 (|v| of a bf16/fp16 value is exact in fp32).
  std::vector<float> want_scales(static_cast<size_t>(n_scales));
  if (c.kind == Fp8ActScale::kTensor) {
    float a = 0.0f;  // over the live rows (std::fmax: a NaN is ignored, as by the kernels)
    for (int64_t i = 0; i < live * c.cols; ++i) a = std::fmax(a, std::fabs(x.value(i)));
    want_scales[0] = c.static_scale ? c.scale : ref::fp8_dynamic_scale(a);
    if (c.whole || c.one_pass) {  // the amax it leaves for GpuLayer, as launch_fp8_amax would
      float got_amax = 0.0f;
      CUDA_OK(cudaMemcpy(&got_amax, amax.p, sizeof got_amax, cudaMemcpyDeviceToHost));
      ASSERT_EQ(ref::float_bits(got_amax), ref::float_bits(a)) << "amax_out: got " << got_amax << " want " << a;
    }
  } else {
    const int64_t span = c.kind == Fp8ActScale::kGroup ? c.group : c.cols;
    for (int64_t r = 0; r < live; ++r) {
      for (int64_t sp = 0; sp < spans_per_row; ++sp) {
        float a = 0.0f;
        for (int64_t k = sp * span; k < std::min(c.cols, (sp + 1) * span); ++k) {
          a = std::fmax(a, std::fabs(x.value(r * c.cols + k)));
        }
        want_scales[r * spans_per_row + sp] = ref::fp8_dynamic_scale(a);
      }
    }
  }
  const int64_t live_scales = c.kind == Fp8ActScale::kTensor ? 1 : live * spans_per_row;
  for (int64_t i = 0; i < live_scales; ++i) {
    ASSERT_EQ(ref::float_bits(got_scales[i]), ref::float_bits(want_scales[i]))
        << "scale " << i << ": got " << got_scales[i] << " want " << want_scales[i];
  }
  int64_t nonzero = 0;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t r = i / c.cols, k = i % c.cols;
    if (r >= live) {  // past the live rows: not written
      ASSERT_EQ(got[i], 0x7f7f) << "row " << r << " col " << k << " (not live) was written";
      continue;
    }
    const float s = c.kind == Fp8ActScale::kTensor ? want_scales[0]
                    : c.kind == Fp8ActScale::kRow  ? want_scales[r]
                                                   : want_scales[r * spans_per_row + k / c.group];
    const float v = x.value(i);
    const float want = ref::fp8e4m3_to_float(ref::float_to_fp8e4m3(v / s));
    const float have = ref::fp16_to_float(got[i]);
    // As floats: a zero of either sign is the same operand for the GEMM.
    ASSERT_TRUE(have == want || (std::isnan(have) && std::isnan(want))) << "row " << r << " col " << k << ": v " << v << " s " << s << " got " << have
                              << " want " << want;
    nonzero += want != 0.0f;
  }
  EXPECT_GT(nonzero, 0);  // the case tests something
}

TEST(Fp8Quantize, CodesAndScalesMatchTheReferenceBitForBit) {
  REQUIRE_GPU();
  uint64_t seed = 1;
  for (ElemType elem : {ElemType::kBF16, ElemType::kFP16}) {
    // Per-row: a CTA per row (8 rows: one pass over 7168 columns, 1000 columns partial) and a
    // warp per row (1536 rows: held rows of 256, 1000 and 2048 columns, read twice at 4096;
    // 600 rows of 1000 columns: short rows, a warp each from 512 rows, v71).
    for (int64_t cols : {7168, 1000}) check_quantizer({elem, 8, cols, Fp8ActScale::kRow}, seed++);
    check_quantizer({elem, 600, 1000, Fp8ActScale::kRow}, seed++);
    for (int64_t cols : {256, 1000, 2048, 4096}) check_quantizer({elem, 1536, cols, Fp8ActScale::kRow}, seed++);
    // Groups: 128 (one vector per lane), 64, and a partial last group (1000 columns).
    check_quantizer({elem, 8, 7168, Fp8ActScale::kGroup, 128}, seed++);
    check_quantizer({elem, 1536, 1000, Fp8ActScale::kGroup, 128}, seed++);
    check_quantizer({elem, 1536, 2048, Fp8ActScale::kGroup, 64}, seed++);
    // Per-tensor: dynamic (the amax kernel first), and static scales.
    check_quantizer({elem, 8, 7168, Fp8ActScale::kTensor}, seed++);
    check_quantizer({elem, 1536, 2048, Fp8ActScale::kTensor}, seed++);
    // Up to 1e20 in bf16; fp16 values end at 6e4, so its largest static scale is 100.
    for (float s : {1e-40f, 0x1p-126f, 1e-30f, 0.37f, elem == ElemType::kBF16 ? 1e20f : 100.0f}) {
      check_quantizer({elem, 1536, 1000, Fp8ActScale::kTensor, 128, true, s}, seed++);
    }
    // Groups of 512 columns (a team of 32 lanes reading its span twice), and several spans
    // per team (1536 rows of 7168 columns under a per-tensor scale).
    check_quantizer({elem, 1536, 2048, Fp8ActScale::kGroup, 512}, seed++);
    check_quantizer({elem, 1536, 7168, Fp8ActScale::kTensor}, seed++);
    // A NaN and an infinity in each kind of span (not run on the GPU yet: added after v24's
    // device time, with the DynamicScale change for infinite scales).
    for (Fp8ActScale kind : {Fp8ActScale::kRow, Fp8ActScale::kGroup, Fp8ActScale::kTensor}) {
      QuantCase c{elem, 1536, 1000, kind};
      c.specials = true;
      check_quantizer(c, seed++);
      c.rows = 8;  // the CTA-per-row kernel, and decode-sized spans
      check_quantizer(c, seed++);
    }
    // The whole tensor in one CTA (decode sizes): one row and two rows of 7168; 8 x 2048
    // (exactly kFp8WholeTensorValues: two batches of the CTA's loads per pass, the largest
    // rows, 4-7, only in the second); 16 x 1000 with a NaN and an infinity; and 16 x 1000 with
    // 5 live rows (a device count), where the rows past them hold larger values (bf16).
    for (int64_t rows : {1, 2}) check_quantizer({elem, rows, 7168, Fp8ActScale::kTensor, 128, false, 1.0f, false, true}, seed++);
    check_quantizer({elem, 8, 2048, Fp8ActScale::kTensor, 128, false, 1.0f, false, true}, seed++);
    check_quantizer({elem, 16, 1000, Fp8ActScale::kTensor, 128, false, 1.0f, true, true}, seed++);
    check_quantizer({elem, 16, 1000, Fp8ActScale::kTensor, 128, false, 1.0f, false, true, 5}, seed++);
    check_quantizer({elem, 16, 1000, Fp8ActScale::kTensor, 128, false, 1.0f, false, false, 5}, seed++);  // the two-pass path, same live rows
    // The one-pass kernel: one row (four units); 16 rows with 5 live; many rows (264 CTAs,
    // each 24 units of 224 vectors: 84 KiB held); a NaN and an infinity; a live count past a
    // CTA's first units; a row of 14336 columns in seven units; as many rows as the CTAs hold
    // at 1024 columns (one more and it refuses them).
    const auto one_pass = [&](int64_t rows, int64_t cols, bool specials, int64_t live) {
      QuantCase c{elem, rows, cols, Fp8ActScale::kTensor};
      c.specials = specials;
      c.live = live;
      c.one_pass = true;
      check_quantizer(c, seed++);
    };
    one_pass(1, 7168, false, -1);
    one_pass(16, 1000, false, 5);
    one_pass(1536, 7168, false, -1);
    one_pass(1536, 1000, true, -1);
    one_pass(1536, 1000, false, 1000);
    one_pass(3, 14336, false, -1);
    const int64_t held_rows = kernels::fp8_one_pass_plan(1 << 20, 1024, testing_util::sm_count()).ctas *
                              (kernels::kFp8OnePassHeldBytes / (128 * 16));
    one_pass(held_rows, 1024, false, -1);
    if (testing::Test::HasFatalFailure()) return;
  }
}

TEST(Fp8Quantize, WholeTensorRefusesWhatOneCtaDoesNot) {
  // Checked before any launch: no GPU needed.
  uint16_t in_word = 0, out_word = 0;
  float scale = 0.0f;
  kernels::Fp8QuantParams p;
  p.in = &in_word;
  p.out = &out_word;
  p.scales = &scale;
  p.kind = Fp8ActScale::kTensor;
  p.whole_tensor = true;
  p.rows = 3;
  p.cols = 7168;  // 21504 values: past kFp8WholeTensorValues
  EXPECT_EQ(kernels::launch_fp8_quantize(p, nullptr), cudaErrorInvalidValue);
  p.rows = 2;
  p.kind = Fp8ActScale::kRow;  // per-row scales are not a whole tensor's
  EXPECT_EQ(kernels::launch_fp8_quantize(p, nullptr), cudaErrorInvalidValue);
  p.kind = Fp8ActScale::kTensor;
  p.tensor_scale = &scale;  // a static scale needs no amax
  EXPECT_EQ(kernels::launch_fp8_quantize(p, nullptr), cudaErrorInvalidValue);
  p.tensor_scale = nullptr;
  p.in_kind = kernels::Fp8QuantIn::kGatedAct;  // plain rows only
  EXPECT_EQ(kernels::launch_fp8_quantize(p, nullptr), cudaErrorInvalidValue);
}

TEST(Fp8Quantize, ScatterRefusesMorePairsThanASpanTeamHolds) {
  // Checked before any launch: no GPU needed. Group and tensor scales: a 128-column span's
  // team holds one destination's scale slot per lane.
  uint16_t in_word = 0;
  uint8_t out_byte = 0;
  float scale = 1.0f;
  int32_t row_of_pair = 0;
  int64_t offsets[2] = {0, 0};
  kernels::Fp8QuantParams p;
  p.in = &in_word;
  p.out = &out_byte;
  p.scales = &scale;
  p.amax = &scale;
  p.rows = 1;
  p.cols = 128;
  p.in_kind = kernels::Fp8QuantIn::kScatterTokens;
  p.out_kind = kernels::Fp8QuantOut::kE4M3Grouped;
  p.expert_offsets = offsets;
  p.num_experts = 1;
  p.row_of_pair = &row_of_pair;
  p.topk = kernels::kFp8ScatterSpanMaxTopk + 1;
  for (Fp8ActScale kind : {Fp8ActScale::kGroup, Fp8ActScale::kTensor}) {
    p.kind = kind;
    EXPECT_EQ(kernels::launch_fp8_quantize(p, nullptr), cudaErrorInvalidValue);
  }
  p.kind = Fp8ActScale::kGroup;
  p.topk = 2;
  p.group = 64;  // the grouped layout's scales are per 128 columns
  EXPECT_EQ(kernels::launch_fp8_quantize(p, nullptr), cudaErrorInvalidValue);
  p.group = 128;
  p.out_kind = kernels::Fp8QuantOut::kF16Values;  // the grouped GEMM's layout only
  EXPECT_EQ(kernels::launch_fp8_quantize(p, nullptr), cudaErrorInvalidValue);
  p.out_kind = kernels::Fp8QuantOut::kE4M3Grouped;
  p.codes_by_token = true;  // codes at the token's row: the scattering view only
  p.in_kind = kernels::Fp8QuantIn::kGatherTokens;
  p.sorted_pairs = &row_of_pair;
  EXPECT_EQ(kernels::launch_fp8_quantize(p, nullptr), cudaErrorInvalidValue);
}

TEST(Fp8Quantize, TableRefusesWhatOneWarpDoesNot) {
  // Checked before any launch: no GPU needed. The table's CTA (align_warp.cuh) takes plain rows
  // and at most kWarpAlignPairs pairs, with align's tables.
  uint16_t in_word = 0, out_word = 0;
  float scale = 1.0f;
  int32_t ids[1] = {0}, counts[1] = {0}, sorted[1] = {0}, active[2] = {0, 0};
  int64_t offsets[2] = {0, 0};
  kernels::Fp8QuantParams p;
  p.in = &in_word;
  p.out = &out_word;
  p.scales = &scale;
  p.kind = Fp8ActScale::kRow;
  p.rows = 1;
  p.cols = 8;
  kernels::AlignParams t;
  t.topk_ids = ids;
  t.pairs = kernels::kWarpAlignPairs + 1;
  t.global_experts = 1;
  t.num_experts = 1;
  t.expert_counts = counts;
  t.expert_offsets = offsets;
  t.sorted_pairs = sorted;
  t.active_experts = active;
  EXPECT_EQ(kernels::launch_fp8_quantize(p, nullptr, false, &t), cudaErrorInvalidValue);
  t.pairs = 1;
  t.num_experts = kernels::kMaxExperts + 1;
  EXPECT_EQ(kernels::launch_fp8_quantize(p, nullptr, false, &t), cudaErrorInvalidValue);
  t.num_experts = 1;
  t.sorted_pairs = nullptr;
  EXPECT_EQ(kernels::launch_fp8_quantize(p, nullptr, false, &t), cudaErrorInvalidValue);
  t.sorted_pairs = sorted;
  p.in_kind = kernels::Fp8QuantIn::kGatedAct;  // plain rows only
  EXPECT_EQ(kernels::launch_fp8_quantize(p, nullptr, false, &t), cudaErrorInvalidValue);
}

}  // namespace
// The one-pass kernel refuses, before any launch (no GPU needed), what it does not take: other
// scales than a dynamic per-tensor one, the gathered view, no amax slots, and rows past what its
// CTAs hold.
TEST(Fp8Quantize, OnePassRefusesWhatItDoesNotHold) {
  uint16_t in_word = 0, out_word = 0;
  float scale = 0.0f, partials = 0.0f;
  kernels::Fp8QuantParams p;
  p.in = &in_word;
  p.out = &out_word;
  p.scales = &scale;
  p.kind = Fp8ActScale::kTensor;
  p.cols = 1024;
  const int32_t sms = 132;
  const int64_t held = kernels::fp8_one_pass_plan(1 << 20, 1024, sms).ctas * (kernels::kFp8OnePassHeldBytes / (128 * 16));
  p.rows = held + 1;  // one row past the CTAs' shared memory
  EXPECT_EQ(kernels::launch_fp8_quantize_one_pass(p, &partials, sms, nullptr), cudaErrorInvalidValue);
  p.rows = 16;
  EXPECT_EQ(kernels::launch_fp8_quantize_one_pass(p, nullptr, sms, nullptr), cudaErrorInvalidValue);
  EXPECT_EQ(kernels::launch_fp8_quantize_one_pass(p, &partials, 0, nullptr), cudaErrorInvalidValue);
  p.kind = Fp8ActScale::kRow;
  EXPECT_EQ(kernels::launch_fp8_quantize_one_pass(p, &partials, sms, nullptr), cudaErrorInvalidValue);
  p.kind = Fp8ActScale::kTensor;
  p.tensor_scale = &scale;  // a static scale needs no amax
  EXPECT_EQ(kernels::launch_fp8_quantize_one_pass(p, &partials, sms, nullptr), cudaErrorInvalidValue);
  p.tensor_scale = nullptr;
  p.whole_tensor = true;
  EXPECT_EQ(kernels::launch_fp8_quantize_one_pass(p, &partials, sms, nullptr), cudaErrorInvalidValue);
  p.whole_tensor = false;
  int32_t sorted = 0, row_of_pair = 0;
  p.in_kind = kernels::Fp8QuantIn::kGatherTokens;
  p.sorted_pairs = &sorted;
  p.row_of_pair = &row_of_pair;
  EXPECT_EQ(kernels::launch_fp8_quantize_one_pass(p, &partials, sms, nullptr), cudaErrorInvalidValue);
}

// Values of one matrix [rows, cols] (bf16 or fp16 bits): normal, each row's magnitude one of
// 1, 1e-2, 30 (finite activations: a huge row would make every code 0 under one tensor scale).
std::vector<uint16_t> modest_values(ElemType elem, int64_t rows, int64_t cols, uint64_t seed) {
  static const float kMag[3] = {1.0f, 1e-2f, 30.0f};
  ref::Rng rng(seed);
  std::vector<uint16_t> bits(static_cast<size_t>(rows * cols));
  for (int64_t i = 0; i < rows * cols; ++i) {
    const float v = static_cast<float>(rng.normal()) * kMag[(i / cols) % 3];
    bits[i] = elem == ElemType::kBF16 ? ref::float_to_bf16(v) : ref::float_to_fp16(v);
  }
  return bits;
}

// The one-pass kernel's grouped views against the two-pass form's launches, bit for bit (the
// codes, every scale slot and the amax): kGatedAct (gated_act writing the activation with its
// amax, then the span quantizer) on 600 rows with 590 live, and kScatterTokens (the amax pass
// over every token, then the span quantizer storing at the pairs' rows) on 300 tokens at top-2
// with some tokens' pairs all skipped, both into kE4M3Grouped's layout on 4 experts.
TEST(Fp8Quantize, OnePassMatchesTwoPassOnTheGroupedViews) {
  REQUIRE_GPU();
  const int32_t sms = testing_util::sm_count();
  uint64_t seed = 100;
  for (ElemType elem : {ElemType::kBF16, ElemType::kFP16}) {
    SCOPED_TRACE(elem == ElemType::kBF16 ? "bf16" : "fp16");
    for (bool gated : {true, false}) {
      SCOPED_TRACE(gated ? "gated activation" : "x scattered to its pairs");
      const int64_t tokens = 300, topk = 2, pairs = tokens * topk;
      const int64_t cols = gated ? 768 : 1000, in_cols = gated ? 2 * cols : cols;
      const int64_t in_rows = gated ? pairs : tokens;
      // Pairs' rows: token t's pair k local unless t % 7 == 3 (no local pair) or k = 1 and
      // t % 5 == 0; the local ones take rows 0, 1, ... in order. Gated: 590 of 600 rows live.
      std::vector<int32_t> row_of_pair(static_cast<size_t>(pairs), -1);
      int64_t live = 0;
      for (int64_t t = 0; t < tokens; ++t) {
        for (int64_t k = 0; k < topk; ++k) {
          if (t % 7 == 3 || (k == 1 && t % 5 == 0)) continue;
          row_of_pair[t * topk + k] = static_cast<int32_t>(live++);
        }
      }
      if (gated) live = 590;
      const int64_t offsets[5] = {0, live / 4, live / 2, live * 3 / 4, live};
      const int64_t blocks = (cols + 127) / 128;
      const std::vector<uint16_t> in_bits = modest_values(elem, in_rows, in_cols, seed++);
      DeviceBuffer<uint16_t> in(in_rows * in_cols), act(pairs * cols);
      DeviceBuffer<int32_t> d_row_of_pair(pairs);
      DeviceBuffer<int64_t> d_offsets(5);
      DeviceBuffer<float> amax(2), partials(kernels::kFp8OnePassMaxCtas);
      DeviceBuffer<uint8_t> out_two(pairs * cols), out_one(pairs * cols);
      DeviceBuffer<float> scales_two(pairs * blocks), scales_one(pairs * blocks);
      CUDA_OK(cudaMemcpy(in.p, in_bits.data(), in_bits.size() * 2, cudaMemcpyHostToDevice));
      CUDA_OK(cudaMemcpy(d_row_of_pair.p, row_of_pair.data(), pairs * 4, cudaMemcpyHostToDevice));
      CUDA_OK(cudaMemcpy(d_offsets.p, offsets, sizeof offsets, cudaMemcpyHostToDevice));
      for (uint8_t* o : {out_two.p, out_one.p}) CUDA_OK(cudaMemset(o, 0x7f, pairs * cols));
      for (float* sc : {scales_two.p, scales_one.p}) CUDA_OK(cudaMemset(sc, 0xff, pairs * blocks * 4));
      CUDA_OK(cudaMemset(amax.p, 0, 2 * sizeof(float)));
      CUDA_OK(cudaMemset(partials.p, 0xff, kernels::kFp8OnePassMaxCtas * sizeof(float)));

      kernels::Fp8QuantParams p;
      p.elem = elem;
      p.kind = Fp8ActScale::kTensor;
      p.out_kind = kernels::Fp8QuantOut::kE4M3Grouped;
      p.expert_offsets = d_offsets.p;
      p.num_experts = 4;
      p.cols = cols;
      kernels::Fp8QuantParams two = p;
      if (gated) {
        kernels::GatedActParams ga;
        ga.elem = elem;
        ga.h = in.p;
        ga.a = act.p;
        ga.rows_bound = pairs;
        ga.inter = cols;
        ga.live_rows = d_offsets.p + 4;
        ga.amax_bits = reinterpret_cast<unsigned int*>(amax.p);
        CUDA_OK(kernels::launch_gated_act(ga, nullptr));
        two.in = act.p;
        two.rows = pairs;
        two.live_rows = d_offsets.p + 4;
        p.in = in.p;
        p.in_kind = kernels::Fp8QuantIn::kGatedAct;
        p.rows = pairs;
        p.live_rows = d_offsets.p + 4;
      } else {
        CUDA_OK(kernels::launch_fp8_amax(elem, in.p, tokens, cols, nullptr, amax.p, nullptr));
        two.in = in.p;
        two.rows = tokens;
        two.in_kind = kernels::Fp8QuantIn::kScatterTokens;
        two.topk = static_cast<int32_t>(topk);
        two.row_of_pair = d_row_of_pair.p;
        p.in = in.p;
        p.rows = tokens;
        p.in_kind = kernels::Fp8QuantIn::kScatterTokens;
        p.topk = static_cast<int32_t>(topk);
        p.row_of_pair = d_row_of_pair.p;
      }
      two.amax = amax.p;
      two.out = out_two.p;
      two.scales = scales_two.p;
      CUDA_OK(kernels::launch_fp8_quantize(two, nullptr));
      p.out = out_one.p;
      p.scales = scales_one.p;
      p.amax_out = amax.p + 1;
      CUDA_OK(kernels::launch_fp8_quantize_one_pass(p, partials.p, sms, nullptr));
      CUDA_OK(cudaDeviceSynchronize());
      const std::vector<float> amaxes = to_host(amax.p, 2);
      EXPECT_EQ(ref::float_bits(amaxes[1]), ref::float_bits(amaxes[0])) << amaxes[1] << " against " << amaxes[0];
      EXPECT_GT(amaxes[0], 0.0f);
      const std::vector<uint8_t> got = to_host(out_one.p, pairs * cols), want = to_host(out_two.p, pairs * cols);
      int64_t nonzero = 0;
      for (int64_t i = 0; i < pairs * cols; ++i) {
        ASSERT_EQ(got[i], want[i]) << "row " << i / cols << " col " << i % cols;
        nonzero += (want[i] & 0x7f) != 0 && want[i] != 0x7f;
      }
      EXPECT_GT(nonzero, pairs * cols / 4);  // most live rows hold codes, not the poison
      const std::vector<float> got_s = to_host(scales_one.p, pairs * blocks), want_s = to_host(scales_two.p, pairs * blocks);
      for (int64_t i = 0; i < pairs * blocks; ++i) {
        ASSERT_EQ(ref::float_bits(got_s[i]), ref::float_bits(want_s[i])) << "scale slot " << i;
      }
    }
  }
}

}  // namespace fusedmoe
