#!/usr/bin/env bash
# v65 call 2: two candidates against land = main's kernels (a48372d; align from M = 2):
#   dt1 = the direct table (no align; every pair its own instance) from one token up to
#         kDirectTableMaxTokens = 4 tokens within 32 pairs (planner.h direct_table);
#   dt2 = dt1 + the one-token down kernels per token on the direct table (a CTA row per
#         token: the combine folded into the down GEMV at top-4 to 8, dense and int4).
# 1. dt2's direct-table and one-token cases (dense and integer) and the split-K small-M ones;
# 2. two rounds, the builds in turn (land dt1 dt2, then dt2 dt1 land): w4a16, w8a16 and bf16
#    at M = 1, 2, 3, 4 and 8 (M = 1 and 8: controls);
# 3. memcheck and racecheck of dt2 at Qwen3 M = 4 (w4a16: the int4 down GEMV per token).
#   carry: ["build/carry/land.tgz", "build/carry/dt1.tgz", "build/carry/dt2.tgz"]
# Run as `bash bench/results/h100/v65/call2_direct.sh` (W unset: the work folder is $OUT/w2).
source scripts/carried_env.sh
carried_setup "${W:-w2}" land dt1 dt2 || exit 1
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv > "$W/info.txt" 2>&1
gtest_part "$TESTS_dt2" cases 80 'FewTokensWithoutAlign.*:OneTokenWithoutAlign.*:OneTokenInt4Layer.*:SmallMSplitK.*'
for pr in w4a16 w8a16 bf16; do
  for r in 1 2; do
    for v in $([ "$r" = 2 ] && echo "dt2 dt1 land" || echo "land dt1 dt2"); do
      timeout 90 "$root/build/carry/$v/fusedmoe" bench --precision $pr --m 1,2,3,4,8 > "$W/bench_${pr}_${v}_r$r.txt" 2>&1
    done
  done
  echo "rounds $pr $(el) s" >> "$W/info.txt"
done
sanitize "$BIN_dt2" q3 check --precision w4a16 --shape qwen3_30b_a3b_tp1 --m 4
carried_report
for pr in w4a16 w8a16 bf16; do
  for v in dt1 dt2; do
    echo "== $pr $v / land, rounds 1 2 (shape M land_us ratio ratio)"
    for r in 1 2; do
      python3 scripts/bench_compare.py "$W/bench_${pr}_land_r$r.txt" "$W/bench_${pr}_${v}_r$r.txt" --slower 1.001 | tail -26 | head -25 | awk '{print $6}' > "$W/ratio_${pr}_${v}_r$r.txt"
    done
    python3 scripts/bench_compare.py "$W/bench_${pr}_land_r1.txt" "$W/bench_${pr}_${v}_r1.txt" --slower 1.001 | tail -26 | head -25 | awk '{print substr($2,1,12), $3, $4}' \
      | paste -d' ' - "$W/ratio_${pr}_${v}_r1.txt" "$W/ratio_${pr}_${v}_r2.txt" | paste -sd' ' | fold -w 240
  done
done
carried_pack
