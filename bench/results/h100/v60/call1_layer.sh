#!/usr/bin/env bash
# v60 call 1: main (7933f85's code: v58's landed GEMVs, never run as itself) and two forms of
# the one-token int4 layer in one launch (wna16_one_token_layer.cu, planner.h
# one_token_layer), release builds made on the build machine:
#   otl:  each CTA's whole share of both GEMMs copied into shared memory at its start (the
#         bench shapes but Qwen2 and Mixtral);
#   ring: a producer warp streams each CTA's share through a ring (every bench shape).
#   carry: ["build/carry/main.tgz", "build/carry/otl.tgz", "build/carry/ring.tgz"]
# 0. smoke checks of ring at M = 1 (Qwen3: all resident; Mixtral: the ring wraps); where ring
#    fails, memcheck of it and otl's smoke check, and otl is the candidate (cand) from here;
# 1. cand's new and one-token cases (OneTokenInt4Layer.*, OneTokenWithoutAlign.*);
# 2. compute-sanitizer memcheck + racecheck of cand at M = 1: Qwen3 (top-8), Mixtral (top-2);
# 3. ncu of one layer call at M = 1, w4a16: cand (the one kernel) and main (the GEMVs);
# 4. ABBA main / cand at M = 1 and 2 (M = 2: a control), w4a16 (GPTQ g128, two pairs of
#    rounds) and w4a16_awq;
# 5. cand's bench of each precision while time allows (the H200 re-baseline; M = 1 w4a16
#    rows: the new kernel);
# 6. the rest of the GPU suite in what is left of 380 s.
# Everything in $OUT/w1.tgz; the bench text files also as $OUT/bench_PRECISION.txt.
source scripts/carried_env.sh
carried_setup w1 main otl ring || exit 1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > "$W/info.txt" 2>&1
smoke() {  # smoke BUILD SHAPE
  timeout 30 "$root/build/carry/$1/fusedmoe" check --precision w4a16 --shape "$2" --m 1 > "$W/smoke_$1_$2.txt" 2>&1
  local rc=$?
  echo "smoke $1 $2 rc=$rc $(el) s" >> "$W/info.txt"
  return $rc
}
cand=ring
if ! smoke ring qwen3_30b_a3b_tp1 || ! smoke ring mixtral_8x7b_tp1; then
  timeout 90 compute-sanitizer --tool memcheck "$BIN_ring" check --precision w4a16 --shape qwen3_30b_a3b_tp1 --m 1 > "$W/memcheck_ring_smoke.txt" 2>&1
  cand=otl
  if ! smoke otl qwen3_30b_a3b_tp1; then  # neither: main's benches, stop
    bench_each "$BIN_main" w4a16 bf16 fp8_channel
    tail -n 12 "$W"/smoke_*.txt; grep -B2 -A12 "ERROR SUMMARY\|Invalid" "$W/memcheck_ring_smoke.txt" | head -40
    carried_report
    carried_pack
    exit 0
  fi
fi
echo "candidate: $cand" >> "$W/info.txt"
CB="$root/build/carry/$cand/fusedmoe"
CT="$root/build/carry/$cand/fusedmoe_gpu_tests"
FIRST='OneTokenInt4Layer.*:OneTokenWithoutAlign.*'
gtest_part "$CT" first 150 "$FIRST"
sanitize "$CB" q3 check --precision w4a16 --shape qwen3_30b_a3b_tp1 --m 1
sanitize "$CB" mixtral check --precision w4a16 --shape mixtral_8x7b_tp1 --m 1
# (ncu_times: the loop this call ran, folded into carried_env.sh after it ran; same commands)
for b in $cand main; do
  ncu_times $b 'align|combine|wna16|one_token|gemv' w4a16 qwen3_30b_a3b_tp1 deepseek_v3_tp8 llama4_scout_tp8 mixtral_8x7b_tp1
done
for pr in w4a16_a w4a16_b w4a16_awq_a; do abba_tagged main $cand "$pr" --precision ${pr%_?} --m 1,2; done
# The benches as time allows (each up to 60 s), the one this change touches first.
for pr in w4a16 bf16 fp8_channel w8a16 fp8_block fp8_tensor w4a16_awq; do
  [ $((320 - $(el))) -gt 60 ] && bench_each "$CB" $pr
done
left=$((380 - $(el)))
[ "$left" -gt 30 ] && gtest_part "$CT" rest "$left" "-$FIRST"
carried_report
python3 scripts/ncu_summary.py "$W" | tee "$W/ncu_summary.txt"
abba_report main $cand 12
carried_pack
