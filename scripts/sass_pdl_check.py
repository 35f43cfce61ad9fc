#!/usr/bin/env python3
"""Checks the built kernels' SASS for non-coherent loads ahead of the PDL wait.

Usage: sass_pdl_check.py CUOBJDUMP LIBRARY_OR_OBJECT...
       sass_pdl_check.py --listing SASS_TEXT...   (listings cuobjdump -sass wrote)

Under programmatic dependent launch a kernel starts while its predecessor still writes, and
`griddepcontrol.wait` (SASS `ACQBULK`) is where it may first read what the predecessor wrote.
ptxas keeps ordinary loads below the wait but may move a non-coherent one (`ld.global.nc`,
`__ldg`, SASS `LDG...CONSTANT`) above it: it assumes that what such a load reads is not written
while the kernel runs. The down ring GEMV at one n-tile read the intermediate that way before
its wait (docs/PERF.md v40). The rule checked here: in a kernel that waits, no `LDG...CONSTANT`
comes before its last `ACQBULK` in the listing (weights and their scales too: a kernel keeps
its non-coherent loads after the wait, or loads them otherwise). A wait that an unconditional
`EXIT` follows (a CTA with no work that waits only so that the grid does not end before its
predecessor) guards no load and is not that last wait, unless every wait is one. It reads
listing order, not control flow: a heuristic that matches how ptxas hoists a load (upward, in
straight-line code); kernels that never wait are not checked. Exit status 1 lists the
kernels that break it, 0 says how many waiting kernels were checked.
"""
import os
import re
import subprocess
import sys

INSTR = re.compile(r"^\s*/\*[0-9a-f]{4,}\*/\s+(.*?)\s*;")
NC_LOAD = re.compile(r"\bLDG(\.[A-Z0-9_]+)*\.CONSTANT\b")
WAIT = re.compile(r"\bACQBULK\b")
EXIT = re.compile(r"^EXIT\b")


def check(lines):
    """Yields (kernel, [offending instructions]) for each kernel that waits; [] where clean."""
    name, instrs = None, []

    def done():
        waits = [i for i, ins in enumerate(instrs) if WAIT.search(ins)]
        if name is None or not waits:
            return None
        guarding = [i for i in waits if not (i + 1 < len(instrs) and EXIT.match(instrs[i + 1]))]
        last = (guarding or waits)[-1]
        return name, [ins for ins in instrs[:last] if NC_LOAD.search(ins)]

    for line in lines:
        if "Function : " in line:
            result = done()
            if result:
                yield result
            name, instrs = line.split("Function : ", 1)[1].strip(), []
            continue
        m = INSTR.match(line)
        if m:
            instrs.append(m.group(1))
    result = done()
    if result:
        yield result


def listings(argv):
    """Yields (source, lines) per file: cuobjdump's SASS of each library or object, or the text
    of each listing (--listing)."""
    if argv[1] == "--listing":
        for f in argv[2:]:
            with open(f) as text:
                yield f, text
        return
    cuobjdump = argv[1]
    # cuobjdump -sass runs nvdisasm, found on PATH: the one beside it first (setup.sh's wheels).
    env = dict(os.environ, PATH=os.path.dirname(os.path.abspath(cuobjdump)) + os.pathsep + os.environ.get("PATH", ""))
    for f in argv[2:]:
        proc = subprocess.Popen([cuobjdump, "-sass", f], stdout=subprocess.PIPE, text=True, env=env)
        yield f, proc.stdout
        if proc.wait() != 0:
            raise RuntimeError(f"{cuobjdump} -sass {f} failed (exit {proc.returncode})")


def main(argv):
    if len(argv) < 3:
        print("\n".join(__doc__.strip().splitlines()[2:4]), file=sys.stderr)
        return 2
    checked, bad = 0, []
    try:
        for _, lines in listings(argv):
            for name, loads in check(lines):
                checked += 1
                if loads:
                    bad.append((name, loads))
    except (OSError, RuntimeError) as e:
        print(f"sass_pdl_check: {e}", file=sys.stderr)
        return 2
    if checked == 0:
        print(f"sass_pdl_check: no kernel with griddepcontrol.wait (ACQBULK) in {' '.join(argv[2:])}", file=sys.stderr)
        return 1
    for name, loads in bad:
        print(f"FAIL {name}: {len(loads)} non-coherent load(s) before its last griddepcontrol.wait, e.g. {loads[0]}")
    print(f"sass_pdl_check: {checked} kernels that wait for their predecessor, {len(bad)} with a non-coherent load before the wait")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
