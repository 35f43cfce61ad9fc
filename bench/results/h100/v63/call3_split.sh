#!/usr/bin/env bash
# v63 call 3: call 2's two changes apart, each ABBA against dag2 (w4a16 GPTQ g128 and AWQ,
# M = 1-64): cp = dag2 + the predicated copies only; kp = dag2 + the kept x registers and the
# zeroing tail stages only.
#   carry: ["build/carry/dag2.tgz", "build/carry/cp.tgz", "build/carry/kp.tgz"]
source scripts/carried_env.sh
carried_setup "${W:-w3}" dag2 cp kp || exit 1
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv > "$W/info.txt" 2>&1
for pr in w4a16 w4a16_awq; do
  abba_tagged dag2 cp "cp_$pr" --precision $pr --m 1,2,4,8,16,32,64
  abba_tagged dag2 kp "kp_$pr" --precision $pr --m 1,2,4,8,16,32,64
done
carried_report
for t in $TAGS; do
  echo "== $t"
  for r in 1 2; do python3 scripts/bench_compare.py "$W/bench_${t}_dag2_r$r.txt" "$W/bench_${t}_${t%%_*}_r$r.txt" --slower 1.001 | tail -36 | awk '{print $2, $3, $6}' | paste -sd' ' | fold -w 240; done
done
carried_pack
