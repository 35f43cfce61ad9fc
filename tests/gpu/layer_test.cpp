// The layer on the GPU against the CPU reference, on each path (forced through
// MoeArguments::path) and on the planner's choice.
// Dense bf16/fp16 (small_m_splitk, sm90_bf16_grouped_gemm): the bench shapes at several M,
// edge shapes, fp16, expert parallelism, weight-on-input, gelu, determinism, CUDA-graph replay
// with new routing, and 64-bit indexing.
// Weight-only int4/int8 (wna16_gemv, wna16_dequant + the grouped GEMM): every checkpoint
// format (GPTQ symmetric / zero points / act-order / int8, AWQ, moe_wna16 int4 / int8) on
// DeepSeek-V2-Lite's expert shape, group sizes 32 / 64 / 128 / 256 / per-channel, fp16 / bf16 /
// fp32 scales, GPTQ v1 and v2 zeros, fp16 activations, the bench shapes, edge shapes, and
// checkpoints quantized from dense weights (ref::quantize_checkpoint).
// Outputs and workspace are poisoned (0xFF bytes: NaN in bf16/fp16) before each run.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "fusedmoe/build_info.h"
#include "fusedmoe/moe.h"
#include "fusedmoe_ref/numeric.h"
#include "fusedmoe_ref/random.h"
#include "fusedmoe_ref/reference.h"
#include "fusedmoe_ref/synthetic.h"
#include "fusedmoe_ref/tolerance.h"
#include "cpu/test_util.h"
#include "gpu/gpu_test_util.h"
#include "gpu_layer.h"
#include "kernels/fp8_one_token_down.h"
#include "kernels/launch.h"
#include "planner.h"
#include "shapes.h"
#include "validate.h"

namespace fusedmoe {
namespace {

// Where each test's time goes, printed after it ("[ phases ]"): host checkpoints, inputs,
// weights to the GPU, GPU runs and the fp64 reference (device time is scarce; this says what
// to make faster).
struct PhaseTimes {
  double checkpoint = 0, inputs = 0, upload = 0, gpu = 0, reference = 0;
  int cases = 0;
};
PhaseTimes g_phases;

// The loaded layer consecutive cases share (layer_for), released after each test while the
// CUDA runtime is still up.
std::unique_ptr<tools::GpuLayer> g_layer;
std::string g_layer_key;

class Phase {
 public:
  explicit Phase(double* total) : total_(total), start_(std::chrono::steady_clock::now()) {}
  ~Phase() { *total_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count(); }

