#!/usr/bin/env bash
# Installs what the build needs beyond a fresh machine's toolchain into .deps/ (ignored):
#   .deps/cutlass     CUTLASS 4.2.0 headers (include/, tools/util/include/) from the
#                     nvidia-cutlass==4.2.0.0 wheel, installed with pip --no-deps
#   .deps/cuobjdump   cuobjdump and nvdisasm from NVIDIA's wheels, where nvcc's toolkit lacks
#                     them (the SASS check of the CUDA build)
#   .deps/googletest  GoogleTest sources, copied from /usr/src/googletest when present, so
#                     the GPU machine (no package registry) can build the tests
# Idempotent: a second run only checks.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
deps="$root/.deps"
mkdir -p "$deps"

cutlass="$deps/cutlass"
if ! grep -qs "define CUTLASS_MINOR 2" "$cutlass/include/cutlass/version.h"; then
  echo "setup: installing CUTLASS 4.2.0 headers into $cutlass"
  tmp="$(mktemp -d)"
  trap 'rm -rf "$tmp"' EXIT
  python3 -m pip install --quiet --disable-pip-version-check --root-user-action=ignore --no-deps --target "$tmp" nvidia-cutlass==4.2.0.0
  src="$tmp/cutlass_library/source"
  [ -f "$src/include/cutlass/version.h" ] || { echo "setup: the wheel has no $src/include/cutlass/version.h" >&2; exit 1; }
  rm -rf "$cutlass"
  mkdir -p "$cutlass/tools/util"
  cp -r "$src/include" "$cutlass/include"
  cp -r "$src/tools/util/include" "$cutlass/tools/util/include"
  cp "$src/LICENSE.txt" "$cutlass/" 2>/dev/null || true
fi
grep -E "define CUTLASS_(MAJOR|MINOR|PATCH) " "$cutlass/include/cutlass/version.h" | awk '{printf "%s ", $3} END {print ""}' |
  grep -q "^4 2 0" || { echo "setup: $cutlass is not CUTLASS 4.2.0" >&2; exit 1; }

# cuobjdump (and the nvdisasm it runs) for the SASS check of the CUDA build
# (scripts/sass_pdl_check.py, a CPU test): the toolkit's where it has them, else NVIDIA's wheels
# for nvcc's major version (13 and later: the unsuffixed packages). Best effort: without them
# CMake warns and leaves that one test out.
nvcc_bin="$(command -v nvcc || true)"
[ -n "$nvcc_bin" ] || [ ! -x /usr/local/cuda/bin/nvcc ] || nvcc_bin=/usr/local/cuda/bin/nvcc
if [ -n "$nvcc_bin" ] && { [ ! -x "$(dirname "$nvcc_bin")/cuobjdump" ] || [ ! -x "$(dirname "$nvcc_bin")/nvdisasm" ]; } &&
  ! { ls "$deps"/cuobjdump/nvidia/cu*/bin/cuobjdump && ls "$deps"/cuobjdump/nvidia/cu*/bin/nvdisasm; } > /dev/null 2>&1; then
  major="$("$nvcc_bin" --version | sed -n 's/.*release \([0-9][0-9]*\)\..*/\1/p')"
  if [ -n "$major" ] && [ "$major" -ge 13 ]; then
    echo "setup: installing cuobjdump and nvdisasm (CUDA $major) into $deps/cuobjdump"
    python3 -m pip install --quiet --disable-pip-version-check --root-user-action=ignore --no-deps \
      --target "$deps/cuobjdump" "nvidia-cuda-cuobjdump>=$major,<$((major + 1))" "nvidia-cuda-nvdisasm>=$major,<$((major + 1))" ||
      echo "setup: warning: could not install cuobjdump/nvdisasm; the SASS check of the kernels will not run" >&2
  else
    echo "setup: warning: nvcc's toolkit has no cuobjdump/nvdisasm and CUDA '${major}' has no wheel here; the SASS check of the kernels will not run" >&2
  fi
fi

if [ ! -f "$deps/googletest/CMakeLists.txt" ] && [ -f /usr/src/googletest/CMakeLists.txt ]; then
  echo "setup: copying GoogleTest sources into $deps/googletest"
  cp -r /usr/src/googletest "$deps/googletest"
fi
echo "setup: CUTLASS 4.2.0 at $cutlass"
