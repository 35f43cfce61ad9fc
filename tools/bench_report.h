// `fusedmoe bench`'s results as files: one row per (shape, M) with the run's context, written
// as CSV (one line per point, the columns below) and as JSON (the run's context once, then the
// points). Host code only, so the CPU tests cover it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "fusedmoe/status.h"

namespace fusedmoe::tools {

/// What holds for every point of one `fusedmoe bench` run.
struct BenchRun {
  std::string gpu;
  std::string git;
  std::string cuda;
  std::string precision;
  std::string path_option = "auto";  ///< --path: auto, or the forced path
  int32_t split_k_gate_up = 0;        ///< --split-k: 0 for the planner's
  int32_t split_k_down = 0;
  int32_t tiles_per_warp_down = 0;    ///< --tiles-per-warp: 0 for the planner's
  bool dense_in_place = false;        ///< --dense-in-place: dense weights in the checkpoint's order
  double read_tbs = 0.0;              ///< streaming-read roofline measured in the run
  double matmul_tfs = 0.0;            ///< dense matmul rate measured in the run
  std::string matmul_kind;            ///< which matmul (bf16, e4m3 ...)
  std::string peer_column;            ///< the vLLM column of the peers file ("" when none)
};

/// One timed point. Rates and ratios derive from these (BenchPoint's accessors).
struct BenchPoint {
  std::string shape;
  int64_t m = 0;
  std::string path;        ///< the path the planner took (or the forced one)
  double us = 0.0;         ///< median microseconds of the whole layer
  double bytes = 0.0;      ///< bytes the layer must move: hit experts' weights plus x and out
  double flops = 0.0;      ///< 2 * m * topk * 3 * H * I
  double floor_us = 0.0;   ///< max(bytes / read roofline, flops / matmul roofline)
  double vllm_us = 0.0;    ///< the peer's microseconds, 0 when the peers file has none
  double cublas_us = 0.0;  ///< the cuBLAS peer's, 0 when not run

  double tb_s() const { return us > 0 ? bytes / us / 1e6 : 0.0; }
  double tflop_s() const { return us > 0 ? flops / us / 1e6 : 0.0; }
  double pct_roofline() const { return us > 0 ? 100.0 * floor_us / us : 0.0; }
  double speedup_vs_vllm() const { return vllm_us > 0 && us > 0 ? vllm_us / us : 0.0; }
  double speedup_vs_cublas() const { return cublas_us > 0 && us > 0 ? cublas_us / us : 0.0; }
};

/// The CSV header line (with its newline) and one point's line: the columns gpu, git,
/// precision, shape, m, us, bytes, flops, tb_s, tflop_s, floor_us, pct_roofline, read_tbs,
/// matmul_tfs, vllm_us, speedup_vs_vllm, path, cublas_us, speedup_vs_cublas.
std::string bench_csv_header();
std::string bench_csv_line(const BenchRun& run, const BenchPoint& point);

/// The whole run as one JSON object: {"gpu", "git", "cuda", "precision", "path_option",
/// "split_k": {"gate_up", "down"}, "rooflines": {"read_tbs", "matmul_tfs", "matmul_kind"}, "peer_column",
/// "points": [{the CSV's per-point columns}]}. Strings are escaped; numbers are finite (a
/// non-finite value is written as null).
std::string bench_json(const BenchRun& run, const std::vector<BenchPoint>& points);

/// Writes `text` to `path`, replacing it; the error names `what` (e.g. "--json") and the path.
Status write_text_file(const std::string& path, const std::string& text, const char* what);

}  // namespace fusedmoe::tools
