#!/usr/bin/env bash
# On the GPU machine: install the Python package from this tree against the machine's PyTorch
# (scikit-build-core, no build isolation: no registry there), run the pytest suite and the
# Python benchmark. Logs go to $OUT (or ./out); a short table is printed last.
#   device run: bash scripts/python_check.sh          (carry: .deps)
#   BENCH_M=1,16,256 narrows the benchmark grid (default: the C++ tool's); BENCH_M=none skips it; BENCH_PRECISIONS="bf16 w4a16"
#   picks the precisions (default bf16); CPP_BENCH=1 builds the C++ tool and benches the same
#   points first, and the Python table prints its numbers alongside (or CPP_BENCH_DIR=dir with
#   its bench_<p>.csv files). PYTEST_ARGS narrows pytest (default: tests/python), e.g.
#   PYTEST_ARGS="tests/python/test_ops.py -k prepared".
#   Fresh clone: `git bundle create .deps/fusedmoe.bundle HEAD` here (the device copy has no
#   .git; .deps is carried), then the device run clones the bundle into /tmp and installs and
#   tests from that clone with the README's command (CUTLASS from the carried .deps).
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source "$root/scripts/device_build.sh"
out="${OUT:-$root/out}"
mkdir -p "$out"
if [ -f "$root/.deps/fusedmoe.bundle" ]; then
  fresh=/tmp/fusedmoe_fresh_clone
  rm -rf "$fresh"
  if ! git clone -q "$root/.deps/fusedmoe.bundle" "$fresh" > "$out/clone.log" 2>&1; then
    cat "$out/clone.log"
    echo "python_check: cloning .deps/fusedmoe.bundle failed" >&2
    exit 1
  fi
  # A bundle left from an earlier tree would test old code: it must hold the revision this
  # tree names (.deps/REVISION, written before the call).
  want_rev="$(cat "$root/.deps/REVISION" 2>/dev/null)"
  got_rev="$(git -C "$fresh" rev-parse HEAD)"
  if [ -n "$want_rev" ] && [[ "$got_rev" != "$want_rev"* ]]; then
    echo "python_check: .deps/fusedmoe.bundle holds $got_rev, this tree is $want_rev (.deps/REVISION):" \
      "recreate the bundle (git bundle create .deps/fusedmoe.bundle HEAD) or delete it to test the tree" >&2
    exit 1
  fi
  ln -s "$root/.deps" "$fresh/.deps"
  echo "python_check: testing a fresh clone of $(git -C "$fresh" log --oneline -1)" | tee "$out/clone.log"
  root="$fresh"
fi
cd "$root"
site=/tmp/fusedmoe_site
rows=()
row() { rows+=("$(printf '%-22s %-6s %s' "$1" "$2" "$3")"); }
finish() { echo; printf '%s\n' "${rows[@]}"; exit "$1"; }

row "python" "info" "$(python3 -c 'import sys, torch; print(sys.version.split()[0], "torch", torch.__version__, "cuda", torch.version.cuda, "abi", int(torch._C._GLIBCXX_USE_CXX11_ABI))' 2>&1 | tail -1)"
row "c++" "info" "$(c++ --version | head -1); default $(echo '#include <string>' | c++ -x c++ -E -dM - | grep -o '_GLIBCXX_USE_CXX11_ABI [01]')"
start=$(date +%s)
export CMAKE_BUILD_PARALLEL_LEVEL="$(nproc)"
# The ops library must use the libstdc++ the Python process loads: build it with the system
# compiler (a toolchain that links its own libstdc++ statically crashed in std::ostream).
export CXX="${FUSEDMOE_PY_CXX:-/usr/bin/c++}"
export CUDAHOSTCXX="$CXX"
rm -rf build/python "$site"  # a fresh configure (the compiler is part of the cache) and install
if ! python3 -m pip install --upgrade --no-build-isolation --no-deps --target "$site" -C build-dir=build/python . \
    > "$out/python_build.log" 2>&1; then
  tail -40 "$out/python_build.log"
  row "pip install" "FAIL" "see python_build.log"
  finish 1
