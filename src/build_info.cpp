// Build description, filled from definitions the build system passes to this file and from
// the revision header it writes.
#include "fusedmoe/build_info.h"

#ifndef FUSEDMOE_VERSION
#error "FUSEDMOE_VERSION must be defined by the build"
#endif
#include "fusedmoe_revision.h"  // FUSEDMOE_GIT_REVISION, written at build time (cmake/revision.cmake)
#ifndef FUSEDMOE_CUTLASS_VERSION
#define FUSEDMOE_CUTLASS_VERSION "none"
#endif
#ifndef FUSEDMOE_CUDA_VERSION
#define FUSEDMOE_CUDA_VERSION "none"
#endif
#ifndef FUSEDMOE_CUDA_ARCHS
#define FUSEDMOE_CUDA_ARCHS "none"
#endif

namespace fusedmoe {

BuildInfo build_info() {
  BuildInfo b;
  b.version = FUSEDMOE_VERSION;
  b.git_revision = FUSEDMOE_GIT_REVISION;
#ifdef FUSEDMOE_WITH_CUDA
  b.cuda = true;
#endif
  b.cuda_version = FUSEDMOE_CUDA_VERSION;
  b.cutlass_version = FUSEDMOE_CUTLASS_VERSION;
  b.cuda_archs = FUSEDMOE_CUDA_ARCHS;
  return b;
}

}  // namespace fusedmoe
