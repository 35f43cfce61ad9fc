#!/usr/bin/env bash
# Sets up .deps/ and builds: the CUDA preset (sm_90a) when nvcc is on PATH, else CPU-only.
# Prints the build directory last. JOBS sets the parallelism (default: 2, the CI machine's cores).
# A build log that mentions ptxas warning C7510 (serialized wgmma) fails the build.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
scripts/setup.sh >&2
if command -v nvcc >/dev/null 2>&1; then
  preset=release
else
  preset=cpu
  echo "build: nvcc not found, building the CPU-only preset" >&2
fi
mkdir -p build
log="build/$preset-build.log"
cmake --preset "$preset" >&2
if ! cmake --build --preset "$preset" -j "${JOBS:-2}" 2>&1 | tee "$log" >&2; then
  echo "build: FAILED (log: $log)" >&2
  exit 1
fi
if grep -q "C7510" "$log"; then
  echo "build: ptxas warning C7510 (wgmma serialized) is an error here; is -DNDEBUG set? (log: $log)" >&2
  exit 1
fi
echo "build/$preset"
