// fusedmoe command line: `info` and `check` (bench and tune arrive with the kernels).
// Exit codes: 0 success, 1 a check outside its tolerance (or a non-finite output),
// 2 bad arguments or an unavailable resource.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "fusedmoe/build_info.h"
#include "fusedmoe/moe.h"
#include "fusedmoe_ref/reference.h"
#include "fusedmoe_ref/synthetic.h"
#include "fusedmoe_ref/tolerance.h"
#include "planner.h"
#include "shapes.h"
#include "split_k.h"
#ifdef FUSEDMOE_WITH_CUDA
#include "bench.h"
#include "gpu_layer.h"
#include <cuda_runtime_api.h>
#endif

namespace fm = fusedmoe;
namespace ft = fusedmoe::tools;

namespace {

constexpr int kExitOk = 0;
constexpr int kExitCheckFailed = 1;
constexpr int kExitUsage = 2;

const char* kUsage =
    "usage: fusedmoe <command> [options]\n"
    "\n"
    "commands:\n"
    "  info                      build, CUTLASS version, GPUs, supported paths\n"
    "  shapes                    the shapes of the shapes file\n"
    "  check                     run one layer and compare it with the CPU reference\n"
    "  bench                     time the layer on the GPU per shape and batch size (CUDA builds)\n"
    "\n"
    "check options:\n"
    "  --shape NAME              a bench shape of the shapes file (e.g. deepseek_v3_tp8)\n"
    "  --E N --H N --I N --topk N    an explicit shape instead of --shape\n"
    "  --m N                     tokens (default 16)\n"
    "  --precision NAME          bf16 (default), fp16, fp8_tensor, fp8_channel, fp8_block,\n"
    "                            w4a16_gptq, w4a16_gptq_zp, w4a16_gptq_actorder, w8a16_gptq,\n"
    "                            w4a16_awq, w4a16_wna16, w8a16_wna16 (aliases fp8, w4a16, w8a16)\n"
    "  --routing NAME            the model's routing by default (softmax_topk_renormalize for an\n"
    "                            explicit shape); also uniform, skewed, one_expert, balanced\n"
    "                            (token t's slot s on expert (t * topk + s) mod E)\n"
    "  --activation NAME         silu (default), gelu, gelu_tanh\n"
    "  --seed N                  random seed (default 1)\n"
    "  --path P                  auto (default), small_m, grouped_gemm, grouped_swapped or grouped_mixed\n"
    "                            (integer weights): force a path\n"
    "  --split-k N | G,D         1, 2, 4 or 8: force the small-M GEMVs' split-K, both or gate-up,down\n"
    "                            (default: the planner's)\n"
    "  --tiles-per-warp N        1-8: force the row tiles each warp of the integer down GEMV streams\n"
    "                            where it can (one token tile, split 1 or 2; default: the planner's)\n"
    "  --shapes-file PATH        default: $FUSEDMOE_SHAPES or the repository's shapes/models.json\n"
    "\n"
    "bench options:\n"
    "  --shape A,B               bench shapes (default: all)\n"
    "  --m 1,2,4                 batch sizes (default: the shapes file's, up to 4096)\n"
    "  --precision NAME          as for check (default bf16)\n"
    "  --routing NAME            as for check (default: each shape's model routing)\n"
    "  --csv PATH                also write the rows as CSV\n"
    "  --json PATH               also write the run (context, rooflines, points) as JSON\n"
    "  --seconds S               time per point (default 0.05; longer runs meet the power cap)\n"
    "  --path P                  auto (default), small_m, grouped_gemm, grouped_swapped or grouped_mixed\n"
    "                            (integer weights): force a path\n"
    "  --split-k N | G,D         as for check\n"
    "  --tiles-per-warp N        as for check\n"
    "  --dense-in-place 1        dense weights read in place, in the checkpoint's order, as the\n"
    "                            per-call fused_experts op passes them (default: prepared, w13's\n"
    "                            gate and up rows interleaved so GEMM1 applies the activation)\n"
    "  --stage S                 layer (default), or routing: the model's router on fp32 logits and\n"
    "                            align only, each alone and together (TARGETS.md: <= 5 us for\n"
    "                            M <= 256 at E = 256; the layer's options do not apply)\n";

struct Args {
  std::string command;
  std::map<std::string, std::string> options;
};

bool parse_args(int argc, char** argv, Args* out, std::string* error) {
  if (argc < 2) {
    *error = "missing command";
    return false;
  }
  out->command = argv[1];
  for (int i = 2; i < argc; ++i) {
    const std::string a = argv[i];
    if (a.rfind("--", 0) != 0 || a.size() < 3) {
      *error = "option " + std::to_string(i - 1) + ": expected --name value, got '" + a + "'";
      return false;
    }
    if (i + 1 >= argc) {
      *error = a + ": expected a value, got the end of the command line";
      return false;
    }
    out->options[a.substr(2)] = argv[++i];
  }
  return true;
}

// Reads an integer option; false (with error set) when it is not a whole number in range.
bool int_option(const Args& args, const std::string& name, int64_t fallback, int64_t lo, int64_t hi, int64_t* out,
                std::string* error) {
  const auto it = args.options.find(name);
  if (it == args.options.end()) {
    *out = fallback;
    return true;
  }
  char* end = nullptr;
  const long long v = std::strtoll(it->second.c_str(), &end, 10);
  if (it->second.empty() || *end != '\0' || v < lo || v > hi) {
    *error = "--" + name + ": expected an integer in " + std::to_string(lo) + ".." + std::to_string(hi) + ", got '" +
             it->second + "'";
    return false;
  }
  *out = v;
  return true;
}

// --split-k N or G,D and --tiles-per-warp N (absent: the planner's).
bool split_k_option(const Args& args, ft::SplitK* out, std::string* error) {
  ft::SplitK k;
  const auto it = args.options.find("split-k");
  if (it != args.options.end() && !ft::parse_split_k(it->second, &k, error)) return false;
  int64_t tiles = 0;
  if (!int_option(args, "tiles-per-warp", 0, 1, fm::kMaxTilesPerWarp, &tiles, error)) return false;
  k.tiles_down = static_cast<int32_t>(tiles);
  *out = k;
  return true;
}

std::string shapes_path(const Args& args) {
  const auto it = args.options.find("shapes-file");
  if (it != args.options.end()) return it->second;
  if (const char* env = std::getenv("FUSEDMOE_SHAPES")) return env;
  return FUSEDMOE_SHAPES_FILE;
}

int usage_error(const std::string& message) {
  std::fprintf(stderr, "fusedmoe: %s\n\n%s", message.c_str(), kUsage);
  return kExitUsage;
}

int status_error(const fm::Status& st) {
  std::fprintf(stderr, "fusedmoe: %s: %s\n", fm::to_string(st.code()), st.message().c_str());
  return kExitUsage;
}

int cmd_info() {
  const fm::BuildInfo b = fm::build_info();
  std::printf("fusedmoe %s (git %s)\n", b.version.c_str(), b.git_revision.c_str());
  std::printf("build: %s, CUDA %s, CUTLASS %s, device code %s\n", b.cuda ? "CUDA" : "CPU-only",
              b.cuda_version.c_str(), b.cutlass_version.c_str(), b.cuda_archs.c_str());
  const int n = fm::device_count();
  if (!b.cuda) {
    std::printf("gpus: not queried (CPU-only build)\n");
  } else if (n == 0) {
    std::printf("gpus: none found\n");
  }
  for (int i = 0; i < n; ++i) {
    fm::DeviceInfo d;
    const fm::Status st = fm::device_info(i, &d);
    if (!st.ok()) {
      std::printf("gpu %d: %s\n", i, st.message().c_str());
      continue;
    }
    std::printf("gpu %d: %s, sm_%d%d, %d SMs, %.1f GiB, L2 %.0f MiB, smem/block %lld KiB; kernels %s (%s)\n", i,
                d.name.c_str(), d.cc_major, d.cc_minor, d.sm_count, d.global_memory_bytes / 1073741824.0,
                d.l2_bytes / 1048576.0, static_cast<long long>(d.smem_per_block_optin / 1024),
                d.kernels_run ? "run" : "DO NOT run", d.kernels_note.c_str());
  }
  std::printf("paths:\n");
  for (const fm::PathInfo& p : fm::supported_paths()) {
    std::printf("  %-22s %-34s %s\n", p.precision.c_str(), p.kernel.c_str(),
                p.available ? "available" : p.note.c_str());
  }
  return kExitOk;
}

int cmd_shapes(const Args& args) {
  ft::ShapesFile file;
  const fm::Status st = ft::load_shapes(shapes_path(args), &file);
  if (!st.ok()) return status_error(st);
  std::printf("%-22s %-22s %4s %6s %6s %6s %5s  %s\n", "shape", "model", "tp", "E", "H", "I", "topk", "routing");
  for (const ft::ShapeSpec& s : file.shapes) {
    std::printf("%-22s %-22s %4d %6d %6lld %6lld %5d  %s\n", s.name.c_str(), s.model.c_str(), s.tp,
                s.shape.num_experts, static_cast<long long>(s.shape.hidden), static_cast<long long>(s.shape.inter),
                s.shape.topk, s.routing.name.c_str());
  }
  std::printf("batch sizes:");
  for (int64_t m : file.batch_sizes) std::printf(" %lld", static_cast<long long>(m));
  std::printf("\n");
  return kExitOk;
}

// --routing NAME in place of a shape's routing (its grouped routing's n_group, topk_group and
// scale kept for sigmoid_grouped_topk).
fm::Status routing_option(const Args& args, ft::RoutingSetup* routing) {
  if (!args.options.count("routing")) return fm::Status();
  const ft::RoutingSetup model_routing = *routing;
  return ft::routing_from_name(args.options.at("routing"), model_routing.config.n_group,
                               model_routing.config.topk_group, model_routing.config.routed_scaling_factor, routing);
}

int cmd_check(const Args& args) {
  static const char* kKnown[] = {"shape", "E", "H", "I", "topk", "m", "precision", "routing",
                                 "activation", "seed", "shapes-file", "path", "split-k", "tiles-per-warp"};
  for (const auto& kv : args.options) {
    bool known = false;
    for (const char* k : kKnown) known = known || kv.first == k;
    if (!known) return usage_error("check: unknown option --" + kv.first);
  }
  std::string error;
  ft::ShapeSpec spec;
  const bool explicit_shape = args.options.count("E") || args.options.count("H") || args.options.count("I") ||
                              args.options.count("topk");
  if (args.options.count("shape")) {
    if (explicit_shape) return usage_error("check: --shape and --E/--H/--I/--topk exclude each other");
    ft::ShapesFile file;
    const fm::Status st = ft::load_shapes(shapes_path(args), &file);
    if (!st.ok()) return status_error(st);
    const ft::ShapeSpec* found = file.find(args.options.at("shape"));
    if (found == nullptr) {
      std::string names;
      for (const ft::ShapeSpec& s : file.shapes) names += (names.empty() ? "" : ", ") + s.name;
      return usage_error("--shape: expected one of " + names + ", got '" + args.options.at("shape") + "'");
    }
    spec = *found;
  } else if (explicit_shape) {
    int64_t e, h, i, k;
    if (!int_option(args, "E", 0, 1, 1 << 20, &e, &error) || !int_option(args, "H", 0, 1, 1 << 24, &h, &error) ||
        !int_option(args, "I", 0, 1, 1 << 24, &i, &error) || !int_option(args, "topk", 0, 1, 1 << 20, &k, &error)) {
      return usage_error(error);
    }
    for (const char* name : {"E", "H", "I", "topk"}) {
      if (!args.options.count(name)) return usage_error(std::string("check: an explicit shape needs --") + name);
    }
    spec.name = "custom";
    spec.shape.num_experts = static_cast<int32_t>(e);
    spec.shape.hidden = h;
    spec.shape.inter = i;
    spec.shape.topk = static_cast<int32_t>(k);
    fm::Status st = ft::routing_from_name("softmax_topk_renormalize", 0, 0, 1.0f, &spec.routing);
    if (!st.ok()) return status_error(st);
  } else {
    return usage_error("check: give --shape NAME or --E --H --I --topk");
  }
  if (const fm::Status st = routing_option(args, &spec.routing); !st.ok()) return status_error(st);
  int64_t m, seed;
  ft::SplitK split_k;
  if (!int_option(args, "m", 16, 0, int64_t{1} << 31, &m, &error) ||
      !int_option(args, "seed", 1, 0, INT64_MAX, &seed, &error) ||
      !split_k_option(args, &split_k, &error)) {
    return usage_error(error);
  }
  fm::Precision precision;
  fm::Status st = fm::find_precision(args.options.count("precision") ? args.options.at("precision") : "bf16", &precision);
  if (!st.ok()) return status_error(st);
  fm::Activation activation = fm::Activation::kSiluAndMul;
  if (args.options.count("activation")) {
    const std::string a = args.options.at("activation");
    if (a == "gelu") activation = fm::Activation::kGeluAndMul;
    else if (a == "gelu_tanh") activation = fm::Activation::kGeluTanhAndMul;
    else if (a != "silu") return usage_error("--activation: expected silu, gelu or gelu_tanh, got '" + a + "'");
  }

  fm::KernelPath forced = fm::KernelPath::kAuto;
  if (args.options.count("path")) {
    const fm::Status path_st = fm::parse_kernel_path(args.options.at("path"), &forced);
    if (!path_st.ok()) return usage_error("--" + path_st.message());
  }

  fm::ProblemShape shape = spec.shape;
  shape.m = m;
  const std::string routing_mode = spec.routing.name;
  const fusedmoe::ref::RoutingMode mode = ft::synthetic_routing_mode(spec.routing);
  std::printf("check: shape %s (E=%d H=%lld I=%lld topk=%d) m=%lld precision %s routing %s seed %lld path %s%s\n",
              spec.name.c_str(), shape.num_experts, static_cast<long long>(shape.hidden),
              static_cast<long long>(shape.inter), shape.topk, static_cast<long long>(m), precision.name.c_str(),
              routing_mode.c_str(), static_cast<long long>(seed), fm::to_string(forced),
              split_k.forced() ? (" split_k " + split_k.to_string()).c_str() : "");

  const auto t0 = std::chrono::steady_clock::now();
  // FP8: the weights quantized from dense ones (kept for the bf16 layer the error
  // report compares with); other formats drawn directly.
  const bool fp8 = precision.quant.act_quant != fm::ActQuant::kNone;
  fusedmoe::ref::Checkpoint checkpoint, dense;
  st = fusedmoe::ref::make_random_checkpoint(shape, precision.act_dtype, fp8 ? fm::QuantParams() : precision.quant,
                                             static_cast<uint64_t>(seed), fp8 ? &dense : &checkpoint);
  if (st.ok() && fp8) st = fusedmoe::ref::quantize_checkpoint(shape, precision.act_dtype, dense, precision.quant, &checkpoint);
  if (!st.ok()) return status_error(st);
  fusedmoe::ref::LayerData data;
  st = fusedmoe::ref::make_random_inputs(shape, precision.act_dtype, mode, static_cast<uint64_t>(seed), &data);
  if (!st.ok()) return status_error(st);
  data.inputs.activation = activation;
  data.inputs.routing = spec.routing.config;
  data.inputs.routing.correction_bias = spec.routing.use_correction_bias ? data.correction_bias.data() : nullptr;
  data.inputs.apply_router_weight_on_input = spec.routing.weight_on_input;
  const auto t1 = std::chrono::steady_clock::now();

  // The reference rounds where the planned path rounds (a grouped path whose GEMM1 does not
  // apply the activation stores gate/up in the activation dtype first).
  fm::PreparedWeights planned_weights;
  planned_weights.shape = shape;
  planned_weights.quant = precision.quant;
  planned_weights.gate_up_interleaved = precision.quant.format == fm::WeightFormat::kDense;  // as load_weights prepares them
  fm::MoeArguments planned_args;
  planned_args.weights = &planned_weights;
  planned_args.inputs.shape = shape;
  planned_args.path = forced;
  fm::KernelPath planned = fm::KernelPath::kAuto;
  st = fm::planned_path(planned_args, &planned);
  if (!st.ok()) return status_error(st);
  fusedmoe::ref::LayerOptions ref_options;
  ref_options.round_gate_up = fm::path_rounds_gate_up(planned, precision.quant, planned_weights.gate_up_interleaved);
  std::vector<double> ref;
  st = fusedmoe::ref::run_layer(data.inputs, checkpoint.weights, ref_options, &ref);
  if (!st.ok()) return status_error(st);
  const auto t2 = std::chrono::steady_clock::now();
  const double gen_s = std::chrono::duration<double>(t1 - t0).count();
  const double ref_s = std::chrono::duration<double>(t2 - t1).count();

  double sum2 = 0.0;
  int64_t nonfinite = 0;
  for (double v : ref) {
    if (!std::isfinite(v)) ++nonfinite;
    else sum2 += v * v;
  }
  const double rms = ref.empty() ? 0.0 : std::sqrt(sum2 / static_cast<double>(ref.size()));
  std::printf("reference: %lld x %lld outputs, rms %.4e, non-finite %lld; inputs %.2f s, reference %.2f s\n",
              static_cast<long long>(m), static_cast<long long>(shape.hidden), rms, static_cast<long long>(nonfinite),
              gen_s, ref_s);
  // FP8: the layer on the quantized operands against the same layer in bf16 (weights before
  // quantization, activations unquantized): the format's own error, a few percent.
  std::vector<double> bf16_ref;
  auto rel_to_bf16 = [&](const std::vector<double>& v) {
    return fusedmoe::ref::compare(bf16_ref, v, fusedmoe::ref::kToleranceFP8).rel_l2;
  };
  if (fp8) {
    st = fusedmoe::ref::run_layer(data.inputs, dense.weights, fusedmoe::ref::LayerOptions(), &bf16_ref);
    if (!st.ok()) return status_error(st);
    std::printf("fp8 vs the bf16 layer: reference on the quantized operands rel_l2 %.3e\n", rel_to_bf16(ref));
  }

  if (nonfinite > 0) {
    std::printf("result: FAIL (the reference produced %lld non-finite values)\n", static_cast<long long>(nonfinite));
    return kExitCheckFailed;
  }
  // The GPU side needs a device and a compiled kernel path for this precision.
  std::string kernel_note = "no kernel path";
  bool kernel = false;
  for (const fm::PathInfo& p : fm::supported_paths()) {
    if (p.precision == precision.name) {
      kernel = p.available;
      kernel_note = p.kernel + ": " + (p.available ? "available" : p.note);
    }
  }
  const fusedmoe::ref::Tolerance tol = fusedmoe::ref::tolerance_for(precision.act_dtype, precision.quant);
  if (fm::device_count() == 0 || !kernel) {
    std::printf("gpu: %s; kernel %s\n", fm::device_count() > 0 ? "present" : "none on this machine", kernel_note.c_str());
    std::printf("result: REFERENCE ONLY (nothing to compare on the GPU; %s tolerance: rel_l2 <= %.1e, "
                "max_abs <= %.2f x rms)\n", tol.name, tol.rel_l2, tol.max_abs_over_rms);
    return kExitOk;
  }
#ifdef FUSEDMOE_WITH_CUDA
  // Router logits are routed on the GPU (routing_topk), synthetic routings are given as ids.
  ft::GpuLayer layer;
  st = layer.load_weights(shape, precision.act_dtype, checkpoint, nullptr);
  fusedmoe::ref::Routing given{data.topk_ids, data.topk_weights};
  if (st.ok()) {
    st = layer.set_inputs(data.inputs, data.inputs.router_logits ? nullptr : &given, forced, split_k);
  }
  if (st.ok()) st = layer.run(nullptr);
  if (st.ok() && cudaDeviceSynchronize() != cudaSuccess) st = fm::Status(fm::StatusCode::kCudaError, "layer run failed");
  std::vector<double> got;
  if (st.ok()) st = layer.output(&got);
  if (!st.ok()) {
    std::printf("gpu: %s\nresult: FAIL (%s)\n", kernel_note.c_str(), st.message().c_str());
    return kExitCheckFailed;
  }
  // Per-tensor dynamic activations: the reference again on the GPU's two scales (see
  // ref::with_static_act_scales), the scales compared with the reference's own.
  if (precision.quant.act_quant == fm::ActQuant::kPerTensorDynamic) {
    float gpu_scales[2], ref_scales[2];
    st = layer.fp8_dynamic_scales(gpu_scales);
    fusedmoe::ref::LayerOptions on_gpu_scales = ref_options;
    on_gpu_scales.dynamic_act_scales = ref_scales;
    if (st.ok()) {
      st = fusedmoe::ref::run_layer(data.inputs, fusedmoe::ref::with_static_act_scales(checkpoint.weights, gpu_scales),
                                    on_gpu_scales, &ref);
    }
    if (!st.ok()) return status_error(st);
    std::printf("per-tensor dynamic scales: x gpu %.6e reference %.6e, intermediate gpu %.6e reference %.6e "
                "(the reference below runs on the gpu's)\n",
                gpu_scales[0], ref_scales[0], gpu_scales[1], ref_scales[1]);
    if (gpu_scales[0] != ref_scales[0] || std::fabs(gpu_scales[1] / ref_scales[1] - 1.0f) > 0.05f) {
      std::printf("result: FAIL (the per-tensor scales differ: x exactly equal, intermediate within 5%% expected)\n");
      return kExitCheckFailed;
    }
  }
  const fusedmoe::ref::Comparison cmp = fusedmoe::ref::compare(ref, got, tol);
  std::printf("gpu: kernel %s\n", kernel_note.c_str());
  if (fp8) std::printf("fp8 vs the bf16 layer: gpu rel_l2 %.3e\n", rel_to_bf16(got));
  std::printf("result: %s against the reference (%s tolerance: rel_l2 <= %.1e, max_abs <= %.2f x rms)\n",
              cmp.describe().c_str(), tol.name, tol.rel_l2, tol.max_abs_over_rms);
  return cmp.pass ? kExitOk : kExitCheckFailed;
#endif
  return kExitOk;
}

#ifdef FUSEDMOE_WITH_CUDA
std::vector<std::string> split_commas(const std::string& s) {
  std::vector<std::string> parts;
  std::string cur;
  for (char c : s + ",") {
    if (c == ',') {
      if (!cur.empty()) parts.push_back(cur);
      cur.clear();
    } else {
      cur.push_back(c);
    }
  }
  return parts;
}
#endif

int cmd_bench(const Args& args) {
#ifndef FUSEDMOE_WITH_CUDA
  (void)args;
  return usage_error("bench needs a CUDA build (this one is CPU-only)");
#else
  static const char* kKnown[] = {"shape",   "m",           "precision", "csv",     "json",          "seconds",
                                 "routing", "shapes-file", "path",      "split-k", "dense-in-place", "tiles-per-warp",
                                 "stage"};
  for (const auto& kv : args.options) {
    bool known = false;
    for (const char* k : kKnown) known = known || kv.first == k;
    if (!known) return usage_error("bench: unknown option --" + kv.first);
  }
  ft::ShapesFile file;
  const fm::Status st = ft::load_shapes(shapes_path(args), &file);
  if (!st.ok()) return status_error(st);
  ft::BenchOptions opt;
  if (args.options.count("shape")) {
    for (const std::string& name : split_commas(args.options.at("shape"))) {
      const ft::ShapeSpec* spec = file.find(name);
      if (spec == nullptr) return usage_error("--shape: expected bench shapes of the shapes file, got '" + name + "'");
      opt.shapes.push_back(*spec);
    }
  } else {
    opt.shapes = file.shapes;
  }
  for (ft::ShapeSpec& spec : opt.shapes) {
    if (const fm::Status rst = routing_option(args, &spec.routing); !rst.ok()) return status_error(rst);
  }
  if (args.options.count("m")) {
    for (const std::string& v : split_commas(args.options.at("m"))) {
      char* end = nullptr;
      const long long m = std::strtoll(v.c_str(), &end, 10);
      if (*end != '\0' || m < 1 || m > (1 << 20)) return usage_error("--m: expected positive integers, got '" + v + "'");
      opt.batch_sizes.push_back(m);
    }
  } else {
    for (int64_t m : file.batch_sizes) {
      if (m <= 4096) opt.batch_sizes.push_back(m);
    }
  }
  if (args.options.count("precision")) opt.precision = args.options.at("precision");
  if (args.options.count("csv")) opt.csv_path = args.options.at("csv");
  if (args.options.count("json")) opt.json_path = args.options.at("json");
  if (args.options.count("seconds")) opt.seconds_per_point = std::atof(args.options.at("seconds").c_str());
  if (!(opt.seconds_per_point > 0.0)) return usage_error("--seconds: expected a positive number");
  if (args.options.count("path")) {
    const fm::Status path_st = fm::parse_kernel_path(args.options.at("path"), &opt.path);
    if (!path_st.ok()) return usage_error("--" + path_st.message());
  }
  std::string error;
  if (!split_k_option(args, &opt.split_k, &error)) return usage_error(error);
  if (args.options.count("dense-in-place")) {
    const std::string v = args.options.at("dense-in-place");
    if (v != "0" && v != "1") return usage_error("--dense-in-place: expected 0 or 1, got '" + v + "'");
    opt.dense_in_place = v == "1";
  }
  if (args.options.count("stage")) {
    const std::string v = args.options.at("stage");
    if (v != "layer" && v != "routing") return usage_error("--stage: expected layer or routing, got '" + v + "'");
    opt.routing_stage = v == "routing";
    if (opt.routing_stage && (!opt.csv_path.empty() || !opt.json_path.empty())) {
      return usage_error("--stage routing: prints its table only, without --csv or --json");
    }
  }
  opt.peers_file = FUSEDMOE_PEERS_FILE;
  return ft::bench_main(opt);
#endif
}

}  // namespace

int main(int argc, char** argv) {
  Args args;
  std::string error;
  if (!parse_args(argc, argv, &args, &error)) return usage_error(error);
  if (args.command == "info") return args.options.empty() ? cmd_info() : usage_error("info takes no options");
  if (args.command == "shapes") return cmd_shapes(args);
  if (args.command == "check") return cmd_check(args);
  if (args.command == "bench") return cmd_bench(args);
  if (args.command == "help" || args.command == "--help" || args.command == "-h") {
    std::printf("%s", kUsage);
    return kExitOk;
  }
  return usage_error("unknown command '" + args.command + "'");
}
