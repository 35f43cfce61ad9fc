// `fusedmoe bench`: the whole layer (align through combine) under a CUDA graph, per shape and
// batch size; median of many timed replays with the L2 flushed before each (so the weights
// come from HBM); the read-bandwidth and dense-matmul rooflines measured in the same run;
// a cuBLAS peer (tools/cublas_peer.h) timed in the same run, and the vLLM H200 times of
// bench/peers_h200.csv beside ours.
#include "bench.h"

#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "bench_kernels.h"
#include "align_buffers.h"
#include "bench_report.h"
#include "cublas_peer.h"
#include "gpu_layer.h"
#include "layer.h"
#include "validate.h"
#include "fusedmoe/build_info.h"
#include "fusedmoe/moe.h"
#include "fusedmoe_ref/numeric.h"
#include "fusedmoe_ref/random.h"
#include "fusedmoe_ref/reference.h"
#include "fusedmoe_ref/synthetic.h"
#include "shapes.h"

namespace fusedmoe::tools {

namespace {

struct CudaFailure {
  std::string what;
};

void check(cudaError_t err, const char* what) {
  if (err != cudaSuccess) throw CudaFailure{std::string(what) + ": " + cudaGetErrorString(err)};
}

// Device memory for the bench (tools::DeviceBuffer), failures thrown like the CUDA calls'.
struct Buffer : DeviceBuffer {
  explicit Buffer(size_t bytes, const void* host = nullptr) {
    const Status st = assign(host, bytes);
    if (!st.ok()) throw CudaFailure{st.message()};
  }
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0.0 : v[v.size() / 2];
}

// Times fn (enqueued on stream) `iters` times, flushing L2 before each; median microseconds.
template <typename Fn>
double time_us(Fn fn, int iters, cudaStream_t stream, void* flush, size_t flush_bytes) {
  cudaEvent_t a, b;
  check(cudaEventCreate(&a), "cudaEventCreate");
  check(cudaEventCreate(&b), "cudaEventCreate");
  std::vector<double> us;
  for (int i = 0; i < iters; ++i) {
    check(cudaMemsetAsync(flush, i & 0xff, flush_bytes, stream), "flush");
    check(cudaEventRecord(a, stream), "cudaEventRecord");
    fn();
    check(cudaEventRecord(b, stream), "cudaEventRecord");
    check(cudaEventSynchronize(b), "cudaEventSynchronize");
    float ms = 0;
    check(cudaEventElapsedTime(&ms, a, b), "cudaEventElapsedTime");
    us.push_back(ms * 1000.0);
  }
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  return median(us);
}

// Captures `enqueue` (returning Status) in a CUDA graph and times its replays: about
// `seconds` worth, 10..200 of them.
template <typename Enqueue>
double time_graph(Enqueue enqueue, double seconds, cudaStream_t stream, void* flush, size_t flush_bytes) {
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  check(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal), "capture");
  const Status st = enqueue();
  check(cudaStreamEndCapture(stream, &graph), "capture end");
  if (!st.ok()) throw CudaFailure{st.message()};
  check(cudaGraphInstantiate(&exec, graph, 0), "cudaGraphInstantiate");
  auto launch = [&] { check(cudaGraphLaunch(exec, stream), "cudaGraphLaunch"); };
  launch();
  const auto t0 = std::chrono::steady_clock::now();
  launch();
  check(cudaStreamSynchronize(stream), "sync");
  const double once_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const int iters = static_cast<int>(std::clamp(seconds / std::max(once_s, 1e-6), 10.0, 200.0));
  const double us = time_us(launch, iters, stream, flush, flush_bytes);
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  return us;
}

// Relative L2 difference of two device arrays of 16-bit floats.
double relative_difference(const void* a, const void* b, int64_t n, DType dtype) {
  std::vector<uint16_t> ha(static_cast<size_t>(n)), hb(static_cast<size_t>(n));
  check(cudaMemcpy(ha.data(), a, ha.size() * 2, cudaMemcpyDeviceToHost), "cudaMemcpy");
  check(cudaMemcpy(hb.data(), b, hb.size() * 2, cudaMemcpyDeviceToHost), "cudaMemcpy");
  double num = 0.0, den = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    const double x = ref::load_as_double(ha.data(), dtype, i), y = ref::load_as_double(hb.data(), dtype, i);
    num += (x - y) * (x - y);
    den += y * y;
  }
  return den > 0 ? std::sqrt(num / den) : std::sqrt(num);
}

