#!/usr/bin/env bash
# v67 call 2, two builds: land = main (f6ee7b4); fold3 = the intermediate's quantizer folded
# into the FP8 one-token down GEMV, with the per-tensor amax stored for the harness (call 1's
# per-tensor failures: the tests read it), the kernels specialized by scale kind, and the
# group path's 64-bit division and guarded shuffles (32 per vector) gone from its quantizer:
# 1. fold3's FP8 cases; memcheck + racecheck on its per-tensor and block one-token downs;
# 2. ncu of each FP8 kernel at M = 1 (fp8_block DeepSeek-V3 TP8, fp8_channel Qwen3)
#    in both builds: why block lost 2-7% in call 1 where channel / tensor gained 3-5%;
# 3. ABBA land / fold3 of the three FP8 modes at M = 1.
#   carry: ["build/carry/land.tgz", "build/carry/fold3.tgz"]
# Run as `bash bench/results/h200/v67/call2_profile.sh` (W unset: the work folder is $OUT/w2).
source scripts/carried_env.sh
carried_setup "${W:-w2}" land fold3 || exit 1
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv > "$W/info.txt" 2>&1
gtest_part "$TESTS_fold3" fold 120 'FewTokensFp8.*:OneTokenWithoutAlign.*:Fp8Quantize.*:Paths/Fp8Layer.*/small_m:SmallMSplitK.*'
sanitize "$BIN_fold3" tensor check --precision fp8_tensor --shape qwen3_30b_a3b_tp1 --m 1
sanitize "$BIN_fold3" block check --precision fp8_block --shape qwen2_57b_a14b_tp4 --m 1
mm='gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,smsp__issue_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum,launch__registers_per_thread,launch__grid_size,smsp__warps_active.avg.per_cycle_active,regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio'
for b in land fold3; do
  for pt in fp8_block:deepseek_v3_tp8 fp8_channel:qwen3_30b_a3b_tp1; do
    pr=${pt%%:*} s=${pt##*:}
    timeout 90 ncu --clock-control none --print-units base --metrics "$mm" -k 'regex:fp8_' -c 8 --csv \
      "$root/build/carry/$b/fusedmoe" bench --shape "$s" --m 1 --precision "$pr" --seconds 0.001 \
      > "$W/ncu_${b}_${pr}_$s.csv" 2> "$W/ncu_${b}_${pr}_$s.err"
  done
done
echo "ncu $(el) s" >> "$W/info.txt"
for pr in fp8_block fp8_channel fp8_tensor; do
  abba_tagged land fold3 $pr --precision $pr --m 1
done
carried_report
for f in "$W"/ncu_*.csv; do
  echo "== $(basename $f)"
  python3 - "$f" <<'PY'
import csv,sys,collections
rows=list(csv.reader(open(sys.argv[1])))
hdr=None;data=collections.OrderedDict()
for r in rows:
    if r and r[0]=='ID': hdr=r; continue
    if hdr and len(r)==len(hdr):
        d=dict(zip(hdr,r)); key=(d['ID'],d['Kernel Name'][:40])
        data.setdefault(key,{})[d['Metric Name']]=d['Metric Value'].replace(',','')
for (i,k),m in data.items():
    st=sorted(((float(v),n.split('stalled_')[1].split('_per')[0]) for n,v in m.items() if 'stalled' in n and v.replace('.','',1).isdigit()),reverse=True)[:4]
    print(i,k,'us',round(float(m.get('gpu__time_duration.sum',0))/1000,2),'regs',m.get('launch__registers_per_thread'),'grid',m.get('launch__grid_size'),
          'dram%',m.get('dram__throughput.avg.pct_of_peak_sustained_elapsed','')[:5],'issue%',m.get('smsp__issue_active.avg.pct_of_peak_sustained_active','')[:5],
          'inst',m.get('smsp__inst_executed.sum'),' '.join(f'{n}:{v:.1f}' for v,n in st))
PY
done
abba_report land fold3 7 | awk 'NF >= 6 {print substr($2,1,10), $3, $4, $5, $6} NF < 6' | paste -sd' ' | fold -w 240
carried_pack
