#!/usr/bin/env bash
# v71 call 2: the router rewritten (rt = this session's tree: the groups' top-2 by lanes, the
# eligible groups by rank, each pick one redux.sync; also short rows and the routing stage's
# floor line) against main (7ac9309). 1. rt's routing and FP8 quantizer cases; 2. the routing
# stage, main / rt / rt / main; 3. ncu with per-SASS samples of align's one-CTA kernel (Qwen3 M =
# 256, 2048 pairs: 9.3 us in call 1's graph) and of both builds' routers (DeepSeek-V3 M = 1).
#   carry: ["build/carry/main.tgz", "build/carry/rt.tgz"]
# Run as `bash bench/results/h200/v71/call2_router.sh` (W unset: the work folder is $OUT/w2).
source scripts/carried_env.sh
carried_setup "${W:-w2}" main rt || exit 1
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv > "$W/info.txt" 2>&1
gtest_part "$TESTS_rt" rt 200 'RoutingTopk.*:*RoutingFromLogitsOnTheGpu*:Fp8Quantize.*'
r=0
for b in main rt rt main; do
  r=$((r + 1))
  timeout 90 "$root/build/carry/$b/fusedmoe" bench --stage routing --m 1,4,16,64,256,1024,4096 > "$W/routing_${b}_r$r.txt" 2>&1
  echo "routing $b r$r rc=$? $(el) s" >> "$W/info.txt"
done
ncu_sass "$BIN_main" align_qwen3_256 align_tokens bench --stage routing --shape qwen3_30b_a3b_tp1 --m 256 --seconds 0.001
ncu_sass "$BIN_main" route_main_ds1 routing_topk bench --stage routing --shape deepseek_v3_tp8 --m 1 --seconds 0.001
ncu_sass "$BIN_rt" route_rt_ds1 routing_topk bench --stage routing --shape deepseek_v3_tp8 --m 1 --seconds 0.001
carried_report
for f in "$W"/routing_*_r*.txt; do echo "== $f"; grep -vE "^fusedmoe" "$f" | awk '{print $1, $2, $5, $6, $7}' | column -t; done 2>/dev/null | head -150
carried_pack
