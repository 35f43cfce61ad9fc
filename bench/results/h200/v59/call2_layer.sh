#!/usr/bin/env bash
# v59 call A: main (1dc7927's release build) and otl (f0617c5 on cand/v59-one-token-layer: the
# one-token int4 layer in one launch, wna16_one_token_layer.cu, planner.h one_token_layer),
# release builds made on the build machine.
#   carry: ["build/carry/main.tgz", "build/carry/otl.tgz"]
# 1. otl's new and one-token cases (OneTokenInt4Layer.*, OneTokenWithoutAlign.*), under a timeout;
# 2. compute-sanitizer memcheck + racecheck of otl at M = 1: Qwen3 (top-8), Scout (top-1);
# 3. ncu of one layer call at M = 1, w4a16: otl (the one kernel) and main (align-free GEMVs);
# 4. ABBA main / otl at M = 1 and 2 (M = 2: a control), w4a16 (GPTQ g128, two pairs of
#    rounds) and w4a16_awq (g128);
# 5. otl's bench of every precision (M = 1 rows: the new kernel where it applies);
# 6. the rest of the GPU suite in what is left of 420 s.
# Everything in $OUT/w2.tgz; the bench text files also as $OUT/bench_PRECISION.txt.
source scripts/carried_env.sh
carried_setup w2 main otl || exit 1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > "$W/info.txt" 2>&1
timeout 30 "$BIN_otl" check --precision w4a16 --shape qwen3_30b_a3b_tp1 --m 1 > "$W/smoke.txt" 2>&1
smoke=$?
echo "smoke rc=$smoke $(el) s" >> "$W/info.txt"
if [ "$smoke" != 0 ]; then  # a wrong or hung kernel: what the sanitizer says, main's bench, stop
  timeout 90 compute-sanitizer --tool memcheck "$BIN_otl" check --precision w4a16 --shape qwen3_30b_a3b_tp1 --m 1 > "$W/memcheck_smoke.txt" 2>&1
  timeout 60 "$BIN_otl" check --precision w4a16 --shape llama4_scout_tp8 --m 1 > "$W/smoke_scout.txt" 2>&1
  echo "scout rc=$? $(el) s" >> "$W/info.txt"
  for pr in w4a16 bf16 w8a16 fp8_channel fp8_block; do
    timeout 40 "$BIN_main" bench --precision $pr > "$OUT/bench_$pr.txt" 2>&1
  done
  tail -20 "$W/smoke.txt" "$W/smoke_scout.txt"; grep -A12 "ERROR SUMMARY\|Invalid" "$W/memcheck_smoke.txt" | head -40
  carried_pack
  exit 0
fi
FIRST='OneTokenInt4Layer.*:OneTokenWithoutAlign.*'
gtest_part "$TESTS_otl" first 150 "$FIRST"
sanitize "$BIN_otl" q3 check --precision w4a16 --shape qwen3_30b_a3b_tp1 --m 1
sanitize "$BIN_otl" scout check --precision w4a16 --shape llama4_scout_tp8 --m 1
K='regex:align|combine|wna16|one_token|gemv'
M='gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_elapsed,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_elapsed'
for b in otl main; do
  for s in qwen3_30b_a3b_tp1 deepseek_v3_tp8 llama4_scout_tp8 qwen2_57b_a14b_tp4; do
    timeout 40 ncu --clock-control none --print-units base --metrics "$M" -k "$K" -c 6 --csv "$root/build/carry/$b/fusedmoe" \
      bench --shape $s --m 1 --precision w4a16 --seconds 0.001 > "$W/ncu_${b}_$s.csv" 2> "$W/ncu_${b}_$s.err"
  done
done
echo "ncu $(el) s" >> "$W/info.txt"
for pr in w4a16_a w4a16_b w4a16_awq_a; do abba_tagged main otl "$pr" --precision ${pr%_?} --m 1,2; done
bench_each "$BIN_otl" w4a16 bf16 w8a16 fp8_channel fp8_block w4a16_awq
left=$((420 - $(el)))
[ "$left" -gt 30 ] && gtest_part "$TESTS_otl" rest "$left" "-$FIRST"
carried_report
python3 scripts/ncu_summary.py "$W" | tee "$W/ncu_summary.txt"
abba_report main otl 12
carried_pack
