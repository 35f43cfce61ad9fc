#!/usr/bin/env bash
# The main job: set up, build, and check one MoE layer against the CPU reference (on the GPU
# where this build has a kernel for the precision, else the reference alone, which it says).
# Arguments replace the default check, e.g. scripts/run.sh --shape mixtral_8x7b_tp1 --m 4 --precision w4a16
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
dir="$(scripts/build.sh)"
if [ $# -eq 0 ]; then
  set -- --shape deepseek_v3_tp8 --m 16 --precision bf16
fi
exec "$dir/fusedmoe" check "$@"
