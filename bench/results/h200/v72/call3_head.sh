#!/usr/bin/env bash
# v72 call 3: main72 = f86a10a (the router's sorted candidates and align as its programmatic
# dependent: every change landed this session). 1. its whole GPU suite (call 1 ran it on rp,
# whose router still swapped under branches); 2. the routing stage; 3. on an H200 only, its
# bench of every precision (the issues' figures; call 1 benched rp, the same layer, on an H100).
#   carry: ["build/carry/main72.tgz"]
# Run as `bash bench/results/h200/v72/call3_head.sh` (W unset: the work folder is $OUT/w3).
source scripts/carried_env.sh
carried_setup "${W:-w3}" main72 || exit 1
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv > "$W/info.txt" 2>&1
gtest_part "$TESTS_main72" all 380 '*'
timeout 90 "$BIN_main72" bench --stage routing --m 1,4,16,64,256,1024,4096 > "$W/routing_main72_r1.txt" 2>&1
echo "routing main72 rc=$? $(el) s" >> "$W/info.txt"
if nvidia-smi -L | grep -q H200; then
  bench_each "$BIN_main72" bf16 fp8_tensor fp8_channel fp8_block w4a16 w4a16_awq w8a16
fi
carried_report
python3 scripts/routing_rounds.py "$W"
carried_pack
