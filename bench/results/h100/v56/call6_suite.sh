#!/usr/bin/env bash
# v56 call 6, on the build that lands (fin3): the whole GPU suite, compute-sanitizer memcheck on an
# int8 x-by-token case (call 3's had a shape the checkpoint refuses), and the integer benches.
# $OUT/w6.tgz.
source scripts/carried_env.sh
carried_setup w6 fin3 || exit 1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > "$W/info.txt" 2>&1
timeout 60 compute-sanitizer --tool memcheck "$BIN_fin3" check --precision w8a16 --path grouped_mixed --E 16 --H 1024 --I 256 --topk 4 --m 200 > "$W/memcheck_fin3_w8.txt" 2>&1
echo "memcheck w8 rc=$? $(el) s" >> "$W/info.txt"
for pr in w4a16 w8a16; do timeout 40 "$BIN_fin3" bench --precision $pr --json "$W/bench_$pr.json" > "$W/bench_$pr.txt" 2>&1; done
echo "benches $(el) s" >> "$W/info.txt"
gtest_part "$TESTS_fin3" all $((330 - $(el))) '*'
cat "$W/info.txt"; grep -E "^\[  FAILED|^\[  PASSED|tests ran" "$W/ctest_all.txt" | head; grep -E "ERROR SUMMARY|result:" "$W/memcheck_fin3_w8.txt"
carried_pack
