#!/usr/bin/env bash
# v47 call 4: x's FP8 quantizer on the grouped path as a programmatic dependent of align (it
# waits at its start; align releases at its end), an experiment build over b86dcd4 with an
# environment switch (FUSEDMOE_XQ_PDL=1; not landed as a switch): fp8_channel, fp8_block and
# fp8_tensor at M = 16-4096, off / on / on / off.
set -uo pipefail
root="$(pwd)"; OUT="${OUT:-/tmp/out}"; W="$OUT/w4"; rm -rf "$W"; mkdir -p "$W"
ln -sfn "$root" /tmp/ciclone
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:/usr/local/cuda/lib:${LD_LIBRARY_PATH:-}
tar xzf build/carry/bins.tgz -C build/carry
t0=$(date +%s)
/usr/local/cuda/bin/compute-sanitizer --tool memcheck --error-exitcode 1 env FUSEDMOE_XQ_PDL=1 build/carry/xq/fusedmoe check --precision fp8_channel --E 16 --H 512 --I 256 --topk 4 --m 300 > "$W/memcheck.txt" 2>&1
echo "memcheck rc=$? $(( $(date +%s) - t0 )) s"; grep -E "SUMMARY|result" "$W/memcheck.txt" | head -2
for prec in fp8_channel fp8_block fp8_tensor; do
  for v in 0 1 1 0; do
    n=1; [ -f "$W/bench_${prec}_x${v}_r1.txt" ] && n=2
    FUSEDMOE_XQ_PDL=$v build/carry/xq/fusedmoe bench --precision $prec --m 16,32,64,128,256,512,1024,4096 > "$W/bench_${prec}_x${v}_r$n.txt" 2>&1
    echo "$prec x$v r$n rc=$? $(( $(date +%s) - t0 )) s"
  done
done
tar czf "$OUT/call4.tgz" -C "$W" . && rm -rf "$W"
