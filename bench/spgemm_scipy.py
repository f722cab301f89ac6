#!/usr/bin/python3
# bench/spgemm_scipy.py: the scipy side of bench/spgemm.sh: C = A @ A (scipy.sparse CSR,
# single-threaded) on a raw CSR file (format in bench/bench_spgemm.c), timed with
# time.perf_counter after a warm-up; writes the check file (nnz(C), y = C x) and one JSON line.
# Usage: /usr/bin/python3 bench/spgemm_scipy.py FILE.csr [--repeat R] [--warmup W]
#                                               [--min-time S] [--check FILE] [--name NAME]
# Needs Debian's python3-scipy (/usr/bin/python3; a pyenv python3 on PATH may lack it).
import os

for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[var] = "1"  # single-threaded, before numpy loads

import argparse
import json
import resource
import socket
import statistics
import sys
import time

import numpy as np
import scipy
import scipy.sparse as sp


def read_raw(path):
    with open(path, "rb") as f:
        magic = f.read(8)
        if magic != b"DSMMRAW1":
            sys.exit("spgemm_scipy: %s: not a raw CSR file" % path)
        nrows, ncols, nnz, col_bytes, _flags = np.fromfile(f, dtype=np.int64, count=5)
        rowptr = np.fromfile(f, dtype=np.int64, count=nrows + 1)
        colidx = np.fromfile(f, dtype=np.int32 if col_bytes == 4 else np.int64, count=nnz)
        val = np.fromfile(f, dtype=np.float64, count=nnz)
        if len(rowptr) != nrows + 1 or len(colidx) != nnz or len(val) != nnz or f.read(1):
            sys.exit("spgemm_scipy: %s: truncated or too long" % path)
    # scipy's own choice of index type: 32-bit when everything fits.
    itype = np.int32 if max(nnz, nrows, ncols) < 2**31 else np.int64
    A = sp.csr_matrix((val, colidx.astype(itype, copy=False), rowptr.astype(itype)),
                      shape=(int(nrows), int(ncols)))
    del rowptr, colidx, val
    return A


def main():
    ap = argparse.ArgumentParser(description="scipy A @ A on a raw CSR file")
    ap.add_argument("path")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--warmup", type=int, default=1)
    ap.add_argument("--min-time", type=float, default=0.0)
    ap.add_argument("--check")
    ap.add_argument("--name")
    a = ap.parse_args()
    if a.repeat < 1 or a.warmup < 0 or not 0.0 <= a.min_time <= 3600.0:
        sys.exit("spgemm_scipy: --repeat >= 1, --warmup >= 0 and --min-time in 0..3600")
    A = read_raw(a.path)
    if A.shape[0] != A.shape[1]:
        sys.exit("spgemm_scipy: %s is not square" % a.path)
    n = A.shape[0]

    C = None
    one = 0.0  # the last warm-up's seconds
    for _ in range(max(a.warmup, 1)):
        C = None
        t0 = time.perf_counter()
        C = A @ A
        one = time.perf_counter() - t0
    reps = a.repeat  # bench_repeats' rule (bench/bench_common.h)
    if a.min_time > 0.0 and one > 0.0:
        reps = max(reps, min(100000, int(a.min_time / one + 1.0)))
    nnz_c = int(C.nnz)
    zeros = int(np.count_nonzero(C.data == 0))  # scipy drops cancellation zeros: 0
    sorted_rows = bool(C.has_sorted_indices)
    j = np.arange(n, dtype=np.uint64)
    x = 1.0 + ((j * np.uint64(2654435761)) % np.uint64(1000)).astype(np.float64) / 1000.0
    y = np.asarray(C @ x, dtype=np.float64)
    C = None

    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        C = A @ A
        times.append(time.perf_counter() - t0)
        if C.nnz != nnz_c:
            sys.exit("spgemm_scipy: nnz(C) changed between runs")
        C = None
    if a.check:
        with open(a.check, "wb") as f:
            f.write(b"DSMMCHK1")
            np.array([n, nnz_c, zeros], dtype=np.int64).tofile(f)
            y.tofile(f)
    rec = {
        "bench": "spgemm", "system": "scipy", "name": a.name or a.path,
        "version": scipy.__version__, "machine": socket.gethostname(), "ranks": 1,
        "threads": 1, "algorithm": "A @ A (csr_matmat)", "n": n, "nnz_a": int(A.nnz),
        "nnz_c": nnz_c, "sorted": int(sorted_rows), "repeats": reps,
        "median_s": statistics.median(times), "min_s": min(times),
        "peak_rss_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
    }
    print(json.dumps(rec, separators=(",", ":")))


if __name__ == "__main__":
    main()
