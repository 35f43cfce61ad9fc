// GPU machine only (label gpu): smxx_align_tokens (kernels/smxx_align_tokens.cu) on its own,
// against a host count of the same pairs. The layer tests see the alignment only through the
// outputs; here every output is compared: the expert table (counts, offsets, the active list
// and its length), each expert's segment of sorted_pairs as a set, row_of_pair, outputs
// poisoned first. Pair counts cover the one-warp kernel (up to kWarpAlignPairs), the one-CTA kernel's two block sizes and both sides of
// kSingleCtaPairs, the cooperative kernel with one chunk per CTA and with more chunks than
// SMs (its CTAs looping), at E = 8 to 1024, with out-of-range ids, an expert map with absent
// experts and every pair on one expert; and the cooperative kernel under a CUDA graph,
// replayed on new ids.
#include <gtest/gtest.h>

#include <cuda_runtime.h>

#include <algorithm>
#include <string>
#include <vector>

#include "fusedmoe_ref/random.h"
#include "gpu/gpu_test_util.h"
#include "kernels/launch.h"

namespace fusedmoe {
namespace {

using testing_util::DeviceBuffer;
using testing_util::to_host;

struct AlignCase {
  int64_t pairs = 0;
  int32_t experts = 8;        // local
  bool map = false;           // twice as many global experts, every other one absent (-1)
  const char* ids = "random";  // "random" (a tenth out of range), "one" (every pair on local expert 3)
  std::string describe() const {
    return "pairs " + std::to_string(pairs) + " E " + std::to_string(experts) + (map ? " map" : "") + " ids " + ids;
  }
};

struct AlignData {
  int32_t global = 0;
  std::vector<int32_t> ids, map;
};

AlignData make_data(const AlignCase& c, uint64_t seed) {
  AlignData d;
  d.global = c.map ? 2 * c.experts : c.experts;
  if (c.map) {
    d.map.assign(static_cast<size_t>(d.global), -1);
    for (int32_t g = 0; g < d.global; g += 2) d.map[g] = g / 2;
  }
  ref::Rng rng(seed);
  d.ids.resize(static_cast<size_t>(c.pairs));
  for (auto& id : d.ids) {
    if (std::string(c.ids) == "one") {
      id = c.map ? 6 : 3;
      continue;
    }
    const uint64_t r = rng.next();
    // A tenth out of range (negative or >= global): skipped like absent experts.
    id = r % 10 == 0 ? (r % 20 == 0 ? -1 - static_cast<int32_t>(r % 7) : d.global + static_cast<int32_t>(r % 5))
                     : static_cast<int32_t>((r >> 8) % static_cast<uint64_t>(d.global));
  }
  return d;
}

int32_t local_of(const AlignData& d, int32_t id, int32_t experts) {
  if (id < 0 || id >= d.global) return -1;
  const int32_t e = d.map.empty() ? id : d.map[id];
  return e >= 0 && e < experts ? e : -1;
}

// Device buffers of one alignment, poisoned.
struct AlignBuffers {
  DeviceBuffer<int32_t> ids, map, counts, sorted, active, block, row_of_pair;
  DeviceBuffer<int64_t> offsets;
  kernels::AlignParams p;
  AlignBuffers(const AlignCase& c, const AlignData& d)
      : ids(c.pairs), map(std::max<size_t>(d.map.size(), 1)), counts(c.experts), sorted(c.pairs),
        active(c.experts + 1), block(std::max<int64_t>(kernels::align_block_counts_size(c.pairs, c.experts), 1)),
        row_of_pair(c.pairs), offsets(c.experts + 1) {
    p.topk_ids = ids.p;
    p.expert_map = d.map.empty() ? nullptr : map.p;
    p.pairs = c.pairs;
    p.global_experts = d.global;
    p.num_experts = c.experts;
    p.expert_counts = counts.p;
    p.expert_offsets = offsets.p;
    p.sorted_pairs = sorted.p;
    p.active_experts = active.p;
    p.block_counts = kernels::align_block_counts_size(c.pairs, c.experts) > 0 ? block.p : nullptr;
    p.row_of_pair = row_of_pair.p;
  }
  void upload(const AlignCase& c, const AlignData& d) {
    CUDA_OK(cudaMemcpy(ids.p, d.ids.data(), c.pairs * sizeof(int32_t), cudaMemcpyHostToDevice));
    if (!d.map.empty()) CUDA_OK(cudaMemcpy(map.p, d.map.data(), d.map.size() * sizeof(int32_t), cudaMemcpyHostToDevice));
    CUDA_OK(cudaMemset(counts.p, 0xAB, c.experts * sizeof(int32_t)));
    CUDA_OK(cudaMemset(offsets.p, 0xAB, (c.experts + 1) * sizeof(int64_t)));
    CUDA_OK(cudaMemset(sorted.p, 0xAB, std::max<int64_t>(c.pairs, 1) * sizeof(int32_t)));
    CUDA_OK(cudaMemset(active.p, 0xAB, (c.experts + 1) * sizeof(int32_t)));
    CUDA_OK(cudaMemset(row_of_pair.p, 0xAB, std::max<int64_t>(c.pairs, 1) * sizeof(int32_t)));
  }
};

void check_alignment(const AlignCase& c, const AlignData& d, const AlignBuffers& b) {
  SCOPED_TRACE(c.describe());
  std::vector<std::vector<int32_t>> want(static_cast<size_t>(c.experts));
  for (int64_t i = 0; i < c.pairs; ++i) {
    const int32_t e = local_of(d, d.ids[i], c.experts);
    if (e >= 0) want[e].push_back(static_cast<int32_t>(i));
  }
  const auto counts = to_host(b.counts.p, c.experts);
  const auto offsets = to_host(b.offsets.p, c.experts + 1);
  const auto active = to_host(b.active.p, c.experts + 1);
  const auto sorted = to_host(b.sorted.p, c.pairs);
  const auto row_of_pair = to_host(b.row_of_pair.p, c.pairs);
  int64_t offset = 0;
  int32_t n_active = 0;
  for (int32_t e = 0; e < c.experts; ++e) {
    const int64_t n = static_cast<int64_t>(want[e].size());
    ASSERT_EQ(counts[e], n) << "expert_counts[" << e << "]";
    ASSERT_EQ(offsets[e], offset) << "expert_offsets[" << e << "]";
    if (n > 0) {
      ASSERT_EQ(active[n_active], e) << "active_experts[" << n_active << "]";
      ++n_active;
    }
    std::vector<int32_t> got(sorted.begin() + offset, sorted.begin() + offset + n);
    std::sort(got.begin(), got.end());
    ASSERT_EQ(got, want[e]) << "sorted_pairs of expert " << e;
    offset += n;
  }
  ASSERT_EQ(offsets[c.experts], offset) << "expert_offsets[E]";
  ASSERT_EQ(active[c.experts], n_active) << "active_experts[E]";
  for (int64_t i = 0; i < c.pairs; ++i) {
    const int32_t row = row_of_pair[i];
    if (local_of(d, d.ids[i], c.experts) < 0) {
      ASSERT_EQ(row, -1) << "row_of_pair[" << i << "] of a skipped pair";
    } else {
      ASSERT_TRUE(row >= 0 && row < offset && sorted[row] == i) << "row_of_pair[" << i << "] = " << row;
    }
  }
}

TEST(AlignTokens, MatchesHostCountOnBothKernels) {
  REQUIRE_GPU();
  int sms = 0;
  CUDA_OK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  const int64_t looping = int64_t{sms} * kernels::kChunk * 3 + 77;  // three chunks per CTA at E <= 256
  std::vector<AlignCase> cases;
  for (int64_t pairs : {int64_t{1}, int64_t{2}, int64_t{31}, kernels::kWarpAlignPairs, kernels::kWarpAlignPairs + 1, int64_t{255}, int64_t{2048}, int64_t{2049}, kernels::kSingleCtaPairs,
                        kernels::kSingleCtaPairs + 1, int64_t{8192}, int64_t{65536} + 3, looping}) {
    for (int32_t experts : {8, 128, 256, 257, 1024}) {
      cases.push_back({pairs, experts, false, "random"});
      if (experts == 128 || experts == 1024) cases.push_back({pairs, experts, true, "random"});
    }
  }
  cases.push_back({8192, 256, false, "one"});
  cases.push_back({kernels::kWarpAlignPairs, 256, false, "one"});
  cases.push_back({kernels::kWarpAlignPairs, 64, true, "one"});
  cases.push_back({looping, 64, true, "one"});
  cases.push_back({int64_t{4} * 1024 * sms * 2 + 5, 384, false, "random"});  // 1024 threads, two chunks per CTA
  uint64_t seed = 1;
  for (const AlignCase& c : cases) {
    const AlignData d = make_data(c, seed++);
    AlignBuffers b(c, d);
    b.upload(c, d);
    CUDA_OK(kernels::launch_align_tokens(b.p, nullptr));
    CUDA_OK(cudaDeviceSynchronize());
    check_alignment(c, d, b);
    if (HasFatalFailure()) return;
  }
}

// The rows of skipped pairs zeroed (AlignParams::skipped_rows, a top-1 layer's output that its
// down GEMV writes), on the one-warp and the one-CTA kernels; every other row keeps its poison.
TEST(AlignTokens, ZeroesTheRowsOfSkippedPairs) {
  REQUIRE_GPU();
  constexpr int64_t kRowBytes = 2880 * 2;
  for (int64_t pairs : {int64_t{7}, kernels::kWarpAlignPairs, int64_t{300}}) {
    const AlignCase c{pairs, 16, true, "random"};
    const AlignData d = make_data(c, 40 + static_cast<uint64_t>(pairs));
    AlignBuffers b(c, d);
    b.upload(c, d);
    DeviceBuffer<uint8_t> rows(pairs * kRowBytes);
    CUDA_OK(cudaMemset(rows.p, 0xAB, pairs * kRowBytes));
    b.p.skipped_rows = rows.p;
    b.p.skipped_row_bytes = kRowBytes;
    CUDA_OK(kernels::launch_align_tokens(b.p, nullptr));
    CUDA_OK(cudaDeviceSynchronize());
    check_alignment(c, d, b);
    if (HasFatalFailure()) return;
    const auto host = to_host(rows.p, pairs * kRowBytes);
    int64_t skipped = 0;
    for (int64_t i = 0; i < pairs; ++i) {
      const bool skip = local_of(d, d.ids[i], c.experts) < 0;
      skipped += skip ? 1 : 0;
      const uint8_t want = skip ? 0 : 0xAB;
      for (int64_t j = 0; j < kRowBytes; ++j) {
        ASSERT_EQ(host[i * kRowBytes + j], want) << c.describe() << " row " << i << " byte " << j;
      }
    }
    EXPECT_GT(skipped, 0) << c.describe() << ": no skipped pair to check";
  }
}

// The cooperative kernel captured once, replayed on new ids in place (as a layer's graph is).
TEST(AlignTokens, CooperativeKernelReplaysInAGraph) {
  REQUIRE_GPU();
  const AlignCase c{50000, 128, true, "random"};
  AlignData d = make_data(c, 7);
  AlignBuffers b(c, d);
  b.upload(c, d);
  cudaStream_t stream = nullptr;
  CUDA_OK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  CUDA_OK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  const cudaError_t launched = kernels::launch_align_tokens(b.p, stream);
  CUDA_OK(cudaStreamEndCapture(stream, &graph));
  CUDA_OK(launched);
  CUDA_OK(cudaGraphInstantiate(&exec, graph, 0));
  for (uint64_t replay = 0; replay < 3; ++replay) {
    d = make_data(c, 100 + replay);
    b.upload(c, d);
    CUDA_OK(cudaGraphLaunch(exec, stream));
    CUDA_OK(cudaStreamSynchronize(stream));
    check_alignment(c, d, b);
    if (HasFatalFailure()) break;
  }
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  cudaStreamDestroy(stream);
}

}  // namespace
}  // namespace fusedmoe