struct Rooflines {
  double read_tbs = 0;     // streaming read, TB/s
  double matmul_tfs = 0;   // dense GEMM in the layer's operand type (bf16, or e4m3 for FP8), TFLOP/s
  const char* matmul_kind = "bf16";
};

// cuBLASLt's e4m3 GEMM, n^3, bf16 out, fp32 scale, fast accumulation (the fastest FP8 GEMM
// cuBLAS offers: the rate the FP8 layer is measured against).
double fp8_matmul_tfs(int n, cudaStream_t stream, void* flush, size_t flush_bytes) {
  std::vector<uint8_t> host(static_cast<size_t>(n) * n);
  ref::Rng rng(19);
  for (auto& v : host) v = static_cast<uint8_t>(rng.uniform(0.0, 1.0) * 0x70) | (rng.uniform(0.0, 1.0) < 0.5 ? 0x80 : 0);
  Buffer a(host.size(), host.data()), b(host.size(), host.data()), c(host.size() * 2);
  const size_t ws_bytes = size_t{64} << 20;
  Buffer ws(ws_bytes);
  auto lt_check = [](cublasStatus_t s, const char* what) {
    if (s != CUBLAS_STATUS_SUCCESS) throw CudaFailure{std::string(what) + " failed: status " + std::to_string(s)};
  };
  cublasLtHandle_t lt;
  lt_check(cublasLtCreate(&lt), "cublasLtCreate");
  cublasLtMatmulDesc_t desc;
  lt_check(cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F), "cublasLtMatmulDescCreate");
  const cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;  // FP8 wants both operands k-major
  const int8_t fast = 1;
  lt_check(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta), "TRANSA");
  lt_check(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb), "TRANSB");
  lt_check(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_FAST_ACCUM, &fast, sizeof fast), "FAST_ACCUM");
  cublasLtMatrixLayout_t la, lb, lc;
  lt_check(cublasLtMatrixLayoutCreate(&la, CUDA_R_8F_E4M3, n, n, n), "layout A");
  lt_check(cublasLtMatrixLayoutCreate(&lb, CUDA_R_8F_E4M3, n, n, n), "layout B");
  lt_check(cublasLtMatrixLayoutCreate(&lc, CUDA_R_16BF, n, n, n), "layout C");
  cublasLtMatmulPreference_t pref;
  lt_check(cublasLtMatmulPreferenceCreate(&pref), "cublasLtMatmulPreferenceCreate");
  lt_check(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws_bytes, sizeof ws_bytes),
           "max workspace");
  cublasLtMatmulHeuristicResult_t algo{};
  int found = 0;
  lt_check(cublasLtMatmulAlgoGetHeuristic(lt, desc, la, lb, lc, lc, pref, 1, &algo, &found), "heuristic");
  if (found == 0) throw CudaFailure{"cuBLASLt has no e4m3 GEMM here"};
  const float alpha = 1.0f, beta = 0.0f;
  auto gemm = [&] {
    lt_check(cublasLtMatmul(lt, desc, &alpha, a.get(), la, b.get(), lb, &beta, c.get(), lc, c.get(), lc, &algo.algo,
                            ws.get(), ws_bytes, stream),
             "cublasLtMatmul");
  };
  gemm();
  const double tfs = 2.0 * n * n * static_cast<double>(n) / time_us(gemm, 10, stream, flush, flush_bytes) / 1e6;
  cublasLtMatmulPreferenceDestroy(pref);
  cublasLtMatrixLayoutDestroy(la);
  cublasLtMatrixLayoutDestroy(lb);
  cublasLtMatrixLayoutDestroy(lc);
  cublasLtMatmulDescDestroy(desc);
  cublasLtDestroy(lt);
  return tfs;
}

