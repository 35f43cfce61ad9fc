#!/usr/bin/env bash
# v62 call 9: dag2 = dag with dn_after_gu as its own kernel instantiation (the resident plans'
# kernel as ex2's, but for ptxas's choices) and the plan's new fields after the old ones. The
# one-token cases, ABBA ex2 / dag2 at M = 1 and 2 (w4a16 GPTQ, AWQ), then dag2's bench of each
# precision while the call's time lasts (the first H200 numbers since v53 if this is one).
#   carry: ["build/carry/ex2.tgz", "build/carry/dag2.tgz"]
source scripts/carried_env.sh
carried_setup w9 ex2 dag2 || exit 1
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv > "$W/info.txt" 2>&1
gtest_part "$TESTS_dag2" otl 200 'OneTokenInt4Layer.*:OneTokenWithoutAlign.*'
for pr in w4a16 w4a16_awq; do abba_tagged ex2 dag2 "$pr" --precision $pr --m 1,2; done
for pr in w4a16 bf16 w8a16 fp8_block fp8_channel; do
  [ "$(el)" -lt 330 ] && bench_each "$BIN_dag2" "$pr"
done
carried_report
abba_report ex2 dag2 12
carried_pack
