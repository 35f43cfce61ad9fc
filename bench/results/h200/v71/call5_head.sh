#!/usr/bin/env bash
# v71 call 5: main71 = 089a825 (every landed change of the session). The routing stage; on an
# H200 only, the bench of every precision (the issues' figures; the last H200 run was v67's).
#   carry: ["build/carry/main71.tgz"]
# Run as `bash bench/results/h200/v71/call5_head.sh` (W unset: the work folder is $OUT/w5).
source scripts/carried_env.sh
carried_setup "${W:-w5}" main71 || exit 1
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv > "$W/info.txt" 2>&1
timeout 90 "$BIN_main71" bench --stage routing --m 1,4,16,64,256,1024,4096 > "$W/routing_main71.txt" 2>&1
echo "routing main71 rc=$? $(el) s" >> "$W/info.txt"
if nvidia-smi -L | grep -q H200; then
  bench_each "$BIN_main71" bf16 fp8_tensor fp8_channel fp8_block w4a16 w4a16_awq w8a16
fi
carried_report
grep -vE "^fusedmoe" "$W/routing_main71.txt" | awk '{printf "%s:%s %s %s %s | ", substr($1,1,6), $2, $5, $6, $7}'; echo
carried_pack
