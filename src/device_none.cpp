// Device queries of a CPU-only build: there is no device to ask.
#include "check.h"
#include "fusedmoe/build_info.h"

namespace fusedmoe {

int device_count() { return 0; }

Status device_info(int index, DeviceInfo* out) {
  (void)index;
  (void)out;
  return detail::not_implemented("device_info: this build has no CUDA support (CPU-only preset)");
}

}  // namespace fusedmoe
