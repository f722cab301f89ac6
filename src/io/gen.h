// src/io/gen.h: what the three generators (gen_er.c, gen_planted.c, gen_rmat.c) share: a row
// driver that builds a CSR from a function generating one row from its own random stream.
#ifndef DSMM_IO_GEN_H
#define DSMM_IO_GEN_H

#include "io/io.h"

/* A row generator: the sorted columns of row i (and values in (0, 1] when vals != NULL).
 * It must draw from dsmm_rng stream i only and draw the same numbers whether cols is NULL
 * (counting pass) or not (filling pass); returns the row's length. In symmetric mode it
 * returns columns <= i only (the lower triangle, diagonal included if wanted). */
typedef dsmm_idx (*dsmmi_gen_row_fn)(const void *data, dsmm_idx i, dsmm_idx *cols, double *vals);

/* dsmmi_gen_rows: n x n CSR of type (PATTERN or DOUBLE) from row_fn, rows in parallel on
 * ctx's threads; symmetric: row_fn gives the lower triangle and it is mirrored. The result
 * does not depend on the thread count. */
dsmm_status dsmmi_gen_rows(dsmm_ctx *ctx, dsmm_idx n, dsmm_type type, int symmetric,
                           dsmmi_gen_row_fn row_fn, const void *data, dsmm_csr **out);

/* dsmmi_gen_bernoulli: the positions in [lo, hi) that succeed with probability p (given as
 * lq = log1p(-p); p >= 1 when lq == -INFINITY) by geometric skipping, O(successes); appended
 * to cols/vals at *len (cols may be NULL: count only); skip is a position left out (-1 none).
 * One value is drawn per success when want_vals. */
void dsmmi_gen_bernoulli(dsmm_rng *r, dsmm_idx lo, dsmm_idx hi, double lq, dsmm_idx skip,
                         int want_vals, dsmm_idx *cols, double *vals, dsmm_idx *len);

/* dsmmi_gen_check_type: DSMM_PATTERN or DSMM_DOUBLE, else DSMM_ERR_ARG. */
dsmm_status dsmmi_gen_check_type(dsmm_ctx *ctx, const dsmm_gen_params *p);

#endif // DSMM_IO_GEN_H
