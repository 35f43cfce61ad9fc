#!/usr/bin/env bash
# v72 call 2: rs = rp (call 1) with the router's sorting network and pops as selects, not
# branches (call 1's SASS: ~350 of rk's 1355 instructions were the network's branches), and the
# groups' top-2 by min / max. 1. rs's routing, align and routed-layer cases; 2. the routing
# stage, main71 / rp / rs / rs / rp / main71; 3. ncu with per-SASS counts of rs's router
# (DeepSeek-V3 M = 1).
#   carry: ["build/carry/main71.tgz", "build/carry/rp.tgz", "build/carry/rs.tgz"]
# Run as `bash bench/results/h200/v72/call2_router_select.sh` (W unset: the work folder is $OUT/w2).
source scripts/carried_env.sh
carried_setup "${W:-w2}" main71 rp rs || exit 1
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv > "$W/info.txt" 2>&1
gtest_part "$TESTS_rs" rs 200 'RoutingTopk.*:*RoutingFromLogitsOnTheGpu*:AlignTokens.*'
r=0
for b in main71 rp rs rs rp main71; do
  r=$((r + 1))
  timeout 90 "$root/build/carry/$b/fusedmoe" bench --stage routing --m 1,4,16,64,256,1024,4096 > "$W/routing_${b}_r$r.txt" 2>&1
  echo "routing $b r$r rc=$? $(el) s" >> "$W/info.txt"
done
ncu_sass "$BIN_rs" route_rs_ds1 routing_topk bench --stage routing --shape deepseek_v3_tp8 --m 1 --seconds 0.001
carried_report
python3 scripts/routing_rounds.py "$W"
carried_pack
