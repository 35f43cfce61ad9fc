#!/usr/bin/env bash
# v66 call 2: fin = what landed (11ee6f4: call 1's wa and ot, the FP8 one-token down where
# I >= 512 or under block scales):
# 1. the GPU suite on fin: the FP8 few-token test (its shapes changed with the rule), then every
#    test call 1 did not run (call 1 ran the rest on ot);
# 2. fin's bench of the FP8 modes, bf16 and w4a16 at the shapes file's batch sizes.
#   carry: ["build/carry/fin.tgz"]
# Run as `bash bench/results/h100/v66/call2_fin.sh` (W unset: the work folder is $OUT/w2).
source scripts/carried_env.sh
carried_setup "${W:-w2}" fin || exit 1
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv > "$W/info.txt" 2>&1
RAN='AlignTokens.*:Fp8Quantize.*:Paths/Fp8Layer.*:Paths/DenseLayer.*:OneTokenWithoutAlign.*:FewTokens*:SmallMSplitK.*'
gtest_part "$TESTS_fin" fp8 60 'FewTokensFp8.*'
gtest_part "$TESTS_fin" rest 260 "-$RAN"
bench_each "$BIN_fin" fp8_channel fp8_block fp8_tensor bf16 w4a16
carried_report
for pr in fp8_channel fp8_block fp8_tensor bf16 w4a16; do
  echo "== $pr"; grep -E "^(mixtral|qwen|deepseek|llama)" "$W/bench_$pr.txt" | awk '$9 != "-" {print $1, $2, $4, $8}' | paste -sd' ' | fold -w 240
done
rm -f "$OUT"/bench_*.txt
carried_pack
