#!/usr/bin/env bash
# On the GPU machine: the same benchmarks for several revisions in one run, interleaved, so
# that a WIP branch is judged against main on the same GPU, clocks and routing draws.
#   here:       git bundle create .deps/fusedmoe.bundle main wip/a wip/b
#   device run: [AB_BINS=/tmp/ab] REVS="main wip/a wip/b" BENCH_SETS="--precision fp8_block --m 1,4,16;--precision fp8_channel --m 1" \
#                 bash scripts/ab_bench.sh          (carry: .deps)
# Builds the CLI of each revision in one source tree and build directory (a revision rebuilds
# only the files it changes), then runs every set for every revision ROUNDS times (default 2,
# rev 1, rev 2, ..., rev 1, rev 2, ...) and prints per point the median us of each revision
# and its ratio to the first. Logs and raw outputs: $OUT/ab_build.log, $OUT/ab_bench.txt; the
# summary also in $OUT/ab_summary.txt.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
out="${OUT:-$root/out}"
mkdir -p "$out"
revs=(${REVS:-main})
IFS=';' read -r -a sets <<< "${BENCH_SETS:---precision bf16 --m 1,16}"
rounds=${ROUNDS:-2}
[ -f "$root/.deps/fusedmoe.bundle" ] || { echo "ab_bench.sh: no .deps/fusedmoe.bundle (git bundle create .deps/fusedmoe.bundle ${revs[*]})"; exit 1; }
src=$(mktemp -d)/fusedmoe
git clone -q "$root/.deps/fusedmoe.bundle" "$src" 2> /dev/null || { echo "ab_bench.sh: cannot clone .deps/fusedmoe.bundle"; exit 1; }
ln -s "$root/.deps" "$src/.deps"
bins=${AB_BINS:-$(mktemp -d)}  # AB_BINS keeps fusedmoe_<i> (rev i of REVS) for later commands
mkdir -p "$bins"
build="$src/build/ab"
# shellcheck source=device_build.sh
source "$root/scripts/device_build.sh"
(
  root="$src"  # configure_device_build reads $root when it runs: the CUTLASS headers in $src/.deps
  for i in "${!revs[@]}"; do
    rev=${revs[$i]}
    commit=$(git -C "$src" rev-parse -q --verify "origin/$rev^{commit}" || git -C "$src" rev-parse -q --verify "$rev^{commit}") ||
      { echo "ab_bench.sh: revision '$rev' is not in the bundle"; exit 1; }
    git -C "$src" checkout -q --detach "$commit" || exit 1
    echo "== $rev ($commit)"
    { [ -f "$build/build.ninja" ] || configure_device_build "$build" OFF; } &&
      cmake --build "$build" -j "$(nproc)" --target fusedmoe_cli || exit 1
    cp "$build/fusedmoe" "$bins/fusedmoe_$i"
  done
) > "$out/ab_build.log" 2>&1 || { tail -20 "$out/ab_build.log"; exit 1; }
grep -q C7510 "$out/ab_build.log" && { echo "ab_bench.sh: ptxas C7510 (wgmma serialized)"; exit 1; }

raw=$(mktemp -d)
: > "$out/ab_bench.txt"
for r in $(seq 1 "$rounds"); do
  for s in "${!sets[@]}"; do
    for i in "${!revs[@]}"; do
      # shellcheck disable=SC2086
      "$bins/fusedmoe_$i" bench ${sets[$s]} > "$raw/r${r}_s${s}_v${i}.txt" 2>&1
      { echo "## round $r set $s (${sets[$s]}) rev ${revs[$i]}"; cat "$raw/r${r}_s${s}_v${i}.txt"; } >> "$out/ab_bench.txt"
    done
  done
done
# The per-point summary, on stdout and in $OUT/ab_summary.txt (with each set's arguments).
for s in "${!sets[@]}"; do export "AB_SET_$s=${sets[$s]}"; done
python3 - "$raw" "$rounds" "${#sets[@]}" "${revs[@]}" <<'PY' | tee "$out/ab_summary.txt"
import sys, statistics, os
raw, rounds, nsets, revs = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4:]
for s in range(nsets):
    times, paths, order = {}, {}, []
    for r in range(1, rounds + 1):
        for i in range(len(revs)):
            for line in open(os.path.join(raw, f"r{r}_s{s}_v{i}.txt")):
                t = line.split()
                if len(t) > 4 and t[1].isdigit() and t[0][0].isalpha():
                    key = (t[0], int(t[1]))
                    if key not in order:
                        order.append(key)
                    times.setdefault((key, i), []).append(float(t[3]))
                    paths.setdefault((key, i), t[2])
    print(f"set {s}: " + " | ".join(f"{i}: {rev}" for i, rev in enumerate(revs)) + f"  (median us of {rounds} rounds; ratio to 0)"
          + f"  [{os.environ.get('AB_SET_' + str(s), '')}]")
    for key in order:
        cells = []
        base = statistics.median(times.get((key, 0), [float("nan")]))
        for i in range(len(revs)):
            v = times.get((key, i))
            if not v:
                cells.append(f"{'-':>22s}")
                continue
            med = statistics.median(v)
            cells.append(f"{med:9.1f} {paths[(key, i)][:15]:>15s}" + (f" {med / base:5.3f}" if i else ""))
        print(f"  {key[0]:20s} {key[1]:6d} " + " ".join(cells))
PY
