#!/usr/bin/env bash
# v71 call 3: align's loads and claims in flight together (al = 26b9c54 + load_experts loading
# every id, then every map entry, before any is used; every slot claimed before any is
# stored) against rt (26b9c54, main's code). 1. al's align cases; 2. the routing stage rt / al
# / al / rt; 3. align alone in ncu (profile_builds: Qwen3 M = 256 bf16, DeepSeek-V3 M = 1024
# bf16: the one-CTA and the cooperative kernels); 4. ABBA of the layer, bf16 and fp8_channel
# at M = 64-4096.
#   carry: ["build/carry/rt.tgz", "build/carry/al.tgz"]
# Run as `bash bench/results/h200/v71/call3_align.sh` (W unset: the work folder is $OUT/w3).
source scripts/carried_env.sh
carried_setup "${W:-w3}" rt al || exit 1
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv > "$W/info.txt" 2>&1
gtest_part "$TESTS_al" al 200 'AlignTokens.*:*/DenseLayer.EdgeShapes/*:*/DenseLayer.CudaGraphReplaysWithNewRouting/*'
r=0
for b in rt al al rt; do
  r=$((r + 1))
  timeout 90 "$root/build/carry/$b/fusedmoe" bench --stage routing --m 1,4,16,64,256,1024,4096 > "$W/routing_${b}_r$r.txt" 2>&1
  echo "routing $b r$r rc=$? $(el) s" >> "$W/info.txt"
done
profile_builds align bf16 "qwen3_30b_a3b_tp1:256 deepseek_v3_tp8:1024 mixtral_8x7b_tp1:64" rt al > "$W/profile_align_compare.txt"
abba_tagged rt al bf16 --precision bf16 --m 64,256,1024,4096
abba_tagged rt al chan --precision fp8_channel --m 64,256,1024,4096
carried_report
for f in rt_r1 al_r2 al_r3 rt_r4; do echo "== $f"; grep -E "^(mix|qwen|deep|llama)" "$W/routing_$f.txt" | awk '{printf "%s:%s %s %s %s\n", substr($1,1,6), $2, $5, $6, $7}' | paste -sd' ' | fold -w 2000; done
grep -h "memset" "$W"/routing_*.txt
grep -vE "setup_groups|pdl_gemm" "$W/profile_align_compare.txt"
abba_report rt al 20
carried_pack
