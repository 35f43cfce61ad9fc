// `fusedmoe bench` (CUDA builds).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "fusedmoe/moe.h"
#include "shapes.h"
#include "split_k.h"

namespace fusedmoe::tools {

struct BenchOptions {
  std::vector<ShapeSpec> shapes;
  std::vector<int64_t> batch_sizes;
  std::string precision = "bf16";
  std::string csv_path;            ///< empty: no CSV
  std::string json_path;           ///< empty: no JSON (bench_report.h)
  std::string peers_file;          ///< bench/peers_h200.csv
  /// Timed replays per point: about this long, 10..200 of them. Short on purpose: sustained
  /// runs at large M hit the H200's software power cap (Qwen3 M = 4096: 726 us over ~40
  /// replays, 783 us over 200), while the rooflines are measured over 10-20 runs.
  double seconds_per_point = 0.05;
  KernelPath path = KernelPath::kAuto;  ///< dense layers: the planner's path or a forced one
  SplitK split_k;                       ///< the small-M GEMVs' split-K: 0 the planner's, else forced
  /// Dense weights read in place in the checkpoint's order (as the per-call fused_experts op
  /// passes them) instead of prepared with w13's gate and up rows interleaved.
  bool dense_in_place = false;
  /// `--stage routing`: the model's router and align only (TARGETS.md's routing + align row),
  /// not the layer.
  bool routing_stage = false;
};

/// Prints a table (and writes the CSV and JSON); 0 when every point ran, 1 otherwise, 2 without a GPU.
int bench_main(const BenchOptions& options);

}  // namespace fusedmoe::tools
