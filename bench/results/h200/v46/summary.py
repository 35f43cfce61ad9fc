import sys, glob, re, statistics, collections
w = sys.argv[1]
t = collections.defaultdict(list)
for f in glob.glob(w + "/bench_*_r*.txt"):
    m = re.match(r".*/bench_(fp8_[a-z]+|bf16|w4a16)_([a-z0-9]+)_r(\d)\.txt", f)
    prec, v = m.group(1), m.group(2)
    for line in open(f):
        p = line.split()
        if len(p) > 4 and p[1].isdigit() and p[2] in ("small_m", "grouped_gemm", "grouped_swapped"):
            t[(prec, p[0], int(p[1]), v)].append(float(p[3]))
vs = sorted({k[3] for k in t})
base = "base" if "base" in vs else ("a" if "a" in vs else ("g" if "g" in vs else vs[0]))
others = [v for v in vs if v != base]
print("prec shape m " + base + "_us " + " ".join(v + "_us " + v + "/" + base for v in others) + " (median of the rounds)")
for prec, shape, mm in sorted({(k[0], k[1], k[2]) for k in t}):
    b = statistics.median(t[(prec, shape, mm, base)])
    s = f"{prec:11s} {shape:18s} {mm:5d} {b:8.1f}"
    for v in others:
        c = statistics.median(t[(prec, shape, mm, v)]); s += f" {c:8.1f} {c/b:6.3f}"
    print(s)
