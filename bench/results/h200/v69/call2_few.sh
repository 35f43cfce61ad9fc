#!/usr/bin/env bash
# v69 call 2: few2 = few (call 1) with the static per-tensor scale stored before warp 0 may
# leave (call 1's failures: FewTokensFp8 with skipped slot 0 under a static scale, shared
# scales[0] unwritten) and the few-token kernel only where the down weights streamed again for
# shared experts are expected at most 8 MiB (Qwen2 TP4 M = 4 out). 1. few2's FP8 cases and
# sanitizers at M = 2-4; 2. ABBA cand / few2 at M = 1-4 (fp8_channel, fp8_block); 3. on an H200,
# few2's bench of every precision.
#   carry: ["build/carry/cand.tgz", "build/carry/few2.tgz"]
# Run as `bash bench/results/h200/v69/call2_few.sh` (W unset: the work folder is $OUT/w2).
source scripts/carried_env.sh
carried_setup "${W:-w2}" cand few2 || exit 1
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv > "$W/info.txt" 2>&1
gtest_part "$TESTS_few2" few2 200 'FewTokensFp8.*:OneTokenWithoutAlign.*:Paths/Fp8Layer.*/small_m:SmallMSplitK.*:Paths/DenseLayer.EdgeShapes/small_m'
sanitize "$BIN_few2" few2_block check --precision fp8_block --shape qwen3_30b_a3b_tp1 --m 2
sanitize "$BIN_few2" few2_channel check --precision fp8_channel --shape qwen2_57b_a14b_tp4 --m 3
abba cand few2 fchannel --precision fp8_channel --m 1,2,3,4
abba cand few2 fblock --precision fp8_block --m 1,2,3,4
echo "abba few2 $(el) s" >> "$W/info.txt"
if nvidia-smi -L | grep -q H200 && [ "$(el)" -lt 420 ]; then
  bench_each "$BIN_few2" bf16 fp8_channel fp8_tensor fp8_block w4a16
fi
carried_report
for t in fchannel fblock; do echo "== $t few2 / cand"; abba_compare cand few2 $t 20; done
carried_pack
