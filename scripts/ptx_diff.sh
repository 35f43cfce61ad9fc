#!/usr/bin/env bash
# Here (no GPU needed): which kernels of one CUDA source compile to different PTX at two
# revisions. Use it to tell whether a change that should leave a kernel alone really does
# (v18: adding a field to GroupedGemvParams changed every fp8_gemv kernel's PTX, and the
# per-channel kernels measured up to 5% slower), and whether a tree that was timed on the GPU
# and the tree that lands build the same kernels.
#   scripts/ptx_diff.sh REV_A REV_B [SOURCE]      (SOURCE default src/kernels/fp8.cu;
#                                                  REV_B "." is the working tree)
# Prints one line per kernel entry of REV_B: same, differs or new (symbol names, labels and
# comments are normalized away; a template parameter that only names a variant, e.g. a
# launch bound of 0, still makes the entry "new"), then the counts. Needs nvcc and .deps/
# (scripts/setup.sh).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
[ $# -ge 2 ] || { sed -n '2,12p' "${BASH_SOURCE[0]}"; exit 2; }
source_file=${3:-src/kernels/fp8.cu}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
ptx_of() {  # REV OUT
  local tree="$work/tree_$2"
  mkdir -p "$tree"
  if [ "$1" = "." ]; then
    cp -r "$root/include" "$root/src" "$tree/"
  else
    git -C "$root" archive "$1" include src | tar -x -C "$tree"
  fi
  nvcc -DFUSEDMOE_WITH_CUDA -I"$tree/include" -I"$tree/src" -isystem "$root/.deps/cutlass/include" \
    -O3 -DNDEBUG -std=c++17 --expt-relaxed-constexpr -arch=sm_90a -ptx "$tree/$source_file" -o "$work/$2.ptx"
}
ptx_of "$1" a
ptx_of "$2" b
python3 - "$work/a.ptx" "$work/b.ptx" <<'PY'
import re, sys

def entries(path):
    text = re.sub(r"//[^\n]*", "", open(path).read())
    # The anonymous namespace's name hashes the file's path, which differs between the trees.
    text = re.sub(r"_GLOBAL__N__[0-9a-f]{8}_\d+_\w+?_[0-9a-f]{8}", "_GLOBAL__N_", text)
    # So does the prefix of a function-scope __shared__ variable's name (e.g. s_partial).
    text = re.sub(r"_INTERNAL_[0-9a-f]{8}_", "_INTERNAL_", text)
    out = {}
    for m in re.finditer(r"\.entry (\S+)\(", text):
        name = m.group(1)
        body = text[text.index("{", m.end()):text.find("\n}\n", m.end())]
        body = body.replace(name, "ENTRY")                      # parameter and shared symbols
        body = re.sub(r"\$L__BB\d+_", "$L__BB_", body)          # labels carry the entry's index
        out[name] = body
    return out

a, b = entries(sys.argv[1]), entries(sys.argv[2])
counts = {"same": 0, "differs": 0, "new": 0}
for name, body in b.items():
    state = "new" if name not in a else "same" if a[name] == body else "differs"
    counts[state] += 1
    print(f"{state:8s} {name}")
gone = [n for n in a if n not in b]
print(f"{counts['same']} same, {counts['differs']} differ, {counts['new']} new, {len(gone)} gone")
PY
