#!/usr/bin/env bash
# v75 call 3: the whole GPU suite of BUILD (split once call 4 passed and it landed; main73
# otherwise), the FP8 and split-K cases first (the part v73-v75 touched: the device time may
# cut the rest), then, on an H200 only, its bench of every precision (the issues' figures;
# v67's call 1 is the last H200 baseline).
#   carry: ["build/carry/BUILD.tgz"]
# Run as `BUILD=split bash bench/results/h200/v75/call3_suite.sh` (W unset: the work folder is $OUT/w3).
source scripts/carried_env.sh
b="${BUILD:-split}"
carried_setup "${W:-w3}" "$b" || exit 1
bin="$root/build/carry/$b/fusedmoe" tests="$root/build/carry/$b/fusedmoe_gpu_tests"
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv > "$W/info.txt" 2>&1
gtest_part "$tests" fp8 200 '*Fp8*:SmallMSplitK.*'
gtest_part "$tests" rest 300 '-*Fp8*:SmallMSplitK.*'
if nvidia-smi -L | grep -q H200; then
  bench_each "$bin" bf16 fp8_tensor fp8_channel fp8_block w4a16 w4a16_awq w8a16
fi
carried_report
carried_pack
