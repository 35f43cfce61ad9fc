#!/usr/bin/env bash
# On the GPU machine (no network): build everything with all cores from the working tree,
# run every test (labels cpu and gpu) and the GPU checks, and print a short table last.
# Needs .deps/ carried along (scripts/setup.sh makes it here): CUTLASS headers and the
# GoogleTest sources. Logs go to $OUT (or ./out): build.log, ctest.log, ctest_phases.txt (each
# GPU test's time by phase), checks.txt (info,
# fusedmoe check, sanitizers), bench.txt (every bench table), bench_csv.tar.gz (bench_<precision>.csv and .json),
# summary.txt.
#   device run: bash scripts/device_check.sh         (carry: .deps; first, here:
#     git rev-parse --short=12 HEAD > .deps/REVISION  so the results name the tree)
#   CTEST_ARGS narrows the ctest step (e.g. "-L gpu -E BenchShapes"; later -j wins over -j 8).
#   BENCH_PRECISIONS="bf16 w4a16 w8a16 fp8_tensor fp8_channel fp8_block" (default) picks the
#   benches; BENCH_ARGS narrows them; BENCH_BASELINE=FILE[:FILE] compares them with committed
#   results (scripts/bench_compare.py). STEPS="ctest checks sanitize bench" (default: all) picks
#   what runs after the build: all of it took about 12 minutes on the H200, past one device
#   call's 10, so run it as STEPS=ctest, then STEPS="checks sanitize bench".
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source "$root/scripts/device_build.sh"
cd "$root"
out="${OUT:-$root/out}"
mkdir -p "$out"
build=build/device
rows=()
steps=" ${STEPS:-ctest checks sanitize bench} "
want() { [[ "$steps" == *" $1 "* ]]; }
overall=0
row() { rows+=("$(printf '%-28s %-8s %s' "$1" "$2" "$3")"); }
t() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(t)" 'BEGIN { printf "%.1f s", b - a }'; }
finish() {
  echo
  printf '%-28s %-8s %s\n' "step" "result" "detail"
  printf '%s\n' "${rows[@]}" | tee "$out/summary.txt"
  exit "$1"
}

[ -f .deps/cutlass/include/cutlass/version.h ] || { row "deps" "FAIL" "no .deps/cutlass: run scripts/setup.sh here and carry .deps"; finish 1; }
gpu="$(nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader 2>&1 | head -1)"
row "gpu" "info" "$gpu"

start=$(t)
configure_device_build "$build" ON > "$out/build.log" 2>&1 &&
  cmake --build "$build" -j "$(nproc)" >> "$out/build.log" 2>&1
status=$?
if [ $status -ne 0 ]; then
  row "build" "FAIL" "$(grep -m1 -E 'error|Error' "$out/build.log")"
  tail -30 "$out/build.log"
  finish 1
fi
if grep -q C7510 "$out/build.log"; then row "build" "FAIL" "ptxas C7510: wgmma serialized"; finish 1; fi
row "build" "ok" "$(since "$start"), $(nproc) jobs, no C7510"

{ echo "nvidia-smi: $gpu"; "$build/fusedmoe" info; } > "$out/checks.txt" 2>&1
row "fusedmoe info" "$([ $? -eq 0 ] && echo ok || echo FAIL)" "$(grep -m1 '^gpu 0' "$out/checks.txt" | cut -c1-90)"

if want ctest; then
  start=$(t)
  # 480 s: with the build, one device call (600 s).
  # CTEST_ARGS narrows it (the whole suite does not fit one call: e.g. CTEST_ARGS="-L gpu -E
  # BenchShapes", about 260 s, then CTEST_ARGS="-R BenchShapes -j 6"); CTEST_TIMEOUT (480).
  # shellcheck disable=SC2086
  timeout "${CTEST_TIMEOUT:-480}" ctest --test-dir "$build" -j 8 --output-on-failure ${CTEST_ARGS:-} > "$out/ctest.log" 2>&1
  status=$?
  summary=$(grep -E "tests passed|tests failed" "$out/ctest.log" | tail -1)
  skipped=$(grep -c "Skipped" "$out/ctest.log")
  row "ctest (cpu + gpu)" "$([ $status -eq 0 ] && echo ok || echo FAIL)" "$summary, $skipped skipped, $(since "$start")"
  overall=$status
  # Where each GPU test's time went (the tests print "[ phases ]" lines; ctest keeps them here).
  awk '/^[0-9]+\/[0-9]+ Testing: /{name=$3} /\[ phases/{print name ": " $0}' \
    "$build/Testing/Temporary/LastTest.log" > "$out/ctest_phases.txt" 2>/dev/null
fi

