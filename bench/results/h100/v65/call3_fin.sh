#!/usr/bin/env bash
# v65 call 3: fin = main with the rules from call 2 (the direct table where the expected
# duplicate weight reads are at most 4 MiB; the down GEMV per token on it where I >= 512),
# against land (a48372d's kernels):
# 1. fin's direct-table and one-token cases (the direct-table test's shapes now within the rule);
# 2. one round, land then fin: w4a16, w8a16 and bf16 at M = 1, 2, 3, 4 and 8.
#   carry: ["build/carry/land.tgz", "build/carry/fin.tgz"]
# Run as `bash bench/results/h100/v65/call3_fin.sh` (W unset: the work folder is $OUT/w3).
source scripts/carried_env.sh
carried_setup "${W:-w3}" land fin || exit 1
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv > "$W/info.txt" 2>&1
gtest_part "$TESTS_fin" cases 60 'FewTokensWithoutAlign.*:OneTokenWithoutAlign.*:OneTokenInt4Layer.*:SmallMSplitK.*'
for pr in w4a16 w8a16 bf16; do
  for v in land fin; do
    timeout 60 "$root/build/carry/$v/fusedmoe" bench --precision $pr --m 1,2,3,4,8 > "$W/bench_${pr}_$v.txt" 2>&1
  done
done
echo "bench $(el) s" >> "$W/info.txt"
carried_report
for pr in w4a16 w8a16 bf16; do
  echo "== $pr fin / land (shape M land_us fin_us ratio)"
  python3 scripts/bench_compare.py "$W/bench_${pr}_land.txt" "$W/bench_${pr}_fin.txt" --slower 1.001 | tail -26 | head -25 \
    | awk '{print substr($2,1,12), $3, $4, $5, $6}' | paste -sd' ' | fold -w 240
done
carried_pack
