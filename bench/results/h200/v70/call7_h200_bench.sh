#!/usr/bin/env bash
# v70 call 7: on an H200 only (else nothing), main's bench of every precision for the
# issues' figures (every call before this one came on an H100), and (builds with `--stage`, v70 on)
# bench's routing stage, the router and align against TARGETS.md's 5 us.
#   carry: ["build/carry/main.tgz"]
# Run as `bash bench/results/h200/v70/call7_h200_bench.sh` (W unset: the work folder is $OUT/w7).
source scripts/carried_env.sh
carried_setup "${W:-w7}" main || exit 1
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv > "$W/info.txt" 2>&1
if nvidia-smi -L | grep -q H200; then
  bench_each "$BIN_main" bf16 fp8_tensor fp8_channel fp8_block w4a16 w4a16_awq w8a16
  timeout 90 "$BIN_main" bench --stage routing --m 1,4,16,64,256,1024,4096 > "$W/bench_routing.txt" 2>&1
  echo "routing stage rc=$? $(el) s" >> "$W/info.txt"
fi
carried_report
carried_pack