want checks && for check in mixtral_8x7b_tp1:bf16 qwen2_57b_a14b_tp4:bf16 qwen3_30b_a3b_tp1:bf16 deepseek_v3_tp8:bf16 \
             llama4_scout_tp8:bf16 deepseek_v3_tp8:w4a16_awq qwen3_30b_a3b_tp1:w8a16_gptq deepseek_v3_tp8:fp8_block \
             qwen3_30b_a3b_tp1:fp8_channel mixtral_8x7b_tp1:fp8_tensor; do
  start=$(t)
  "$build/fusedmoe" check --shape "${check%%:*}" --m 16 --precision "${check##*:}" >> "$out/checks.txt" 2>&1
  status=$?
  [ $status -eq 0 ] || overall=1
  result=$(grep '^result:' "$out/checks.txt" | tail -1 | cut -d' ' -f2-3)
  row "check ${check/:/ } m=16" "$([ $status -eq 0 ] && echo ok || echo FAIL)" "$result, $(since "$start")"
done
# compute-sanitizer over a small GPU case set: out-of-bounds accesses and shared-memory races.
san_filter='Paths/DenseLayer.EdgeShapes/*:Paths/DenseLayer.Fp16ActivationsAndWeightOnInput/*:Paths/QuantLayer.GroupSizesScalesAndZeros/*:Paths/Fp8Layer.PartialBlocksEdgesAndModes/*'
want sanitize && echo "== compute-sanitizer ($san_filter)" >> "$out/checks.txt"
want sanitize && for tool in memcheck racecheck; do
  start=$(t)
  timeout 240 compute-sanitizer --tool "$tool" --error-exitcode 1 "$build/tests/fusedmoe_gpu_tests" --gtest_filter="$san_filter" \
    >> "$out/checks.txt" 2>&1
  status=$?
  [ $status -eq 0 ] || overall=1
  row "compute-sanitizer $tool" "$([ $status -eq 0 ] && echo ok || echo FAIL)" \
    "$(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$out/checks.txt" | tail -1), $(since "$start")"
done

: > "$out/bench.txt"
csv_dir=$(mktemp -d)
want bench && for precision in ${BENCH_PRECISIONS:-bf16 w4a16 w8a16 fp8_tensor fp8_channel fp8_block}; do
  start=$(t)
  "$build/fusedmoe" bench --precision "$precision" --csv "$csv_dir/bench_$precision.csv" \
    --json "$csv_dir/bench_$precision.json" ${BENCH_ARGS:-} >> "$out/bench.txt" 2>&1
  status=$?
  [ $status -eq 0 ] || overall=1
  row "bench $precision" "$([ $status -eq 0 ] && echo ok || echo FAIL)" \
    "$(($(wc -l < "$csv_dir/bench_$precision.csv") - 1)) points, $(since "$start")"
done
# One archive of the CSVs and JSONs: the device returns at most 8 files.
want bench && tar -czf "$out/bench_csv.tar.gz" -C "$csv_dir" . 2>/dev/null
# BENCH_BASELINE=FILE[:FILE...] (committed results: bench text, CSV or ab_bench summary): every
# common point set beside this run's, appended to bench.txt; points more than 5% slower fail
# the row (scripts/bench_compare.py; PERF.md v21).
want bench && [ -n "${BENCH_BASELINE:-}" ] && {
  IFS=':' read -r -a baselines <<< "$BENCH_BASELINE"
  for baseline in "${baselines[@]}"; do
    echo "== bench_compare.py $baseline (old) against this run (new)" >> "$out/bench.txt"
    python3 "$root/scripts/bench_compare.py" "$baseline" "$out/bench.txt" > "$out/.compare.txt" 2>&1
    status=$?
    cat "$out/.compare.txt" >> "$out/bench.txt"
    [ $status -eq 0 ] || overall=1
    row "bench vs $(basename "$baseline")" "$([ $status -eq 0 ] && echo ok || echo SLOWER)" \
      "$(tail -1 "$out/.compare.txt" | cut -c1-90)"
    rm -f "$out/.compare.txt"
  done
}
# Forced paths side by side (BENCH_PATHS="small_m grouped_gemm", BENCH_PATH_PRECISION (bf16),
# BENCH_PATH_ARGS narrows the grid).
want bench && for path in ${BENCH_PATHS:-}; do
  start=$(t)
  "$build/fusedmoe" bench --precision "${BENCH_PATH_PRECISION:-bf16}" --path "$path" ${BENCH_PATH_ARGS:-} >> "$out/bench.txt" 2>&1
  status=$?
  [ $status -eq 0 ] || overall=1
  row "bench ${BENCH_PATH_PRECISION:-bf16} --path $path" "$([ $status -eq 0 ] && echo ok || echo FAIL)" "$(since "$start")"
done
cat "$out/bench.txt"
finish "$overall"
