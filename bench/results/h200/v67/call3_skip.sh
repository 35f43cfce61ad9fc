#!/usr/bin/env bash
# v67 call 3: fold4 = fold3 with the one-token quantizer's loads wholly past the row not
# visited (call 2's ncu: fold3's block down GEMV 16.1-16.5 us against land's quantizer 4.1 and
# down 13.1-13.5 at DeepSeek-V3 TP8, whose K = 256 fills one of the batch's four loads):
# 1. fold4's FP8 cases; 2. ncu of fp8_block DeepSeek-V3 TP8 M = 1; 3. ABBA land / fold4 of
# fp8_block and fp8_channel at M = 1.
#   carry: ["build/carry/land.tgz", "build/carry/fold4.tgz"]
# Run as `bash bench/results/h200/v67/call3_skip.sh` (W unset: the work folder is $OUT/w3).
source scripts/carried_env.sh
carried_setup "${W:-w3}" land fold4 || exit 1
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv > "$W/info.txt" 2>&1
gtest_part "$TESTS_fold4" fold 90 'FewTokensFp8.*:OneTokenWithoutAlign.*:Paths/Fp8Layer.*/small_m'
mm='gpu__time_duration.sum,smsp__inst_executed.sum,launch__registers_per_thread,launch__grid_size'
timeout 60 ncu --clock-control none --print-units base --metrics "$mm" -k 'regex:fp8_' -c 6 --csv \
  "$BIN_fold4" bench --shape deepseek_v3_tp8 --m 1 --precision fp8_block --seconds 0.001 > "$W/ncu_fold4_block.csv" 2>&1
echo "ncu $(el) s" >> "$W/info.txt"
for pr in fp8_block fp8_channel; do
  abba_tagged land fold4 $pr --precision $pr --m 1
done
carried_report
python3 - "$W/ncu_fold4_block.csv" <<'PY'
import csv,sys,collections
hdr=None;data=collections.OrderedDict()
for r in csv.reader(open(sys.argv[1])):
    if r and r[0]=='ID': hdr=r; continue
    if hdr and len(r)==len(hdr):
        d=dict(zip(hdr,r)); data.setdefault((d['ID'],d['Kernel Name'][:40]),{})[d['Metric Name']]=d['Metric Value'].replace(',','')
for k,m in data.items(): print(*k, *(f'{n}={v}' for n,v in m.items()))
PY
abba_report land fold4 8 | awk 'NF >= 6 {print substr($2,1,10), $3, $4, $5, $6} NF < 6' | paste -sd' ' | fold -w 240
carried_pack
