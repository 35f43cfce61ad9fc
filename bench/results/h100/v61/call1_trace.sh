#!/usr/bin/env bash
# v61 call 1: where v60's lds kernel (the one-token int4 layer, 21.7 us at Qwen3 on the H100,
# 27% of DRAM's peak) spends its time, and what one kernel of one CTA per SM can read at all.
#   carry: ["build/carry/ltr.tgz"]  (lds.patch + ltr_trace.patch: the kernel's %globaltimer
#   stamps per phase, printed by FUSEDMOE_OTL_TRACE=1; and fusedmoe_one_token_read_probe)
source scripts/carried_env.sh
carried_setup w1 ltr || exit 1
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv > "$W/info.txt" 2>&1
timeout 120 build/carry/ltr/fusedmoe_one_token_read_probe > "$W/read_probe.txt" 2>&1
echo "probe rc=$? $(el) s" >> "$W/info.txt"
for s in qwen3_30b_a3b_tp1 deepseek_v3_tp8 llama4_scout_tp8; do
  FUSEDMOE_OTL_TRACE=1 timeout 60 "$BIN_ltr" check --precision w4a16 --shape $s --m 1 > "$W/trace_$s.txt" 2>&1
  echo "trace $s rc=$? $(el) s" >> "$W/info.txt"
done
cat "$W/info.txt" "$W/read_probe.txt"
for s in qwen3_30b_a3b_tp1 deepseek_v3_tp8 llama4_scout_tp8; do echo "== $s"; grep -E "otl_trace|result" "$W/trace_$s.txt"; done
carried_pack
