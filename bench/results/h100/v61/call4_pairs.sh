#!/usr/bin/env bash
# v61 call 4: l3t (call 3's fold, its cp.async groups fixed: call 3 read the parameters before
# they landed) and l4t = l3t with the down items two at a time in one straight-line stretch
# and the intermediate read in one pass. l4t's cases, phase stamps, memcheck; main / l3t / l4t
# at M = 1 (two rounds); ncu per-SASS samples of l4t at Qwen3.
#   carry: ["build/carry/main.tgz", "build/carry/l3t.tgz", "build/carry/l4t.tgz"]
source scripts/carried_env.sh
carried_setup w4 main l3t l4t || exit 1
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv > "$W/info.txt" 2>&1
for s in qwen3_30b_a3b_tp1 deepseek_v3_tp8 llama4_scout_tp8; do
  FUSEDMOE_OTL_TRACE=1 timeout 60 "$BIN_l4t" check --precision w4a16 --shape $s --m 1 > "$W/trace_$s.txt" 2>&1
  echo "trace $s rc=$? $(el) s" >> "$W/info.txt"
done
gtest_part "$TESTS_l3t" l3t 90 'OneTokenInt4Layer.*:OneTokenWithoutAlign.*'
gtest_part "$TESTS_l4t" first 90 'OneTokenInt4Layer.*:OneTokenWithoutAlign.*'
timeout 60 compute-sanitizer --tool memcheck "$BIN_l4t" check --precision w4a16 --shape deepseek_v3_tp8 --m 1 > "$W/memcheck_l4t.txt" 2>&1; echo "memcheck rc=$? $(el) s" >> "$W/info.txt"
for r in 1 2; do
  for b in main l3t l4t; do
    timeout 40 "$root/build/carry/$b/fusedmoe" bench --precision w4a16 --m 1 > "$W/bench_m1_${b}_r$r.txt" 2>&1
  done
done
echo "bench $(el) s" >> "$W/info.txt"
ncu_sass "$BIN_l4t" l4t_q3 one_token bench --shape qwen3_30b_a3b_tp1 --m 1 --precision w4a16 --seconds 0.001
cat "$W/info.txt"
grep -E "^\[  FAILED|^\[  PASSED" "$W/ctest_l3t.txt" "$W/ctest_first.txt"
grep "ERROR SUMMARY" "$W/memcheck_l4t.txt"
for s in qwen3_30b_a3b_tp1 deepseek_v3_tp8 llama4_scout_tp8; do echo "== $s"; grep -E "otl_trace|result" "$W/trace_$s.txt"; done
for r in 1 2; do for b in main l3t l4t; do echo "== $b r$r"; grep -E "^(qwen|deepseek|llama|mixtral)" "$W/bench_m1_${b}_r$r.txt" | awk '{print $1, $4}'; done; done
carried_pack
