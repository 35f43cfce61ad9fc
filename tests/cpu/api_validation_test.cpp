// Bad input through the public API: each case gets a Status naming the argument, the
// expected and the actual value; valid input without a compiled kernel gets kNotImplemented.
#include <gtest/gtest.h>

#include "fusedmoe/build_info.h"
#include "fusedmoe/moe.h"
#include "cpu/test_util.h"
#include "split_k.h"

namespace fusedmoe {
namespace {

using testing_util::make_shape;

ProblemShape shape(int64_t m = 4, int64_t h = 256, int64_t i = 128, int32_t e = 8, int32_t k = 2) {
  return make_shape(m, h, i, e, k);
}

// Valid inputs pointing at dummy (never read) host memory.
struct Fixture {
  std::vector<uint16_t> x = std::vector<uint16_t>(4096);
  std::vector<int32_t> ids = std::vector<int32_t>(64);
  std::vector<float> weights = std::vector<float>(64);
  MoeInputs inputs() {
    MoeInputs in;
    in.shape = shape();
    in.x = x.data();
    in.topk_ids = ids.data();
    in.topk_weights = weights.data();
    return in;
  }
  // A call over prepared weights `pw` (never read), its output in x's storage.
  MoeArguments args(const PreparedWeights* pw) {
    MoeArguments a;
    a.inputs = inputs();
    a.weights = pw;
    a.out = x.data();
    return a;
  }
};

void expect_invalid(const Status& st, const std::string& message) {
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << st.message();
  EXPECT_EQ(st.message(), message);
}

TEST(ApiValidation, Shapes) {
  Fixture f;
  MoeInputs in = f.inputs();
  in.shape.topk = 9;
  expect_invalid(validate_inputs(in), "shape.topk: expected 1..min(global experts = 8, 32), got 9");
  in = f.inputs();
  in.shape.m = -1;
  expect_invalid(validate_inputs(in), "shape.m: expected >= 0, got -1");
  in = f.inputs();
  in.shape.num_experts = 0;
  expect_invalid(validate_inputs(in), "shape.num_experts: expected 1..1024, got 0");
  in = f.inputs();
  in.shape.hidden = 0;
  expect_invalid(validate_inputs(in), "shape.hidden: expected > 0, got 0");
  in = f.inputs();
  in.shape.global_num_experts = 4;
  expect_invalid(validate_inputs(in), "shape.global_num_experts: expected 0 or num_experts (8)..1024, got 4");
  in = f.inputs();
  in.shape.m = int64_t{1} << 29;
  in.shape.topk = 8;
  expect_invalid(validate_inputs(in), "shape.m * shape.topk: expected < 2^31 (int32 pair indices), got 536870912 * 8");
}

TEST(ApiValidation, PointersDtypesAndRouting) {
  Fixture f;
  MoeInputs in = f.inputs();
  in.x = nullptr;
  expect_invalid(validate_inputs(in), "x: expected a pointer to [m, hidden] data, got nullptr");
  in = f.inputs();
  in.topk_weights = nullptr;
  expect_invalid(validate_inputs(in), "topk_weights: expected a pointer to [m, topk] fp32, got nullptr");
  in = f.inputs();
  in.router_logits = f.weights.data();
  expect_invalid(validate_inputs(in), "router_logits / topk_ids: expected exactly one routing source, got both");
  in = f.inputs();
  in.act_dtype = DType::kFP32;
  expect_invalid(validate_inputs(in), "act_dtype: expected bf16 or fp16, got fp32");
  in = f.inputs();
  in.activation = static_cast<Activation>(7);
  expect_invalid(validate_inputs(in), "activation: expected silu_and_mul, gelu_and_mul or gelu_tanh_and_mul, got 7");
  in = f.inputs();
  in.routing.n_group = 3;  // routing is only read with router logits: topk given, so valid
  EXPECT_TRUE(validate_inputs(in).ok());
  in = f.inputs();
  in.apply_router_weight_on_input = true;
  expect_invalid(validate_inputs(in), "apply_router_weight_on_input: expected only with topk = 1, got topk = 2");
  in = f.inputs();
  in.shape.global_num_experts = 16;
  expect_invalid(validate_inputs(in),
                 "expert_map: expected a map when global_num_experts (16) differs from num_experts (8), got nullptr");
  in = f.inputs();
  in.topk_ids = nullptr;
  in.topk_weights = nullptr;
  in.router_logits = f.weights.data();
  in.routing.routed_scaling_factor = 0.0f;
  expect_invalid(validate_inputs(in), "routing.routed_scaling_factor: expected finite and > 0, got 0");
}

TEST(ApiValidation, EmptyBatchIsValid) {
  MoeInputs in;
  in.shape = shape(0);
  EXPECT_TRUE(validate_inputs(in).ok());
}

TEST(ApiValidation, QuantCombinations) {
  QuantParams q;
  q.format = WeightFormat::kGPTQ;
  q.group_size = 96;
  MoeWeights w;
  w.quant = q;
  expect_invalid(validate_weights(shape(), DType::kBF16, w),
                 "quant.group_size: expected a divisor of K (w13 has N = 256, K = 256), got 96");
  w.quant.group_size = 128;
  w.quant.bits = 3;
  expect_invalid(validate_weights(shape(), DType::kBF16, w), "quant.bits: expected 4 or 8 for format gptq, got 3");
  w.quant.bits = 8;
  w.quant.format = WeightFormat::kAWQ;
  expect_invalid(validate_weights(shape(), DType::kBF16, w), "quant.bits: expected 4 for awq, got 8");
  w.quant = QuantParams();
  w.quant.format = WeightFormat::kAWQ;
  w.quant.has_g_idx = true;
  expect_invalid(validate_weights(shape(), DType::kBF16, w),
                 "quant.has_g_idx: expected false for format awq (act-order is GPTQ's), got true");
  w.quant = QuantParams();
  w.quant.format = WeightFormat::kFP8Block;
  w.quant.act_quant = ActQuant::kPerToken;
  expect_invalid(validate_weights(shape(), DType::kBF16, w),
                 "quant.act_quant: expected per_group for format fp8_block (1 x block_k scales), got per_token");
  w.quant.format = WeightFormat::kFP8PerTensor;
  w.quant.act_quant = ActQuant::kNone;
  expect_invalid(validate_weights(shape(), DType::kBF16, w),
                 "quant.act_quant: expected per_tensor_dynamic, per_tensor_static or per_token for format "
                 "fp8_per_tensor, got none");
  w.quant = QuantParams();
  w.quant.act_quant = ActQuant::kPerToken;
  expect_invalid(validate_weights(shape(), DType::kBF16, w),
                 "quant: expected no act_quant, zeros or g_idx for dense weights, got act_quant=per_token");
  // GPTQ packs 8 int4 values along K: K = I = 100 does not divide.
  w.quant = QuantParams();
  w.quant.format = WeightFormat::kGPTQ;
  w.quant.group_size = -1;
  expect_invalid(validate_weights(shape(4, 256, 100), DType::kBF16, w),
                 "w2 K: expected a multiple of 8 (GPTQ packs 8 values of 4 bits along K) (w2 has N = 256, K = 100), got 100");
  // Missing tensors are named.
  w.quant = QuantParams();
  expect_invalid(validate_weights(shape(), DType::kBF16, w),
                 "weights.w13.weight: expected a pointer to bf16 data for format dense, got nullptr");
}

TEST(ApiValidation, DescribeWeightTensors) {
  std::vector<TensorSpec> specs;
  QuantParams q;
  q.format = WeightFormat::kGPTQ;
  q.has_zeros = true;
  q.has_g_idx = true;
  ASSERT_TRUE(describe_weight_tensors(shape(1, 7168, 256, 256, 8), DType::kBF16, q, Projection::kW13, &specs).ok());
  ASSERT_EQ(specs.size(), 4u);
  EXPECT_EQ(specs[0].name, "w13.weight");
  EXPECT_EQ(specs[0].dims, (std::vector<int64_t>{256, 7168 / 8, 512}));
  EXPECT_EQ(specs[1].dims, (std::vector<int64_t>{256, 56, 512}));
  EXPECT_EQ(specs[2].dims, (std::vector<int64_t>{256, 56, 512 / 8}));
  EXPECT_EQ(specs[3].dims, (std::vector<int64_t>{256, 7168}));
  q = QuantParams();
  q.format = WeightFormat::kFP8Block;
  q.act_quant = ActQuant::kPerGroup;
  ASSERT_TRUE(describe_weight_tensors(shape(1, 7168, 200, 256, 8), DType::kBF16, q, Projection::kW2, &specs).ok());
  EXPECT_EQ(specs[1].dims, (std::vector<int64_t>{256, 56, 2}));  // ceil(7168/128), ceil(200/128)
  q = QuantParams();
  q.format = WeightFormat::kMoeWNA16;
  q.has_zeros = true;
  ASSERT_TRUE(describe_weight_tensors(shape(1, 2048, 768, 128, 8), DType::kBF16, q, Projection::kW13, &specs).ok());
  EXPECT_EQ(specs[0].dims, (std::vector<int64_t>{128, 1536, 1024}));
  EXPECT_EQ(specs[0].dtype, DType::kUInt8);
  EXPECT_EQ(specs[1].dims, (std::vector<int64_t>{128, 1536, 16}));
  EXPECT_EQ(specs[2].dims, (std::vector<int64_t>{128, 768, 16}));
  // 64-bit sizes: DeepSeek-V3 full w13 in bf16 is 256 * 4096 * 7168 * 2 bytes > 2^31.
  q = QuantParams();
  ASSERT_TRUE(describe_weight_tensors(shape(1, 7168, 2048, 256, 8), DType::kBF16, q, Projection::kW13, &specs).ok());
  EXPECT_EQ(specs[0].bytes(), int64_t{256} * 4096 * 7168 * 2);
}

TEST(ApiValidation, ValidCallsWithoutKernelAreNotImplemented) {
  // A build without CUDA has no kernels: valid FP8 block weights are "not implemented".
  if (build_info().cuda) GTEST_SKIP() << "this build has the FP8 kernels";
  Fixture f;
  PreparedWeights pw;
  pw.shape = shape();
  pw.quant.format = WeightFormat::kFP8Block;
  pw.quant.act_quant = ActQuant::kPerGroup;
  MoeArguments args = f.args(&pw);
  // FP8 weights are read as the checkpoint holds them: both tensors of each projection.
  pw.w13.weight = pw.w2.weight = pw.w13.scales = f.x.data();
  expect_invalid(can_implement(args),
                 "weights.w2.scales: expected a pointer from prepare_weights() or bind_prepared_weights(), got nullptr");
  pw.w2.scales = f.x.data();  // present, never read
  Status st = can_implement(args);
  EXPECT_EQ(st.code(), StatusCode::kNotImplemented);
  EXPECT_NE(st.message().find("sm90_fp8_grouped_gemm_blockscale"), std::string::npos) << st.message();
  size_t bytes = 0;
  EXPECT_EQ(workspace_size(args, &bytes).code(), StatusCode::kNotImplemented);
  EXPECT_EQ(run(args, nullptr, 0, nullptr).code(), StatusCode::kNotImplemented);
  // Argument errors come before "not implemented".
  args.out = nullptr;
  expect_invalid(can_implement(args), "out: expected a pointer to [m, hidden] output, got nullptr");
  args.out = f.x.data();
  args.split_k_gate_up = 3;
  expect_invalid(can_implement(args), "split_k_gate_up: expected 0 (the planner's choice), 1, 2, 4 or 8, got 3");
  args.split_k_gate_up = 4;
  EXPECT_EQ(can_implement(args).code(), StatusCode::kNotImplemented);
  args.split_k_gate_up = 0;
  for (int32_t bad : {-1, kMaxTilesPerWarp + 1}) {
    args.tiles_per_warp_down = bad;
    expect_invalid(can_implement(args),
                   "tiles_per_warp_down: expected 0 (the planner's choice) to 8, got " + std::to_string(bad));
  }
  args.tiles_per_warp_down = kMaxTilesPerWarp;
  EXPECT_EQ(can_implement(args).code(), StatusCode::kNotImplemented);
  args.tiles_per_warp_down = 0;
  pw.shape.inter = 64;
  expect_invalid(can_implement(args), "weights.shape (E, H, I): expected (8, 256, 128) as in inputs.shape, got (8, 256, 64)");
  args.weights = nullptr;
  expect_invalid(run(args, nullptr, 0, nullptr), "weights: expected prepared weights, got nullptr");
  // prepare_weights validates the checkpoint first.
  MoeWeights ckpt;
  expect_invalid(prepare_weights(shape(), DType::kBF16, ckpt, f.x.data(), 1, nullptr, &pw),
                 "weights.w13.weight: expected a pointer to bf16 data for format dense, got nullptr");
  ckpt.quant = pw.quant;
  std::vector<uint8_t> dummy(1 << 20);
  ckpt.w13.weight = ckpt.w2.weight = ckpt.w13.scales = ckpt.w2.scales = dummy.data();
  EXPECT_EQ(prepare_weights(shape(), DType::kBF16, ckpt, f.x.data(), 1, nullptr, &pw).code(),
            StatusCode::kNotImplemented);
  EXPECT_EQ(prepared_weights_size(shape(), DType::kBF16, ckpt, &bytes).code(), StatusCode::kNotImplemented);
}

TEST(ApiValidation, Fp8GemvShapeLimitsAreNotImplemented) {
  // Host checks of the CUDA build (layer_can_implement): fp8_gemv's 16-value loads and its
  // 32-bit step counters. The pointers are never read.
  if (!build_info().cuda) GTEST_SKIP() << "a CPU-only build has no FP8 kernels";
  Fixture f;
  PreparedWeights pw;
  pw.quant.format = WeightFormat::kFP8Block;
  pw.quant.act_quant = ActQuant::kPerGroup;
  pw.w13.weight = pw.w2.weight = pw.w13.scales = pw.w2.scales = f.x.data();
  MoeArguments args = f.args(&pw);
  auto check = [&](int64_t hidden, const std::string& message) {
    args.inputs.shape = pw.shape = shape(4, hidden);
    const Status st = can_implement(args);
    if (message.empty()) {
      EXPECT_TRUE(st.ok()) << st.message();
    } else {
      EXPECT_EQ(st.code(), StatusCode::kNotImplemented) << st.message();
      EXPECT_EQ(st.message(), message);
    }
  };
  check(256, "");
  check(264, "fp8_gemv reads 16 e4m3 values per load: hidden and inter must be multiples of 16, got 264 and 128");
  check((int64_t{1} << 30) + 16, "fp8_gemv counts 64-k steps in 32 bits: hidden and inter must be at most "
                                  "1073741824, got 1073741840 and 128");
}

TEST(ApiValidation, GroupedMixedPathTakesIntegerWeightsItReads) {
  // Host checks of the CUDA build (layer_can_implement): the forced mixed-input path serves
  // integer weights in the layouts wna16_gemv reads, and names `path` otherwise. The pointers
  // are never read.
  if (!build_info().cuda) GTEST_SKIP() << "a CPU-only build has no kernels";
  Fixture f;
  PreparedWeights pw;
  pw.shape = shape();
  pw.w13.weight = pw.w2.weight = f.x.data();
  MoeArguments args = f.args(&pw);
  args.path = KernelPath::kGroupedMixed;
  expect_invalid(can_implement(args), "path: expected auto, small_m, grouped_gemm or grouped_swapped for dense weights "
                                      "(grouped_mixed: integer weights only), got grouped_mixed");
  pw.quant.format = WeightFormat::kGPTQ;
  pw.quant.bits = 4;
  pw.quant.group_size = 128;
  pw.quant.scale_dtype = DType::kFP16;
  pw.w13.scales = pw.w2.scales = f.x.data();
  const Status ok = can_implement(args);
  EXPECT_TRUE(ok.ok()) << ok.message();
  pw.quant.has_g_idx = true;  // prepared with K in group order
  pw.w13.g_idx = pw.w2.g_idx = reinterpret_cast<const int32_t*>(f.x.data());
  const Status act_order = can_implement(args);
  EXPECT_TRUE(act_order.ok()) << act_order.message();
  pw.quant.group_size = 16;
  expect_invalid(can_implement(args), "path: expected auto, grouped_gemm or grouped_swapped: wna16_gemv and "
                                      "wna16_grouped_gemm read groups of 32, 64 or a multiple of 128 columns "
                                      "(group_size 16), got grouped_mixed");
}

TEST(ApiValidation, SplitKOverride) {
  // Checked before the build's kernels: the same error with and without CUDA.
  Fixture f;
  PreparedWeights pw;
  pw.shape = shape();
  pw.w13.weight = pw.w2.weight = f.x.data();
  MoeArguments args = f.args(&pw);
  for (int32_t bad : {-1, 3, 16}) {
    args.split_k_gate_up = bad;
    expect_invalid(can_implement(args),
                   "split_k_gate_up: expected 0 (the planner's choice), 1, 2, 4 or 8, got " + std::to_string(bad));
    args.split_k_gate_up = 2;
    args.split_k_down = bad;
    expect_invalid(can_implement(args),
                   "split_k_down: expected 0 (the planner's choice), 1, 2, 4 or 8, got " + std::to_string(bad));
    args.split_k_down = 0;
  }
}

TEST(ApiValidation, SplitKOptionOfTheTools) {
  tools::SplitK k;
  std::string error;
  ASSERT_TRUE(tools::parse_split_k("4", &k, &error)) << error;
  EXPECT_EQ(k.gate_up, 4);
  EXPECT_EQ(k.down, 4);
  EXPECT_EQ(k.to_string(), "4");
  ASSERT_TRUE(tools::parse_split_k("8,1", &k, &error)) << error;
  EXPECT_EQ(k.gate_up, 8);
  EXPECT_EQ(k.down, 1);
  EXPECT_EQ(k.to_string(), "8,1");
  k.tiles_down = 4;  // --tiles-per-warp
  EXPECT_EQ(k.to_string(), "8,1 tiles 4");
  tools::SplitK tiles;
  tiles.tiles_down = 2;
  EXPECT_TRUE(tiles.forced());
  EXPECT_EQ(tiles.to_string(), "tiles 2");
  EXPECT_EQ(tools::SplitK().to_string(), "");
  for (const char* bad : {"", "0", "3", "16", "2,", ",2", "2,3", "2,4,8", "x", "2;4"}) {
    k = tools::SplitK();
    EXPECT_FALSE(tools::parse_split_k(bad, &k, &error)) << bad;
    EXPECT_EQ(error, std::string("--split-k: expected 1, 2, 4 or 8, or two of them as G,D (gate-up, down), got '") + bad + "'");
    EXPECT_FALSE(k.forced()) << bad;  // untouched on error
  }
}

TEST(ApiValidation, PreparedWeightsFilledByHandAreChecked) {
  // A PreparedWeights not made by prepare_weights / bind_prepared_weights must fail in
  // can_implement, naming the missing tensor, in every build.
  Fixture f;
  PreparedWeights pw;
  pw.shape = shape();
  MoeArguments args = f.args(&pw);
  expect_invalid(can_implement(args),
                 "weights.w13.weight: expected a pointer from prepare_weights() or bind_prepared_weights(), got nullptr");
  pw.quant.format = WeightFormat::kGPTQ;
  pw.quant.bits = 4;
  pw.quant.group_size = 128;
  pw.quant.has_zeros = true;
  alignas(16) static unsigned char storage[64];
  pw.w13.weight = pw.w2.weight = pw.w2.scales = pw.w2.zeros = storage;
  pw.w13.zeros = storage;
  expect_invalid(can_implement(args),
                 "weights.w13.scales: expected a pointer from prepare_weights() or bind_prepared_weights(), got nullptr");
  pw.w13.scales = storage + 4;
  const Status st = can_implement(args);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(st.message().rfind("weights.w13.scales: expected a 16-byte aligned pointer", 0), 0u) << st.message();
  pw.w13.scales = storage;
  pw.w2.zeros = nullptr;
  expect_invalid(can_implement(args),
                 "weights.w2.zeros: expected a pointer from prepare_weights() or bind_prepared_weights(), got nullptr");
  pw.w2.zeros = storage;
  EXPECT_NE(can_implement(args).code(), StatusCode::kInvalidArgument) << can_implement(args).message();
}

TEST(ApiValidation, DenseWeightsFollowTheBuild) {
  // bf16 runs on the small-M path in CUDA builds and nowhere in a CPU-only build.
  Fixture f;
  MoeWeights ckpt;
  ckpt.w13.weight = ckpt.w2.weight = f.x.data();
  PreparedWeights pw;
  const Status prep = prepare_weights(shape(), DType::kBF16, ckpt, nullptr, 0, nullptr, &pw);
  MoeArguments args = f.args(&pw);
  size_t bytes = 0;
  if (!build_info().cuda) {
    EXPECT_EQ(prep.code(), StatusCode::kNotImplemented);
    return;
  }
  ASSERT_TRUE(prep.ok()) << prep.message();
  EXPECT_EQ(pw.w13.weight, ckpt.w13.weight);  // no storage: read in place, in the checkpoint's order
  EXPECT_FALSE(pw.gate_up_interleaved);
  ASSERT_TRUE(can_implement(args).ok()) << can_implement(args).message();
  ASSERT_TRUE(workspace_size(args, &bytes).ok());
  EXPECT_GT(bytes, 0u);
  EXPECT_EQ(run(args, nullptr, bytes - 1, nullptr).code(), StatusCode::kWorkspaceTooSmall);
  args.inputs.x = reinterpret_cast<const char*>(f.x.data()) + 2;
  const Status st = can_implement(args);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(st.message().rfind("x: expected a 16-byte aligned device pointer", 0), 0u) << st.message();
  args.inputs.x = f.x.data();
  args.inputs.shape.inter = 100;
  pw.shape.inter = 100;
  EXPECT_EQ(can_implement(args).code(), StatusCode::kNotImplemented) << can_implement(args).message();
  args.inputs.shape.inter = 128;
  pw.shape.inter = 128;
  args.inputs.router_logits = f.weights.data();  // routed on the GPU by routing_topk
  args.inputs.topk_ids = nullptr;
  args.inputs.topk_weights = nullptr;
  EXPECT_TRUE(can_implement(args).ok()) << can_implement(args).message();
  args.inputs.routing.n_group = 4;  // groups of 2 experts, 2 of them eligible: topk 2 fits
  args.inputs.routing.topk_group = 2;
  EXPECT_TRUE(can_implement(args).ok()) << can_implement(args).message();
  // Prepared dense storage: w13 interleaved, then w2 (the checkpoint may be freed after).
  size_t prepared = 0;
  ASSERT_TRUE(prepared_weights_size(shape(), DType::kBF16, ckpt, &prepared).ok());
  EXPECT_EQ(prepared, size_t{8} * 2 * 128 * 256 * 2 + size_t{8} * 256 * 128 * 2);
  expect_invalid(prepare_weights(shape(), DType::kBF16, ckpt, f.x.data(), prepared - 1, nullptr, &pw),
                 "storage_bytes: expected >= " + std::to_string(prepared) + " (prepared_weights_size()), got " +
                     std::to_string(prepared - 1));
  // Only dense w13 is ever interleaved.
  pw.gate_up_interleaved = true;
  pw.quant.format = WeightFormat::kFP8PerChannel;
  pw.quant.act_quant = ActQuant::kPerToken;
  expect_invalid(can_implement(args),
                 "weights.gate_up_interleaved: expected false for fp8_per_channel weights (only dense w13 is "
                 "interleaved), got true");
}

TEST(ApiValidation, Precisions) {
  Precision p;
  ASSERT_TRUE(find_precision("w4a16", &p).ok());
  EXPECT_EQ(p.name, "w4a16_gptq");
  ASSERT_TRUE(find_precision("fp8", &p).ok());
  EXPECT_EQ(p.quant.format, WeightFormat::kFP8PerTensor);
  const Status st = find_precision("int3", &p);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(st.message().rfind("precision: expected one of bf16, fp16,", 0), 0u) << st.message();
  for (const Precision& known : known_precisions()) {
    MoeWeights w;
    w.quant = known.quant;
    // Every named precision is a valid format description on a typical shape.
    std::vector<TensorSpec> specs;
    EXPECT_TRUE(describe_weight_tensors(shape(), known.act_dtype, known.quant, Projection::kW13, &specs).ok()) << known.name;
  }
  EXPECT_EQ(supported_paths().size(), known_precisions().size());
}

TEST(ApiValidation, BuildInfo) {
  const BuildInfo b = build_info();
  EXPECT_EQ(b.version, "0.1.0");
  if (b.cuda) {
    EXPECT_EQ(b.cutlass_version, "4.2.0");
    EXPECT_EQ(b.cuda_archs, "sm_90a");
  } else {
    EXPECT_EQ(device_count(), 0);
    DeviceInfo d;
    EXPECT_EQ(device_info(0, &d).code(), StatusCode::kNotImplemented);
  }
}

}  // namespace
}  // namespace fusedmoe
