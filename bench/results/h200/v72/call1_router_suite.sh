#!/usr/bin/env bash
# v72 call 1: rk = main (d47aba8) with the router's candidates sorted once per lane (a pick is
# the warp max, the ballot and a shift) and the fast sigmoid; rp = rk with the router letting
# its successor launch at once and align after it launched as a programmatic dependent that
# waits for the ids (AlignParams::ids_from_predecessor). 1. the routing stage, main71 / rk / rp
# / rp / rk / main71; 2. ncu with per-SASS counts of rk's router (DeepSeek-V3 M = 1); 3. rp's
# whole GPU suite (HEAD's exact fp8.cu had not run it); 4. rp's bench of every precision (the
# layer's kernels are main's).
#   carry: ["build/carry/main71.tgz", "build/carry/rk.tgz", "build/carry/rp.tgz"]
# Run as `bash bench/results/h200/v72/call1_router_suite.sh` (W unset: the work folder is $OUT/w1).
source scripts/carried_env.sh
carried_setup "${W:-w1}" main71 rk rp || exit 1
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv > "$W/info.txt" 2>&1
r=0
for b in main71 rk rp rp rk main71; do
  r=$((r + 1))
  timeout 90 "$root/build/carry/$b/fusedmoe" bench --stage routing --m 1,4,16,64,256,1024,4096 > "$W/routing_${b}_r$r.txt" 2>&1
  echo "routing $b r$r rc=$? $(el) s" >> "$W/info.txt"
done
ncu_sass "$BIN_rk" route_rk_ds1 routing_topk bench --stage routing --shape deepseek_v3_tp8 --m 1 --seconds 0.001
gtest_part "$TESTS_rp" all 380 '*'
bench_each "$BIN_rp" bf16 fp8_tensor fp8_channel fp8_block w4a16 w4a16_awq w8a16
carried_report
python3 scripts/routing_rounds.py "$W"
carried_pack
