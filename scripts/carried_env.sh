#!/usr/bin/env bash
# Sourced by the per-call device scripts under bench/results/ that run release binaries built
# on the build machine and carried to the device (`carry: ["build/carry"]`, each build packed
# as build/carry/NAME.tgz holding NAME/fusedmoe and NAME/fusedmoe_gpu_tests):
#   source scripts/carried_env.sh
#   carried_setup w3 tma tma2   # $W = $OUT/w3 (fresh), the builds unpacked, $BIN_tma, $TESTS_tma, ...
#   abba tma tma2 w4a16 --precision w4a16 --path grouped_mixed --m 1024,4096
#                               # $W/bench_w4a16_{tma,tma2}_r{1,2}.txt: A B, then B A
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
# abba_compare A B TAG [LINES]: both rounds' ratios B / A (scripts/bench_compare.py).
abba_compare() {
  local r
  for r in 1 2; do
    python3 scripts/bench_compare.py "$W/bench_$3_$1_r$r.txt" "$W/bench_$3_$2_r$r.txt" --slower 1.001 | tail -"${4:-11}"
  done
}
carried_pack() { (cd "$OUT" && tar czf "$W_NAME.tgz" "$W_NAME" && rm -rf "$W_NAME"); }
