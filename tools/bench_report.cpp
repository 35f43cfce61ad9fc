#include "bench_report.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>

namespace fusedmoe::tools {
namespace {

// printf into a std::string.
template <typename... Args>
std::string format(const char* fmt, Args... args) {
  const int n = std::snprintf(nullptr, 0, fmt, args...);
  std::string s(static_cast<size_t>(n > 0 ? n : 0), '\0');
  if (n > 0) std::snprintf(&s[0], s.size() + 1, fmt, args...);
  return s;
}

// RFC 4180: a field with a comma, quote or line break is quoted, its quotes doubled.
std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\r\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      default:
        if (c < 0x20) {
          out += format("\\u%04x", static_cast<unsigned>(c));
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  return out + "\"";
}

// A JSON number with `fmt`'s digits; null when not finite (JSON has no NaN or infinity).
std::string json_number(const char* fmt, double v) { return std::isfinite(v) ? format(fmt, v) : "null"; }

// One CSV column: its name, its text (strings unquoted), and whether the JSON writes it per
// point (the run's columns go once, at the top). One table serves the header, the lines and
// the JSON's points.
struct Column {
  const char* name;
  std::string text;
  bool is_string;
  bool per_point;
};

std::vector<Column> columns(const BenchRun& r, const BenchPoint& p) {
  return {
      {"gpu", r.gpu, true, false},
      {"git", r.git, true, false},
      {"precision", r.precision, true, false},
      {"shape", p.shape, true, true},
      {"m", format("%lld", static_cast<long long>(p.m)), false, true},
      {"us", json_number("%.2f", p.us), false, true},
      {"bytes", json_number("%.0f", p.bytes), false, true},
      {"flops", json_number("%.0f", p.flops), false, true},
      {"tb_s", json_number("%.3f", p.tb_s()), false, true},
      {"tflop_s", json_number("%.2f", p.tflop_s()), false, true},
      {"floor_us", json_number("%.2f", p.floor_us), false, true},
      {"pct_roofline", json_number("%.1f", p.pct_roofline()), false, true},
      {"read_tbs", json_number("%.3f", r.read_tbs), false, false},
      {"matmul_tfs", json_number("%.1f", r.matmul_tfs), false, false},
      {"vllm_us", json_number("%.1f", p.vllm_us), false, true},
      {"speedup_vs_vllm", json_number("%.3f", p.speedup_vs_vllm()), false, true},
      {"path", p.path, true, true},
      {"cublas_us", json_number("%.2f", p.cublas_us), false, true},
      {"speedup_vs_cublas", json_number("%.3f", p.speedup_vs_cublas()), false, true},
  };
}

}  // namespace

std::string bench_csv_header() {
  const std::vector<Column> c = columns(BenchRun(), BenchPoint());
  std::string header;
  for (size_t i = 0; i < c.size(); ++i) header += (i ? "," : "") + std::string(c[i].name);
  return header + "\n";
}

std::string bench_csv_line(const BenchRun& run, const BenchPoint& p) {
  const std::vector<Column> c = columns(run, p);
  std::string line;
  for (size_t i = 0; i < c.size(); ++i) line += (i ? "," : "") + csv_field(c[i].text);
  return line + "\n";
}

std::string bench_json(const BenchRun& run, const std::vector<BenchPoint>& points) {
  std::string s = "{\n";
  s += "  \"gpu\": " + json_string(run.gpu) + ",\n";
  s += "  \"git\": " + json_string(run.git) + ",\n";
  s += "  \"cuda\": " + json_string(run.cuda) + ",\n";
  s += "  \"precision\": " + json_string(run.precision) + ",\n";
  s += "  \"path_option\": " + json_string(run.path_option) + ",\n";
  s += std::string("  \"dense_in_place\": ") + (run.dense_in_place ? "true" : "false") + ",\n";
  s += "  \"split_k\": {\"gate_up\": " + format("%d", static_cast<int>(run.split_k_gate_up)) +
       ", \"down\": " + format("%d", static_cast<int>(run.split_k_down)) + "},\n";
  s += "  \"tiles_per_warp_down\": " + format("%d", static_cast<int>(run.tiles_per_warp_down)) + ",\n";
  s += "  \"rooflines\": {\"read_tbs\": " + json_number("%.3f", run.read_tbs) +
       ", \"matmul_tfs\": " + json_number("%.1f", run.matmul_tfs) +
       ", \"matmul_kind\": " + json_string(run.matmul_kind) + "},\n";
  s += "  \"peer_column\": " + json_string(run.peer_column) + ",\n";
  s += "  \"points\": [";
  for (size_t i = 0; i < points.size(); ++i) {
    s += i ? ",\n    {" : "\n    {";
    bool first = true;
    for (const Column& c : columns(run, points[i])) {
      if (!c.per_point) continue;
      s += (first ? "" : ", ") + json_string(c.name) + ": " + (c.is_string ? json_string(c.text) : c.text);
      first = false;
    }
    s += "}";
  }
  s += points.empty() ? "]\n}\n" : "\n  ]\n}\n";
  return s;
}

Status write_text_file(const std::string& path, const std::string& text, const char* what) {
  std::FILE* f = std::fopen(path.c_str(), "w");
  if (f == nullptr) {
    return Status(StatusCode::kInvalidArgument,
                  std::string(what) + ": cannot open '" + path + "' for writing: " + std::strerror(errno));
  }
  const bool written = std::fwrite(text.data(), 1, text.size(), f) == text.size();
  const bool closed = std::fclose(f) == 0;
  if (!written || !closed) {
    return Status(StatusCode::kInternal, std::string(what) + ": writing '" + path + "' failed");
  }
  return Status();
}

}  // namespace fusedmoe::tools
