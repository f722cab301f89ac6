#!/usr/bin/env python3
"""bench/dist_report.py: the JSON side of bench/dist.sh (standard library only).

  dist_report.py dsmm-line STATS.json --matrix NAME --op spgemm|spmm --ranks P --k K
                           --repeats R [--threads T]
      one {"bench":"dist","system":"dsmm",...} line from a `dsmm spgemm|spmm --stats` file
      (stable keys: seconds, flops, nnz_out, bytes_sent, components.{comp,comm,acc,wait}.
      {avg,max}); the whole statistics object rides along under "stats".
  dist_report.py brief LINE      one human line for a prepare, dsmm or PETSc JSON line
  dist_report.py table FILE.jsonl
      the table: matrix op P dsmm_s petsc_s ratio (dsmm/petsc) dsmm_P/P1 petsc_P/P1 and
      dsmm's component maxima over ranks (comp comm acc wait), then the agreement checks
      (nnz_out of dsmm = PETSc, the same at every P; for pattern inputs PETSc's sum of C = the
      flops) and the P = 2 / P = 1 lines of issue 5.
"""
import argparse
import json
import socket
import sys

COMPONENTS = ("comp", "comm", "acc", "wait")


def num(v):
    return v if isinstance(v, (int, float)) and not isinstance(v, bool) else None


def dsmm_line(a):
    with open(a.stats) as f:
        s = json.load(f)
    if not isinstance(s, dict) or num(s.get("seconds")) is None:
        raise SystemExit("dist_report: %s: no \"seconds\" in the statistics" % a.stats)
    comps = {}
    for c in COMPONENTS:
        v = (s.get("components") or {}).get(c)
        if isinstance(v, dict):
            comps[c] = {"avg": num(v.get("avg")), "max": num(v.get("max"))}
    grid = s.get("grid")  # "2x1", [2, 1] or {"pr": 2, "pc": 1}
    if isinstance(grid, dict) and "pr" in grid and "pc" in grid:
        grid = "%sx%s" % (grid["pr"], grid["pc"])
    elif isinstance(grid, list) and len(grid) == 2:
        grid = "%sx%s" % tuple(grid)
    elif grid is None and num(s.get("pr")) is not None and num(s.get("pc")) is not None:
        grid = "%dx%d" % (s["pr"], s["pc"])
    elif grid is not None and not isinstance(grid, str):
        grid = json.dumps(grid, separators=(",", ":"))
    rec = {
        "bench": "dist", "system": "dsmm", "op": a.op, "matrix": a.matrix,
        "ranks": int(s.get("ranks", a.ranks)), "k": a.k if a.op == "spmm" else None,
        "seconds": s["seconds"], "nnz_out": num(s.get("nnz_out")), "flops": num(s.get("flops")),
        "bytes_sent": num(s.get("bytes_sent")), "components": comps,
        "repeats": int(s.get("repeat", a.repeats)), "threads": a.threads,
        "algorithm": s.get("algo", "summa"), "grid": grid, "host": socket.gethostname(),
        "stats": s,
    }
    if rec["ranks"] != a.ranks:
        raise SystemExit("dist_report: %s: ranks %s, but mpirun -n %d" % (a.stats, rec["ranks"], a.ranks))
    print(json.dumps(rec, separators=(",", ":")))


def fs(v, w=9):
    if v is None:
        return "-".rjust(w)
    if v >= 100:
        return ("%.0f" % v).rjust(w)
    if v >= 1:
        return ("%.3f" % v).rjust(w)
    return ("%.4f" % v).rjust(w) if v >= 1e-3 else ("%.2e" % v).rjust(w)


def fr(v, w=6):
    return "-".rjust(w) if v is None else ("%.2f" % v).rjust(w)


