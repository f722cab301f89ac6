#!/usr/bin/env python3
"""bench/rdma_report.py: the JSON side of bench/rdma.sh (standard library only).

  rdma_report.py run-line STATS.json --matrix NAME --op spgemm|spmm --ranks P --repeats R
                          [--cmd "COMMAND"]
      one compact {"bench":"rdma_run",...} line from a `dsmm spgemm|spmm --stats` file:
      seconds, flops, grid, components, imbalance, the "rdma" summary and, per rank, the
      counted quantities (bytes_recv = intra + inter, rma_bytes = intra + inter, msgs_recv,
      gets, items, stolen, pushes, pops, flops, done).
  rdma_report.py model-line MODEL.json --matrix NAME --op spgemm|spmm [--cmd "COMMAND"]
      one compact {"bench":"rdma_model",...} line from `dsmm model ... --json FILE`: the
      grid and, per algorithm, rank_in, rank_gets, rank_flops, time_s, flops_imbalance.
  rdma_report.py brief LINE       one human line for a run or model line
  rdma_report.py table FILE.jsonl
      one table per (matrix, op) and, under it, the model checks: bytes per rank (measured
      bytes_recv for summa, rma_bytes for the one-sided algorithms, against the model's
      rank_in) and data gets per rank (against rank_gets), both by exact integer equality;
      flops per rank likewise; the ws-* variants against their base's model when they stole
      nothing; and the algorithm the model predicts fastest against the measured fastest.
"""
import argparse
import json
import sys

ALGOS = ("summa", "rdma-c", "rdma-a", "rdma-b", "ws-random-a", "ws-local-a", "ws-local-c")
MODELLED = ("summa", "rdma-c", "rdma-a", "rdma-b")
WS_BASE = {"ws-random-a": "rdma-a", "ws-local-a": "rdma-a", "ws-local-c": "rdma-c"}
COMPONENTS = ("comp", "comm", "acc", "wait")


def num(v):
    return v if isinstance(v, (int, float)) and not isinstance(v, bool) else None


def ival(v):
    """An exact integer count, or None: floats that are whole numbers are accepted."""
    v = num(v)
    if v is None:
        return None
    if isinstance(v, float):
        return int(v) if v.is_integer() else None
    return v


def rank_sum(r, a, b):
    x, y = ival(r.get(a)), ival(r.get(b))
    return None if x is None and y is None else (x or 0) + (y or 0)


def run_line(a):
    with open(a.stats) as f:
        s = json.load(f)
    if not isinstance(s, dict) or num(s.get("seconds")) is None:
        raise SystemExit("rdma_report: %s: no \"seconds\" in the statistics" % a.stats)
    det = s.get("ranks_detail")
    if not isinstance(det, list) or not det:
        raise SystemExit("rdma_report: %s: no ranks_detail (not a distributed run?)" % a.stats)
    det = sorted(det, key=lambda r: r.get("rank", 0))
    per = {
        "bytes_recv": [rank_sum(r, "bytes_recv_intra", "bytes_recv_inter") for r in det],
        "rma_bytes": [rank_sum(r, "rma_bytes_intra", "rma_bytes_inter") for r in det],
        "msgs_recv": [rank_sum(r, "msgs_recv_intra", "msgs_recv_inter") for r in det],
        "rma_calls": [rank_sum(r, "rma_calls_intra", "rma_calls_inter") for r in det],
        "ctl_bytes": [ival(r.get("ctl_bytes")) for r in det],
        "flops": [ival(r.get("flops")) for r in det],
    }
    for key in ("gets", "items", "stolen", "pushes", "pops"):
        vals = [ival(r.get(key)) for r in det]
        if any(v is not None for v in vals):
            per[key] = vals
    for key in ("done", "get_wait"):
        vals = [num(r.get(key)) for r in det]
        if any(v is not None for v in vals):
            per[key] = vals
    comps = {}
    for c in COMPONENTS + ("total",):
        v = (s.get("components") or {}).get(c)
        if isinstance(v, dict):
            comps[c] = {"avg": num(v.get("avg")), "max": num(v.get("max"))}
    rec = {
        "bench": "rdma_run", "matrix": a.matrix, "op": a.op, "algo": s.get("algo"),
        "ranks": int(s.get("ranks", len(det))), "grid": s.get("grid"), "k": s.get("k"),
        "prefetch": s.get("prefetch"), "repeats": int(s.get("repeat", a.repeats)),
        "seconds": s["seconds"], "flops": num(s.get("flops")), "nnz_out": num(s.get("nnz_out")),
        "components": comps, "imbalance": s.get("imbalance") or {}, "rdma": s.get("rdma"),
        "per_rank": per, "cmd": a.cmd,
    }
    if rec["ranks"] != a.ranks or len(det) != a.ranks:
        raise SystemExit("rdma_report: %s: %s ranks (%d in ranks_detail), but mpirun -n %d"
                         % (a.stats, rec["ranks"], len(det), a.ranks))
    print(json.dumps(short(rec), separators=(",", ":")))


