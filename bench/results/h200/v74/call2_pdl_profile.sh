#!/usr/bin/env bash
# v74 call 2: hp = hyb with pdl_candidate.patch (v73's candidate rebased: the one-pass quantizer
# also a programmatic dependent launch where its two-pass form was; a cooperative launch with
# both attributes, the kernel waiting for its predecessor first), then where the FP8 decode and
# small-grouped time goes (each kernel alone, ncu, cold L2; hyb, the same kernels as main73
# there): Scout TP8 fp8_channel M = 16 / 64 (0.80x / 0.75x of vLLM on v67's H200) and Qwen3
# fp8_block M = 4 (0.74x).
#   Builds: hyb as call 1; hp = hyb + `git apply bench/results/h200/v74/pdl_candidate.patch`.
#   carry: ["build/carry/hyb.tgz", "build/carry/hp.tgz"]
# Run as `bash bench/results/h200/v74/call2_pdl_profile.sh` (W unset: the work folder is $OUT/w2).
source scripts/carried_env.sh
carried_setup "${W:-w2}" hyb hp || exit 1
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv > "$W/info.txt" 2>&1
gtest_part "$TESTS_hp" fp8 200 '*Fp8*'
sanitize "$BIN_hp" hp check --precision fp8_tensor --shape qwen3_30b_a3b_tp1 --m 64
abba_tagged hyb hp tensor --precision fp8_tensor
profile_builds scout fp8_channel "llama4_scout_tp8:16 llama4_scout_tp8:64" hyb > "$W/profile_scout_cmp.txt" 2>&1
profile_builds qwen3 fp8_block "qwen3_30b_a3b_tp1:4" hyb > "$W/profile_qwen3_cmp.txt" 2>&1
carried_report
abba_report hyb hp 40
cat "$W/profile_scout_cmp.txt" "$W/profile_qwen3_cmp.txt" | tail -40
carried_pack