def brief(line):
    r = json.loads(line)
    b = r.get("bench")
    if b == "spgemm_prepare":
        print("%s: n %s, nnz(A) %s, flops(A*A) %.3g, nnz(A*A) ~%.3g%s" % (
            r["name"], r["n"], r["nnz_a"], r["flops"], r.get("nnz_c_est", -1),
            ", pattern (values 1)" if r.get("pattern") else ""))
    elif b == "dist":
        extra = ""
        if r["system"] == "dsmm":
            c = r.get("components") or {}
            extra = "  grid %s" % (r.get("grid") or "?")
            extra += "".join("  %s %s" % (k, fs((c.get(k) or {}).get("max"), 0).strip())
                             for k in COMPONENTS if k in c)
        else:
            extra = "  %s  setup %.3f s" % (r.get("layout", ""), r.get("setup_s", 0.0))
        print("  %-6s %-6s P=%-2d %10s s  nnz(C) %s%s" % (
            r["system"], r["op"], r["ranks"], fs(r["seconds"], 0).strip(),
            "%.0f" % r["nnz_out"] if num(r.get("nnz_out")) is not None else "-", extra))
    else:
        print(line)


def table(path):
    recs = []
    with open(path) as f:
        for l in f:
            l = l.strip()
            if l:
                recs.append(json.loads(l))
    meta = next((r for r in recs if r.get("bench") == "dist_meta"), {})
    prep = {r["name"]: r for r in recs if r.get("bench") == "spgemm_prepare"}
    runs = {}
    order = []
    for r in recs:
        if r.get("bench") != "dist":
            continue
        key = (r["matrix"], r["op"], int(r["ranks"]), r["system"])
        runs[key] = r
        if (r["matrix"], r["op"]) not in order:
            order.append((r["matrix"], r["op"]))
    ranks = sorted({k[2] for k in runs})
    status = [r for r in recs if r.get("bench") == "dist_status"]

    def sec(m, op, p, sys_):
        r = runs.get((m, op, p, sys_))
        return num(r.get("seconds")) if r else None

    print("Median seconds per product (max over ranks); k = %s for spmm; %s; %s thread(s) per rank"
          % (meta.get("k", "?"), meta.get("machine", ""), meta.get("threads", "?")))
    hdr = "%-14s %-6s %3s %5s %9s %9s %6s %7s %7s %9s %9s %9s %9s" % (
        "matrix", "op", "P", "grid", "dsmm_s", "petsc_s", "ratio", "dsmmP/1", "petscP/1",
        "comp", "comm", "acc", "wait")
    print(hdr)
    print("-" * len(hdr))
    for m, op in order:
        for p in ranks:
            d, q = sec(m, op, p, "dsmm"), sec(m, op, p, "petsc")
            if d is None and q is None:
                continue
            d1, q1 = sec(m, op, 1, "dsmm"), sec(m, op, 1, "petsc")
            dr = runs.get((m, op, p, "dsmm")) or {}
            comps = dr.get("components") or {}
            line = "%-14s %-6s %3d %5s %s %s %s %s %s" % (
                m[:14], op, p, (dr.get("grid") or "-")[:5], fs(d), fs(q),
                fr(d / q if d and q else None), fr(d / d1 if d and d1 else None, 7),
                fr(q / q1 if q and q1 else None, 7))
            for c in COMPONENTS:
                line += " " + fs((comps.get(c) or {}).get("max"))
            print(line)
    print("-" * len(hdr))
    print("ratio = dsmm / PETSc at the same P (< 1: dsmm faster); dsmmP/1, petscP/1 = time at P / "
          "time at P = 1 (> 1: more ranks made it slower); comp comm acc wait = dsmm's components, "
          "max over ranks (s). dsmm: SUMMA on its 2D grid; PETSc: MPIAIJ, 1D rows.")

    # Agreement: dsmm and PETSc produce the same number of entries, at every P.
    print()
    bad = 0
    checked = 0
    for m, op in order:
        vals = {(s, p): num(runs[(m, op, p, s)].get("nnz_out"))
                for (mm, oo, p, s) in runs if mm == m and oo == op}
        vals = {k: v for k, v in vals.items() if v is not None}
        if len(set(vals.values())) > 1:
            bad += 1
            print("DISAGREE %s %s nnz_out: %s" % (m, op, ", ".join(
                "%s P=%d %.0f" % (s, p, v) for (s, p), v in sorted(vals.items()))))
        elif vals:
            checked += 1
        if op == "spgemm" and prep.get(m, {}).get("pattern"):
            fl = prep[m].get("flops")
            for p in ranks:
                r = runs.get((m, op, p, "petsc"))
                if r and num(r.get("check_sum")) is not None and fl and r["check_sum"] != fl:
                    bad += 1
                    print("DISAGREE %s spgemm PETSc P=%d: sum of C %.0f != flops %.0f"
                          % (m, p, r["check_sum"], fl))
                d = runs.get((m, op, p, "dsmm"))
                if d and num(d.get("flops")) is not None and fl and d["flops"] != fl:
                    bad += 1
                    print("DISAGREE %s spgemm dsmm P=%d: flops %.0f != %.0f (bench_spgemm)"
                          % (m, p, d["flops"], fl))
        # PETSc's SpMM multiplies the same B at every P: its sums must agree closely.
        sums = [num(runs[(m, op, p, "petsc")].get("check_sum")) for p in ranks
                if (m, op, p, "petsc") in runs]
        sums = [s for s in sums if s is not None]
        if len(sums) > 1 and max(abs(s - sums[0]) for s in sums) > 1e-9 * max(1.0, max(map(abs, sums))):
            bad += 1
            print("DISAGREE %s %s PETSc sum of C differs across P: %s" % (m, op, sums))
    print("agreement: %d product(s) with the same nnz(C) across systems and P, %d disagreement(s)"
          % (checked, bad))

    # Issue 5: dsmm's SUMMA at P = 2 must not be slower than at P = 1 on email-enron and
    # ego-twitter (PETSc was, before dsmm existed).
    lines = []
    for m, op in order:
        d1, d2 = sec(m, op, 1, "dsmm"), sec(m, op, 2, "dsmm")
        q1, q2 = sec(m, op, 1, "petsc"), sec(m, op, 2, "petsc")
        if (d1 and d2) or (q1 and q2):
            lines.append("  %-14s %-6s dsmm P2/P1 %s  petsc P2/P1 %s%s" % (
                m[:14], op, fr(d2 / d1 if d1 and d2 else None),
                fr(q2 / q1 if q1 and q2 else None),
                "  (dsmm slower at P = 2)" if d1 and d2 and d2 > d1 else ""))
    if lines:
        print("P = 2 vs P = 1 (issue 5: dsmm at P = 2 not slower than at P = 1 on email-enron, "
              "ego-twitter):")
        print("\n".join(lines))
    for s in status:
        if s["status"] in ("skipped", "failed"):
            who = "" if s["system"] == "all" else " %s %s P=%s" % (s["system"], s["op"], s["ranks"])
            print("%s: %s%s: %s" % (s["matrix"], s["status"], who, s["detail"]))


def main():
    if len(sys.argv) < 2:
        raise SystemExit(__doc__)
    cmd = sys.argv[1]
    if cmd == "dsmm-line":
        ap = argparse.ArgumentParser(prog="dist_report.py dsmm-line")
        ap.add_argument("stats")
        ap.add_argument("--matrix", required=True)
        ap.add_argument("--op", required=True, choices=("spgemm", "spmm"))
        ap.add_argument("--ranks", type=int, required=True)
        ap.add_argument("--k", type=int, default=128)
        ap.add_argument("--repeats", type=int, default=1)
        ap.add_argument("--threads", type=int, default=1)
        dsmm_line(ap.parse_args(sys.argv[2:]))
    elif cmd == "brief" and len(sys.argv) == 3:
        brief(sys.argv[2])
    elif cmd == "table" and len(sys.argv) == 3:
        table(sys.argv[2])
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    main()
