#!/usr/bin/env bash
# v64 call 2: er2 = main + the GEMVs' epilogue routing (sorted_pairs, then topk_weights) loaded at
# each pass's start (gemv::PassRouting) in the one-n-tile kernels (wna16_gemv one-tile and
# several-tile, the dense register and ring kernels), against land = main (7325020):
# 1. er2's integer and dense small-M cases (weight on input among them);
# 2. ABBA land / er2: w4a16 and bf16 at M = 1-128;
# 3. er2's w4a16 with the down GEMV forced to four tiles a warp (where the planner keeps
#    one: below 8 waves), against its auto in the ABBA;
# 4. ncu of er2's int4 GEMVs at DeepSeek-V3 TP8 M = 32, the down GEMV at one and four tiles a warp.
#   carry: ["build/carry/land.tgz", "build/carry/er2.tgz"]
source scripts/carried_env.sh
carried_setup "${W:-w2}" land er2 || exit 1
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv > "$W/info.txt" 2>&1
gtest_part "$TESTS_er2" cases 90 'Paths/QuantLayer.*/small_m:QuantLayerAuto.*:OneTokenWithoutAlign.*:OneTokenInt4Layer.*:SmallMSplitK.*:Paths/DenseLayer.*/small_m:DenseLayerAuto.*'
for pr in w4a16 bf16; do abba_tagged land er2 "$pr" --precision $pr --m 1,2,4,8,16,32,64,128; done
for t in 4; do
  timeout 60 "$BIN_er2" bench --precision w4a16 --m 1,2,4,8,16,32,64,128 --tiles-per-warp $t > "$W/bench_tpw${t}_er2.txt" 2>&1
done
echo "forced tiles $(el) s" >> "$W/info.txt"
for t in 1 4; do ncu_points "$BIN_er2" t$t wna16_gemv "deepseek_v3_tp8:32" --precision w4a16 --tiles-per-warp $t; done
carried_report
python3 scripts/ncu_summary.py "$W" --detail
abba_report land er2 42
for t in 4; do
  echo "== w4a16 er2 tiles $t / er2 auto (round 1)"
  python3 scripts/bench_compare.py "$W/bench_w4a16_er2_r1.txt" "$W/bench_tpw${t}_er2.txt" --slower 1.001 | tail -41 | awk '{print $2, $3, $6}' | paste -sd' ' | fold -w 250
done
carried_pack
