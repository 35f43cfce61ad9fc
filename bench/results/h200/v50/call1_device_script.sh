#!/usr/bin/env bash
# v50 call 1: main f72f244 release build. ncu of the integer decode GEMVs (w8a16, w4a16) and the
# dense one (bf16) at M = 1 / 16, and a split-K sweep of w8a16 Mixtral / Qwen3 M = 1.
set -o pipefail
root="$(pwd)"; OUT="${OUT:-/tmp/out}"; W="$OUT/w1"; rm -rf "$W"; mkdir -p "$W"
ln -sfn "$root" /tmp/rel
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:/usr/local/cuda/lib:${LD_LIBRARY_PATH:-}
tar xzf build/carry/bins.tgz -C build/carry
B=$root/build/carry/base/fusedmoe; t0=$(date +%s)
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > "$W/info.txt" 2>&1
for prec in w8a16 w4a16 bf16; do
  OUT="$W/p_$prec" FUSEDMOE_BIN=$B PRECISION=$prec DETAIL='gemv|splitk' bash scripts/profile.sh mixtral_8x7b_tp1:1 qwen3_30b_a3b_tp1:1 qwen3_30b_a3b_tp1:16 > /dev/null 2>&1
  cp "$W/p_$prec/profile.txt" "$W/profile_$prec.txt"; rm -rf "$W/p_$prec"
  echo "profile $prec $(( $(date +%s) - t0 )) s" >> "$W/info.txt"
done
for s in 1,1 2,2 4,4 8,8 4,8 8,4 2,8; do
  $B bench --precision w8a16 --shape mixtral_8x7b_tp1,qwen3_30b_a3b_tp1,deepseek_v3_tp8 --m 1,4 --split-k $s 2>&1 | sed "s/^/split=$s /" >> "$W/splits_w8a16.txt"
done
$B bench --precision w8a16 --shape mixtral_8x7b_tp1,qwen3_30b_a3b_tp1,deepseek_v3_tp8 --m 1,4 2>&1 | sed "s/^/split=auto /" >> "$W/splits_w8a16.txt"
echo "done $(( $(date +%s) - t0 )) s" >> "$W/info.txt"
cat "$W/info.txt"
grep -h "us  read\|sum of kernels\|==" "$W"/profile_*.txt
awk 'NF > 8 && $3 ~ /^[0-9]+$/ {print $1, $2, $3, $5, $6}' "$W/splits_w8a16.txt"
tar czf "$OUT/call1.tgz" -C "$W" . && rm -rf "$W"
