#!/usr/bin/env bash
# v61 call 2: lds with lean loops (l2t = lds.patch + lean2.patch + the trace stamps): each
# thread's copies stepped along without divisions, the gate-up units in order with warp w on
# blocks w, w + 16, ..., the down items stepped likewise, two MMA chains per block. Its cases,
# its phase stamps, main / lds / l2t at M = 1 (two rounds), ncu per-SASS samples at Qwen3.
#   carry: ["build/carry/main.tgz", "build/carry/lds.tgz", "build/carry/l2t.tgz"]
source scripts/carried_env.sh
carried_setup w2 main lds l2t || exit 1
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv > "$W/info.txt" 2>&1
for s in qwen3_30b_a3b_tp1 deepseek_v3_tp8 llama4_scout_tp8; do
  FUSEDMOE_OTL_TRACE=1 timeout 60 "$BIN_l2t" check --precision w4a16 --shape $s --m 1 > "$W/trace_$s.txt" 2>&1
  echo "trace $s rc=$? $(el) s" >> "$W/info.txt"
done
gtest_part "$TESTS_l2t" first 90 'OneTokenInt4Layer.*:OneTokenWithoutAlign.*'
for r in 1 2; do
  for b in main lds l2t; do
    timeout 40 "$root/build/carry/$b/fusedmoe" bench --precision w4a16 --m 1 > "$W/bench_m1_${b}_r$r.txt" 2>&1
  done
done
echo "bench $(el) s" >> "$W/info.txt"
ncu_sass "$BIN_l2t" l2t_q3 one_token bench --shape qwen3_30b_a3b_tp1 --m 1 --precision w4a16 --seconds 0.001
cat "$W/info.txt"
grep -E "^\[  FAILED|^\[  PASSED" "$W/ctest_first.txt"
for s in qwen3_30b_a3b_tp1 deepseek_v3_tp8 llama4_scout_tp8; do echo "== $s"; grep -E "otl_trace|result" "$W/trace_$s.txt"; done
for r in 1 2; do for b in main lds l2t; do echo "== $b r$r"; grep -E "^(qwen|deepseek|llama|mixtral)" "$W/bench_m1_${b}_r$r.txt" | awk '{print $1, $4}'; done; done
carried_pack
