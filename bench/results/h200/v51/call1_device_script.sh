#!/usr/bin/env bash
# v51 call 1, prepared and NOT run (v51 had no device: `status` said paused). For the next
# session's first call, on a release build of main made on the build machine and carried as
# build/carry/bins.tgz (final/fusedmoe, final/fusedmoe_gpu_tests; symlink the build's source
# path, e.g. /tmp/ciclone, to the repository root as below).
#  1. wna16_grouped_gemm's cases alone, under a timeout (a pipeline bug hangs rather than fails);
#  2. the whole GPU suite (the landed v50 build's never ran either);
#  3. compute-sanitizer on one grouped_mixed case of each tile width;
#  4. w4a16 / w8a16 at M = 128-4096: auto, grouped_gemm (the dequant path), grouped_mixed;
#  5. ncu of the mixed kernel at Mixtral M = 1024 (w4a16).
set -o pipefail
root="$(pwd)"; OUT="${OUT:-/tmp/out}"; W="$OUT/w1"; rm -rf "$W"; mkdir -p "$W"
ln -sfn "$root" /tmp/ciclone
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:/usr/local/cuda/lib:${LD_LIBRARY_PATH:-}
tar xzf build/carry/bins.tgz -C build/carry
B=$root/build/carry/final/fusedmoe; T=$root/build/carry/final/fusedmoe_gpu_tests; t0=$(date +%s)
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > "$W/info.txt" 2>&1
timeout 240 $T --gtest_filter='Paths/QuantLayer.*/grouped_mixed' > "$W/ctest_mixed.txt" 2>&1
echo "mixed cases rc=$? $(( $(date +%s) - t0 )) s" >> "$W/info.txt"
timeout 400 $T --gtest_filter='-Paths/QuantLayer.*/grouped_mixed' > "$W/ctest_rest.txt" 2>&1
echo "rest of the suite rc=$? $(( $(date +%s) - t0 )) s" >> "$W/info.txt"
for m in 300 1024; do  # 128- and 256-token tiles (8 experts, top-2)
  for tool in memcheck racecheck synccheck; do
    timeout 120 compute-sanitizer --tool $tool $B check --precision w4a16_awq --E 8 --H 2880 --I 704 --topk 2 \
      --m $m --routing skewed --path grouped_mixed > "$W/${tool}_m$m.txt" 2>&1
  done
done
echo "sanitizers $(( $(date +%s) - t0 )) s" >> "$W/info.txt"
P="--m 128,256,512,1024,4096"
for pr in w4a16 w8a16; do
  for path in auto grouped_gemm grouped_mixed; do
    timeout 120 $B bench --precision $pr --path $path $P > "$W/bench_${pr}_${path}.txt" 2>&1
  done
done
echo "benches $(( $(date +%s) - t0 )) s" >> "$W/info.txt"
OUT="$W/p" FUSEDMOE_BIN=$B PRECISION=w4a16 PATH_ARG=grouped_mixed DETAIL='wna16_grouped' \
  timeout 180 bash scripts/profile.sh mixtral_8x7b_tp1:1024 > /dev/null 2>&1
cp "$W/p/profile.txt" "$W/profile_w4a16_mixed.txt"; rm -rf "$W/p"
echo "done $(( $(date +%s) - t0 )) s" >> "$W/info.txt"
cat "$W/info.txt"; grep -h "PASSED\|FAILED" "$W"/ctest_*.txt | tail -8
grep -h "ERROR SUMMARY\|RACECHECK SUMMARY\|result" "$W"/*check_m*.txt
python3 - "$W" <<'PY'
import sys
W = sys.argv[1]
def load(f):
    d = {}
    try:
        for l in open(f):
            p = l.split()
            if len(p) > 8 and p[1].isdigit():
                d[(p[0], int(p[1]))] = float(p[3])
    except OSError:
        pass
    return d
for pr in ("w4a16", "w8a16"):
    A, G, X = (load(f"{W}/bench_{pr}_{p}.txt") for p in ("auto", "grouped_gemm", "grouped_mixed"))
    for k in sorted(A):
        x = X.get(k)
        print(f"{pr} {k[0]:22s} {k[1]:5d} auto {A[k]:8.1f} dequant {G.get(k, 0):8.1f} mixed {x or 0:8.1f}"
              + (f" mixed/auto {x / A[k]:.3f}" if x else ""))
PY
tar czf "$OUT/call1.tgz" -C "$W" . && rm -rf "$W"