fi
row "pip install" "ok" "$(( $(date +%s) - start )) s, CXX $CXX"
export PYTHONPATH="$site"
start=$(date +%s)
# shellcheck disable=SC2086
python3 -m pytest -q -p no:cacheprovider ${PYTEST_ARGS:-tests/python} > "$out/pytest.log" 2>&1
status=$?
row "pytest" "$([ $status -eq 0 ] && echo ok || echo FAIL)" "$(tail -1 "$out/pytest.log"), $(( $(date +%s) - start )) s"
overall=$status
if [ $status -ne 0 ]; then
  grep -E "^(FAILED|ERROR)|Error|assert" "$out/pytest.log" | head -30
  if grep -q "Segmentation fault" "$out/pytest.log"; then  # a native backtrace of the first op call
    cuda-gdb -batch -ex run -ex bt --args python3 -c "
import torch, fusedmoe
x = torch.randn(4, 256, device='cuda').bfloat16()
w1 = torch.randn(8, 256, 256, device='cuda').bfloat16(); w2 = torch.randn(8, 256, 128, device='cuda').bfloat16()
print(fusedmoe.fused_experts(x, w1, w2, torch.ones(4, 2, device='cuda'), torch.zeros(4, 2, dtype=torch.int32, device='cuda')).sum())
" 2>&1 | grep -E "^#|signal|SIG" | head -30
  fi
fi
if [ "${BENCH_M:-}" != none ] && [ "${CPP_BENCH:-0}" = 1 ]; then
  # The C++ tool on the same points, just before the Python benchmark, for its comparison.
  start=$(date +%s)
  cli=build/cli
  if configure_device_build "$cli" OFF > "$out/cpp_bench.txt" 2>&1 &&
     cmake --build "$cli" -j "$(nproc)" --target fusedmoe_cli >> "$out/cpp_bench.txt" 2>&1; then
    CPP_BENCH_DIR=/tmp/fusedmoe_cpp_bench
    mkdir -p "$CPP_BENCH_DIR"
    m_arg=()
    [ -n "${BENCH_M:-}" ] && m_arg=(--m "$BENCH_M")
    cpp_status=0
    for precision in ${BENCH_PRECISIONS:-bf16}; do
      "$cli/fusedmoe" bench --precision "$precision" "${m_arg[@]}" --csv "$CPP_BENCH_DIR/bench_$precision.csv" \
        >> "$out/cpp_bench.txt" 2>&1 || cpp_status=1
    done
    [ $cpp_status -eq 0 ] || overall=1
    row "fusedmoe bench (C++)" "$([ $cpp_status -eq 0 ] && echo ok || echo FAIL)" "$(( $(date +%s) - start )) s"
  else
    overall=1
    row "fusedmoe bench (C++)" "FAIL" "build: see cpp_bench.txt"
  fi
fi
if [ "${BENCH_M:-}" != none ]; then
  : > "$out/python_bench.txt"
  for precision in ${BENCH_PRECISIONS:-bf16}; do
    start=$(date +%s)
    compare=()  # the C++ tool's CSV of the same run, when CPP_BENCH_DIR has one
    [ -n "${CPP_BENCH_DIR:-}" ] && [ -f "$CPP_BENCH_DIR/bench_$precision.csv" ] && compare=(--compare "$CPP_BENCH_DIR/bench_$precision.csv")
    python3 -m fusedmoe.bench --precision "$precision" --m "${BENCH_M:-}" "${compare[@]}" \
      >> "$out/python_bench.txt" 2>&1
    status=$?
    [ $status -eq 0 ] || overall=1
    row "fusedmoe.bench $precision" "$([ $status -eq 0 ] && echo ok || echo FAIL)" "$(( $(date +%s) - start )) s"
  done
  cat "$out/python_bench.txt"
fi
finish "$overall"