 private:
  double* total_;
  std::chrono::steady_clock::time_point start_;
};

class PhasePrinter : public ::testing::EmptyTestEventListener {
  void OnTestEnd(const ::testing::TestInfo&) override {
    const PhaseTimes& t = g_phases;
    if (t.cases > 0) {
      std::printf("[ phases   ] %d cases: checkpoints %.1f s, inputs %.1f s, weights to the GPU %.1f s, GPU %.1f s, "
                  "reference %.1f s\n", t.cases, t.checkpoint, t.inputs, t.upload, t.gpu, t.reference);
    }
    g_phases = PhaseTimes();
    g_layer.reset();
    g_layer_key.clear();
  }
};
const bool g_phase_printer = [] {
  ::testing::UnitTest::GetInstance()->listeners().Append(new PhasePrinter);
  return true;
}();

// A layer case: shape, dtype, routing and variants.
struct GpuCase {
  std::string shape_name;  // bench shape, or "custom"
  ProblemShape shape;
  DType act = DType::kBF16;
  std::string routing;     // model routing name, or uniform / skewed / one_expert
  bool ep_half = false;    // expert map: this GPU holds the odd global experts
  bool bad_map = false;    // ep_half, with every fourth absent expert mapped past E on the GPU only
  Activation activation = Activation::kSiluAndMul;
  bool weight_on_input = false;
  int64_t sample_rows = 0;  // compare only this many rows (0: all)
  bool gpu_routing = false;  // route the logits on the GPU (else the reference router's ids)
  KernelPath path = KernelPath::kAuto;
  tools::SplitK split_k;     // the small-M GEMVs' split-K forced (0: the planner's)
  QuantParams quant;         // dense by default
  bool from_dense = false;   // integer weights quantized from random dense ones (else random codes)
  bool dense_in_place = false;  // dense weights read in the checkpoint's order (no prepared storage)
  bool out_is_x = false;        // the layer called in place: out = x
  // Every third slot from slot 0 gets an id outside [0, E) on the GPU only (negative, then
  // past E, alternately; malformed: the GPU cannot check the ids on the host and skips them as
  // align does); the reference, which rejects such ids by name, gives those slots weight 0.
  bool bad_ids = false;
};

std::string describe(const QuantParams& q) {
  if (q.format == WeightFormat::kDense) return "dense";
  return std::string(to_string(q.format)) + " int" + std::to_string(q.bits) + " g" + std::to_string(q.group_size) +
         (q.has_zeros ? " zeros" : " sym") + (q.has_g_idx ? " act-order" : "") +
         (q.format == WeightFormat::kGPTQ && q.has_zeros && !q.gptq_zeros_minus_one ? " v2" : "") + " scales " +
         to_string(q.scale_dtype);
}

std::string describe(const GpuCase& c) {
  return c.shape_name + " m=" + std::to_string(c.shape.m) + " E=" + std::to_string(c.shape.num_experts) +
         " H=" + std::to_string(c.shape.hidden) + " I=" + std::to_string(c.shape.inter) +
         " topk=" + std::to_string(c.shape.topk) + " " + to_string(c.act) + " routing=" + c.routing +
         (c.ep_half ? " ep_half" : "") + (c.bad_map ? " bad_map" : "") + " " + to_string(c.activation) + (c.weight_on_input ? " on_input" : "") + " path=" + to_string(c.path) +
         (c.split_k.forced() ? " split_k=" + c.split_k.to_string() : "") + " weights=" + describe(c.quant) +
         (c.dense_in_place ? " in_place" : "") + (c.out_is_x ? " out_is_x" : "") + (c.bad_ids ? " bad_ids" : "");
}

std::string checkpoint_key(const ProblemShape& s, DType act, const QuantParams& q, bool from_dense) {
  return std::to_string(s.num_experts) + "/" + std::to_string(s.hidden) + "/" + std::to_string(s.inter) + "/" +
         to_string(act) + "/" + describe(q) + (from_dense ? "/from_dense" : "");
}

// Host checkpoints are the slow part; cases of one shape share one, and the checkpoints
// quantized from dense weights (FP8, round trips) share the dense one of their shape, which
// stays cached while the cases of one shape go through their precisions.
const ref::Checkpoint& checkpoint_for(const ProblemShape& s, DType act, const QuantParams& q = QuantParams(),
                                      bool from_dense = false) {
  static std::map<std::string, std::unique_ptr<ref::Checkpoint>> cache;
  const std::string key = checkpoint_key(s, act, q, from_dense);
  auto found = cache.find(key);
  if (found != cache.end()) return *found->second;
  auto made = std::make_unique<ref::Checkpoint>();
  if (from_dense) {
    const ref::Checkpoint& dense = checkpoint_for(s, act);  // cached: it outlives this call's use
    const Status st = ref::quantize_checkpoint(s, act, dense, q, made.get());
    EXPECT_TRUE(st.ok()) << st.message();
  } else {
    const Status st = ref::make_random_checkpoint(s, act, q, 0xC0FFEE, made.get());
    EXPECT_TRUE(st.ok()) << st.message();
  }
  if (cache.size() > 3) {  // keep host memory bounded: all but this shape's dense checkpoint go
    const std::string dense_key = checkpoint_key(s, act, QuantParams(), false);
    for (auto it = cache.begin(); it != cache.end();) it = it->first == dense_key ? std::next(it) : cache.erase(it);
  }
  auto& slot = cache[key];
  slot = std::move(made);
  return *slot;
}

// Builds inputs: model routing goes through the reference router on the host (the GPU path
// takes topk ids), synthetic routings place tokens directly.
void make_inputs(const GpuCase& c, uint64_t seed, ref::LayerData* d) {
  tools::RoutingSetup routing;
  ASSERT_TRUE(tools::routing_from_name(c.routing, 8, 4, 2.5f, &routing).ok()) << c.routing;
  ProblemShape s = c.shape;
  if (c.ep_half) s.global_num_experts = 2 * s.num_experts;
  const ref::RoutingMode mode = !routing.from_logits ? (c.routing == "skewed"       ? ref::RoutingMode::kSkewed
                                                        : c.routing == "one_expert" ? ref::RoutingMode::kOneExpert
                                                                                    : ref::RoutingMode::kUniform)
                                                     : ref::RoutingMode::kRouter;
  ASSERT_TRUE(ref::make_random_inputs(s, c.act, mode, seed, d).ok());
  d->inputs.activation = c.activation;
  d->inputs.apply_router_weight_on_input = c.weight_on_input || routing.weight_on_input;
  if (routing.from_logits) {
    RoutingConfig cfg = routing.config;
    cfg.correction_bias = routing.use_correction_bias ? d->correction_bias.data() : nullptr;
    ref::Routing r;
    const Status st = ref::route(s, cfg, DType::kFP32, d->router_logits.data(), &r);
    ASSERT_TRUE(st.ok()) << st.message();
    d->topk_ids = r.ids;
    d->topk_weights = r.weights;
    d->inputs.routing = cfg;  // what the reference layer routes with when it gets the logits
    if (c.gpu_routing) {
      d->inputs.topk_ids = nullptr;
      d->inputs.topk_weights = nullptr;
    } else {
      d->inputs.router_logits = nullptr;
      d->inputs.topk_ids = d->topk_ids.data();
      d->inputs.topk_weights = d->topk_weights.data();
    }
  }
  if (c.ep_half) {
    d->expert_map.resize(static_cast<size_t>(2 * s.num_experts));
    for (int32_t g = 0; g < 2 * s.num_experts; ++g) d->expert_map[g] = g % 2 ? g / 2 : -1;
  }
  ref::bind(d);
}

// The routing the GPU path is given: the reference router's output, or the synthetic ids.
ref::Routing routing_of(const ref::LayerData& d) {
  ref::Routing r;
  r.ids = d.topk_ids;
  r.weights = d.topk_weights;
  return r;
}

std::vector<uint16_t> gpu_output_bits(const tools::GpuLayer& layer) {
  std::vector<uint16_t> bits;
  const Status st = layer.output_bits(&bits);
  EXPECT_TRUE(st.ok()) << st.message();
  return bits;
}

// Elements of a bf16/fp16 array that are NaN or infinite (the exponent all ones): the output's
// poison is NaN, so this also counts what the layer did not write.
int64_t count_nonfinite(const std::vector<uint16_t>& bits, DType act) {
  const uint16_t exp = act == DType::kBF16 ? 0x7F80 : 0x7C00;
  int64_t n = 0;
  for (uint16_t v : bits) n += (v & exp) == exp;
  return n;
}

std::vector<double> gpu_output(const tools::GpuLayer& layer) {
  std::vector<double> got;
  const Status st = layer.output(&got);
  EXPECT_TRUE(st.ok()) << st.message();
  return got;
}

// Uploading the weights is the other slow part: consecutive cases of one checkpoint (and the
// same experts, topk and global expert count) share the loaded layer; each sets its inputs.
tools::GpuLayer& layer_for(const GpuCase& c, const ProblemShape& shape, const ref::Checkpoint& ck, Status* st) {
  const std::string key = checkpoint_key(shape, c.act, c.quant, c.from_dense) + "/topk " + std::to_string(shape.topk) +
                          "/global " + std::to_string(shape.global_num_experts) + (c.dense_in_place ? "/in place" : "");
  *st = Status();
  if (!g_layer || g_layer_key != key) {
    g_layer_key.clear();
    g_layer = std::make_unique<tools::GpuLayer>();
    *st = g_layer->load_weights(shape, c.act, ck, nullptr, c.dense_in_place);
    if (st->ok()) g_layer_key = key;
  }
  return *g_layer;
}

void run_case(const GpuCase& c) {
  SCOPED_TRACE(describe(c));
  ++g_phases.cases;
  const ProblemShape& s = c.shape;
  ref::LayerData d;
  {
    Phase phase(&g_phases.inputs);
    make_inputs(c, std::hash<std::string>()(describe(c)), &d);
  }
  if (::testing::Test::HasFatalFailure()) return;
  const ref::Checkpoint* checkpoint = nullptr;
  {
    Phase phase(&g_phases.checkpoint);
    checkpoint = &checkpoint_for(s, c.act, c.quant, c.from_dense);
  }
  const ref::Checkpoint& ck = *checkpoint;
  Status st;
  tools::GpuLayer* loaded = nullptr;
  {
    Phase phase(&g_phases.upload);
    loaded = &layer_for(c, d.inputs.shape, ck, &st);
  }
  ASSERT_TRUE(st.ok()) << st.message();
  tools::GpuLayer& layer = *loaded;
  ref::Routing routing = routing_of(d);
  if (c.bad_ids) {
    for (size_t pair = 0; pair < routing.ids.size(); pair += 3) {
      const int32_t off = static_cast<int32_t>(pair);
      routing.ids[pair] = pair % 2 == 0 ? -1 - off : s.num_experts + off;
      d.topk_weights[pair] = 0.0f;  // d.inputs reads it: the reference's slot adds nothing
    }
  }
  // The output's bits: rows are converted to doubles only where compared (DeepSeek at
  // M = 65536 has 470M outputs; its GPU phase took 40 s when every one was converted, twice).
  std::vector<uint16_t> got;
  // bad_map: the GPU gets map entries past the local experts where the reference has -1 (it
  // rejects them by name; the GPU cannot read the map on the host and skips them as -1).
  std::vector<int32_t> bad_map = d.expert_map;
  MoeInputs gpu_inputs = d.inputs;
  if (c.bad_map) {
    for (size_t g = 0; g < bad_map.size(); g += 4) {
      if (bad_map[g] == -1) bad_map[g] = s.num_experts + static_cast<int32_t>(g);
    }
    gpu_inputs.expert_map = bad_map.data();
  }
  {
    Phase phase(&g_phases.gpu);
    st = layer.set_inputs(gpu_inputs, c.gpu_routing ? nullptr : &routing, c.path, c.split_k);
    ASSERT_TRUE(st.ok()) << st.message();
    layer.set_out_is_x(c.out_is_x);
    // Poison the workspace too: nothing may read what the layer did not write.
    if (layer.workspace_bytes() > 0) CUDA_OK(cudaMemset(layer.workspace(), 0xff, layer.workspace_bytes()));
    st = layer.run(nullptr);  // poisons the output first
    ASSERT_TRUE(st.ok()) << st.message();
    CUDA_OK(cudaDeviceSynchronize());
    got = gpu_output_bits(layer);
  }
  // Every element, sampled or not, written and finite.
  EXPECT_EQ(count_nonfinite(got, c.act), 0) << "non-finite (or unwritten) output elements";
  // Per-tensor dynamic activations: the reference runs on the GPU's two scales (see
  // ref::with_static_act_scales), which are checked against its own: x's exactly (an amax of
  // the same bf16 values), the intermediate's within 5% (one amax element a few bf16 steps off).
  const bool dynamic = c.quant.act_quant == ActQuant::kPerTensorDynamic;
  float gpu_scales[2] = {0.0f, 0.0f}, ref_scales[2] = {0.0f, 0.0f};
  if (dynamic) ASSERT_TRUE(layer.fp8_dynamic_scales(gpu_scales).ok());
  const MoeWeights weights = dynamic ? ref::with_static_act_scales(ck.weights, gpu_scales) : ck.weights;

  ref::LayerOptions opt;
  if (dynamic) opt.dynamic_act_scales = ref_scales;
  // The reference rounds where the path run rounds (FP8 compares across e4m3 boundaries).
  KernelPath taken = KernelPath::kAuto;
  ASSERT_TRUE(planned_path(layer.args(), &taken).ok());
  opt.round_gate_up = path_rounds_gate_up(taken, c.quant, layer.args().weights->gate_up_interleaved);
  std::vector<int64_t> rows;
  if (c.sample_rows > 0 && c.sample_rows < s.m) {
    for (int64_t r = 0; r < c.sample_rows; ++r) rows.push_back(r * (s.m - 1) / (c.sample_rows - 1));
    opt.tokens = rows;
  } else {
    for (int64_t r = 0; r < s.m; ++r) rows.push_back(r);
  }
  std::vector<double> want;
  {
    Phase phase(&g_phases.reference);
    st = ref::run_layer(d.inputs, weights, opt, &want);
  }
  ASSERT_TRUE(st.ok()) << st.message();
  if (dynamic) {
    EXPECT_EQ(gpu_scales[0], ref_scales[0]) << "x's per-tensor scale";
    if (opt.tokens.empty()) {
      EXPECT_NEAR(gpu_scales[1] / ref_scales[1], 1.0f, 0.05f) << "the intermediate's per-tensor scale: gpu "
                                                            << gpu_scales[1] << ", reference " << ref_scales[1];
    }
  }
  std::vector<double> got_rows;
  got_rows.reserve(rows.size() * s.hidden);
  for (int64_t r : rows) {
    for (int64_t j = 0; j < s.hidden; ++j) got_rows.push_back(ref::load_as_double(got.data(), c.act, r * s.hidden + j));
  }
  const ref::Comparison cmp = ref::compare(want, got_rows, ref::tolerance_for(c.act, c.quant));
  EXPECT_TRUE(cmp.pass) << cmp.describe();

  // Deterministic: a second run gives the same bits.
  std::vector<uint16_t> again;
  {
    Phase phase(&g_phases.gpu);
    ASSERT_TRUE(layer.run(nullptr).ok());
    CUDA_OK(cudaDeviceSynchronize());
    again = gpu_output_bits(layer);
  }
  ASSERT_EQ(got.size(), again.size());
  EXPECT_EQ(std::memcmp(got.data(), again.data(), got.size() * sizeof(uint16_t)), 0) << "run-to-run difference";
}

const tools::ShapesFile& shapes() {
  static tools::ShapesFile file;
  static bool loaded = false;
  if (!loaded) {
    EXPECT_TRUE(tools::load_shapes(FUSEDMOE_SHAPES_FILE, &file).ok());
    loaded = true;
  }
  return file;
}

// The path the parameterized suites force (Paths/DenseLayer.*/small_m and .../grouped_gemm).
KernelPath g_path = KernelPath::kAuto;

GpuCase bench_case(const std::string& name, int64_t m, int64_t sample = 0) {
  const tools::ShapeSpec* spec = shapes().find(name);
  GpuCase c;
  c.shape_name = name;
  c.shape = spec->shape;
  c.shape.m = m;
  c.routing = spec->routing.name;
  c.sample_rows = sample;
  c.path = g_path;
  return c;
}

GpuCase custom(int64_t m, int32_t e, int64_t h, int64_t i, int32_t k, const char* routing) {
  GpuCase c;
  c.shape_name = "custom";
  c.shape = testing_util::make_shape(m, h, i, e, k);
  c.routing = routing;
  c.path = g_path;  // the forced path of a Paths/ suite (was left at auto: edge cases ran unforced)
  return c;
}

// Suites run once per forced kernel path (the cases read g_path).
class ForcedPath : public ::testing::TestWithParam<KernelPath> {
 protected:
  void SetUp() override { g_path = GetParam(); }
  void TearDown() override { g_path = KernelPath::kAuto; }
};
#define FORCED_PATH_SUITE(Suite)                                                                          \
  INSTANTIATE_TEST_SUITE_P(Paths, Suite,                                                                  \
                           ::testing::Values(KernelPath::kSmallM, KernelPath::kGroupedGemm, KernelPath::kGroupedSwapped), \
                           [](const ::testing::TestParamInfo<KernelPath>& info) { return to_string(info.param); })

class DenseLayer : public ForcedPath {};
FORCED_PATH_SUITE(DenseLayer);

const char* const kBenchShapes[] = {"mixtral_8x7b_tp1", "qwen2_57b_a14b_tp4", "qwen3_30b_a3b_tp1", "deepseek_v3_tp8",
                                    "llama4_scout_tp8"};

TEST_P(DenseLayer, BenchShapesBf16) {
  REQUIRE_GPU();
  for (const char* name : kBenchShapes) {
    for (int64_t m : {1, 2, 3, 7, 16, 64}) run_case(bench_case(name, m));
    run_case(bench_case(name, 255, 24));
  }
}

TEST(DenseLayerAuto, BenchShapesLargeBatch) {
  REQUIRE_GPU();
  // The planner's choice (the grouped GEMM at these sizes), rows sampled.
  for (const char* name : kBenchShapes) {
    run_case(bench_case(name, 1024, 16));
    run_case(bench_case(name, 4096, 16));
  }
}

TEST_P(DenseLayer, EdgeShapes) {
  REQUIRE_GPU();
  run_case(custom(0, 8, 256, 128, 2, "uniform"));                     // empty batch
  run_case(custom(5, 64, 256, 128, 2, "uniform"));                    // most experts empty
  run_case(custom(33, 16, 512, 256, 4, "one_expert"));                // every token on expert 0
  run_case(custom(97, 16, 512, 256, 4, "skewed"));                    // +-30% skew
  run_case(custom(19, 60, 2880, 1408, 4, "softmax_topk_renormalize")); // dims not multiples of 128
  run_case(custom(7, 384, 1024, 136, 8, "uniform"));                  // E = 384, I = 136
  run_case(custom(3, 16, 8, 8, 3, "uniform"));                        // tiny rows: one vector
  run_case(custom(11, 64, 2048, 1408, 6, "uniform"));                 // DeepSeek-V2-Lite: topk 6
  run_case(custom(300, 8, 200, 72, 2, "skewed"));                     // many rows, dims below a tile
  run_case(custom(1000, 4, 1024, 512, 2, "one_expert"));              // 1000 rows on one expert
  // Swapped tiles of 256 weight rows in both GEMMs (n = 2I = 4112 and H = 4104 from
  // kSwapWideMinRows), each with a partial last tile; skewed and on one expert.
  run_case(custom(45, 8, 4104, 2056, 2, "skewed"));
  run_case(custom(130, 4, 4104, 2056, 2, "one_expert"));
  // Unswapped 64-row tiles (grouped_tile_rows): both GEMMs with every token on one expert; GEMM1
  // on 64 rows (8 experts x 17 weight tiles) beside GEMM2 on 128 (8 x 16 fit one wave).
  run_case(custom(300, 4, 512, 256, 2, "one_expert"));
  run_case(custom(150, 8, 4096, 2056, 2, "skewed"));
  GpuCase ep = custom(21, 32, 1024, 512, 4, "uniform");
  ep.ep_half = true;  // half the experts on another GPU
  run_case(ep);
  GpuCase wide = custom(1000, 32, 256, 128, 4, "skewed");  // 4000 pairs: align's CTA of 1024 threads
  wide.ep_half = true;
  run_case(wide);
  GpuCase chunked = custom(1537, 32, 256, 128, 4, "skewed");  // 6148 pairs: multi-CTA align
  chunked.ep_half = true;
  run_case(chunked);
  // Map entries past the local experts (malformed; the GPU cannot check the map on the host):
  // skipped as -1 by align and the combine alike (first run in v25, on the H200: passes).
  ep.bad_map = true;
  run_case(ep);
  wide.bad_map = true;
  run_case(wide);
  chunked.bad_map = true;
  run_case(chunked);
  // Top-1: on small_m the down GEMV writes the output rows and align zeroes the skipped
  // tokens' rows (no combine) up to kTop1DirectMaxMappedTokens under an expert map; past it,
  // and past kZeroSkippedMaxPairs, the combine as for top-k.
  for (int64_t m : {kTop1DirectMaxMappedTokens, int64_t{21}, int64_t{2500}}) {
    GpuCase one = custom(m, 32, 512, 256, 1, "uniform");
    one.ep_half = true;
    run_case(one);
    one.bad_map = true;
    run_case(one);
  }
  // One token, top-k 4-8: on small_m the down GEMV sums the token's experts itself
  // (one_token_down): top-k 4 / 6 / 8 (K split 2 / 1 / 1 ways), H = 1000 (a partial 16-row
  // tile), fp16, experts on another GPU (a token with none left writes zeros), a malformed map,
  // and in place.
  for (int32_t topk : {4, 6, 8}) {
    GpuCase one = custom(1, 16, 1000, 264, topk, "uniform");
    run_case(one);
    one.act = DType::kFP16;
    run_case(one);
    GpuCase mapped = custom(1, 8, 512, 256, topk, "uniform");
    mapped.ep_half = true;
    run_case(mapped);
    mapped.bad_map = true;
    run_case(mapped);
    GpuCase in_place = custom(1, 32, 512, 256, topk, "skewed");
    in_place.out_is_x = true;
    run_case(in_place);
  }
  // In place (out = x): top-1 keeps the combine on small_m (align would zero rows of x before
  // the gate-up GEMV reads them); every path reads x before it writes out.
  for (int32_t topk : {1, 4}) {
    GpuCase in_place = custom(9, 32, 512, 256, topk, "uniform");
    in_place.out_is_x = true;
    run_case(in_place);
    in_place.ep_half = true;
    run_case(in_place);
  }
}

// Dense weights read in place (no prepared storage, as the vLLM-style fused_experts op passes
// them): GEMM1 writes gate and up, the separate gated activation follows on the grouped paths.
TEST_P(DenseLayer, CheckpointOrderInPlace) {
  REQUIRE_GPU();
  std::vector<GpuCase> cases = {bench_case("qwen3_30b_a3b_tp1", 64), custom(19, 60, 2880, 1408, 4, "softmax_topk_renormalize"),
                                custom(97, 16, 512, 256, 4, "skewed"), custom(45, 8, 4104, 2056, 2, "skewed"),
                                bench_case("llama4_scout_tp8", 9)};
  cases.back().act = DType::kFP16;  // sigmoid top-1, weight applied on input
  for (GpuCase& c : cases) {
    c.dense_in_place = true;
    run_case(c);
  }
}

TEST_P(DenseLayer, Fp16ActivationsAndWeightOnInput) {
  REQUIRE_GPU();
  GpuCase c = custom(13, 16, 1024, 512, 2, "softmax_topk");
  c.act = DType::kFP16;
  run_case(c);
  c = bench_case("llama4_scout_tp8", 9);  // sigmoid top-1, weight applied on input
  c.act = DType::kFP16;
  run_case(c);
  c = custom(45, 8, 4104, 2056, 2, "skewed");  // 256-row swapped tiles in both GEMMs
  c.act = DType::kFP16;
  run_case(c);
  c = custom(90, 8, 4104, 2056, 1, "skewed");  // the same epilogue scaling by the routed weight (top-1), gelu
  c.act = DType::kFP16;
  c.weight_on_input = true;
  c.activation = Activation::kGeluAndMul;
  run_case(c);
  for (Activation a : {Activation::kGeluAndMul, Activation::kGeluTanhAndMul}) {
    GpuCase g = custom(6, 8, 512, 256, 2, "uniform");
    g.activation = a;
    run_case(g);
  }
  // fp16 GEMM1 reading x's rows itself (2I = 512: grouped_gemm1_gathers) on both tile heights:
  // 128 rows (16 experts x 2 weight tiles fit one wave), and 64 rows with the routed weight
  // applied on the input (top-1, 600 rows on one expert).
  c = custom(33, 16, 512, 256, 4, "one_expert");
  c.act = DType::kFP16;
  run_case(c);
  c = custom(600, 4, 512, 256, 1, "one_expert");
  c.act = DType::kFP16;
  c.weight_on_input = true;
  run_case(c);
  // And (v38) many experts with 12 weight tiles each: on swapped tiles more than
  // kSwapGatherMaxTilesPerSm per SM with short rows, so the copy and the plain swapped fp16
  // GEMM1, which the cases above (few tiles) no longer reach; unswapped, the gathering one.
  c = custom(64, 128, 256, 768, 4, "uniform");
  c.act = DType::kFP16;
  run_case(c);
}

TEST_P(DenseLayer, RoutingFromLogitsOnTheGpu) {
  REQUIRE_GPU();
  // Every model routing (softmax +- renormalize, DeepSeek grouped with bias and scaling,
  // Llama-4 sigmoid top-1 on input) through routing_topk inside run().
  for (const char* name : kBenchShapes) {
    for (int64_t m : {1, 16, 64}) {
      GpuCase c = bench_case(name, m);
      c.gpu_routing = true;
      run_case(c);
    }
  }
  GpuCase wide = custom(9, 1024, 256, 128, 8, "softmax_topk_renormalize");  // E = 1024: 32 per lane
  wide.gpu_routing = true;
  run_case(wide);
}

// route_topk against the fp64 reference router. fp32 scores can order two experts whose
// scores differ by ~1e-7 the other way; such near ties are accepted, nothing else.
void check_routing(const ProblemShape& s, const RoutingConfig& cfg, DType dtype, uint64_t seed, bool use_bias = false) {
  SCOPED_TRACE("E=" + std::to_string(s.num_experts) + " topk=" + std::to_string(s.topk) + " " + to_string(dtype) +
               " n_group=" + std::to_string(cfg.n_group) + (use_bias ? " bias" : ""));
  const int64_t n = s.m * s.num_experts;
  ref::Rng rng(seed);
  std::vector<float> logits_f(static_cast<size_t>(n));
  std::vector<uint16_t> logits_h(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    const double v = 2.0 * rng.normal();
    ref::store_from_double(dtype == DType::kFP32 ? static_cast<void*>(logits_f.data()) : logits_h.data(), dtype, i, v);
  }
  const void* host = dtype == DType::kFP32 ? static_cast<const void*>(logits_f.data()) : logits_h.data();
  std::vector<float> bias(static_cast<size_t>(s.num_experts));
  for (float& b : bias) b = static_cast<float>(0.1 * rng.normal());
  tools::DeviceBuffer d_logits, d_ids, d_w, d_bias;
  ASSERT_TRUE(d_logits.assign(host, static_cast<size_t>(n * dtype_size(dtype))).ok());
  ASSERT_TRUE(d_ids.assign(nullptr, static_cast<size_t>(s.m * s.topk * 4)).ok());
  ASSERT_TRUE(d_w.assign(nullptr, static_cast<size_t>(s.m * s.topk * 4)).ok());
  ASSERT_TRUE(d_bias.assign(bias.data(), bias.size() * 4).ok());
  RoutingConfig host_cfg = cfg, dev_cfg = cfg;
  if (use_bias) {
    host_cfg.correction_bias = bias.data();
    dev_cfg.correction_bias = static_cast<const float*>(d_bias.get());
  }
  CUDA_OK(cudaMemset(d_ids.get(), 0xff, d_ids.bytes()));
  const Status st = route_topk(s, dev_cfg, dtype, d_logits.get(), static_cast<int32_t*>(d_ids.get()),
                               static_cast<float*>(d_w.get()), nullptr);
  ASSERT_TRUE(st.ok()) << st.message();
  CUDA_OK(cudaDeviceSynchronize());
  std::vector<int32_t> ids(static_cast<size_t>(s.m * s.topk));
  std::vector<float> w(ids.size());
  CUDA_OK(cudaMemcpy(ids.data(), d_ids.get(), ids.size() * 4, cudaMemcpyDeviceToHost));
  CUDA_OK(cudaMemcpy(w.data(), d_w.get(), w.size() * 4, cudaMemcpyDeviceToHost));
  ref::Routing want;
  ASSERT_TRUE(ref::route(s, host_cfg, dtype, host, &want).ok());
  int64_t near_ties = 0;
  for (int64_t t = 0; t < s.m; ++t) {
    bool same = true;
    for (int k = 0; k < s.topk; ++k) same = same && ids[t * s.topk + k] == want.ids[t * s.topk + k];
    if (!same) {
      // Accept only an order flip between nearly equal weights.
      ++near_ties;
      for (int k = 0; k < s.topk; ++k) {
        ASSERT_GE(ids[t * s.topk + k], 0);
        ASSERT_LT(ids[t * s.topk + k], s.num_experts);
        EXPECT_NEAR(w[t * s.topk + k], want.weights[t * s.topk + k], 1e-5 * (1.0 + std::fabs(want.weights[t * s.topk + k])))
            << "token " << t << " slot " << k << ": ids differ beyond a near tie";
      }
      continue;
    }
    for (int k = 0; k < s.topk; ++k) {
      EXPECT_NEAR(w[t * s.topk + k], want.weights[t * s.topk + k], 2e-6 * (1.0 + std::fabs(want.weights[t * s.topk + k])))
          << "token " << t << " slot " << k;
    }
  }
  EXPECT_LE(near_ties, s.m / 100) << "too many routing differences to be near ties";
}

TEST(RoutingTopk, MatchesReferenceRouter) {
  REQUIRE_GPU();
  auto shape = [](int64_t m, int32_t e, int32_t k) { return testing_util::make_shape(m, 8, 8, e, k); };
  RoutingConfig softmax_renorm;
  softmax_renorm.renormalize = true;
  check_routing(shape(1000, 8, 2), softmax_renorm, DType::kFP32, 1);      // Mixtral
  check_routing(shape(1000, 64, 8), RoutingConfig(), DType::kBF16, 2);    // Qwen2, bf16 logits
  check_routing(shape(1000, 128, 8), softmax_renorm, DType::kFP16, 3);    // Qwen3, fp16 logits
  check_routing(shape(777, 60, 4), softmax_renorm, DType::kFP32, 4);      // E not a power of two
  check_routing(shape(500, 1024, 8), softmax_renorm, DType::kFP32, 5);    // E = 1024
  RoutingConfig sigmoid;
  sigmoid.scoring = ScoringFunc::kSigmoid;
  check_routing(shape(1000, 16, 1), sigmoid, DType::kFP32, 6);            // Llama-4
  RoutingConfig deepseek;
  deepseek.scoring = ScoringFunc::kSigmoid;
  deepseek.renormalize = true;
  deepseek.n_group = 8;
  deepseek.topk_group = 4;
  deepseek.routed_scaling_factor = 2.5f;
  check_routing(shape(1000, 256, 8), deepseek, DType::kFP32, 7, true);    // DeepSeek-V3
  check_routing(shape(1000, 384, 8), deepseek, DType::kBF16, 8, true);    // Kimi-K2-sized, bf16
  check_routing(shape(1000, 256, 8), deepseek, DType::kFP32, 9);          // groups by best score
  RoutingConfig v2 = softmax_renorm;                                       // DeepSeek-V2-Lite style
  v2.n_group = 8;
  v2.topk_group = 3;
  check_routing(shape(500, 64, 6), v2, DType::kFP32, 10);
  // Groups that fill whole lanes (one lane, two lanes, as DeepSeek-V3's four above) and groups
  // that do not (DeepSeek-V2's 20 experts per group; Kimi-K2-sized 48 above), one and three
  // tokens (v71's router).
  RoutingConfig lanes = deepseek;
  lanes.n_group = 32;
  check_routing(shape(300, 256, 8), lanes, DType::kFP32, 11, true);       // a group per lane
  lanes.n_group = 16;
  check_routing(shape(300, 512, 8), lanes, DType::kBF16, 12, true);       // two lanes per group
  RoutingConfig deepseek_v2 = softmax_renorm;
  deepseek_v2.n_group = 8;
  deepseek_v2.topk_group = 3;
  check_routing(shape(300, 160, 6), deepseek_v2, DType::kFP32, 13);       // 20 per group: by group
  for (int64_t m : {1, 3}) {
    check_routing(shape(m, 256, 8), deepseek, DType::kFP32, 14 + m, true);
    check_routing(shape(m, 160, 6), deepseek_v2, DType::kFP16, 16 + m);
    check_routing(shape(m, 128, 8), softmax_renorm, DType::kBF16, 18 + m);
  }
}

TEST(RoutingTopk, BadArgumentsAreNamed) {
  const ProblemShape s = testing_util::make_shape(4, 8, 8, 64, 2);
  RoutingConfig cfg;
  Status st = route_topk(s, cfg, DType::kFP32, nullptr, nullptr, nullptr, nullptr);
  EXPECT_EQ(st.message(), "logits: expected a device pointer, got nullptr");
  cfg.n_group = 64;
  cfg.topk_group = 2;
  int dummy = 0;
  st = route_topk(s, cfg, DType::kFP32, &dummy, &dummy, reinterpret_cast<float*>(&dummy), nullptr);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);  // validate_routing: one group per lane
  EXPECT_EQ(st.message(), "routing.n_group: expected <= 32 (one group per lane), got 64");
}

// The whole layer captured once in a CUDA graph, replayed with new routing written into the
// buffers it reads the ids and weights from, the workspace poisoned before each replay (a
// kernel reading another's output before it is written reads the poison, not the last
// replay's values); each replay checked against the reference. Per-tensor dynamic scales: the
// reference runs on the replay's own scales, as in run_case.
void run_graph_replay_case(const GpuCase& c) {
  ref::LayerData d;
  make_inputs(c, 1, &d);
  const ref::Checkpoint& ck = checkpoint_for(c.shape, c.act, c.quant);
  tools::GpuLayer layer;
  ASSERT_TRUE(layer.load_weights(c.shape, c.act, ck, nullptr).ok());
  const ref::Routing routing = routing_of(d);
  ASSERT_TRUE(layer.set_inputs(d.inputs, &routing, c.path).ok());
  KernelPath taken = KernelPath::kAuto;
  ASSERT_TRUE(planned_path(layer.args(), &taken).ok());
  ref::LayerOptions opt;  // the reference rounds where the path run rounds (FP8: e4m3 boundaries)
  opt.round_gate_up = path_rounds_gate_up(taken, c.quant, layer.args().weights->gate_up_interleaved);
  struct Graph {  // released on every exit, failed assertions included
    cudaStream_t stream = nullptr;
    cudaGraph_t graph = nullptr;
    cudaGraphExec_t exec = nullptr;
    ~Graph() {
      if (exec != nullptr) cudaGraphExecDestroy(exec);
      if (graph != nullptr) cudaGraphDestroy(graph);
      if (stream != nullptr) cudaStreamDestroy(stream);
    }
  } g;
  CUDA_OK(cudaStreamCreate(&g.stream));
  cudaStream_t stream = g.stream;
  CUDA_OK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  const Status st = layer.run(stream);
  CUDA_OK(cudaStreamEndCapture(stream, &g.graph));
  ASSERT_TRUE(st.ok()) << st.message();
  CUDA_OK(cudaGraphInstantiate(&g.exec, g.graph, 0));
  const bool dynamic = c.quant.act_quant == ActQuant::kPerTensorDynamic;
  // The buffers the graph reads the routing from.
  auto* ids = const_cast<int32_t*>(layer.args().inputs.topk_ids);
  auto* weights = const_cast<float*>(layer.args().inputs.topk_weights);
  for (uint64_t seed : {2, 3, 4}) {
    ref::LayerData next;
    make_inputs(c, seed, &next);
    // Same x, new routing.
    CUDA_OK(cudaMemcpy(ids, next.topk_ids.data(), next.topk_ids.size() * 4, cudaMemcpyHostToDevice));
    CUDA_OK(cudaMemcpy(weights, next.topk_weights.data(), next.topk_weights.size() * 4, cudaMemcpyHostToDevice));
    if (layer.workspace_bytes() > 0) CUDA_OK(cudaMemset(layer.workspace(), 0xff, layer.workspace_bytes()));
    CUDA_OK(cudaGraphLaunch(g.exec, stream));  // the graph poisons the output before the layer
    CUDA_OK(cudaStreamSynchronize(stream));
    d.topk_ids = next.topk_ids;
    d.topk_weights = next.topk_weights;
    ref::bind(&d);
    float gpu_scales[2] = {0.0f, 0.0f};
    if (dynamic) ASSERT_TRUE(layer.fp8_dynamic_scales(gpu_scales).ok());
    const MoeWeights w = dynamic ? ref::with_static_act_scales(ck.weights, gpu_scales) : ck.weights;
    std::vector<double> want;
    ASSERT_TRUE(ref::run_layer(d.inputs, w, opt, &want).ok());
    const ref::Comparison cmp = ref::compare(want, gpu_output(layer), ref::tolerance_for(c.act, c.quant));
    EXPECT_TRUE(cmp.pass) << describe(c) << ", replay with seed " << seed << ": " << cmp.describe();
  }
}

TEST_P(DenseLayer, CudaGraphReplaysWithNewRouting) {
  REQUIRE_GPU();
  run_graph_replay_case(bench_case("qwen3_30b_a3b_tp1", 16));
  run_graph_replay_case(bench_case("qwen3_30b_a3b_tp1", 1));  // small_m: one_token_down's combine
  GpuCase chunked = custom(1537, 32, 256, 128, 4, "skewed");  // 6148 pairs: align's cooperative launch
  chunked.ep_half = true;
  run_graph_replay_case(chunked);
}

TEST_P(DenseLayer, SixtyFourBitIndexing) {
  REQUIRE_GPU();
  // DeepSeek-V3 TP8 at M = 65536: m * topk * hidden = 3.76e9 elements of the per-slot output.
  run_case(bench_case("deepseek_v3_tp8", 65536, 8));
}

// ---- Weight-only int4/int8 ----

QuantParams named_precision(const char* name) {
  Precision p;
  const Status st = find_precision(name, &p);
  EXPECT_TRUE(st.ok()) << st.message();
  return p.quant;
}

using testing_util::integer_quant;

// Integer weights also on the mixed-input GEMM (wna16_grouped_gemm), which only a forced path takes.
class QuantLayer : public ForcedPath {};
INSTANTIATE_TEST_SUITE_P(Paths, QuantLayer,
                         ::testing::Values(KernelPath::kSmallM, KernelPath::kGroupedGemm, KernelPath::kGroupedSwapped,
                                           KernelPath::kGroupedMixed),
                         [](const ::testing::TestParamInfo<KernelPath>& info) { return to_string(info.param); });

// A case on the forced path; layouts wna16_gemv cannot read must be refused on the small-M
// and mixed-input paths (wna16_grouped_gemm reads the same layouts) with an error naming
// `path` (they take the dequant path under kAuto).
void run_quant_case(GpuCase c, const QuantParams& q) {
  c.quant = q;
  c.path = g_path;
  if ((c.path == KernelPath::kSmallM || c.path == KernelPath::kGroupedMixed) && !wna16_gemv_supports(q)) {
    c.shape.m = 1;
    ref::LayerData d;
    make_inputs(c, 1, &d);
    tools::GpuLayer layer;
    ASSERT_TRUE(layer.load_weights(c.shape, c.act, checkpoint_for(c.shape, c.act, q, c.from_dense), nullptr).ok());
    const ref::Routing routing = routing_of(d);
    const Status st = layer.set_inputs(d.inputs, &routing, c.path);
    EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << describe(c);
    EXPECT_EQ(st.message().rfind("path: expected auto, grouped_gemm or grouped_swapped", 0), 0u) << st.message();
    c.path = KernelPath::kAuto;  // and the planner's choice serves it
  }
  run_case(c);
}

TEST_P(QuantLayer, EveryFormatOnDeepSeekV2Lite) {
  REQUIRE_GPU();
  // DeepSeek-V2-Lite's experts: H = 2048, I = 1408, E = 64, topk 6.
  for (const char* name : {"w4a16_gptq", "w4a16_gptq_zp", "w4a16_gptq_actorder", "w8a16_gptq", "w4a16_awq",
                           "w4a16_wna16", "w8a16_wna16"}) {
    SCOPED_TRACE(name);
    const QuantParams q = named_precision(name);
    for (int64_t m : {1, 3, 16, 64}) run_quant_case(custom(m, 64, 2048, 1408, 6, "softmax_topk"), q);
  }
}

TEST_P(QuantLayer, GroupSizesScalesAndZeros) {
  REQUIRE_GPU();
  const GpuCase base = custom(33, 16, 1024, 512, 2, "skewed");
  run_quant_case(base, integer_quant(WeightFormat::kGPTQ, 4, 32, true));
  run_quant_case(base, integer_quant(WeightFormat::kGPTQ, 4, 64, false, DType::kBF16));
  run_quant_case(base, integer_quant(WeightFormat::kGPTQ, 4, 256, true, DType::kFP32));
  run_quant_case(base, integer_quant(WeightFormat::kGPTQ, 8, -1, true));  // per-channel, uint16 zeros
  QuantParams v2 = integer_quant(WeightFormat::kGPTQ, 4, 128, true);
  v2.gptq_zeros_minus_one = false;  // gptq_v2 stores the zero itself
  run_quant_case(base, v2);
  run_quant_case(base, integer_quant(WeightFormat::kAWQ, 4, 64, true, DType::kFP32));
  run_quant_case(base, integer_quant(WeightFormat::kMoeWNA16, 4, 32, true, DType::kBF16));
  run_quant_case(base, integer_quant(WeightFormat::kMoeWNA16, 8, -1, true));
  run_quant_case(custom(33, 16, 768, 384, 2, "skewed"), integer_quant(WeightFormat::kGPTQ, 4, 96, true));  // not read by wna16_gemv
  // Act-order (K put in group order at load time; x's columns gathered per expert): groups of
  // 32 and 64 (a scale per 32-k step), one group per row, int8, fp32 scales.
  for (QuantParams q : {integer_quant(WeightFormat::kGPTQ, 4, 32, true), integer_quant(WeightFormat::kGPTQ, 8, 64, false),
                        integer_quant(WeightFormat::kGPTQ, 4, -1, true),
                        integer_quant(WeightFormat::kGPTQ, 4, 256, false, DType::kFP32)}) {
    q.has_g_idx = true;
    run_quant_case(base, q);
  }
}

TEST_P(QuantLayer, ActivationsAndWeightOnInput) {
  REQUIRE_GPU();
  // GEMM1's other activations and the routed weight applied on the input (top-1), which each
  // path applies in its own place: the GEMV's epilogue, the gated activation kernel, the
  // mixed-input GEMM's epilogue (one unrolled loop per activation, the weight in a pass of its own).
  const QuantParams int4 = integer_quant(WeightFormat::kGPTQ, 4, 128, true);
  for (Activation a : {Activation::kGeluAndMul, Activation::kGeluTanhAndMul}) {
    GpuCase g = custom(40, 8, 512, 256, 2, "uniform");
    g.activation = a;
    run_quant_case(g, int4);
  }
  GpuCase w = custom(300, 4, 1024, 512, 1, "skewed");
  w.weight_on_input = true;
  w.activation = Activation::kGeluAndMul;
  run_quant_case(w, int4);
  w.activation = Activation::kSiluAndMul;
  w.act = DType::kFP16;
  run_quant_case(w, integer_quant(WeightFormat::kGPTQ, 8, 128, true));
}

TEST_P(QuantLayer, BenchShapes) {
  REQUIRE_GPU();
  const QuantParams q = named_precision("w4a16_gptq");
  for (const char* name : kBenchShapes) {
    for (int64_t m : {1, 3, 16, 64}) run_quant_case(bench_case(name, m), q);
    run_quant_case(bench_case(name, 255, 16), q);
  }
}

TEST_P(QuantLayer, EdgeShapesAndFp16) {
  REQUIRE_GPU();
  const QuantParams awq = integer_quant(WeightFormat::kAWQ, 4, 64, true);
  const QuantParams int8 = integer_quant(WeightFormat::kGPTQ, 8, 128, true);
  run_quant_case(custom(0, 8, 256, 128, 2, "uniform"), awq);                       // empty batch
  run_quant_case(custom(5, 64, 256, 128, 2, "uniform"), int8);                     // most experts empty
  run_quant_case(custom(33, 16, 512, 256, 4, "one_expert"), awq);                  // every token on expert 0
  run_quant_case(custom(19, 60, 2880, 1408, 4, "softmax_topk_renormalize"), awq);  // K = 2880: a partial 128 block
  run_quant_case(custom(7, 384, 1024, 136, 8, "uniform"), integer_quant(WeightFormat::kGPTQ, 4, -1, true));  // E = 384
  run_quant_case(custom(300, 8, 512, 256, 2, "skewed"), int8);                     // many rows per expert
  GpuCase ep = custom(21, 32, 1024, 512, 4, "uniform");
  ep.ep_half = true;
  run_quant_case(ep, awq);
  ep.shape.topk = 1;  // top-1: the combine on small_m past 16 tokens under an expert map
  run_quant_case(ep, awq);
  ep.shape.m = 11;  // and none below: skipped tokens' rows zeroed by align
  run_quant_case(ep, awq);
  for (const QuantParams& q : {awq, int8, integer_quant(WeightFormat::kMoeWNA16, 8, 64, false)}) {
    GpuCase h = custom(13, 16, 1024, 512, 2, "softmax_topk");
    h.act = DType::kFP16;  // the fp16 dequant (1024 + q) and MMA
    run_quant_case(h, q);
  }
  // One group per row over a long K, at decode: bf16 folds the zero points into one sum over
  // the whole row (kFold), fp16 does not; both against the reference's tolerance.
  for (DType act : {DType::kBF16, DType::kFP16}) {
    GpuCase lk = custom(3, 8, 14336, 512, 2, "uniform");
    lk.act = act;
    run_quant_case(lk, integer_quant(WeightFormat::kGPTQ, 4, -1, true));
  }
  GpuCase scout = bench_case("llama4_scout_tp8", 9);  // weight applied on input
  run_quant_case(scout, awq);
  // One token, top-k 4-8, int4: on small_m the down GEMV sums the token's experts itself
  // (launch_wna16_one_token_down; planner.h, one_token_down: each case below takes it): top-k
  // 4 / 6 / 8 (K split 2 / 1 / 1 ways); H = 1000 (a partial 16-row tile: per-channel scales,
  // the only groups that divide it) and I = 320 (a partial 128-k block), bf16 (the folded zero
  // points) and fp16, groups of 64 and 32 (a scale per 32-k step), half the experts on another
  // GPU (a token with none left writes zeros), a malformed map, and in place.
  for (int32_t topk : {4, 6, 8}) {
    GpuCase one = custom(1, 16, 1000, 320, topk, "uniform");
    run_quant_case(one, integer_quant(WeightFormat::kGPTQ, 4, -1, true));
    one.act = DType::kFP16;
    run_quant_case(one, integer_quant(WeightFormat::kGPTQ, 4, -1, false));
    GpuCase mapped = custom(1, 8, 512, 320, topk, "uniform");
    mapped.ep_half = true;
    run_quant_case(mapped, awq);
    mapped.bad_map = true;
    run_quant_case(mapped, integer_quant(WeightFormat::kGPTQ, 4, 32, false, DType::kBF16));
    GpuCase in_place = custom(1, 32, 512, 256, topk, "skewed");
    in_place.out_is_x = true;
    run_quant_case(in_place, integer_quant(WeightFormat::kGPTQ, 4, 128, true));
  }
  // GEMM1 of the mixed-input path reading x by token (2I <= 512, at least 32 rows per expert:
  // planner.h, kMixedGatherMinRows): over K = 2880 (a partial 128-k block), under an expert
  // map, bf16 and fp16, int4 and int8.
  for (DType act : {DType::kBF16, DType::kFP16}) {
    GpuCase gx = custom(200, 16, 2880, 256, 4, "uniform");
    gx.ep_half = true;
    gx.act = act;
    gx.sample_rows = 16;
    run_quant_case(gx, awq);
    run_quant_case(gx, integer_quant(WeightFormat::kGPTQ, 8, 64, false));  // K = 2880: groups of 64
  }
  // Act-order under an expert map (the column gather finds each pair's local expert), over K =
  // 2880 / 1408 (partial 128-k blocks), with fp16, at decode and past the GEMV.
  QuantParams act_order = integer_quant(WeightFormat::kGPTQ, 4, 64, true);
  act_order.has_g_idx = true;
  for (int64_t m : {3, 300}) {
    GpuCase ao = custom(m, 32, 2880, 1408, 4, "uniform");
    ao.ep_half = true;
    ao.act = m == 3 ? DType::kBF16 : DType::kFP16;
    ao.sample_rows = 16;
    run_quant_case(ao, act_order);
  }
  // Four n-tiles (> 6 tokens per expert) over K = 2880 and 704 (partial 128-k blocks) in
  // several passes of 32 tokens: on small_m the CTA's shared x rows, zero-filled past K and
  // past the expert's tokens; groups of 64 (a scale per 32-k step) and one per row, int4 and
  // int8, bf16 and fp16. Both take eight n-tiles (64 tokens per pass, the weights
  // dequantized with their scales) above 24 tokens per expert: m = 150 (37.5 per expert,
  // experts past 64 and below 32 under skewed routing), and four at m = 80.
  for (DType act : {DType::kBF16, DType::kFP16}) {
    GpuCase sx = custom(150, 8, 2880, 704, 2, "skewed");
    sx.act = act;
    run_quant_case(sx, awq);
    run_quant_case(sx, integer_quant(WeightFormat::kGPTQ, 4, -1, true));
    run_quant_case(sx, integer_quant(WeightFormat::kGPTQ, 8, 64, false));
    run_quant_case(sx, integer_quant(WeightFormat::kGPTQ, 8, -1, true));
    sx.shape.m = 80;
    run_quant_case(sx, integer_quant(WeightFormat::kGPTQ, 8, 64, false));
    // One n-tile over the partial blocks: int8's lanes read the chunks other lanes copied
    // (ring_slot), the second copy of each block past K.
    sx.shape.m = 3;
    run_quant_case(sx, integer_quant(WeightFormat::kGPTQ, 8, -1, true));
    run_quant_case(sx, integer_quant(WeightFormat::kGPTQ, 8, 64, false));
    // 256 rows per expert on average (grouped_mixed's 256-token tiles, wna16_gemm_tile_tokens),
    // experts of one and of two tiles under skewed routing, over the partial blocks; rows sampled.
    GpuCase wide = custom(1024, 8, 2880, 704, 2, "skewed");
    wide.act = act;
    wide.sample_rows = 16;
    run_quant_case(wide, awq);
    run_quant_case(wide, integer_quant(WeightFormat::kGPTQ, 8, 64, false));
  }
}

TEST_P(QuantLayer, RoundTripFromBf16) {
  REQUIRE_GPU();
  // Dense bf16 weights quantized as the checkpoint tools store them (ref::quantize_checkpoint:
  // RTN scales and zero points, act-order by column norm), prepared, against the reference on
  // the same tensors.
  QuantParams actorder = integer_quant(WeightFormat::kGPTQ, 4, 128, true);
  actorder.has_g_idx = true;
  for (const QuantParams& q : {actorder, integer_quant(WeightFormat::kGPTQ, 8, 64, false),
                               integer_quant(WeightFormat::kAWQ, 4, 128, true, DType::kBF16),
                               integer_quant(WeightFormat::kMoeWNA16, 4, 64, true)}) {
    for (int64_t m : {1, 16, 100}) {
      GpuCase c = custom(m, 16, 2048, 1408, 6, "softmax_topk");  // DeepSeek-V2-Lite's expert shape, 16 experts
      c.from_dense = true;
      run_quant_case(c, q);
    }
  }
}

TEST_P(QuantLayer, ActOrderCudaGraphReplaysWithNewRouting) {
  REQUIRE_GPU();
  // The act-order column gather inside a captured layer, replayed with other routing.
  GpuCase c = custom(24, 16, 1024, 512, 4, "skewed");
  c.quant = named_precision("w4a16_gptq_actorder");
  c.path = g_path;
  run_graph_replay_case(c);
}

TEST(QuantPrepare, ActOrderNeedsGptqGroups) {
  REQUIRE_GPU();
  // prepare_weights puts K in group order, which needs g_idx as GPTQ writes it (every group
  // group_size channels): otherwise an error naming the expert's g_idx, not a wrong layout.
  const ProblemShape s = custom(1, 4, 256, 128, 2, "uniform").shape;
  QuantParams q = integer_quant(WeightFormat::kGPTQ, 4, 64, true);
  q.has_g_idx = true;
  ref::Checkpoint ck;
  ASSERT_TRUE(ref::make_random_checkpoint(s, DType::kBF16, q, 7, &ck).ok());
  tools::GpuLayer good;
  const Status ok = good.load_weights(s, DType::kBF16, ck, nullptr);
  EXPECT_TRUE(ok.ok()) << ok.message();
  int32_t* g_idx = reinterpret_cast<int32_t*>(ck.find("w2.g_idx")->data()) + 2 * s.inter;  // expert 2 of w2
  int c = 0;
  while (g_idx[c] != 0) ++c;
  g_idx[c] = 1;  // group 0 keeps 63 channels, group 1 gets 65
  tools::GpuLayer bad;
  const Status st = bad.load_weights(s, DType::kBF16, ck, nullptr);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(st.message(), "w2.g_idx[2]: expected 64 channels in every group (GPTQ act-order: g_idx[perm[i]] = i / "
                          "group_size), got 63 in group 0");
}

TEST(QuantLayerAuto, LargeBatch) {
  REQUIRE_GPU();
  // The planner's choice at prefill sizes (the mixed-input GEMM since v55), rows sampled.
  for (const char* name : kBenchShapes) {
    GpuCase c = bench_case(name, 1024, 12);
    c.quant = named_precision("w4a16_awq");
    run_case(c);
  }
  GpuCase c = bench_case("deepseek_v3_tp8", 4096, 12);
  c.quant = named_precision("w4a16_gptq_actorder");
  run_case(c);
}

TEST(QuantLayerAuto, EightTilesAtBenchShapes) {
  REQUIRE_GPU();
  // int8 and int4 (symmetric and with zero points) at 32 pairs per expert, where the planner
  // takes eight n-tiles (64 tokens per pass) unsplit on small_m: Mixtral M = 128, Qwen2 M = 256,
  // Llama-4 Scout M = 512; and at 60 (Qwen3 M = 960, below the mixed GEMM's 64: the routed
  // experts past 64 pairs take two passes); rows sampled.
  const std::pair<const char*, int64_t> points[] = {{"mixtral_8x7b_tp1", 128},
                                                    {"qwen2_57b_a14b_tp4", 256},
                                                    {"llama4_scout_tp8", 512},
                                                    {"qwen3_30b_a3b_tp1", 960}};
  for (const char* precision : {"w8a16_gptq", "w4a16_gptq", "w4a16_awq"}) {
    SCOPED_TRACE(precision);
    for (const auto& [name, m] : points) {
      GpuCase c = bench_case(name, m, 12);
      c.quant = named_precision(precision);
      run_case(c);
    }
  }
}

// ---- FP8 W8A8 (e4m3 weights and activations) ----

class Fp8Layer : public ForcedPath {};
FORCED_PATH_SUITE(Fp8Layer);

void run_fp8_case(GpuCase c, const QuantParams& q) {
  c.quant = q;
  c.path = g_path;
  run_case(c);
}

using testing_util::fp8_quant;

TEST_P(Fp8Layer, EveryScalingModeOnBenchShapes) {
  REQUIRE_GPU();
  // Shape by shape (the three precisions quantize one cached dense checkpoint).
  for (const char* name : kBenchShapes) {
    for (const char* precision : {"fp8_tensor", "fp8_channel", "fp8_block"}) {
      SCOPED_TRACE(precision);
      const QuantParams q = named_precision(precision);
      for (int64_t m : {1, 3, 16, 64}) run_fp8_case(bench_case(name, m), q);
      // Rows sampled; not under per-tensor dynamic scales (the reference needs every token).
      if (q.act_quant != ActQuant::kPerTensorDynamic) run_fp8_case(bench_case(name, 255, 16), q);
    }
  }
}

// The FP8 layer (x quantized before align on the small-M path, beside it) under a CUDA graph,
// every scaling mode: per-tensor dynamic's graph (the whole-tensor quantizer at M = 1, the
// amax memsets and passes at M = 16) passes too.
TEST_P(Fp8Layer, CudaGraphReplaysWithNewRouting) {
  REQUIRE_GPU();
  for (const QuantParams& q : {fp8_quant(WeightFormat::kFP8PerChannel, ActQuant::kPerToken),
                               fp8_quant(WeightFormat::kFP8Block, ActQuant::kPerGroup),
                               fp8_quant(WeightFormat::kFP8PerTensor, ActQuant::kPerTensorDynamic),
                               fp8_quant(WeightFormat::kFP8PerChannel, ActQuant::kPerTensorStatic)}) {
    for (int64_t m : {1, 16}) {
      GpuCase c = bench_case("qwen3_30b_a3b_tp1", m);
      c.quant = q;
      c.path = g_path;
      run_graph_replay_case(c);
    }
  }
}

TEST_P(Fp8Layer, PartialBlocksEdgesAndModes) {
  REQUIRE_GPU();
  const QuantParams block = fp8_quant(WeightFormat::kFP8Block, ActQuant::kPerGroup);
  const QuantParams channel = fp8_quant(WeightFormat::kFP8PerChannel, ActQuant::kPerToken);
  // H = 2880 and I = 1360: the last 128-blocks of both dimensions partial, I's last 64-k step too.
  run_fp8_case(custom(19, 60, 2880, 1360, 4, "softmax_topk_renormalize"), block);
  run_fp8_case(custom(0, 8, 256, 128, 2, "uniform"), block);             // empty batch
  run_fp8_case(custom(5, 64, 256, 128, 2, "uniform"), channel);          // most experts empty
  run_fp8_case(custom(33, 16, 512, 256, 4, "one_expert"), block);        // every token on expert 0
  run_fp8_case(custom(300, 8, 512, 256, 2, "skewed"), channel);          // many rows per expert
  run_fp8_case(custom(7, 256, 7168, 256, 8, "uniform"), block);          // DeepSeek-V3 TP8's experts, E = 256
  GpuCase ep = custom(21, 32, 1024, 512, 4, "uniform");
  ep.ep_half = true;  // half the experts on other GPUs: the intermediate's live rows only
  run_fp8_case(ep, fp8_quant(WeightFormat::kFP8PerTensor, ActQuant::kPerTensorDynamic));
  run_fp8_case(ep, channel);  // per-token x: the rows of the local pairs only
  GpuCase ep_decode = custom(1, 32, 1024, 512, 4, "uniform");
  ep_decode.ep_half = true;  // decode-sized per-tensor dynamic: both tensors in one CTA (whole_tensor), live rows only
  run_fp8_case(ep_decode, fp8_quant(WeightFormat::kFP8PerTensor, ActQuant::kPerTensorDynamic));
  GpuCase ep_one = custom(40, 16, 512, 256, 1, "uniform");
  ep_one.ep_half = true;  // topk 1: about half the tokens have no local pair
  run_fp8_case(ep_one, channel);
  ep_one.shape.m = 9;  // no combine: the table's CTA of x's quantizer zeroes the skipped rows (9 pairs)
  run_fp8_case(ep_one, channel);
  run_fp8_case(ep_one, fp8_quant(WeightFormat::kFP8PerTensor, ActQuant::kPerTensorDynamic));
  run_fp8_case(custom(13, 16, 1024, 512, 2, "softmax_topk"), fp8_quant(WeightFormat::kFP8PerChannel,
                                                                        ActQuant::kPerTensorStatic));
  run_fp8_case(custom(13, 16, 1024, 512, 2, "softmax_topk"), fp8_quant(WeightFormat::kFP8PerTensor,
                                                                        ActQuant::kPerToken));
  GpuCase h = custom(13, 16, 1024, 512, 2, "softmax_topk");
  h.act = DType::kFP16;
  run_fp8_case(h, block);
  run_fp8_case(bench_case("llama4_scout_tp8", 9), channel);  // weight applied on input
  // The other activations: on the grouped paths the quantizer applies them to GEMM1's gate and
  // up halves (its gated view) under per-token and per-group scales; on small_m, fp8_gemv.
  for (Activation a : {Activation::kGeluAndMul, Activation::kGeluTanhAndMul}) {
    GpuCase g = custom(24, 8, 512, 256, 2, "uniform");
    g.activation = a;
    run_fp8_case(g, channel);
    run_fp8_case(g, block);
  }
  // Per-tensor dynamic scales with partial blocks (H = 2880) at an odd M, every row checked:
  // `fusedmoe check --E 60 --H 2880 --I 1408 --topk 4 --m 255 --precision fp8_tensor` gave
  // rel_l2 3.4e-2 against the 3.0e-2 tolerance on the H200 (68ea89f) when the reference took
  // its own dynamic scales (an emulation of the path reproduced it from one intermediate amax
  // element, see ref::with_static_act_scales); run_case now gives it the GPU's.
  run_fp8_case(custom(255, 60, 2880, 1408, 4, "softmax_topk_renormalize"),
               fp8_quant(WeightFormat::kFP8PerTensor, ActQuant::kPerTensorDynamic));
  // Unswapped 64-row tiles (fp8_grouped_tile_rows), rows per expert estimated from pairs / E:
  // both GEMMs with every token's first slot on expert 0 (r = 19; 300 rows, 5 tiles of 64 there);
  // GEMM2 on 64 (r = 150) beside GEMM1 on 128, the same routing; GEMM1 on 64 (8 experts x 18
  // weight tiles) beside GEMM2 on 128 (8 x 16 fit one wave); fp16 out on 64 rows in both
  // (32 experts x 8 tiles), per-channel and per-tensor weight scales.
  run_fp8_case(custom(300, 32, 1024, 512, 2, "one_expert"), channel);
  run_fp8_case(custom(300, 4, 512, 256, 2, "one_expert"), channel);
  run_fp8_case(custom(150, 8, 2048, 1104, 2, "skewed"), channel);
  GpuCase f = custom(21, 32, 1024, 512, 4, "uniform");
  f.act = DType::kFP16;
  run_fp8_case(f, channel);
  // fp16 out on 128 x 192 tiles (GEMM1, r = 150 > kFp8NarrowTileMaxRows) beside 64 x 192
  // (GEMM2); n = 1024 ends in a partial 64-column tile.
  GpuCase wide = custom(600, 8, 1024, 512, 2, "uniform");
  wide.act = DType::kFP16;
  run_fp8_case(wide, channel);
  // Block scales on 128 x 192 tiles (r > kFp8NarrowTileMaxRows; the weights' scales per
  // kFp8WideTileScaleCols columns): fp16 out, and partial last blocks in n and k (H = 2880,
  // I = 1360) at r = 100.
  run_fp8_case(wide, block);
  run_fp8_case(custom(400, 8, 2880, 1360, 2, "uniform"), block);
  run_fp8_case(f, fp8_quant(WeightFormat::kFP8PerTensor, ActQuant::kPerToken));
  // Block scales: GEMM2 on 64 rows beside GEMM1 on 128 (r = 19, 300 rows on expert 0; 32
  // experts x 8 weight tiles), fp16 out, and a partial last k block (I = 1104: 8 x 128 + 80;
  // 16 experts x 16 tiles).
  run_fp8_case(custom(300, 32, 1024, 512, 2, "one_expert"), block);
  run_fp8_case(f, block);
  run_fp8_case(custom(150, 16, 2048, 1104, 2, "skewed"), block);
}

// One token without align (planner.h, one_token_direct): the dense and integer GEMVs take the
// token's ids as their instances, on the down paths each takes at M = 1: the one-token down
// kernels (dense and int4 at top-4-8), the down GEMV and the combine (int8, top-2), and top-1's
// output written by the down GEMV (in place: the combine). Ids out of range (their CTAs write
// zeros: a top-1 token with none writes a zero row), every slot on one expert (an expert
// computed once per slot), fp16, and H / I off the tiles. FP8, which keeps align, runs the same
// cases through align's table.
TEST(OneTokenWithoutAlign, EveryPrecisionWithSkippedAndRepeatedIds) {
  REQUIRE_GPU();
  const QuantParams quants[] = {QuantParams(),
                                integer_quant(WeightFormat::kGPTQ, 4, 128, true),
                                integer_quant(WeightFormat::kAWQ, 4, 64, true),
                                integer_quant(WeightFormat::kGPTQ, 8, -1, false),
                                fp8_quant(WeightFormat::kFP8PerChannel, ActQuant::kPerToken),
                                fp8_quant(WeightFormat::kFP8Block, ActQuant::kPerGroup),
                                fp8_quant(WeightFormat::kFP8PerTensor, ActQuant::kPerTensorDynamic)};
  for (const QuantParams& q : quants) {
    for (int32_t topk : {1, 2, 4, 8}) {
      GpuCase c = custom(1, 16, 1024, 384, topk, "uniform");
      c.quant = q;
      c.path = KernelPath::kAuto;
      run_case(c);
      c.routing = "one_expert";
      run_case(c);
      c.routing = "uniform";
      // Not under per-tensor dynamic scales: the GPU's intermediate has no row for a skipped
      // slot (zeros, or none under align), where the reference's weight-0 slot has its row in
      // the intermediate's amax.
      if (q.act_quant != ActQuant::kPerTensorDynamic) {
        c.bad_ids = true;
        run_case(c);
        c.out_is_x = true;  // in place
        run_case(c);
      }
      // A partial 16-row tile and 128-k block (FP8 reads 16 values per load; integer weights
      // per channel: no group size divides H = 1008).
      GpuCase odd = custom(1, 8, 1008, 272, topk, "uniform");
      odd.quant = is_integer_format(q.format) ? integer_quant(q.format, q.bits, -1, q.has_zeros) : q;
      odd.path = KernelPath::kAuto;
      odd.act = DType::kFP16;
      run_case(odd);
    }
  }
}

// A few tokens without align (planner.h, direct_table): every pair its own instance, so an
// expert two tokens share (one_expert: every token's first slot on expert 0; under uniform
// routing a few at 128 experts) is computed once per pair, and the combine, the down GEMV per
// token (top-4 to 8, dense and int4: one_token_down, a CTA row per token) or, top-1, the down
// GEMV itself sums them. Ids out of range, in place, H / I off the tiles, fp16. Each case
// checks that the planner takes the direct table (and, dense at top-4 and 8, the down GEMV
// per token), so that a rule change cannot leave it untested: experts small enough that the
// expected duplicates stay under kDirectTableMaxDuplicateBytes, I >= 512 for the down GEMV per
// token.
TEST(FewTokensWithoutAlign, DenseAndIntegerWithSharedSkippedAndRepeatedIds) {
  REQUIRE_GPU();
  const QuantParams quants[] = {QuantParams(), integer_quant(WeightFormat::kGPTQ, 4, 128, true),
                                integer_quant(WeightFormat::kAWQ, 4, 64, true),
                                integer_quant(WeightFormat::kGPTQ, 8, -1, false)};
  int sms = 0;
  CUDA_OK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  auto run = [&](GpuCase c) {
    c.path = KernelPath::kAuto;
    EXPECT_TRUE(direct_table(c.shape, c.quant, false)) << describe(c);
    if (c.quant.format == WeightFormat::kDense && c.shape.topk >= kOneTokenDownMinTopk && c.shape.inter >= 512) {
      EXPECT_TRUE(one_token_down(c.shape, c.quant, sms, true)) << describe(c);
    }
    run_case(c);
  };
  for (const QuantParams& q : quants) {
    for (int64_t m = 2; m <= kDirectTableMaxTokens; ++m) {
      for (int32_t topk : {1, 2, 4, 8}) {
        if (m * topk > kernels::kMaxDirectPairs) continue;
        GpuCase c = custom(m, 128, 256, 512, topk, "uniform");
        c.quant = q;
        run(c);
        c.routing = "one_expert";
        run(c);
        c.routing = "uniform";
        c.bad_ids = true;
        run(c);
        c.out_is_x = true;
        run(c);
      }
      GpuCase odd = custom(m, 64, 1008, 272, 4, "uniform");
      odd.quant = is_integer_format(q.format) ? integer_quant(q.format, q.bits, -1, q.has_zeros) : q;
      odd.act = DType::kFP16;
      run(odd);
    }
  }
}

// A few FP8 tokens, at most kWarpAlignPairs pairs: x's quantizer launch writes align's table
// from one more CTA (align_warp.cuh), so that no align runs, and one token at top-4 to 8
// quantizes its intermediate and sums its experts in the down GEMV (launch_fp8_one_token_down;
// planner.h one_token_down: I >= 512, or block scales). Every scaling mode, M = 1-4 at
// top-1/2/4/8 and top-1 at 32 tokens (the down GEMV writes out's rows; the table's CTA zeroes
// a skipped token's row), ids out of range, every token's slots on one expert, in place, fp16,
// and H / I off the tiles (a partial last block for block scales, the one-token down there
// only).
TEST(FewTokensFp8, AlignTableFromXsQuantizerAndOneTokenDown) {
  REQUIRE_GPU();
  const QuantParams quants[] = {fp8_quant(WeightFormat::kFP8PerChannel, ActQuant::kPerToken),
                                fp8_quant(WeightFormat::kFP8Block, ActQuant::kPerGroup),
                                fp8_quant(WeightFormat::kFP8PerTensor, ActQuant::kPerTensorDynamic),
                                fp8_quant(WeightFormat::kFP8PerChannel, ActQuant::kPerTensorStatic)};
  int sms = 0;
  CUDA_OK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  auto run = [&](GpuCase c) {
    c.path = KernelPath::kAuto;
    EXPECT_LE(c.shape.m * c.shape.topk, kernels::kWarpAlignPairs) << describe(c);
    if (c.shape.inter >= 512) {  // one token, or up to four but not under a dynamic tensor amax (v69)
      const bool tokens = c.shape.m == 1 || c.quant.act_quant != ActQuant::kPerTensorDynamic;
      EXPECT_EQ(one_token_down(c.shape, c.quant, sms, false), tokens && c.shape.topk >= kOneTokenDownMinTopk)
          << describe(c);
    }
    run_case(c);
  };
  for (const QuantParams& q : quants) {
    // Not under per-tensor dynamic scales: the GPU's intermediate has no row for a skipped slot
    // (OneTokenWithoutAlign).
    const bool skips = q.act_quant != ActQuant::kPerTensorDynamic;
    for (int64_t m = 1; m <= 4; ++m) {
      for (int32_t topk : {1, 2, 4, 8}) {
        GpuCase c = custom(m, 64, 512, 512, topk, "uniform");
        c.quant = q;
        run(c);
        c.routing = "one_expert";
        run(c);
        if (!skips) continue;
        c.routing = "uniform";
        c.bad_ids = true;
        run(c);
        c.out_is_x = true;
        run(c);
      }
    }
    GpuCase top1 = custom(kernels::kWarpAlignPairs, 16, 512, 512, 1, "uniform");
    top1.quant = q;
    run(top1);
    top1.bad_ids = skips;
    run(top1);
    GpuCase odd = custom(3, 8, 1008, 272, 4, "uniform");
    odd.quant = q;
    odd.act = DType::kFP16;
    run(odd);
    odd.shape.m = 1;
    run(odd);
  }
  // One token's intermediate quantized in the down GEMV's shared memory (v67): blocks of 64 and
  // 256 columns with a partial last group, at top-4 (K split 2 ways) and 8; blocks of 192 and
  // an intermediate past the kernel's 48 KiB take the down GEMV and the combine.
  QuantParams blocks = fp8_quant(WeightFormat::kFP8Block, ActQuant::kPerGroup);
  blocks.block_n = 64;
  for (int32_t block_k : {64, 192, 256}) {
    blocks.block_k = block_k;
    for (int32_t topk : {4, 8}) {
      GpuCase c = custom(1, 16, 512, 272 + block_k, topk, "uniform");
      c.quant = blocks;
      c.path = KernelPath::kAuto;
      EXPECT_EQ(one_token_down(c.shape, c.quant, sms, false), block_k != 192) << describe(c);
      run_case(c);
    }
  }
  GpuCase wide = custom(1, 8, 256, 3200, 8, "uniform");
  wide.quant = quants[0];
  wide.path = KernelPath::kAuto;
  EXPECT_FALSE(one_token_down(wide.shape, wide.quant, sms, false));
  run_case(wide);
  // Two to four tokens per CTA row (v69) with half the experts on other GPUs (skipped pairs:
  // positions past the table's live ones), groups of 64 over a partial last one, and under a
  // CUDA graph replayed with new routing.
  for (const QuantParams& q : {quants[0], quants[1], quants[3]}) {
    for (int64_t m : {2, 3, 4}) {
      GpuCase ep = custom(m, 32, 1024, 512, 8, "uniform");
      ep.quant = q;
      ep.path = KernelPath::kAuto;
      ep.ep_half = true;
      EXPECT_TRUE(one_token_down(ep.shape, ep.quant, sms, false)) << describe(ep);
      run_case(ep);
    }
    GpuCase g = bench_case("qwen3_30b_a3b_tp1", 3);
    g.quant = q;
    g.path = KernelPath::kAuto;
    EXPECT_TRUE(one_token_down(g.shape, g.quant, sms, false)) << describe(g);
    run_graph_replay_case(g);
  }
  blocks.block_k = 64;
  GpuCase few_groups = custom(4, 16, 512, 272 + 64, 8, "uniform");
  few_groups.quant = blocks;
  few_groups.path = KernelPath::kAuto;
  EXPECT_TRUE(one_token_down(few_groups.shape, few_groups.quant, sms, false)) << describe(few_groups);
  run_case(few_groups);
}

// launch_fp8_one_token_down's own checks of the token count (refused before any launch: the
// pointers below are never read).
TEST(FewTokensFp8, OneTokenDownRefusesWhatItCannotTake) {
  static int32_t table[64];
  static int64_t offsets[64];
  static float scales[4];
  static uint8_t weights[16];
  kernels::GroupedGemvParams p;
  p.gate_up = false;
  p.x = weights;
  p.w = weights;
  p.out = weights;
  p.n_out = 256;
  p.k = 512;
  p.topk = 8;
  p.num_experts = 32;
  p.max_active = 8;
  p.expert_counts = table;
  p.expert_offsets = offsets;
  p.sorted_pairs = table;
  p.active_experts = table;
  kernels::Fp8WeightsView w;
  w.w = weights;
  w.scales = scales;
  w.kind = kernels::Fp8WeightScale::kRow;
  w.n = 256;
  w.k = 512;
  kernels::Fp8ActView x;
  x.kind = kernels::Fp8ActScale::kRow;
  for (int32_t tokens : {0, -1, 5}) {  // 5 x top-8 = 40 pairs, past one warp's lookup
    EXPECT_EQ(kernels::launch_fp8_one_token_down(p, w, x, nullptr, tokens, nullptr), cudaErrorInvalidValue) << tokens;
  }
  x.kind = kernels::Fp8ActScale::kTensor;  // dynamic (no scale given): one token only
  EXPECT_EQ(kernels::launch_fp8_one_token_down(p, w, x, nullptr, 2, nullptr), cudaErrorInvalidValue);
}

// The one-token int4 layer (planner.h one_token_layer: both GEMMs and the combine in one
// cooperative launch) at the bench shapes it takes and on every variant it reads. Each case
// checks that the planner sends it there, so that a rule change cannot leave it untested.
TEST(OneTokenInt4Layer, OneLaunchAtBenchShapesAndEveryVariant) {
  REQUIRE_GPU();
  int sms = 0;
  CUDA_OK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  auto run = [&](GpuCase c) {
    c.path = KernelPath::kAuto;
    EXPECT_TRUE(one_token_layer(c.shape, c.quant, false, sms)) << describe(c) << " on " << sms << " SMs";
    run_case(c);
  };
  for (const char* name : {"qwen3_30b_a3b_tp1", "deepseek_v3_tp8", "qwen2_57b_a14b_tp4"}) {
    GpuCase c = bench_case(name, 1);
    c.quant = named_precision("w4a16_gptq");
    run(c);
  }
  GpuCase q3 = bench_case("qwen3_30b_a3b_tp1", 1);
  q3.quant = named_precision("w4a16_awq");
  run(q3);
  // Qwen2 TP4: the down codes in the gate-up codes' place (dn_after_gu) on 132 SMs.
  GpuCase q2 = bench_case("qwen2_57b_a14b_tp4", 1);
  q2.quant = named_precision("w4a16_awq");
  run(q2);
  const std::string q2_routing = q2.routing;
  q2.routing = "one_expert";
  run(q2);
  q2.routing = q2_routing;
  q2.bad_ids = true;
  q2.out_is_x = true;
  run(q2);
  // DeepSeek-V2-Lite's experts (top-6, I = 1408: 11 blocks): the most shared memory of these.
  GpuCase lite = custom(1, 64, 2048, 1408, 6, "uniform");
  lite.quant = named_precision("w4a16_gptq_zp");
  run(lite);
  // Every layout it reads, on a small shape (one unit or tile per CTA at most, many CTAs idle).
  for (int32_t topk : {2, 3, 8}) {
    for (int group : {128, 256, -1}) {
      for (bool zeros : {false, true}) {
        for (DType scales : {DType::kFP16, DType::kBF16, DType::kFP32}) {
          GpuCase c = custom(1, 16, 1024, 768, topk, "uniform");
          c.quant = integer_quant(WeightFormat::kGPTQ, 4, group, zeros, scales);
          run(c);
        }
      }
    }
    GpuCase c = custom(1, 16, 1024, 768, topk, "uniform");
    c.quant = integer_quant(WeightFormat::kAWQ, 4, 128, true);
    c.act = DType::kFP16;
    run(c);
    c.act = DType::kBF16;
    for (Activation a : {Activation::kGeluAndMul, Activation::kGeluTanhAndMul}) {
      c.activation = a;
      run(c);
    }
    c.activation = Activation::kSiluAndMul;
    c.routing = "one_expert";
    run(c);
    c.routing = "uniform";
    c.bad_ids = true;
    run(c);
    c.out_is_x = true;  // in place
    run(c);
  }
  // Captured in a CUDA graph (a cooperative kernel node), replayed with new routing.
  GpuCase g = bench_case("qwen3_30b_a3b_tp1", 1);
  g.quant = named_precision("w4a16_gptq");
  EXPECT_TRUE(one_token_layer(g.shape, g.quant, false, sms));
  run_graph_replay_case(g);
}

// The planner's one-wave split rule (kDenseSplitRule) counts kGemvCtasPerSm resident CTAs per
// SM for every dense GEMV; one variant at 136 registers ran one per SM and made decode 10-20%
// slower unnoticed (PERF.md v21). The down GEMV's shared-memory ring variant is compiled for
// kDenseRingCtasPerSm with one n-tile (2 with four); gate-up has no ring variant.
TEST(SmallMSplitK, EveryDenseKernelFitsThePlannersResidentCtas) {
  REQUIRE_GPU();
  using kernels::GemvStaging;
  for (kernels::ElemType elem : {kernels::ElemType::kBF16, kernels::ElemType::kFP16}) {
    for (bool gate_up : {true, false}) {
      for (GemvStaging staging : {GemvStaging::kRegisters, GemvStaging::kSharedRing}) {
        for (int32_t split : {1, 2, 4, 8}) {
          for (int32_t n_tiles : {1, 4}) {
            const bool ring = staging == GemvStaging::kSharedRing;
            int ctas = 0;
            const cudaError_t e = kernels::grouped_gemv_resident_ctas(elem, gate_up, split, n_tiles, staging, &ctas);
            if (gate_up && ring) {
              EXPECT_EQ(e, cudaErrorInvalidValue);
              continue;
            }
            ASSERT_EQ(e, cudaSuccess);
            EXPECT_GE(ctas, !ring ? kernels::kGemvCtasPerSm : n_tiles == 1 ? kernels::kDenseRingCtasPerSm : 2)
                << (elem == kernels::ElemType::kBF16 ? "bf16" : "fp16") << (gate_up ? " gate-up" : " down")
                << (ring ? " ring" : " registers") << " split " << split << " n_tiles " << n_tiles;
          }
        }
      }
    }
  }
}

// The same for fp8_gemv: per-tensor/per-channel kernels hold kFp8SplitRule's counts at one and
// four n-tiles; block-scale kernels at one n-tile hold kFp8BlockSplitRule's count in the
// register-bound variant and kFp8BlockWideSplitRule's in the unbounded one (four n-tiles: the
// multi-wave rule, no count assumed).
TEST(SmallMSplitK, EveryFp8KernelFitsThePlannersResidentCtas) {
  REQUIRE_GPU();
  struct Variant {
    bool block;
    int32_t n_tiles;
    int32_t ctas_per_sm;  // launch_fp8_gemv's variant argument
    int32_t expected;     // the planner's resident CTAs per SM
  };
  const Variant variants[] = {
      {false, 1, 0, kFp8SplitRule.resident_one_tile},
      {false, 4, 0, kFp8SplitRule.resident_four_tiles},
      {true, 1, kernels::kFp8GemvBoundCtasPerSm, kFp8BlockSplitRule.resident_one_tile},
      {true, 1, 0, kFp8BlockWideSplitRule.resident_one_tile},
  };
  for (kernels::ElemType elem : {kernels::ElemType::kBF16, kernels::ElemType::kFP16}) {
    for (const Variant& v : variants) {
      for (bool gate_up : {true, false}) {
        for (int32_t split : {1, 2, 4, 8}) {
          int ctas = 0;
          ASSERT_EQ(kernels::fp8_gemv_resident_ctas(elem, v.block, gate_up, split, v.n_tiles, v.ctas_per_sm, &ctas),
                    cudaSuccess);
          EXPECT_GE(ctas, v.expected) << (elem == kernels::ElemType::kBF16 ? "bf16" : "fp16")
                                      << (v.block ? " block" : " per-row") << (gate_up ? " gate-up" : " down")
                                      << " split " << split << " n_tiles " << v.n_tiles << " variant "
                                      << v.ctas_per_sm;
        }
      }
    }
  }
}

TEST(SmallMSplitK, EveryForcedSplitMatchesTheReference) {
  REQUIRE_GPU();
  // Each GEMV family at every split-K (MoeArguments::split_k_gate_up/_down; the planner picks among them by
  // shape, and benchmarks force them). One n-tile: K = 2880 (22.5 blocks of 128, the last
  // slice partial), I = 1408, 7 tokens on 16 experts. Four n-tiles (> 12 tokens per expert)
  // and I = 128: the down GEMVs' K of two 64-k steps leaves most warps an empty slice. The
  // FP8 block kernel's two variants (planner_test pins which each shape takes): 7 tokens
  // top-2, grids past one wave of 2, the register-bound one; 3 tokens top-1, the unbounded.
  const GpuCase shapes[] = {custom(7, 16, 2880, 1408, 2, "softmax_topk_renormalize"),
                            custom(3, 16, 2880, 1408, 1, "uniform"),
                            custom(120, 8, 1024, 128, 2, "uniform")};
  const char* precisions[] = {"bf16", "fp8_channel", "fp8_block", "fp8_tensor", "w4a16_gptq", "w8a16_gptq"};
  for (const GpuCase& shape : shapes) {
    for (const char* precision : precisions) {
      SCOPED_TRACE(precision);
      for (int32_t split : {1, 2, 4, 8}) {  // gate-up split with down 8 / split: every split on both GEMVs
        SCOPED_TRACE("split_k " + std::to_string(split) + "," + std::to_string(8 / split));
        GpuCase c = shape;
        c.quant = named_precision(precision);
        // Integer groups must divide K (2880 = 45 x 64): groups of 64 keep the partial
        // 128-k step for the int GEMVs too.
        if (c.quant.format == WeightFormat::kGPTQ) c.quant.group_size = 64;
        c.path = KernelPath::kSmallM;
        c.split_k = {split, 8 / split};
        run_case(c);
      }
    }
  }
}

TEST(SmallMSplitK, ForcedTilesPerWarpMatchTheReference) {
  REQUIRE_GPU();
  // The integer down GEMV's warps streaming several row tiles (MoeArguments::tiles_per_warp_down;
  // the planner takes 4 only at grids of 8 waves and more). H = 2048: 128 tiles of 16 rows in
  // 16 (split 1) or 32 (split 2) groups a CTA's warps share, so that at T = 3 the last CTA's
  // warps have a tile past H; split 1 and 2; int4 GPTQ with groups of 64 (four groups a block),
  // AWQ with zero points, int8, fp16 at T = 3; 7 tokens top-2 and one expert taking every
  // token (two passes of 8).
  const GpuCase shapes[] = {custom(7, 16, 2048, 1408, 2, "softmax_topk_renormalize"),
                            custom(12, 8, 2048, 512, 2, "one_expert")};
  for (const GpuCase& shape : shapes) {
    for (const char* precision : {"w4a16_gptq", "w4a16_awq", "w8a16_gptq"}) {
      for (int32_t tiles : {2, 3, 8}) {
        for (int32_t split : {1, 2}) {
          SCOPED_TRACE(std::string(precision) + " tiles " + std::to_string(tiles) + " split " + std::to_string(split));
          GpuCase c = shape;
          c.quant = named_precision(precision);
          if (c.quant.format == WeightFormat::kGPTQ && c.quant.bits == 4) c.quant.group_size = 64;
          if (tiles == 3) c.act = DType::kFP16;
          c.path = KernelPath::kSmallM;
          c.split_k = {1, split, tiles};
          run_case(c);
        }
      }
    }
  }
}

TEST(Fp8LayerAuto, LargeBatch) {
  REQUIRE_GPU();
  // The planner's choice at prefill sizes (sm90_fp8_grouped_gemm), rows sampled.
  for (const char* precision : {"fp8_block", "fp8_channel"}) {
    SCOPED_TRACE(precision);
    for (const char* name : kBenchShapes) {
      GpuCase c = bench_case(name, 1024, 12);
      c.quant = named_precision(precision);
      run_case(c);
    }
  }
  GpuCase c = bench_case("deepseek_v3_tp8", 4096, 12);
  c.quant = named_precision("fp8_block");
  run_case(c);
  // Per-tensor dynamic scales need every token in the reference: a smaller layer, all rows.
  run_fp8_case(custom(1024, 16, 1024, 512, 4, "skewed"), named_precision("fp8_tensor"));
  run_fp8_case(custom(600, 8, 1024, 512, 2, "uniform"), fp8_quant(WeightFormat::kFP8PerTensor, ActQuant::kPerToken));
  // Per-token scales with topk 8: x quantized once per token (fp8_x_by_token), a warp per
  // token (2048 tokens) or a CTA per token (kFp8ScatterMinTokens), all rows; and with half the
  // experts elsewhere.
  const QuantParams channel = named_precision("fp8_channel");
  run_fp8_case(custom(2048, 32, 1024, 512, 8, "skewed"), channel);
  run_fp8_case(custom(kFp8ScatterMinTokens, 32, 1024, 512, 8, "skewed"), channel);
  GpuCase ep = custom(2048 + 5, 16, 512, 256, 8, "uniform");
  ep.ep_half = true;
  run_fp8_case(ep, channel);
  ep.shape.m = kFp8ScatterMinTokens + 5;
  run_fp8_case(ep, channel);
  // Rows longer than a warp's batch (H = 4096: read twice, each batch stored at every pair).
  run_fp8_case(custom(2048, 16, 4096, 128, 8, "uniform"), channel);
  // Group and tensor scales (topk 2-16 at any M): x quantized once per token too (a span's
  // team), its codes and scales stored at each of its rows; a partial last group (H = 2880),
  // half the experts elsewhere, static per-tensor scales, topk 2, and topk 16 (a destination
  // per lane).
  for (const char* precision : {"fp8_block", "fp8_tensor"}) {
    SCOPED_TRACE(precision);
    run_fp8_case(custom(2048, 32, 1024, 512, 8, "skewed"), named_precision(precision));
  }
  run_fp8_case(custom(600, 16, 2880, 256, 8, "uniform"), named_precision("fp8_block"));
  GpuCase ep_block = custom(605, 16, 512, 256, 8, "uniform");
  ep_block.ep_half = true;
  run_fp8_case(ep_block, named_precision("fp8_block"));
  run_fp8_case(custom(600, 16, 1024, 256, 8, "uniform"), fp8_quant(WeightFormat::kFP8PerChannel, ActQuant::kPerTensorStatic));
  run_fp8_case(custom(300, 8, 1024, 512, 2, "uniform"), named_precision("fp8_tensor"));
  run_fp8_case(custom(600, 32, 512, 256, kernels::kFp8ScatterSpanMaxTopk, "uniform"), named_precision("fp8_block"));
  // Blocks other than 128 x 128: fp8_gemv at every batch.
  QuantParams blocks = named_precision("fp8_block");
  blocks.block_n = 64;
  blocks.block_k = 192;
  run_fp8_case(custom(300, 8, 768, 384, 2, "uniform"), blocks);
}

TEST(Fp8LayerAuto, Gemm1GathersXCodesByToken) {
  REQUIRE_GPU();
  // GEMM1 reading x's e4m3 codes by token itself (planner.h, fp8_gemm1_gathers): x quantized
  // once per token at the token's row, only its scales stored at its pairs' rows. Unswapped
  // 64 x 192 tiles (2I = 512) and swapped tiles (H >= 4096), per-token and per-tensor
  // (dynamic, static) scales, H past the last full 128-k tile (2880, 4176), topk 2 and 8,
  // skewed routing, M = 1 and 0, fp16 activations, half the experts elsewhere, all rows
  // compared.
  struct Case {
    GpuCase c;
    QuantParams q;
    KernelPath path;
  };
  const QuantParams channel = named_precision("fp8_channel");
  const QuantParams tensor = named_precision("fp8_tensor");
  const QuantParams channel_static = fp8_quant(WeightFormat::kFP8PerChannel, ActQuant::kPerTensorStatic);
  const KernelPath gemm = KernelPath::kGroupedGemm, swapped = KernelPath::kGroupedSwapped;
  std::vector<Case> cases = {
      {custom(700, 64, 2880, 256, 8, "skewed"), channel, gemm},
      {custom(700, 64, 2880, 256, 8, "skewed"), tensor, gemm},
      {custom(600, 64, 1024, 256, 8, "uniform"), channel_static, gemm},
      {custom(61, 16, 4096, 256, 8, "skewed"), channel, swapped},
      {custom(45, 16, 4176, 256, 8, "uniform"), tensor, swapped},
      {custom(23, 8, 4096, 512, 2, "uniform"), channel, swapped},
      {custom(1, 8, 4096, 512, 2, "uniform"), tensor, swapped},
      {custom(0, 8, 4096, 512, 2, "uniform"), channel, swapped},
  };
  Case half = cases[0];
  half.c.act = DType::kFP16;
  cases.push_back(half);
  half = cases[3];
  half.c.act = DType::kFP16;
  cases.push_back(half);
  for (Case& k : cases) {
    k.c.path = k.path;
    const ProblemShape& s = k.c.shape;
    const int64_t pairs = s.m * s.topk;
    int64_t rows = 128, cols = 128;
    if (k.path == gemm) {
      rows = fp8_grouped_tile_rows(pairs, s.num_experts, 2 * s.inter, s.hidden, true, false, 132);
      cols = fp8_grouped_tile_cols(pairs, s.num_experts, rows, false);
    }
    SCOPED_TRACE(describe(k.c));
    EXPECT_TRUE(fp8_gemm1_gathers(k.q, k.path, rows, cols, s.hidden, s.inter, static_cast<int32_t>(s.topk)));
    k.c.quant = k.q;
    run_case(k.c);
  }
  // Half the experts elsewhere: 64 local experts at r of about 87 (64-row tiles), and swapped.
  GpuCase ep = custom(1400, 128, 1024, 256, 8, "uniform");
  ep.ep_half = true;
  ep.path = gemm;
  ep.quant = channel;
  run_case(ep);
  ep = custom(40, 32, 4096, 256, 4, "uniform");
  ep.ep_half = true;
  ep.path = swapped;
  ep.quant = tensor;
  run_case(ep);
}

}  // namespace
}  // namespace fusedmoe
