// fusedmoe bench's CSV and JSON files (tools/bench_report.h): columns, escaping, and that the
// JSON parses back with the tools' own reader.
#include "bench_report.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "json.h"

namespace fusedmoe::tools {
namespace {

BenchRun sample_run() {
  BenchRun run;
  run.gpu = "NVIDIA H200";
  run.git = "5ccd473abcde";
  run.cuda = "13.0";
  run.precision = "fp8_block";
  run.read_tbs = 4.41;
  run.matmul_tfs = 1520.0;
  run.matmul_kind = "e4m3 (fast accumulation)";
  run.peer_column = "vllm_fp8_us";
  return run;
}

BenchPoint sample_point() {
  BenchPoint p;
  p.shape = "qwen3_30b_a3b_tp1";
  p.m = 4;
  p.path = "small_m";
  p.us = 50.0;
  p.bytes = 100e6;   // 2 TB/s at 50 us
  p.flops = 400e6;   // 8 TFLOP/s
  p.floor_us = 25.0;  // 50%
  p.vllm_us = 75.0;   // 1.5x
  return p;
}

std::vector<std::string> split(const std::string& line, char sep) {
  std::vector<std::string> cells;
  std::stringstream ss(line);
  for (std::string cell; std::getline(ss, cell, sep);) cells.push_back(cell);
  return cells;
}

TEST(BenchReport, CsvLineHasTheHeadersColumns) {
  std::string header = bench_csv_header();
  ASSERT_EQ(header.back(), '\n');
  header.pop_back();
  std::string line = bench_csv_line(sample_run(), sample_point());
  ASSERT_EQ(line.back(), '\n');
  line.pop_back();
  const std::vector<std::string> names = split(header, ','), cells = split(line, ',');
  ASSERT_EQ(names.size(), cells.size()) << line;
  const std::pair<const char*, const char*> expected[] = {
      {"gpu", "NVIDIA H200"}, {"precision", "fp8_block"}, {"shape", "qwen3_30b_a3b_tp1"}, {"m", "4"},
      {"us", "50.00"}, {"tb_s", "2.000"}, {"tflop_s", "8.00"}, {"pct_roofline", "50.0"},
      {"read_tbs", "4.410"}, {"matmul_tfs", "1520.0"}, {"vllm_us", "75.0"}, {"speedup_vs_vllm", "1.500"},
      {"path", "small_m"}, {"cublas_us", "0.00"}, {"speedup_vs_cublas", "0.000"}};  // cuBLAS not run: 0
  for (const auto& [name, value] : expected) {
    const auto it = std::find(names.begin(), names.end(), name);
    ASSERT_NE(it, names.end()) << "no column " << name;
    EXPECT_EQ(cells[it - names.begin()], value) << name;
  }
}

TEST(BenchReport, CsvQuotesFieldsWithCommasAndQuotes) {
  BenchRun run = sample_run();
  run.gpu = "GPU \"x\", rev 2";
  const std::string line = bench_csv_line(run, sample_point());
  EXPECT_EQ(line.rfind("\"GPU \"\"x\"\", rev 2\",5ccd473abcde,fp8_block,", 0), 0u) << line;
}

TEST(BenchReport, JsonParsesBackWithTheRunAndEveryPoint) {
  BenchRun run = sample_run();
  run.gpu = "H200 \"SXM\"\\\n";  // escapes survive
  run.tiles_per_warp_down = 4;
  BenchPoint second = sample_point();
  second.m = 16;
  second.path = "grouped_swapped";
  second.cublas_us = 100.0;
  second.vllm_us = std::numeric_limits<double>::quiet_NaN();  // not finite: null
  const std::string text = bench_json(run, {sample_point(), second});
  Json j;
  const Status st = parse_json(text, &j);
  ASSERT_TRUE(st.ok()) << st.message() << "\n" << text;
  ASSERT_EQ(j.type, Json::Type::kObject);
  ASSERT_NE(j.get("gpu"), nullptr);
  EXPECT_EQ(j.get("gpu")->string, run.gpu);
  EXPECT_EQ(j.get("precision")->string, "fp8_block");
  EXPECT_EQ(j.get("split_k")->get("gate_up")->number, 0.0);
  EXPECT_EQ(j.get("split_k")->get("down")->number, 0.0);
  EXPECT_EQ(j.get("tiles_per_warp_down")->number, 4.0);
  EXPECT_EQ(j.get("path_option")->string, "auto");
  const Json* roof = j.get("rooflines");
  ASSERT_NE(roof, nullptr);
  EXPECT_DOUBLE_EQ(roof->get("read_tbs")->number, 4.41);
  EXPECT_EQ(roof->get("matmul_kind")->string, "e4m3 (fast accumulation)");
  const Json* points = j.get("points");
  ASSERT_NE(points, nullptr);
  ASSERT_EQ(points->array.size(), 2u);
  const Json& p0 = points->array[0];
  EXPECT_EQ(p0.get("shape")->string, "qwen3_30b_a3b_tp1");
  EXPECT_EQ(p0.get("m")->number, 4.0);
  EXPECT_DOUBLE_EQ(p0.get("us")->number, 50.0);
  EXPECT_DOUBLE_EQ(p0.get("speedup_vs_vllm")->number, 1.5);
  const Json& p1 = points->array[1];
  EXPECT_EQ(p1.get("path")->string, "grouped_swapped");
  EXPECT_DOUBLE_EQ(p1.get("speedup_vs_cublas")->number, 2.0);  // cuBLAS 100 us against our 50
  EXPECT_EQ(p1.get("vllm_us")->type, Json::Type::kNull);
  // The per-point members are the CSV's per-point columns, in its order.
  std::vector<std::string> expected;
  for (const std::string& name : split(bench_csv_header().substr(0, bench_csv_header().size() - 1), ',')) {
    if (name != "gpu" && name != "git" && name != "precision" && name != "read_tbs" && name != "matmul_tfs") {
      expected.push_back(name);
    }
  }
  std::vector<std::string> got;
  for (const auto& member : p0.object) got.push_back(member.first);
  EXPECT_EQ(got, expected);
}

TEST(BenchReport, JsonOfARunWithoutPointsParses) {
  Json j;
  ASSERT_TRUE(parse_json(bench_json(sample_run(), {}), &j).ok());
  EXPECT_TRUE(j.get("points")->array.empty());
}

TEST(BenchReport, WriteFailsNamingTheOptionAndPath) {
  const Status st = write_text_file("/nonexistent_dir_fusedmoe/x.json", "{}", "--json");
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(st.message().rfind("--json: cannot open '/nonexistent_dir_fusedmoe/x.json' for writing", 0), 0u)
      << st.message();
  const std::string path = ::testing::TempDir() + "fusedmoe_bench_report_test.json";
  ASSERT_TRUE(write_text_file(path, "{\"a\": 1}\n", "--json").ok());
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  EXPECT_EQ(ss.str(), "{\"a\": 1}\n");
  std::remove(path.c_str());
}

}  // namespace
}  // namespace fusedmoe::tools
