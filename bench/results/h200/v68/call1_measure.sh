#!/usr/bin/env bash
# v68 call 1: three builds, land (main 52eaf24), mend (land with v67's two twins mended:
# lanes_max's run-time loop replaced by team_max's branch-free five shuffles in the span
# quantizer; load_shared_if made a form of device_util.cuh's predicated load) and hoist (mend
# plus v67's hoist_candidate.patch: the block-scale down GEMVs' weight-scale rows before their
# wait). 1. hoist's FP8 cases; 2. ABBA land / mend of fp8_block (the span quantizer's group
# path) and mend / hoist of fp8_block at M <= 64; 3. a forced split-K sweep of the small-M
# GEMVs (mend, fp8_channel and bf16, every G,D of 1/2/4/8 at M = 1-32, one round), against the
# planner's choice in the same run; 4. ncu of the FP8 GEMVs at Mixtral M = 1 / 2 and Qwen3
# M = 16 (fp8_channel), where the layer streams at 62-73% of the read roofline.
#   carry: ["build/carry/land.tgz", "build/carry/mend.tgz", "build/carry/hoist.tgz"]
# Run as `bash bench/results/h200/v68/call1_measure.sh` (W unset: the work folder is $OUT/w1).
source scripts/carried_env.sh
carried_setup "${W:-w1}" land mend hoist || exit 1
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv > "$W/info.txt" 2>&1
gtest_part "$TESTS_hoist" hoist 150 'Fp8Quantize.*:FewTokensFp8.*:OneTokenWithoutAlign.*:Paths/Fp8Layer.*/small_m:SmallMSplitK.*'
abba_tagged land mend block --precision fp8_block --m 1,2,4,8,16,32,64,256,1024
abba_tagged mend hoist hblock --precision fp8_block --m 1,2,4,8,16,32,64
sweep() {
  local pr="$1" g d
  timeout 60 "$BIN_mend" bench --precision "$pr" --m 1,2,4,8,16,32 > "$W/sweep_${pr}_auto.txt" 2>&1
  for g in 1 2 4 8; do
    for d in 1 2 4 8; do
      timeout 60 "$BIN_mend" bench --precision "$pr" --m 1,2,4,8,16,32 --split-k "$g,$d" > "$W/sweep_${pr}_${g}_$d.txt" 2>&1
    done
  done
  echo "sweep $pr $(el) s" >> "$W/info.txt"
}
sweep fp8_channel
[ "$(el)" -lt 330 ] && sweep bf16
[ "$(el)" -lt 400 ] && ncu_points "$BIN_mend" gemv 'fp8_gemv' "mixtral_8x7b_tp1:1 mixtral_8x7b_tp1:2 qwen3_30b_a3b_tp1:16" --precision fp8_channel
# Every kernel of one layer call (time, DRAM, tensor pipe), FP8 and bf16 at the decode points
# that trail vLLM's column most.
layer_times() {
  local pr="$1" s="$2" m="$3"
  local mm='gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_elapsed'
  timeout 60 ncu --clock-control none --print-units base --metrics "$mm" -k 'regex:align|fp8_|combine|gemv|gated|one_token' -c 8 \
    --csv "$BIN_mend" bench --shape "$s" --m "$m" --precision "$pr" --seconds 0.001 > "$W/ncu_layer_${pr}_${s}_$m.csv" 2> /dev/null
}
[ "$(el)" -lt 420 ] && for pt in qwen3_30b_a3b_tp1:4 qwen3_30b_a3b_tp1:16 qwen2_57b_a14b_tp4:16 mixtral_8x7b_tp1:1; do
  layer_times fp8_channel "${pt%%:*}" "${pt##*:}"
done
[ "$(el)" -lt 480 ] && layer_times bf16 qwen3_30b_a3b_tp1 4
[ "$(el)" -lt 500 ] && layer_times bf16 qwen3_30b_a3b_tp1 16
echo "ncu layers $(el) s" >> "$W/info.txt"
carried_report
abba_report land mend 12
abba_report mend hoist 12 | tail -26
python3 bench/results/h200/v68/sweep_report.py "$W" fp8_channel bf16
python3 scripts/ncu_summary.py "$W" --detail 2>&1 | head -30
python3 scripts/ncu_summary.py "$W" 2>&1 | grep -v "^$" | head -80
carried_pack
