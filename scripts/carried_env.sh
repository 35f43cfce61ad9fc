#!/usr/bin/env bash
# Sourced by the per-call device scripts under bench/results/ that run release binaries built
# on the build machine and carried to the device (`carry: ["build/carry"]`, each build packed
# as build/carry/NAME.tgz holding NAME/fusedmoe and NAME/fusedmoe_gpu_tests):
#   source scripts/carried_env.sh
#   carried_setup w3 tma tma2   # $W = $OUT/w3 (fresh), the builds unpacked, $BIN_tma, $TESTS_tma, ...
#   abba tma tma2 w4a16 --precision w4a16 --path grouped_mixed --m 1024,4096
#                               # $W/bench_w4a16_{tma,tma2}_r{1,2}.txt: A B, then B A
#   abba_tagged tma tma2 w4a16 ...  # the same, the tag kept in $TAGS and timed in info.txt
#   abba_report tma tma2 12     # every tagged pair's ratios B / A
#   bench_each "$BIN_tma2" w4a16 bf16   # $W/bench_P.{txt,json}, the text also as $OUT/bench_P.txt
#   gtest_part "$TESTS_tma2" mixed 150 'Paths/QuantLayer.*/grouped_mixed'   # $W/ctest_mixed.txt
#   sanitize "$BIN_tma2" tma2 check --precision w8a16 ...   # memcheck + racecheck, $W/{tool}_tma2.txt
#   ncu_sass "$BIN_tma2" gemms wna16_grouped bench ...      # ncu with per-SASS samples, $W/gemms_*.csv
#   ncu_times tma2 'wna16|combine' w4a16 qwen3_30b_a3b_tp1  # kernel times at M = 1, $W/ncu_tma2_*.csv
#   ncu_points "$BIN_tma2" t4 wna16_gemv "deepseek_v3_tp8:32" --precision w4a16   # $W/ncu_t4_*.csv
#   profile_builds glue fp8_channel "qwen3_30b_a3b_tp1:1024" tma tma2   # each kernel alone, side by side
#   otl_traces l5t qwen3_30b_a3b_tp1    # the one-token layer's phase stamps, $W/trace_l5t_*.txt
#   m1_rounds main l5t; m1_report main l5t   # two rounds of w4a16 at M = 1 per build
#   carried_report              # info.txt, the test parts' verdicts, the sanitizers' summaries
#   carried_pack                # $OUT/w3.tgz (the device returns a limited number of files)
# The binaries name the build machine's /work/main in their defaults: it is linked to this
# tree and the shapes file is given explicitly.
set -o pipefail
carried_setup() {
  root="$(pwd)"
  OUT="${OUT:-/tmp/out}"
  W_NAME="$1"
  W="$OUT/$1"
  shift
  rm -rf "$W" && mkdir -p "$W"
  # /work/main linked to this tree only where it is not a real directory (on the build machine
  # it is this repository)
  if [ ! -e /work/main ] || [ -L /work/main ]; then mkdir -p /work 2> /dev/null && ln -sfn "$root" /work/main 2> /dev/null; fi
  export FUSEDMOE_SHAPES="$root/shapes/models.json"
  export LD_LIBRARY_PATH=/usr/local/cuda/lib64:/usr/local/cuda/lib:${LD_LIBRARY_PATH:-}
  local b
  for b in "$@"; do
    [ -x "build/carry/$b/fusedmoe" ] || tar xzf "build/carry/$b.tgz" -C build/carry || return 1
    printf -v "BIN_$b" '%s' "$root/build/carry/$b/fusedmoe"
    printf -v "TESTS_$b" '%s' "$root/build/carry/$b/fusedmoe_gpu_tests"
  done
  t0=$(date +%s)
}
el() { echo $(($(date +%s) - t0)); }
# abba A B TAG BENCH_ARGS...: round 1 runs A then B, round 2 B then A.
abba() {
  local a="$1" b="$2" tag="$3" round v bin
  shift 3
  for round in 1 2; do
    for v in $([ "$round" = 1 ] && echo "$a $b" || echo "$b $a"); do
      bin="$root/build/carry/$v/fusedmoe"
      timeout 90 "$bin" bench "$@" > "$W/bench_${tag}_${v}_r$round.txt" 2>&1
    done
  done
}
# abba_tagged A B TAG BENCH_ARGS...: abba, the tag added to $TAGS for abba_report.
TAGS=""
abba_tagged() {
  abba "$@"
  TAGS="$TAGS $3"
  echo "abba $3 $(el) s" >> "$W/info.txt"
}
# abba_report A B [LINES]: abba_compare of every tag abba_tagged ran.
abba_report() {
  local t
  for t in $TAGS; do
    echo "== $t $2 / $1"
    abba_compare "$1" "$2" "$t" "${3:-11}"
  done
}
# bench_each BIN PRECISION...: BIN's bench of each precision at every M of models.json, into
# $W/bench_P.txt and .json, the text also as $OUT/bench_P.txt (returned outside the tarball).
bench_each() {
  local bin="$1" pr
  shift
  for pr in "$@"; do
    timeout 60 "$bin" bench --precision "$pr" --json "$W/bench_$pr.json" > "$W/bench_$pr.txt" 2>&1
    echo "bench $pr rc=$? $(el) s" >> "$W/info.txt"
    cp "$W/bench_$pr.txt" "$OUT/bench_$pr.txt"
  done
}
# abba_compare A B TAG [LINES]: both rounds' ratios B / A (scripts/bench_compare.py).
abba_compare() {
  local r
  for r in 1 2; do
    python3 scripts/bench_compare.py "$W/bench_$3_$1_r$r.txt" "$W/bench_$3_$2_r$r.txt" --slower 1.001 | tail -"${4:-11}"
  done
}
# otl_traces BUILD SHAPE...: the one-token layer's phase stamps (a build with
# bench/results/h100/v61/trace.patch) at M = 1 of each shape, into $W/trace_BUILD_SHAPE.txt.
otl_traces() {
  local b="$1" s
  shift
  for s in "$@"; do
    FUSEDMOE_OTL_TRACE=1 timeout 60 "$root/build/carry/$b/fusedmoe" check --precision w4a16 --shape "$s" --m 1 \
      > "$W/trace_${b}_$s.txt" 2>&1
    echo "trace $b $s rc=$? $(el) s" >> "$W/info.txt"
  done
}
# otl_trace_report BUILD SHAPE...: those stamps and each check's verdict.
otl_trace_report() {
  local b="$1" s
  shift
  for s in "$@"; do
    echo "== $b $s"
    grep -E "otl_trace|result" "$W/trace_${b}_$s.txt" | sed 's/otl_trace: //'
  done
}
# m1_rounds BUILD...: two rounds of each build's w4a16 bench at M = 1, the builds in the given
# order each round, into $W/bench_m1_BUILD_rROUND.txt; m1_report BUILD...: their times.
m1_rounds() {
  local r b
  for r in 1 2; do
    for b in "$@"; do
      timeout 40 "$root/build/carry/$b/fusedmoe" bench --precision w4a16 --m 1 > "$W/bench_m1_${b}_r$r.txt" 2>&1
    done
  done
  echo "bench $(el) s" >> "$W/info.txt"
}
m1_report() {
  local r b
  for r in 1 2; do
    for b in "$@"; do
      echo "== $b r$r"
      grep -E "^(qwen|deepseek|llama|mixtral)" "$W/bench_m1_${b}_r$r.txt" | awk '{print $1, $4}'
    done
  done
}
# gtest_part TESTS TAG SECONDS FILTER: the GPU tests matching FILTER under a timeout (a
# pipeline bug hangs rather than fails), into $W/ctest_TAG.txt.
gtest_part() {
  timeout "$3" "$1" --gtest_filter="$4" > "$W/ctest_$2.txt" 2>&1
  echo "$2 cases rc=$? $(el) s" >> "$W/info.txt"
}
# sanitize BIN TAG ARGS...: compute-sanitizer memcheck and racecheck (SANITIZE_TOOLS, both
# unless set) of BIN ARGS, each within SANITIZE_S seconds (60 unless set).
sanitize() {
  local bin="$1" tag="$2" tool
  shift 2
  for tool in ${SANITIZE_TOOLS:-memcheck racecheck}; do
    timeout "${SANITIZE_S:-60}" compute-sanitizer --tool $tool "$bin" "$@" > "$W/${tool}_$tag.txt" 2>&1
    echo "$tool $tag rc=$? $(el) s" >> "$W/info.txt"
  done
}
# ncu_sass BIN NAME KERNEL_REGEX ARGS...: ncu (speed of light, warp states, per-SASS source
# counters) of the first two matching kernels of BIN ARGS: $W/NAME_details.csv, NAME_sass.csv.
ncu_sass() {
  local bin="$1" name="$2" kernels="$3"
  shift 3
  timeout 120 ncu --clock-control none --section SourceCounters --section WarpStateStats --section SpeedOfLight \
    --import-source no -k "regex:$kernels" -c 2 -o "$W/$name" "$bin" "$@" > "$W/${name}_ncu_log.txt" 2>&1
  if [ -f "$W/$name.ncu-rep" ]; then
    ncu --import "$W/$name.ncu-rep" --page source --csv --print-source sass > "$W/${name}_sass.csv" 2> "$W/${name}_src_err.txt"
    ncu --import "$W/$name.ncu-rep" --page details --csv > "$W/${name}_details.csv" 2>&1
    rm -f "$W/$name.ncu-rep"
  fi
  echo "ncu $name $(el) s" >> "$W/info.txt"
}
# ncu_times BUILD KERNEL_REGEX PRECISION SHAPE...: each kernel's time, DRAM and tensor-pipe
# use (ncu, base units, CSV) in one layer call at M = 1 of each shape, into
# $W/ncu_BUILD_SHAPE.csv (scripts/ncu_summary.py reads them).
ncu_times() {
  local b="$1" k="$2" pr="$3" s
  shift 3
  local m='gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_elapsed'
  for s in "$@"; do
    timeout 40 ncu --clock-control none --print-units base --metrics "$m" -k "regex:$k" -c 6 --csv "$root/build/carry/$b/fusedmoe" \
      bench --shape "$s" --m 1 --precision "$pr" --seconds 0.001 > "$W/ncu_${b}_$s.csv" 2> "$W/ncu_${b}_$s.err"
  done
  echo "ncu $b $(el) s" >> "$W/info.txt"
}
# ncu_points BIN TAG KERNEL_REGEX "SHAPE:M ..." ARGS...: ncu of the first two matching kernels of
# one bench call per point (caches flushed, clocks free): time, DRAM, issue, instructions, shared
# wavefronts, L1 / L2, tensor pipe, occupancy and stall reasons per issue, into
# $W/ncu_TAG_SHAPE_M.csv; `scripts/ncu_summary.py $W --detail` prints them.
ncu_points() {
  local bin="$1" tag="$2" k="$3" pts="$4" pt s m
  shift 4
  local mm='gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,dram__bytes_read.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum,l1tex__throughput.avg.pct_of_peak_sustained_active,lts__throughput.avg.pct_of_peak_sustained_elapsed,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,smsp__warps_active.avg.per_cycle_active,launch__registers_per_thread,launch__grid_size,regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio'
  for pt in $pts; do
    s=${pt%%:*} m=${pt##*:}
    timeout 120 ncu --clock-control none --print-units base --metrics "$mm" -k "regex:$k" -c 2 --csv "$bin" \
      bench --shape "$s" --m "$m" --seconds 0.001 "$@" > "$W/ncu_${tag}_${s}_$m.csv" 2> "$W/ncu_${tag}_${s}_$m.err"
  done
  echo "ncu $tag $(el) s" >> "$W/info.txt"
}
# profile_builds TAG PRECISION "SHAPE:M ..." BUILD...: scripts/profile.sh (ncu, each kernel of one
# layer call alone, cold L2) of each build at each point, into $W/profile_TAG_BUILD.txt, then
# the kernels side by side (scripts/profile_compare.py, the first build the base): a
# candidate's kernels timed alone before its layer is (PERF.md v70).
profile_builds() {
  local tag="$1" pr="$2" pts="$3" b files=()
  shift 3
  for b in "$@"; do
    # shellcheck disable=SC2086
    OUT="$W" PRECISION="$pr" FUSEDMOE_BIN="$root/build/carry/$b/fusedmoe" bash "$root/scripts/profile.sh" $pts \
      > /dev/null 2>&1
    mv "$W/profile.txt" "$W/profile_${tag}_$b.txt"
    files+=("$W/profile_${tag}_$b.txt")
  done
  rm -f "$W/ncu_raw.csv" "$W/ncu_detail.csv"
  echo "profile $tag $(el) s" >> "$W/info.txt"
  python3 "$root/scripts/profile_compare.py" "${files[@]}"
}
# carried_report: what a call prints last: $W/info.txt, each test part's verdict, the
# sanitizers' summaries.
carried_report() {
  cat "$W/info.txt"
  local f
  for f in "$W"/ctest_*.txt; do
    [ -f "$f" ] || continue
    echo "== $f"
    grep -E "^\[  FAILED|^\[  PASSED|tests ran|FAIL:" "$f" | head -12
  done
  grep -hE "ERROR SUMMARY|RACECHECK SUMMARY" "$W"/memcheck_*.txt "$W"/racecheck_*.txt 2> /dev/null | head
}
carried_pack() { (cd "$OUT" && tar czf "$W_NAME.tgz" "$W_NAME" && rm -rf "$W_NAME"); }