def short(v):
    """Floats to 6 significant digits (times, ratios); integer counts stay exact."""
    if isinstance(v, float):
        return v if v.is_integer() else float("%.6g" % v)
    if isinstance(v, dict):
        return {k: short(x) for k, x in v.items()}
    if isinstance(v, list):
        return [short(x) for x in v]
    return v


def model_line(a):
    with open(a.model) as f:
        m = json.load(f)
    algs = {}
    for name, v in (m.get("algorithms") or {}).items():
        algs[name] = {k: v.get(k) for k in ("rank_in", "rank_gets", "rank_flops", "time_s",
                                             "flops_imbalance", "bytes_total", "bytes_in_max",
                                             "gets_total")}
    rec = {
        "bench": "rdma_model", "matrix": a.matrix, "op": a.op, "ranks": m.get("ranks"),
        "grid": "%sx%s" % (m.get("pr"), m.get("pc")), "stages": m.get("stages"),
        "flops": m.get("flops"), "nnz_c": m.get("nnz_c"), "imbalance": m.get("imbalance"),
        "algorithms": algs, "cmd": a.cmd,
    }
    print(json.dumps(short(rec), separators=(",", ":")))


def fs(v, w=9):
    if v is None:
        return "-".rjust(w)
    if v >= 100:
        return ("%.0f" % v).rjust(w)
    if v >= 1:
        return ("%.3f" % v).rjust(w)
    return ("%.4f" % v).rjust(w) if v >= 1e-3 else ("%.2e" % v).rjust(w)


def fb(v, w=9):
    """Bytes, exact up to 10^9 (the check is on integers; the table shows them whole)."""
    if v is None:
        return "-".rjust(w)
    return ("%d" % v).rjust(w) if v < 10 ** 9 else ("%.3e" % v).rjust(w)


def fr(v, w=6):
    return "-".rjust(w) if v is None else ("%.2f" % v).rjust(w)


def fi(v, w=6):
    return "-".rjust(w) if v is None else ("%d" % v).rjust(w)


def total(vals):
    vals = [v for v in (vals or []) if v is not None]
    return sum(vals) if vals else None


def moved(r):
    """Per-rank data bytes a rank fetched: broadcast bytes received (summa) or one-sided
    data bytes (the others); and the count of data transfers (messages or gets)."""
    p = r.get("per_rank") or {}
    if r.get("algo") == "summa":
        return p.get("bytes_recv"), p.get("msgs_recv")
    return p.get("rma_bytes"), p.get("gets")


def brief(line):
    r = json.loads(line)
    if r.get("bench") == "rdma_run":
        b, g = moved(r)
        rd = r.get("rdma") or {}
        print("  %-6s %-11s %10s s  grid %s  bytes %s (max/rank %s)  %s %s%s" % (
            r["op"], r["algo"], fs(r["seconds"], 0).strip(), r.get("grid"),
            fb(total(b), 0).strip(), fb(max([v for v in b or [] if v is not None] or [0]), 0).strip(),
            "msgs" if r["algo"] == "summa" else "gets", fi(total(g), 0).strip(),
            "" if r["algo"] == "summa" else "  pushes %s  stolen %s" % (rd.get("pushes"), rd.get("stolen"))))
    elif r.get("bench") == "rdma_model":
        al = r.get("algorithms") or {}
        print("  %-6s model: grid %s, stages %s, predicted s: %s" % (
            r["op"], r.get("grid"), r.get("stages"), "  ".join(
                "%s %.3g" % (n, al[n]["time_s"]) for n in MODELLED
                if n in al and num(al[n].get("time_s")) is not None)))
    else:
        print(line)


def compare(meas, model):
    """Rank-by-rank exact comparison; a list of (rank, measured, model) that differ."""
    if meas is None or model is None:
        return [("all", meas, model)]
    if len(meas) != len(model):
        return [("count", len(meas), len(model))]
    return [(i, x, y) for i, (x, y) in enumerate(zip(meas, model))
            if ival(x) is None or ival(y) is None or ival(x) != ival(y)]


def fmt_mis(alg, what, mis):
    out = []
    for i, x, y in mis:
        if i == "all":
            out.append("%s %s: measured %s, model %s" % (alg, what, "missing" if x is None else "present",
                                                        "missing" if y is None else "present"))
        elif i == "count":
            out.append("%s %s: %s ranks measured, %s in the model" % (alg, what, x, y))
        else:
            d = (ival(x) - ival(y)) if ival(x) is not None and ival(y) is not None else None
            out.append("%s %s rank %d: measured %s, model %s%s" % (
                alg, what, i, x, y, "" if d is None else " (%+d)" % d))
    return out


