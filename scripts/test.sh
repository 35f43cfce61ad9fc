#!/usr/bin/env bash
# The test command of the README and of CI: set up, build (every CUDA translation unit is
# compiled for sm_90a when nvcc is present), run the CPU-labelled tests.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
dir="$(scripts/build.sh)"
preset="$(basename "$dir")"
test_preset=$([ "$preset" = release ] && echo release-cpu || echo cpu)
ctest --preset "$test_preset" -j "${JOBS:-2}"
