#!/usr/bin/python3
# bench/spmm_scipy.py: the scipy side of bench/spmm.sh: C = A @ B with A a scipy.sparse CSR
# matrix from a raw CSR file (format in bench/bench_spgemm.c) and B a C-contiguous numpy array
# of bench_spmm_b values (bench/bench_common.h), float32 or float64, single-threaded, timed
# with time.perf_counter after a warm-up; writes the SpMM check file (format in
# bench/bench_spmm.c) and one JSON line. For k = 1, B is a 1-D vector: A @ x is how users
# call SpMV, and scipy's csr_matvec is faster than csr_matvecs with one column.
# Usage: /usr/bin/python3 bench/spmm_scipy.py FILE.csr [--k K] [--type float|double]
#                         [--repeat R] [--warmup W] [--min-time S] [--check FILE] [--name NAME]
# --min-time: timed runs until S seconds are filled at the last warm-up's time per run (at most
# 100000), the rule of bench_repeats in bench/bench_common.h.
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


def read_raw(path, dtype):
    with open(path, "rb") as f:
        magic = f.read(8)
        if magic != b"DSMMRAW1":
            sys.exit("spmm_scipy: %s: not a raw CSR file" % path)
        nrows, ncols, nnz, col_bytes, _flags = np.fromfile(f, dtype=np.int64, count=5)
        rowptr = np.fromfile(f, dtype=np.int64, count=nrows + 1)
        colidx = np.fromfile(f, dtype=np.int32 if col_bytes == 4 else np.int64, count=nnz)
        val = np.fromfile(f, dtype=np.float64, count=nnz)
        if len(rowptr) != nrows + 1 or len(colidx) != nnz or len(val) != nnz or f.read(1):
            sys.exit("spmm_scipy: %s: truncated or too long" % path)
    # scipy's own choice of index type: 32-bit when everything fits.
    itype = np.int32 if max(nnz, nrows, ncols) < 2**31 else np.int64
    A = sp.csr_matrix((val.astype(dtype), colidx.astype(itype, copy=False), rowptr.astype(itype)),
                      shape=(int(nrows), int(ncols)))
    del rowptr, colidx, val
    return A


def make_b(n, k, dtype):
    """B(i, j) = bench_spmm_b(i, j): murmur3's finaliser of i * 0x9E3779B97F4A7C15 + j (mod
    2^64), top 24 bits to [-1, 1); built in row blocks to bound the uint64 temporaries."""
    B = np.empty((n, k), dtype=dtype)
    j = np.arange(k, dtype=np.uint64)
    rows = max(1, (1 << 22) // max(k, 1))
    s33, s40 = np.uint64(33), np.uint64(40)
    for r0 in range(0, n, rows):
        i = np.arange(r0, min(n, r0 + rows), dtype=np.uint64)[:, None]
        h = i * np.uint64(0x9E3779B97F4A7C15) + j  # uint64 arrays wrap mod 2^64
        h ^= h >> s33
        h *= np.uint64(0xFF51AFD7ED558CCD)
        h ^= h >> s33
        h *= np.uint64(0xC4CEB9FE1A85EC53)
        h ^= h >> s33
        B[r0:r0 + rows] = (h >> s40).astype(np.float64) / 8388608.0 - 1.0
    return B


def check_x(count):
    j = np.arange(count, dtype=np.uint64)
    return 1.0 + ((j * np.uint64(2654435761)) % np.uint64(1000)).astype(np.float64) / 1000.0


def main():
    ap = argparse.ArgumentParser(description="scipy A @ B (B dense) on a raw CSR file")
    ap.add_argument("path")
    ap.add_argument("--k", type=int, default=64)
    ap.add_argument("--type", choices=("float", "double"), default="double")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--warmup", type=int, default=1)
    ap.add_argument("--min-time", type=float, default=0.0)
    ap.add_argument("--check")
    ap.add_argument("--name")
    a = ap.parse_args()
    if a.k < 1 or a.repeat < 1 or a.warmup < 0 or not 0.0 <= a.min_time <= 3600.0:
        sys.exit("spmm_scipy: --k >= 1, --repeat >= 1, --warmup >= 0 and --min-time in 0..3600")
    dtype = np.float32 if a.type == "float" else np.float64
    A = read_raw(a.path, dtype)
    m, n = A.shape
    B = make_b(n, a.k, dtype)
    if a.k == 1:
        B = np.ascontiguousarray(B[:, 0])

    C = None
    one = 0.0  # the last warm-up's seconds
    for _ in range(a.warmup):
        C = None
        t0 = time.perf_counter()
        C = A @ B
        one = time.perf_counter() - t0
    reps = a.repeat
    if a.min_time > 0.0 and one > 0.0:
        reps = max(reps, min(100000, int(a.min_time / one + 1.0)))
    times = []
    for _ in range(reps):
        C = None
        t0 = time.perf_counter()
        C = A @ B
        times.append(time.perf_counter() - t0)
    if C.dtype != dtype:
        sys.exit("spmm_scipy: A @ B gave %s, not %s" % (C.dtype, np.dtype(dtype)))
    C = C.reshape(m, a.k).astype(np.float64)
    y = C @ check_x(a.k)
    z = check_x(m) @ C
    if a.check:
        with open(a.check, "wb") as f:
            f.write(b"DSMMSPC1")
            np.array([m, a.k], dtype=np.int64).tofile(f)
            y.astype(np.float64).tofile(f)
            z.astype(np.float64).tofile(f)
    med = statistics.median(times)
    rec = {
        "bench": "spmm", "system": "scipy", "name": a.name or a.path,
        "version": scipy.__version__, "machine": socket.gethostname(), "ranks": 1,
        "threads": 1, "algorithm": "A @ x (csr_matvec)" if a.k == 1 else "A @ B (csr_matvecs)",
        "m": m, "n": n, "nnz": int(A.nnz), "k": a.k, "type": a.type, "repeats": reps,
        "median_s": med, "min_s": min(times), "times": times[:64],
        "gflops": 2.0 * A.nnz * a.k / med / 1e9 if med > 0 else 0.0,
        "peak_rss_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
    }
    print(json.dumps(rec, separators=(",", ":")))


if __name__ == "__main__":
    main()
