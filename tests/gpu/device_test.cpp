// GPU machine only (label gpu): the device query and the sm_90a probe kernel. Skips, saying
// why, where no GPU is present.
#include <gtest/gtest.h>

#include "fusedmoe/build_info.h"

namespace fusedmoe {
namespace {

TEST(Sm90Device, ProbeKernelRunsOnHopper) {
  if (device_count() == 0) GTEST_SKIP() << "no CUDA device on this machine";
  DeviceInfo d;
  const Status st = device_info(0, &d);
  ASSERT_TRUE(st.ok()) << st.message();
  if (d.cc_major != 9) GTEST_SKIP() << d.name << " is sm_" << d.cc_major << d.cc_minor << ", this build targets sm_90a";
  EXPECT_TRUE(d.kernels_run) << d.kernels_note;
  EXPECT_EQ(d.kernels_note, "probe kernel ran as __CUDA_ARCH__ 900");
  EXPECT_GE(d.sm_count, 100);
  EXPECT_GE(d.smem_per_block_optin, 227 * 1024);
}

TEST(Sm90Device, BadIndexIsNamed) {
  DeviceInfo d;
  const Status st = device_info(device_count(), &d);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(st.message().rfind("index: expected 0..", 0), 0u) << st.message();
}

}  // namespace
}  // namespace fusedmoe
