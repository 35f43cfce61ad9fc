// fusedmoe public API: what this build is and which GPU it sees.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "fusedmoe/status.h"

namespace fusedmoe {

/// How this library was built.
struct BuildInfo {
  std::string version;          ///< fusedmoe version, "0.1.0"
  std::string git_revision;     ///< commit the build was configured at, or "unknown"
  bool cuda = false;            ///< built with CUDA (false: CPU-only build)
  std::string cuda_version;     ///< CUDA runtime the build targets, "13.0"
  std::string cutlass_version;  ///< CUTLASS headers compiled against, "4.2.0"
  std::string cuda_archs;       ///< device code targets, "sm_90a"
};
BuildInfo build_info();

/// One GPU as the CUDA runtime reports it.
struct DeviceInfo {
  int index = 0;
  std::string name;
  int cc_major = 0;
  int cc_minor = 0;
  int sm_count = 0;
  int64_t global_memory_bytes = 0;
  int64_t l2_bytes = 0;
  int64_t smem_per_block_optin = 0;  ///< bytes a block may use after raising its limit
  /// Whether a kernel of this build (compiled for sm_90a) launched and ran on the device.
  bool kernels_run = false;
  std::string kernels_note;  ///< why not, when kernels_run is false
};

/// Number of CUDA devices; 0 in a CPU-only build or on a machine without a GPU.
int device_count();
/// Properties of device `index`, with a launch of a probe kernel built for this build's arch.
Status device_info(int index, DeviceInfo* out);

}  // namespace fusedmoe
