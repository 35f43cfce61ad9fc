#!/usr/bin/env bash
# v60 call 3: lds = otl with its codes copied by every thread's 16-byte cp.async (each
# thread arriving on the unit's mbarrier as its copies land) instead of one thread's
# cp.async.bulk per 8-row run, which call 2 measured at 7-8 GB/s per SM. Its cases, memcheck at
# DeepSeek-V3 M = 1, main / lds at M = 1 (two rounds), ncu of its kernel (times, then per-SASS stall
# samples at Qwen3).
#   carry: ["build/carry/main.tgz", "build/carry/lds.tgz"]
source scripts/carried_env.sh
carried_setup w3 main lds || exit 1
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv > "$W/info.txt" 2>&1
timeout 30 "$BIN_lds" check --precision w4a16 --shape qwen3_30b_a3b_tp1 --m 1 > "$W/smoke.txt" 2>&1
echo "smoke rc=$? $(el) s" >> "$W/info.txt"
gtest_part "$TESTS_lds" first 60 'OneTokenInt4Layer.*:OneTokenWithoutAlign.*'
timeout 40 compute-sanitizer --tool memcheck "$BIN_lds" check --precision w4a16 --shape deepseek_v3_tp8 --m 1 > "$W/memcheck_lds.txt" 2>&1
echo "memcheck rc=$? $(el) s" >> "$W/info.txt"
for r in 1 2; do
  for b in main lds; do
    timeout 40 "$root/build/carry/$b/fusedmoe" bench --precision w4a16 --m 1 > "$W/bench_m1_${b}_r$r.txt" 2>&1
  done
done
echo "bench $(el) s" >> "$W/info.txt"
ncu_times lds one_token w4a16 qwen3_30b_a3b_tp1 deepseek_v3_tp8 llama4_scout_tp8
# Where its warps wait (per-SASS stall samples), whichever way the times come out.
ncu_sass "$BIN_lds" lds_q3 one_token bench --shape qwen3_30b_a3b_tp1 --m 1 --precision w4a16 --seconds 0.001
cat "$W/info.txt"; tail -1 "$W/smoke.txt"
grep -E "^\[  FAILED|^\[  PASSED" "$W/ctest_first.txt"; grep "ERROR SUMMARY" "$W/memcheck_lds.txt"
for r in 1 2; do for b in main lds; do echo "== $b r$r"; grep -E "^(qwen|deepseek|llama|mixtral)" "$W/bench_m1_${b}_r$r.txt"; done; done
python3 scripts/ncu_summary.py "$W"
carried_pack
