#!/usr/bin/env python3
"""bench/mcl_options.py: dsmm mcl against mcl 22-282 on random sets of mcl's options.

Each case draws 1 to 5 options from a pool (inflation, loops, pre-inflation, the initial loop,
-L, every pruning option in random order, -overlap, -sort, --force-connected, --check-connected,
--discard-loops, value and graph-wide -tf steps, -abc-tf for label input, --analyze), runs
`mcl GRAPH FORMAT OPTIONS -o -` and `dsmm mcl GRAPH FORMAT OPTIONS -o - -V`, and compares:
both succeed with the same bytes (mcl's '# cline' comment and the output name of --analyze
left out), or both fail. It prints each case that differs and a summary line; exit 0 when none
differs (1 otherwise, 77 when mcl is not installed).

Left out of the pool, as documented differences (docs/mcl.md): -overlap keep with
--force-connected=y (mcl 22-282 fails), --force-connected on a graph that is not symmetric
(`--symmetric` says the graph is), transforms that leave negative weights (dsmm refuses them),
and #step.

usage: bench/mcl_options.py DSMM GRAPH [--format="--abc"] [--cases N] [--seed S] [--symmetric]
       (--format: the input's words for both, e.g. "--etc --expect-values")
e.g.   bench/mcl_options.py build/release/bin/dsmm collins.abc --format=--abc --symmetric
"""
import argparse
import random
import shutil
import subprocess
import sys


def pool(label_input, symmetric):
    p = [
        lambda r: ["-I", r.choice(["1.2", "1.4", "2", "3", "5", "6"])],
        lambda r: ["-c", r.choice(["0", "0.2", "0.5", "2", "4"])],
        lambda r: ["-pi", r.choice(["0.5", "1.5", "3"])],
        lambda r: ["-l", r.choice(["1", "3"]), "-i", r.choice(["1.5", "3"])],
        lambda r: ["-L", r.choice(["1", "2", "3", "5"])],
        lambda r: ["-scheme", str(r.randint(1, 7))],
        lambda r: ["-P", r.choice(["0", "3", "20", "50", "500"])],
        lambda r: ["-p", r.choice(["0", "0.001", "0.05", "0.1"])],
        lambda r: ["-S", r.choice(["0", "1", "3", "5", "20"])],
        lambda r: ["-R", r.choice(["0", "1", "2", "5", "30"])],
        lambda r: ["-pct", r.choice(["0", "10", "50", "99"])],
        lambda r: ["-resource", r.choice(["2", "3", "5", "9"])],
        lambda r: ["-overlap", r.choice(["cut", "keep", "split"])],
        lambda r: ["-sort", r.choice(["revsize", "size", "lex", "none"])],
        lambda r: ["--check-connected=y"],
        lambda r: ["--discard-loops=" + r.choice("yn")],
        lambda r: ["-tf", r.choice(["gq(0.3)", "pow(2)", "ceil(0.5)", "add(1)", "lq(0.9)",
                                    "abs()", "exp()", "#knn(5)", "#knn(1)", "#knnj(3)",
                                    "#ceilnb(2)", "#ceilnb(10)", "mul(3),#knn(2)", "#max()",
                                    "#min()", "#add()", "#mul()", "#arcmax()", "#tp()",
                                    "#tug()", "#arcsub(),gt(0)"])],
        lambda r: ["--analyze=y"],
    ]
    if symmetric:
        p.append(lambda r: ["--force-connected=" + r.choice("yn")])
    if label_input:
        p.append(lambda r: ["-abc-tf", r.choice(["mul(2)", "ceil(0.8)", "gq(0.2)", "add(1)"])])
    return p


def clean(out):
    lines = [l for l in out.split(b"\n") if not l.startswith(b"# cline")]
    return b"\n".join(lines).replace(b"source-name=-", b"")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("dsmm")
    ap.add_argument("graph")
    ap.add_argument("--format", default="", help="input options for both, e.g. --abc (words)")
    ap.add_argument("--cases", type=int, default=150)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--symmetric", action="store_true",
                    help="the graph is symmetric: --force-connected joins the pool")
    a = ap.parse_args()
    if shutil.which("mcl") is None:
        print("bench/mcl_options.py: SKIP: mcl is not installed (apt-get install mcl)")
        return 77
    fmt = a.format.split()
    rng = random.Random(a.seed)
    opts = pool(any(f in ("--abc", "--sif", "--etc") for f in fmt), a.symmetric)
    ran = differ = 0
    for _ in range(a.cases):
        args = []
        for f in rng.sample(opts, rng.randint(1, 5)):
            args += f(rng)
        if "keep" in args and "--force-connected=y" in args:
            continue
        m = subprocess.run(["mcl", a.graph] + fmt + args + ["-o", "-"], capture_output=True)
        d = subprocess.run([a.dsmm, "mcl", a.graph] + fmt + args + ["-o", "-", "-V"],
                           capture_output=True)
        ran += 1
        same = (m.returncode == 0) == (d.returncode == 0) and (
            m.returncode != 0 or clean(m.stdout) == clean(d.stdout))
        if not same:
            differ += 1
            why = d.stderr.decode(errors="replace").strip().replace("\n", " | ")[:200]
            print(f"DIFF {' '.join(args)}: mcl exit {m.returncode}, dsmm exit {d.returncode} {why}")
    print(f"{ran} cases on {a.graph} (seed {a.seed}): {differ} differ")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
