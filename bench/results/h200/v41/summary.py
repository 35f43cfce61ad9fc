import sys, re, statistics, collections
t = collections.defaultdict(list); order = []
mode = prec = None
for line in open(sys.argv[1]):
    m = re.match(r"#### round (\d+) mode (\S+) (\S+)", line)
    if m: mode, prec = m.group(2), m.group(3); continue
    f = line.split()
    if len(f) > 4 and f[1].isdigit() and f[0][0].isalpha():
        key = (prec, f[0], int(f[1]))
        if key not in order: order.append(key)
        t[(key, mode)].append(float(f[3]))
modes = ["base", "1", "g1", "g2", "a"]
print(f"{'precision':12s} {'shape':22s} {'m':>5s} " + " ".join(f"{x:>9s}" for x in modes) + "  ratio")
for key in order:
    v = [statistics.median(t[(key, md)]) if t[(key, md)] else float('nan') for md in modes]
    print(f"{key[0]:12s} {key[1]:22s} {key[2]:5d} " + " ".join(f"{x:9.1f}" for x in v) + "  " + " ".join(f"{x/v[0]:.3f}" for x in v[1:]))