Rooflines measure_rooflines(cudaStream_t stream, void* flush, size_t flush_bytes, int sms, bool fp8) {
  Rooflines r;
  const size_t bytes = size_t{4} << 30;
  Buffer src(bytes), sink(static_cast<size_t>(sms) * 8 * sizeof(float));
  check(cudaMemset(src.get(), 0x3c, bytes), "cudaMemset");
  auto read = [&] { check(launch_read_bandwidth(src.get(), bytes, static_cast<float*>(sink.get()), sms * 8, stream), "read"); };
  read();
  r.read_tbs = bytes / time_us(read, 20, stream, flush, flush_bytes) / 1e6;

  const int n = 8192;
  std::vector<uint16_t> host(static_cast<size_t>(n) * n);
  ref::Rng rng(17);
  for (auto& v : host) v = ref::float_to_bf16(static_cast<float>(rng.uniform(-1.0, 1.0)));
  Buffer a(host.size() * 2, host.data()), b(host.size() * 2, host.data()), c(host.size() * 2);
  cublasHandle_t handle;
  if (cublasCreate(&handle) != CUBLAS_STATUS_SUCCESS) throw CudaFailure{"cublasCreate failed"};
  cublasSetStream(handle, stream);
  const float alpha = 1.0f, beta = 0.0f;
  auto gemm = [&] {
    if (cublasGemmEx(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &alpha, a.get(), CUDA_R_16BF, n, b.get(), CUDA_R_16BF, n,
                     &beta, c.get(), CUDA_R_16BF, n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT) != CUBLAS_STATUS_SUCCESS) {
      throw CudaFailure{"cublasGemmEx failed"};
    }
  };
  gemm();
  r.matmul_tfs = 2.0 * n * n * static_cast<double>(n) / time_us(gemm, 10, stream, flush, flush_bytes) / 1e6;
  cublasDestroy(handle);
  if (fp8) {
    r.matmul_tfs = fp8_matmul_tfs(n, stream, flush, flush_bytes);
    r.matmul_kind = "e4m3 (fast accumulation)";
  }
  return r;
}

// The vLLM column of bench/peers_h200.csv that measures this precision ("" when none does:
// vLLM's table has no int8 weight-only column).
std::string peer_column(const QuantParams& q) {
  switch (q.format) {
    case WeightFormat::kDense: return "vllm_bf16_us";
    case WeightFormat::kFP8PerTensor:
    case WeightFormat::kFP8PerChannel:
    case WeightFormat::kFP8Block: return "vllm_fp8_us";
    default: return q.bits == 4 ? "vllm_w4a16_us" : "";
  }
}

// (shape, m) -> microseconds of `column` of bench/peers_h200.csv.
std::map<std::pair<std::string, int64_t>, double> load_peers(const std::string& path, const std::string& column) {
  std::map<std::pair<std::string, int64_t>, double> peers;
  std::ifstream f(path);
  std::string line;
  int index = -1;
  while (std::getline(f, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::stringstream ss(line);
    std::vector<std::string> cells;
    for (std::string cell; std::getline(ss, cell, ',');) cells.push_back(cell);
    if (line.rfind("shape,", 0) == 0) {
      for (size_t i = 0; i < cells.size(); ++i) {
        if (cells[i] == column) index = static_cast<int>(i);
      }
      continue;
    }
    if (index < 0 || static_cast<size_t>(index) >= cells.size()) continue;
    peers[{cells[0], std::stoll(cells[1])}] = std::stod(cells[index]);
  }
  return peers;
}

// Bytes of one expert's weights in the checkpoint format (codes, scales, zeros, g_idx).
double expert_weight_bytes(const ProblemShape& shape, const Precision& p) {
  double bytes = 0.0;
  for (Projection which : {Projection::kW13, Projection::kW2}) {
    std::vector<TensorSpec> specs;
    const Status st = describe_weight_tensors(shape, p.act_dtype, p.quant, which, &specs);
    if (!st.ok()) throw CudaFailure{st.message()};
    for (const TensorSpec& t : specs) bytes += static_cast<double>(t.bytes());
  }
  return bytes / shape.num_experts;
}

}  // namespace