def table(path):
    recs = []
    with open(path) as f:
        for l in f:
            l = l.strip()
            if l.startswith("{"):
                recs.append(json.loads(l))
    runs, models, order = {}, {}, []
    for r in recs:
        b = r.get("bench")
        if b not in ("rdma_run", "rdma_model"):
            continue
        key = (r["matrix"], r["op"])
        if key not in order:
            order.append(key)
        if b == "rdma_run":
            runs[key + (r["algo"],)] = r
        else:
            models[key] = r
    status = [r for r in recs if r.get("bench") == "rdma_status"]
    summary = []
    hdr = "%-11s %9s %6s %10s %10s %6s %6s %6s %6s %6s %9s %9s %9s %9s %9s" % (
        "algo", "median_s", "/summa", "bytes_tot", "bytes_max", "xfers", "pushes", "stolen",
        "imbE2E", "imbStg", "comp", "comm", "acc", "wait", "spread")
    for key in order:
        m, op = key
        mod = models.get(key)
        algs = [a for a in ALGOS if key + (a,) in runs]
        algs += sorted(a for (mm, oo, a) in runs if (mm, oo) == key and a not in ALGOS)
        first = runs[key + (algs[0],)] if algs else {}
        print()
        print("== %s %s%s  ranks %s  grid %s  flops %s  repeats %s (median s, max over ranks)" % (
            m, op, " k=%s" % first.get("k") if op == "spmm" else "", first.get("ranks", "?"),
            first.get("grid", "?"), "%.4g" % first["flops"] if num(first.get("flops")) else "?",
            first.get("repeats", "?")))
        print(hdr)
        print("-" * len(hdr))
        base = runs.get(key + ("summa",))
        bs = num(base.get("seconds")) if base else None
        for a in algs:
            r = runs[key + (a,)]
            b, g = moved(r)
            p = r.get("per_rank") or {}
            c = r.get("components") or {}
            im = r.get("imbalance") or {}
            rd = r.get("rdma") or {}
            s = num(r.get("seconds"))
            bmax = max([v for v in b or [] if v is not None] or [0]) if b else None
            print("%-11s %s %s %s %s %s %s %s %s %s %s %s %s %s %s" % (
                a, fs(s), fr(s / bs if s and bs else None), fb(total(b), 10), fb(bmax, 10),
                fi(total(g)), fi(total(p.get("pushes"))), fi(total(p.get("stolen"))),
                fr(num(im.get("flops_max_over_avg"))), fr(num(im.get("stage_max_over_avg_worst"))),
                fs((c.get("comp") or {}).get("avg")), fs((c.get("comm") or {}).get("avg")),
                fs((c.get("acc") or {}).get("avg")), fs((c.get("wait") or {}).get("avg")),
                fs(num(rd.get("done_spread")))))
        print("-" * len(hdr))
        # Model checks: exact integer equality per rank.
        if not mod:
            print("model: not run (no dsmm model output for this case)")
            summary.append((m, op, "no model", "-", "-", "-"))
            continue
        mal = mod.get("algorithms") or {}
        notes = []
        if first.get("grid") and mod.get("grid") != first.get("grid"):
            notes.append("grid differs: runs %s, model %s" % (first.get("grid"), mod.get("grid")))
        bad_b, bad_f, checked = [], [], []
        for a in MODELLED:
            r = runs.get(key + (a,))
            if not r or a not in mal:
                continue
            checked.append(a)
            b, g = moved(r)
            bad_b += fmt_mis(a, "bytes", compare(b, mal[a].get("rank_in")))
            if a != "summa":
                bad_b += fmt_mis(a, "gets", compare(g, mal[a].get("rank_gets")))
            bad_f += fmt_mis(a, "flops", compare((r.get("per_rank") or {}).get("flops"),
                                                 mal[a].get("rank_flops")))
        agree = "yes" if checked and not bad_b else "no"
        print("model: bytes per rank agree exactly for %s: %s%s" % (
            ", ".join(checked) or "(none run)", agree,
            "" if not bad_b else " (%d mismatch(es))" % len(bad_b)))
        for l in bad_b:
            print("  MISMATCH " + l)
        print("model: flops per rank agree exactly for %s: %s" % (
            ", ".join(checked) or "(none run)", "yes" if checked and not bad_f else "no"))
        for l in bad_f:
            print("  MISMATCH " + l)
        ws = []
        for a, base_a in WS_BASE.items():
            r = runs.get(key + (a,))
            if not r or base_a not in mal:
                continue
            st = total((r.get("per_rank") or {}).get("stolen"))
            if st:
                ws.append("%s stole %d item(s): not compared" % (a, st))
                continue
            b, g = moved(r)
            mis = compare(b, mal[base_a].get("rank_in")) + compare(g, mal[base_a].get("rank_gets"))
            ws.append("%s (nothing stolen) = %s's model: %s" % (
                a, base_a, "yes" if not mis else "no: " + "; ".join(
                    fmt_mis(a, "bytes/gets", mis))))
        if ws:
            print("model: " + "; ".join(ws))
        pred = {a: num(mal[a].get("time_s")) for a in MODELLED if a in mal}
        pred = {a: t for a, t in pred.items() if t is not None}
        best = None
        if pred:  # every algorithm at the minimum (ties named together)
            lo = min(pred.values())
            tied = [a for a in MODELLED if a in pred and pred[a] <= lo * (1 + 1e-12)]
            best = " = ".join(tied) + (" (tie)" if len(tied) > 1 else "")
        meas = {a: num(runs[key + (a,)].get("seconds")) for a in algs}
        meas = {a: t for a, t in meas.items() if t is not None}
        fastest = min(meas, key=meas.get) if meas else None
        meas4 = {a: t for a, t in meas.items() if a in MODELLED}
        fastest4 = min(meas4, key=meas4.get) if meas4 else None
        print("model predicts best: %s (predicted times %s); measured fastest: %s (%s s)%s" % (
            best or "-", ", ".join("%s %.3g s" % (a, pred[a]) for a in MODELLED if a in pred),
            fastest or "-", fs(meas.get(fastest), 0).strip() if fastest else "-",
            "" if fastest in MODELLED or not fastest4 else
            "; of the modelled four: %s (%s s)" % (fastest4, fs(meas4[fastest4], 0).strip())))
        for n in notes:
            print("  NOTE " + n)
        cmds = [runs[key + (a,)].get("cmd") for a in checked] + [mod.get("cmd")]
        if bad_b or bad_f:
            print("  reproduce:")
            for c in cmds:
                if c:
                    print("    " + c)
        summary.append((m, op, agree, "yes" if checked and not bad_f else "no", best or "-",
                        fastest or "-"))
    if status:
        print()
        for s in status:
            print("%s %s %s: %s (%s)" % (s.get("matrix"), s.get("op"), s.get("algo"),
                                        s.get("status"), s.get("detail")))
    print()
    print("Summary (bytes: measured per-rank bytes and gets = dsmm model's rank_in and rank_gets, "
          "exact, for summa, rdma-c, rdma-a, rdma-b):")
    hdr2 = "%-16s %-6s %-12s %-12s %-24s %-12s" % ("matrix", "op", "bytes=model", "flops=model",
                                                   "model best", "measured fastest")
    print(hdr2)
    print("-" * len(hdr2))
    for row in summary:
        print("%-16s %-6s %-12s %-12s %-24s %-12s" % row)
    print()
    print("Columns: median_s = median of the repeats of the slowest rank's time; /summa = ratio to "
          "summa (< 1: faster); bytes_tot = data bytes moved, all ranks (summa: broadcast bytes "
          "received, one-sided: rma_bytes); bytes_max = the most one rank fetched; xfers = summa: "
          "messages received, one-sided: data gets; pushes = accumulation-queue pushes; stolen = "
          "work items stolen; imbE2E, imbStg = flops max/avg end to end and in the worst stage; "
          "comp comm acc wait = Table 2 components, average over ranks (s); spread = last minus "
          "first rank's finish time (s).")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd_", required=True)
    p = sub.add_parser("run-line")
    p.add_argument("stats")
    p.add_argument("--matrix", required=True)
    p.add_argument("--op", required=True, choices=("spgemm", "spmm"))
    p.add_argument("--ranks", type=int, required=True)
    p.add_argument("--repeats", type=int, default=1)
    p.add_argument("--cmd", default=None)
    p = sub.add_parser("model-line")
    p.add_argument("model")
    p.add_argument("--matrix", required=True)
    p.add_argument("--op", required=True, choices=("spgemm", "spmm"))
    p.add_argument("--cmd", default=None)
    p = sub.add_parser("brief")
    p.add_argument("line")
    p = sub.add_parser("table")
    p.add_argument("jsonl")
    a = ap.parse_args()
    if a.cmd_ == "run-line":
        run_line(a)
    elif a.cmd_ == "model-line":
        model_line(a)
    elif a.cmd_ == "brief":
        brief(a.line)
    else:
        table(a.jsonl)


if __name__ == "__main__":
    try:
        main()
    except BrokenPipeError:
        sys.exit(1)
