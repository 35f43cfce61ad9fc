#!/usr/bin/env bash
# The test command of the README and of CI: set up, build (every CUDA translation unit is
# compiled for sm_90a when nvcc is present), run the CPU-labelled tests, then run them again
# in the CPU-only debug build with AddressSanitizer and UBSan (out-of-bounds and undefined
# behaviour in the reference and host code fail the run). SANITIZE=0 skips that second pass.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
jobs="${JOBS:-2}"
dir="$(scripts/build.sh)"
preset="$(basename "$dir")"
test_preset=$([ "$preset" = release ] && echo release-cpu || echo cpu)
ctest --preset "$test_preset" -j "$jobs"
# The Python package and its GPU tests (run on the H200 by scripts/python_check.sh) must at
# least compile here.
python3 -m py_compile python/fusedmoe/*.py tests/python/*.py
if [ "${SANITIZE:-1}" != 0 ]; then
  cmake --preset debug > build/debug-configure.log
  cmake --build --preset debug -j "$jobs" > build/debug-build.log 2>&1 || { tail -40 build/debug-build.log; exit 1; }
  ASAN_OPTIONS=detect_leaks=1 ctest --preset debug -j "$jobs"
fi