// `--stage routing`: per shape and M, the model's router (route_topk on fp32 logits ~ N(0, 1):
// the shape's scoring, groups and correction bias) and align (smxx_align_tokens as the layer
// enqueues it, enqueue_align) under a CUDA graph, each alone and the two together, the L2
// flushed before each replay. TARGETS.md asks routing + align <= 5 us for M <= 256 at E = 256.
// Align's expert offsets are checked to hold every pair (no expert map here). Synthetic
// routings (--routing) have no router: skipped.
int bench_routing(const BenchOptions& opt, cudaStream_t stream, void* flush, size_t flush_bytes) {
  constexpr double kTargetUs = 5.0;
  constexpr int64_t kTargetMaxM = 256;
  int failures = 0;
  {
    // The timing's own floor: a graph of one node that does next to nothing (a 4-byte memset),
    // launched and timed as the stages are.
    Buffer word(sizeof(int32_t));
    const double empty_us = time_graph(
        [&] {
          check(cudaMemsetAsync(word.get(), 0, sizeof(int32_t), stream), "cudaMemsetAsync");
          return Status();
        },
        opt.seconds_per_point, stream, flush, flush_bytes);
    std::printf("a graph of one 4-byte memset, timed the same way: %.1f us\n", empty_us);
  }
  std::printf("%-20s %6s %5s %7s %9s %9s %9s %9s\n", "shape", "m", "E", "pairs", "route_us", "align_us", "both_us",
              "target");
  for (const ShapeSpec& spec : opt.shapes) {
    if (!spec.routing.from_logits) {
      std::printf("%-20s  skipped: routing %s has no router\n", spec.name.c_str(), spec.routing.name.c_str());
      continue;
    }
    ProblemShape shape = spec.shape;
    for (int64_t m : opt.batch_sizes) {
      shape.m = m;
      ref::LayerData d;
      Status st = ref::make_random_inputs(shape, DType::kBF16, ref::RoutingMode::kRouter, 11 + m, &d);
      if (!st.ok()) throw CudaFailure{st.message()};
      const int64_t pairs = m * shape.topk;
      const int32_t experts = shape.num_experts;
      Buffer logits(d.router_logits.size() * sizeof(float), d.router_logits.data());
      Buffer bias(std::max<size_t>(d.correction_bias.size(), 1) * sizeof(float),
                  d.correction_bias.empty() ? nullptr : d.correction_bias.data());
      Buffer ids(static_cast<size_t>(pairs) * sizeof(int32_t)), weights(static_cast<size_t>(pairs) * sizeof(float));
      AlignBuffers align_out;
      st = align_out.assign(pairs, experts);
      if (!st.ok()) throw CudaFailure{st.message()};
      RoutingConfig cfg = spec.routing.config;
      cfg.correction_bias = spec.routing.use_correction_bias && !d.correction_bias.empty()
                                ? static_cast<const float*>(bias.get())
                                : nullptr;
      MoeInputs in = d.inputs;  // the shape and expert map enqueue_align reads
      in.shape = shape;
      in.expert_map = nullptr;
      kernels::AlignParams al = align_out.params();
      al.ids_from_predecessor = true;  // as the layer enqueues it after its router
      int32_t* const ids_d = static_cast<int32_t*>(ids.get());
      const auto route = [&] {
        return route_topk(shape, cfg, DType::kFP32, logits.get(), ids_d, static_cast<float*>(weights.get()), stream);
      };
      const auto align = [&] { return enqueue_align(in, ids_d, &al, stream); };
      const Status routed = route();  // also the ids align reads when timed alone
      check(cudaStreamSynchronize(stream), "route");
      if (!routed.ok()) {
        std::printf("%-20s %6lld  %s\n", spec.name.c_str(), static_cast<long long>(m), routed.message().c_str());
        ++failures;
        continue;
      }
      const double route_us = time_graph(route, opt.seconds_per_point, stream, flush, flush_bytes);
      const double align_us = time_graph(align, opt.seconds_per_point, stream, flush, flush_bytes);
      const double both_us = time_graph(
          [&] {
            const Status r = route();
            return r.ok() ? align() : r;
          },
          opt.seconds_per_point, stream, flush, flush_bytes);
      int64_t placed = -1;
      check(cudaMemcpy(&placed, al.expert_offsets + experts, sizeof placed,
                       cudaMemcpyDeviceToHost),
            "align's offsets");
      char target[32] = "-";
      if (m <= kTargetMaxM) std::snprintf(target, sizeof target, "%s %.0f", both_us <= kTargetUs ? "<=" : ">", kTargetUs);
      std::printf("%-20s %6lld %5d %7lld %9.1f %9.1f %9.1f %9s\n", spec.name.c_str(), static_cast<long long>(m),
                  global_experts(shape), static_cast<long long>(pairs), route_us, align_us, both_us, target);
      if (placed != pairs) {
        std::printf("%-20s %6lld  align placed %lld of %lld pairs\n", spec.name.c_str(), static_cast<long long>(m),
                    static_cast<long long>(placed), static_cast<long long>(pairs));
        ++failures;
      }
      std::fflush(stdout);
    }
  }
  return failures == 0 ? 0 : 1;
}

