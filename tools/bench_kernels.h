// Device helpers of `fusedmoe bench`: the read-bandwidth roofline kernel and an L2 flush.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

namespace fusedmoe::tools {

/// Reads `bytes` (a multiple of 16) with 16-byte loads and writes one word per block to
/// `sink` so the reads cannot be dropped. `sink` holds at least `blocks` floats.
cudaError_t launch_read_bandwidth(const void* src, size_t bytes, float* sink, int blocks, cudaStream_t stream);

}  // namespace fusedmoe::tools