int bench_main(const BenchOptions& opt) {
  try {
    if (device_count() == 0) {
      std::fprintf(stderr, "fusedmoe bench: no CUDA device\n");
      return 2;
    }
    Precision precision;
    Status st = find_precision(opt.precision, &precision);
    if (!st.ok()) {
      std::fprintf(stderr, "fusedmoe bench: %s\n", st.message().c_str());
      return 2;
    }
    DeviceInfo dev;
    st = device_info(0, &dev);
    if (!st.ok()) throw CudaFailure{st.message()};
    cudaStream_t stream;
    check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");
    const size_t flush_bytes = static_cast<size_t>(std::max<int64_t>(dev.l2_bytes * 4, 256 << 20));
    Buffer flush(flush_bytes);
    if (opt.routing_stage) {
      const BuildInfo b = build_info();
      std::printf("fusedmoe bench: %s, %d SMs; git %s; CUDA %s; stage routing (the model's router and align)\n",
                  dev.name.c_str(), dev.sm_count, b.git_revision.c_str(), b.cuda_version.c_str());
      const int rc = bench_routing(opt, stream, flush.get(), flush_bytes);
      cudaStreamDestroy(stream);
      return rc;
    }
    const Rooflines roof =
        measure_rooflines(stream, flush.get(), flush_bytes, dev.sm_count, precision.quant.act_quant != ActQuant::kNone);  // FP8: e4m3 GEMMs
    const BuildInfo b = build_info();
    std::string synthetic;  // routings not from the models' routers (--routing), named in the header
    for (const ShapeSpec& spec : opt.shapes) {
      if (!spec.routing.from_logits && synthetic.find(spec.routing.name) == std::string::npos) {
        synthetic += (synthetic.empty() ? "; synthetic routing " : ", ") + spec.routing.name;
      }
    }
    std::printf("fusedmoe bench: %s, %d SMs; git %s; CUDA %s; precision %s; path %s%s%s%s\n", dev.name.c_str(),
                dev.sm_count, b.git_revision.c_str(), b.cuda_version.c_str(), precision.name.c_str(), to_string(opt.path),
                opt.split_k.forced() ? ("; split_k " + opt.split_k.to_string() + " (small_m points)").c_str() : "",
                opt.dense_in_place ? "; dense weights in place (checkpoint order)" : "", synthetic.c_str());
    std::printf("rooflines (this run): read %.2f TB/s (4 GiB, 16-byte loads), dense %s matmul %.0f TFLOP/s "
                "(cuBLAS 8192^3)\n",
                roof.read_tbs, roof.matmul_kind, roof.matmul_tfs);
    const std::string peer_col = peer_column(precision.quant);
    const auto peers = load_peers(opt.peers_file, peer_col);
    std::printf("peer: %s\n", peer_col.empty() ? "none for this precision in the vLLM table"
                                                : (peer_col + " of " + opt.peers_file).c_str());
    BenchRun context;
    context.gpu = dev.name;
    context.git = b.git_revision;
    context.cuda = b.cuda_version;
    context.precision = precision.name;
    context.path_option = to_string(opt.path);
    context.dense_in_place = opt.dense_in_place;
    context.split_k_gate_up = opt.split_k.gate_up;
    context.split_k_down = opt.split_k.down;
    context.tiles_per_warp_down = opt.split_k.tiles_down;
    context.read_tbs = roof.read_tbs;
    context.matmul_tfs = roof.matmul_tfs;
    context.matmul_kind = roof.matmul_kind;
    context.peer_column = peer_col;
    // Both files are opened before the first point, so that a bad path fails at once.
    if (!opt.json_path.empty()) {
      st = write_text_file(opt.json_path, "", "--json");
      if (!st.ok()) throw CudaFailure{st.message()};
    }
    std::unique_ptr<std::FILE, int (*)(std::FILE*)> csv(
        opt.csv_path.empty() ? nullptr : std::fopen(opt.csv_path.c_str(), "w"), &std::fclose);
    if (!opt.csv_path.empty() && csv == nullptr) {
      throw CudaFailure{"--csv: cannot open '" + opt.csv_path + "' for writing: " + std::strerror(errno)};
    }
    if (csv) std::fputs(bench_csv_header().c_str(), csv.get());
    std::vector<BenchPoint> points;
    std::printf("%-20s %6s %-12s %10s %8s %8s %9s %7s %10s %8s %10s %8s\n", "shape", "m", "path", "us", "TB/s", "TFLOP/s",
                "floor_us", "%roof", "vllm_us", "speedup", "cublas_us", "vs_cublas");
    int failures = 0;
    for (const ShapeSpec& spec : opt.shapes) {
      ProblemShape shape = spec.shape;
      ref::Checkpoint ck;
      shape.m = 1;
      st = ref::make_random_checkpoint(shape, precision.act_dtype, precision.quant, 7, &ck);
      if (!st.ok()) throw CudaFailure{st.message()};
      GpuLayer layer;
      st = layer.load_weights(shape, precision.act_dtype, ck, stream, opt.dense_in_place);
      if (!st.ok()) {
        std::printf("%-20s  skipped: %s\n", spec.name.c_str(), st.message().c_str());
        continue;
      }
      const double expert_bytes = expert_weight_bytes(shape, precision);
      for (int64_t m : opt.batch_sizes) {
        shape.m = m;
        ref::LayerData d;
        // The shape's model routing from random logits, or a synthetic one (--routing; balanced:
        // the same pairs on every expert) as the ids and weights themselves.
        st = ref::make_random_inputs(shape, precision.act_dtype, synthetic_routing_mode(spec.routing), 11 + m, &d);
        if (!st.ok()) throw CudaFailure{st.message()};
        ref::Routing routing;
        if (spec.routing.from_logits) {
          RoutingConfig cfg = spec.routing.config;
          cfg.correction_bias = spec.routing.use_correction_bias ? d.correction_bias.data() : nullptr;
          st = ref::route(shape, cfg, DType::kFP32, d.router_logits.data(), &routing);
          if (!st.ok()) throw CudaFailure{st.message()};
        } else {
          routing.ids = d.topk_ids;
          routing.weights = d.topk_weights;
        }
        const std::set<int32_t> hit(routing.ids.begin(), routing.ids.end());
        d.inputs.apply_router_weight_on_input = spec.routing.weight_on_input;
        st = layer.set_inputs(d.inputs, &routing, opt.path, opt.split_k);
        if (!st.ok()) {
          std::printf("%-20s %6lld  %s\n", spec.name.c_str(), static_cast<long long>(m), st.message().c_str());
          ++failures;
          continue;
        }
        KernelPath planned = KernelPath::kAuto;
        st = planned_path(layer.args(), &planned);
        if (!st.ok()) throw CudaFailure{st.message()};
        const double us = time_graph([&] { return run(layer.args(), layer.workspace(), layer.workspace_bytes(), stream); },
                                     opt.seconds_per_point, stream, flush.get(), flush_bytes);
        // The cuBLAS peer on the same inputs, its output checked against ours.
        double cublas_us = 0.0;
        if (precision.quant.format == WeightFormat::kDense) {
          CublasPeer cublas;
          MoeArguments peer_args = layer.args();  // the peer's GEMMs read w13 in the checkpoint's order
          peer_args.weights = &layer.checkpoint_weights();
          st = cublas.setup(peer_args, routing.ids);
          if (!st.ok()) throw CudaFailure{st.message()};
          cublas_us = time_graph([&] { return cublas.enqueue(stream); }, opt.seconds_per_point, stream, flush.get(), flush_bytes);
          const double diff = relative_difference(layer.args().out, cublas.out(), m * shape.hidden, precision.act_dtype);
          if (!(diff < 2e-2)) {
            std::printf("%-20s %6lld  ours and the cuBLAS peer differ: relative L2 %.3g\n", spec.name.c_str(),
                        static_cast<long long>(m), diff);
            ++failures;
          }
        }

        const double bytes = static_cast<double>(hit.size()) * expert_bytes + 2.0 * m * shape.hidden * dtype_size(precision.act_dtype);
        const double flops = 2.0 * m * shape.topk * 3.0 * shape.hidden * shape.inter;
        const double floor_us = std::max(bytes / (roof.read_tbs * 1e12), flops / (roof.matmul_tfs * 1e12)) * 1e6;
        const auto peer = peers.find({spec.name, m});
        BenchPoint point;
        point.shape = spec.name;
        point.m = m;
        point.path = to_string(planned);
        point.us = us;
        point.bytes = bytes;
        point.flops = flops;
        point.floor_us = floor_us;
        // vLLM's times were taken under the model's routing: no column beside a synthetic one.
        point.vllm_us = peer == peers.end() || !spec.routing.from_logits ? 0.0 : peer->second;
        point.cublas_us = cublas_us;
        points.push_back(point);
        char peer_us[32] = "-", speedup[32] = "-", cublas_col[32] = "-", vs_cublas[32] = "-";
        if (point.vllm_us > 0) {
          std::snprintf(peer_us, sizeof peer_us, "%.1f", point.vllm_us);
          std::snprintf(speedup, sizeof speedup, "%.2fx", point.speedup_vs_vllm());
        }
        if (point.cublas_us > 0) {
          std::snprintf(cublas_col, sizeof cublas_col, "%.1f", point.cublas_us);
          std::snprintf(vs_cublas, sizeof vs_cublas, "%.2fx", point.speedup_vs_cublas());
        }
        std::printf("%-20s %6lld %-12s %10.1f %8.2f %8.1f %9.1f %6.1f%% %10s %8s %10s %8s\n", spec.name.c_str(),
                    static_cast<long long>(m), point.path.c_str(), us, point.tb_s(), point.tflop_s(), floor_us,
                    point.pct_roofline(), peer_us, speedup, cublas_col, vs_cublas);
        if (csv) {
          std::fputs(bench_csv_line(context, point).c_str(), csv.get());
          std::fflush(csv.get());
        }
        std::fflush(stdout);
      }
    }
    csv.reset();
    cudaStreamDestroy(stream);
    if (!opt.json_path.empty()) {
      st = write_text_file(opt.json_path, bench_json(context, points), "--json");
      if (!st.ok()) {
        std::fprintf(stderr, "fusedmoe bench: %s\n", st.message().c_str());
        return 1;
      }
    }
    return failures == 0 ? 0 : 1;
  } catch (const CudaFailure& f) {
    std::fprintf(stderr, "fusedmoe bench: %s\n", f.what.c_str());
    return 1;
  }
}

}  // namespace fusedmoe::tools
