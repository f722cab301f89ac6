// tests/dist/test_dist_io.c: parallel reading and writing of distributed matrices
// (src/dist/read.c, write.c): dsmm_dist_read gives what the serial dsmm_read gives on every
// file of tests/data (Matrix Market gzip and plain, symmetric, pattern; abc), on binary files,
// on the largest Matrix Market file of the shared data when present, and on files smaller
// than the rank count, on 1D and 2D grids; bad lines in the first and the last rank's range
// fail on every rank with the file and the true line number; dsmm_dist_write gives the same
// bytes as dsmm_write of the gathered matrix, and a failed write leaves no file.
#include <dirent.h>
#include <math.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dist_common.h"
#include "io/io.h"

#define MAX_SHAPES 16

static char g_dir[512]; // scratch directory, shared by all ranks (made by rank 0)

static const char *tmp_path(const char *name)
{
    static char bufs[8][1024];
    static int next;
    char *b = bufs[next++ % 8];
    snprintf(b, 1024, "%s/%s", g_dir, name);
    return b;
}

// The scratch directory: rank 0's test_tmpdir() (removed when rank 0 exits), told to all.
static void setup_dir(void)
{
    if (g_dir[0]) return;
    if (g_rank == 0) snprintf(g_dir, sizeof g_dir, "%s", test_tmpdir());
    MPI_Bcast(g_dir, (int)sizeof g_dir, MPI_CHAR, 0, MPI_COMM_WORLD);
}

// Rank 0 writes len bytes to path; 1 on every rank when it worked.
static int write_shared(const char *path, const void *data, size_t len)
{
    int ok = 1;
    if (g_rank == 0) ok = test_write_file(path, data, len) == 0;
    MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
    return ok;
}

// Rank 0 inflates src (a .gz) into dst; 1 on every rank when it worked.
static int gunzip_shared(dsmm_ctx *ctx, const char *src, const char *dst)
{
    int ok = 1;
    if (g_rank == 0) {
        dsmmi_source s;
        ok = dsmmi_source_load(ctx, src, &s) == DSMM_OK;
        if (ok) ok = test_write_file(dst, s.buf, s.len) == 0;
        if (ok) dsmmi_source_free(ctx, &s);
    }
    MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
    return ok;
}

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 1 << 16, n = 0;
    char *b = malloc(cap);
    size_t got;
    while (b && (got = fread(b + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n == cap) b = realloc(b, cap *= 2);
    }
    fclose(f);
    *len = n;
    return b;
}

// The files' bytes are equal (rank 0 compares; the answer goes to all).
static int same_bytes(const char *a, const char *b)
{
    int ok = 1;
    if (g_rank == 0) {
        size_t la = 0, lb = 0;
        char *x = slurp(a, &la), *y = slurp(b, &lb);
        ok = x && y && la == lb && memcmp(x, y, la) == 0;
        if (!ok) {
            size_t k = 0;
            while (x && y && k < la && k < lb && x[k] == y[k]) k++;
            fprintf(stderr, "%s (%zu bytes) and %s (%zu bytes) differ at byte %zu\n", a, la, b, lb,
                    k);
        }
        free(x);
        free(y);
    }
    MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
    return ok;
}

static int info_equal(const dsmm_file_info *a, const dsmm_file_info *b)
{
    return a->format == b->format && a->array == b->array && a->field == b->field &&
           a->symmetry == b->symmetry && a->nrows == b->nrows && a->ncols == b->ncols &&
           a->stored == b->stored && a->bytes == b->bytes && a->gzipped == b->gzipped;
}

// path read in parallel on the pr x pc grid equals dsmm_read's matrix (every rank reads the
// serial one too, so each checks its own tile), with the same info.
static int check_read(dsmm_ctx *ctx, const char *path, const dsmm_read_opts *o, int pr, int pc)
{
    dsmm_csr *A = NULL;
    dsmm_dist *D = NULL;
    dsmm_file_info want, got;
    char what[1200];
    snprintf(what, sizeof what, "%s on %dx%d", path, pr, pc);
    memset(&want, 0, sizeof want);
    memset(&got, 0xff, sizeof got);
    CHECK_ALL_OK(ctx, dsmm_read(ctx, path, o, &A, NULL, &want));
    CHECK_ALL_OK(ctx, dsmm_dist_read(ctx, path, o, pr, pc, &D, &got));
    int ok = dist_equals(ctx, D, A, 0, what);
    dsmm_dist_destroy(&D);
    dsmm_csr_destroy(&A);
    CHECK_ALL_MSG(ok, "%s", what);
    CHECK_ALL_MSG(info_equal(&got, &want), "%s: info differs", what);
    return TEST_PASS;
}

static const char *data_files[] = {
    "bcsstk13.mtx.gz", "citeseer.adj.mtx.gz",       "collins2007.txt.gz",
    "cora.adj.mtx.gz", "facebook-combined.mtx.gz",  "fe_4elt2.mtx.gz",
    "hep-th.mtx.gz",   "p2p-Gnutella08.edgelist.gz"};
#define NDATA (sizeof data_files / sizeof data_files[0])

// Every file of tests/data, gzip as stored and inflated (plain files take the pread path), on
// every grid shape of P.
static int test_read_data(void)
{
    dsmm_ctx *ctx = dist_ctx();
    int pr[MAX_SHAPES], pc[MAX_SHAPES];
    int ns = grid_shapes(g_size, pr, pc);
    setup_dir();
    for (size_t f = 0; f < NDATA; f++) {
        char gz[1024], plain[1024];
        snprintf(gz, sizeof gz, "%s/%s", DSMM_TEST_DATA_DIR, data_files[f]);
        snprintf(plain, sizeof plain, "%s", tmp_path(data_files[f]));
        plain[strlen(plain) - 3] = '\0'; // without .gz
        CHECK_ALL(gunzip_shared(ctx, gz, plain));
        for (int s = 0; s < ns; s++) {
            if (check_read(ctx, gz, NULL, pr[s], pc[s]) != TEST_PASS) return TEST_FAIL;
            if (check_read(ctx, plain, NULL, pr[s], pc[s]) != TEST_PASS) return TEST_FAIL;
        }
    }
    // Options reach the parser: float values, pattern as values, 0-based indices, threads.
    dsmm_read_opts o;
    dsmm_read_opts_init(&o);
    o.type = DSMM_FLOAT;
    o.keep_pattern = 0;
    o.threads = 2;
    const char *fe = tmp_path("fe_4elt2.mtx"), *hep = tmp_path("hep-th.mtx");
    if (check_read(ctx, fe, &o, 0, 0) != TEST_PASS) return TEST_FAIL;
    if (check_read(ctx, hep, &o, g_size, 1) != TEST_PASS) return TEST_FAIL;
    CHECK_ALL_NO_LEAK(ctx);
    return TEST_PASS;
}

// A general file with comments and blank lines among the entries, skew-symmetric storage,
// 0-based indices, duplicates summed, no final newline, and files with fewer entries (and
// fewer bytes of data) than ranks.
static int test_read_small(void)
{
    dsmm_ctx *ctx = dist_ctx();
    setup_dir();
    static const struct {
        const char *name, *text;
        int base;
        dsmm_dup dup;
    } cases[] = {
        {"three.mtx",
         "%%MatrixMarket matrix coordinate real general\n3 4 3\n1 1 1.5\n2 4 -2\n3 2 "
         "0.25\n",
         1, DSMM_DUP_ERROR},
        {"three-nonl.mtx",
         "%%MatrixMarket matrix coordinate real general\n3 4 3\n1 1 1.5\n2 4 "
         "-2\n3 2 0.25",
         1, DSMM_DUP_ERROR},
        {"one.mtx", "%%MatrixMarket matrix coordinate pattern general\n5 5 1\n5 5\n", 1,
         DSMM_DUP_ERROR},
        {"empty.mtx", "%%MatrixMarket matrix coordinate real general\n% nothing\n4 4 0\n", 1,
         DSMM_DUP_ERROR},
        {"sizeonly.mtx", "%%MatrixMarket matrix coordinate real general\n0 0 0", 1, DSMM_DUP_ERROR},
        {"comments.mtx",
         "%%MatrixMarket matrix coordinate integer general\n% a\n\n3 3 4\n% b\n1 1 7\n\n  \n% "
         "c\n2 2 -3\n3 1 5\n%d\n3 3 9\n\n",
         1, DSMM_DUP_ERROR},
        {"skew.mtx",
         "%%MatrixMarket matrix coordinate real skew-symmetric\n4 4 3\n2 1 0.5\n4 1 -1.25\n4 3 "
         "3\n",
         1, DSMM_DUP_ERROR},
        {"sym0.mtx",
         "%%MatrixMarket matrix coordinate real symmetric\n3 3 3\n0 0 1\n2 0 2\n2 1 3\n", 0,
         DSMM_DUP_ERROR},
        {"dups.mtx",
         "%%MatrixMarket matrix coordinate real general\n2 2 5\n1 1 1\n2 2 2\n1 1 3\n1 2 4\n1 1 "
         "5\n",
         1, DSMM_DUP_SUM},
        {"dupslast.mtx",
         "%%MatrixMarket matrix coordinate real general\n2 2 5\n1 1 1\n2 2 2\n1 1 3\n1 2 4\n1 1 "
         "5\n",
         1, DSMM_DUP_LAST},
    };
    int pr[MAX_SHAPES], pc[MAX_SHAPES];
    int ns = grid_shapes(g_size, pr, pc);
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        const char *path = tmp_path(cases[c].name);
        CHECK_ALL(write_shared(path, cases[c].text, strlen(cases[c].text)));
        dsmm_read_opts o;
        dsmm_read_opts_init(&o);
        o.base = cases[c].base;
        o.dup = cases[c].dup;
        for (int s = 0; s < ns; s++)
            if (check_read(ctx, path, &o, pr[s], pc[s]) != TEST_PASS) return TEST_FAIL;
    }
    CHECK_ALL_NO_LEAK(ctx);
    return TEST_PASS;
}

// Binary files (double, float, pattern; written by dsmm_write) read block by block; a flipped
// byte in the columns fails the combined checksum on every rank.
static int test_read_binary(void)
{
    dsmm_ctx *ctx = dist_ctx();
    dsmm_csr *A = NULL, *F = NULL;
    setup_dir();
    CHECK_ALL_OK(ctx, read_data(ctx, "hep-th.mtx.gz", &A));
    CHECK_ALL_OK(ctx, dsmm_csr_copy(ctx, A, DSMM_FLOAT, &F));
    const char *bd = tmp_path("hep.dsmm"), *bf = tmp_path("hepf.dsmm"), *bp = tmp_path("cora.dsmm"),
               *bad = tmp_path("bad.dsmm"), *tiny = tmp_path("tiny.dsmm");
    dsmm_csr *C = NULL, *S = NULL;
    CHECK_ALL_OK(ctx, read_data(ctx, "cora.adj.mtx.gz", &C));
    test_mat tm;
    test_mat_init(&tm, 3, 5, 0.4, task_seed(7));
    CHECK_ALL_OK(ctx, test_rand_csr(ctx, &tm, &S));
    int ok = 1;
    if (g_rank == 0)
        ok = dsmm_write(ctx, bd, A, NULL, NULL) == DSMM_OK &&
             dsmm_write(ctx, bf, F, NULL, NULL) == DSMM_OK &&
             dsmm_write(ctx, bp, C, NULL, NULL) == DSMM_OK &&
             dsmm_write(ctx, tiny, S, NULL, NULL) == DSMM_OK;
    MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
    CHECK_ALL(ok);
    dsmm_csr_destroy(&A);
    dsmm_csr_destroy(&F);
    dsmm_csr_destroy(&C);
    dsmm_csr_destroy(&S);
    int pr[MAX_SHAPES], pc[MAX_SHAPES];
    int ns = grid_shapes(g_size, pr, pc);
    const char *files[] = {bd, bf, bp, tiny};
    for (int f = 0; f < 4; f++)
        for (int s = 0; s < ns; s++)
            if (check_read(ctx, files[f], NULL, pr[s], pc[s]) != TEST_PASS) return TEST_FAIL;
    dsmm_read_opts o;
    dsmm_read_opts_init(&o);
    o.type = DSMM_FLOAT;
    o.keep_pattern = 0;
    if (check_read(ctx, bp, &o, 0, 0) != TEST_PASS) return TEST_FAIL;
    if (check_read(ctx, bd, &o, 0, 0) != TEST_PASS) return TEST_FAIL;

    // Corrupt one column in the middle of the file (the last rank's block or near it).
    size_t len = 0;
    char *b = g_rank == 0 ? slurp(bd, &len) : NULL;
    if (g_rank == 0) {
        size_t at = len - 8 - 8 * 100; // inside the values
        b[at] ^= 0x10;
        ok = test_write_file(bad, b, len) == 0;
        free(b);
    }
    MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
    CHECK_ALL(ok);
    dsmm_dist *D = NULL;
    CHECK_ALL_ST(ctx, dsmm_dist_read(ctx, bad, NULL, 0, 0, &D, NULL), DSMM_ERR_FORMAT);
    CHECK_ALL(D == NULL);
    CHECK_ALL(strstr(dsmm_ctx_last_error(ctx), "checksum mismatch") != NULL);
    CHECK_ALL(strstr(dsmm_ctx_last_error(ctx), bad) != NULL);
    dsmm_ctx_clear_error(ctx);
    CHECK_ALL_NO_LEAK(ctx);
    return TEST_PASS;
}

// The largest Matrix Market file of the shared data (inflated: the pread path), 1D and 2D.
static int test_read_large(void)
{
    char gz[1024];
    snprintf(gz, sizeof gz, "%s/graphs/ego-twitter-undirected.mtx.gz", DSMM_SHARED_DATA_DIR);
    struct stat sb;
    int have = stat(gz, &sb) == 0;
    MPI_Bcast(&have, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (!have) {
        printf("  %s absent: skipped\n", gz);
        return TEST_SKIP;
    }
    dsmm_ctx *ctx = dist_ctx();
    setup_dir();
    const char *plain = tmp_path("ego-twitter-undirected.mtx");
    CHECK_ALL(gunzip_shared(ctx, gz, plain));
    dsmm_csr *A = NULL;
    dsmm_dist *D = NULL;
    double t0 = MPI_Wtime();
    CHECK_ALL_OK(ctx, dsmm_read(ctx, plain, NULL, &A, NULL, NULL));
    double t1 = MPI_Wtime();
    CHECK_ALL_OK(ctx, dsmm_dist_read(ctx, plain, NULL, g_size, 1, &D, NULL));
    double t2 = MPI_Wtime();
    int ok = dist_equals(ctx, D, A, 0, "ego-twitter 1D");
    dsmm_dist_destroy(&D);
    CHECK_ALL(ok);
    CHECK_ALL_OK(ctx, dsmm_dist_read(ctx, plain, NULL, 0, 0, &D, NULL));
    ok = dist_equals(ctx, D, A, 0, "ego-twitter 2D");
    dsmm_dist_destroy(&D);
    CHECK_ALL(ok);
    printf("  %lld x %lld, nnz %lld: serial read %.2f s, parallel read %.2f s on %d ranks\n",
           (long long)A->nrows, (long long)A->ncols, (long long)A->nnz, t1 - t0, t2 - t1, g_size);
    dsmm_csr_destroy(&A);
    CHECK_ALL_NO_LEAK(ctx);
    return TEST_PASS;
}

// Ranges as dist/read.c cuts them: the start of rank r's byte range in a data section of len
// bytes starting at data.
static size_t range_start(size_t data, size_t len, int P, int r)
{
    return data + len / (size_t)P * (size_t)r + len % (size_t)P * (size_t)r / (size_t)P;
}

// Writes a general real file of n entries "i j v" (entry k on line k + 4) in which the third
// entry line starting in rank which_rank's byte range (of P ranks) has the value `bad`.
// Returns that line's number, or -1.
static long long corrupt_file(const char *path, int n, const char *bad, int P, int which_rank)
{
    size_t cap = (size_t)n * 40 + 200, len = 0;
    char *t = malloc(cap);
    len += (size_t)snprintf(t + len, cap - len,
                            "%%%%MatrixMarket matrix coordinate real general\n%%c\n%d %d %d\n", n,
                            n, n);
    size_t data = len;
    size_t *starts = malloc((size_t)n * sizeof *starts);
    for (int k = 0; k < n; k++) {
        starts[k] = len;
        len +=
            (size_t)snprintf(t + len, cap - len, "%d %d %.3f\n", k + 1, (k * 7) % n + 1, 0.5 + k);
    }
    // The first line that starts in rank which_rank's byte range, a little inside it.
    size_t lo = range_start(data, len - data, P, which_rank);
    size_t hi = range_start(data, len - data, P, which_rank + 1);
    int k = 0;
    while (k < n && starts[k] < lo) k++;
    if (k + 2 < n && starts[k + 2] < hi) k += 2;
    long long line = -1;
    if (k < n && starts[k] < hi) {
        // Replace the value (the third word) by `bad`, keeping the rest of the file.
        char *e = memchr(t + starts[k], '\n', len - starts[k]);
        char *v = t + starts[k];
        v = strchr(v, ' ') + 1;
        v = strchr(v, ' ') + 1;
        size_t tail = len - (size_t)(e - t);
        char *u = malloc(len + strlen(bad) + 1);
        size_t head = (size_t)(v - t);
        memcpy(u, t, head);
        memcpy(u + head, bad, strlen(bad));
        memcpy(u + head + strlen(bad), e, tail);
        len = head + strlen(bad) + tail;
        free(t);
        t = u;
        line = k + 4; // banner, comment, size line, then entry k on line k + 4
    }
    if (line > 0 && test_write_file(path, t, len) != 0) line = -1;
    free(t);
    free(starts);
    return line;
}

// A bad value in the last rank's range, then in rank 0's range, then in both: every rank fails
// with DSMM_ERR_FORMAT, and the message names the file and the first bad line, as the serial
// reader's does. Nobody hangs.
static int test_read_corrupt(void)
{
    dsmm_ctx *ctx = dist_ctx();
    setup_dir();
    const int n = 400;
    static const char *bads[] = {"1.5x", "nan", "--3"};
    for (int w = 0; w < 3; w++) {
        char name[64];
        snprintf(name, sizeof name, "corrupt%d.mtx", w);
        const char *path = tmp_path(name);
        long long line = -1;
        if (g_rank == 0) {
            int who = w == 0 ? g_size - 1 : 0;
            line = corrupt_file(path, n, bads[w], g_size, who);
            if (w == 2 && line > 0) {
                // Both: corrupt the last rank's range of the file made for rank 0.
                size_t len = 0;
                char *t = slurp(path, &len);
                char *p = t + len - 2; // the last entry's value ends here
                while (*p != ' ') p--;
                p[1] = 'z';
                test_write_file(path, t, len);
                free(t);
            }
        }
        long long l = line;
        MPI_Bcast(&l, 1, MPI_LONG_LONG, 0, MPI_COMM_WORLD);
        CHECK_ALL(l > 0);
        char where[1200];
        snprintf(where, sizeof where, "%s:%lld:", path, l);
        // The serial reader names the same line.
        dsmm_csr *A = NULL;
        CHECK_ALL_ST(ctx, dsmm_read(ctx, path, NULL, &A, NULL, NULL), DSMM_ERR_FORMAT);
        CHECK_ALL_MSG(strstr(dsmm_ctx_last_error(ctx), where) != NULL, "serial: %s, expected %s",
                      dsmm_ctx_last_error(ctx), where);
        dsmm_ctx_clear_error(ctx);
        int pr[MAX_SHAPES], pc[MAX_SHAPES];
        int ns = grid_shapes(g_size, pr, pc);
        for (int s = 0; s < ns; s++) {
            dsmm_dist *D = NULL;
            CHECK_ALL_ST(ctx, dsmm_dist_read(ctx, path, NULL, pr[s], pc[s], &D, NULL),
                         DSMM_ERR_FORMAT);
            CHECK_ALL(D == NULL);
            CHECK_ALL_MSG(strstr(dsmm_ctx_last_error(ctx), where) != NULL, "got %s, expected %s",
                          dsmm_ctx_last_error(ctx), where);
            // The line lies where it was put: found by the last rank, or by rank 0.
            char by[32];
            snprintf(by, sizeof by, "rank %d: ", w == 0 ? g_size - 1 : 0);
            CHECK_ALL_MSG(g_size == 1 || strstr(dsmm_ctx_last_error(ctx), by) != NULL,
                          "got %s, expected %s", dsmm_ctx_last_error(ctx), by);
            dsmm_ctx_clear_error(ctx);
        }
    }
    CHECK_ALL_NO_LEAK(ctx);
    return TEST_PASS;
}

// Errors found by counting (too few or too many entries, a line over the length limit), a
// header error, an array file, a missing file, a directory: the same status on every rank and
// the serial reader's file:line.
static int test_read_errors(void)
{
    dsmm_ctx *ctx = dist_ctx();
    setup_dir();
    const size_t lcap = DSMMI_MAX_LINE + 4096;
    char *longline = malloc(lcap);
    CHECK_ALL(longline != NULL);
    size_t ll = (size_t)snprintf(longline, lcap,
                                 "%%%%MatrixMarket matrix coordinate real general\n3 3 3\n1 1 1\n");
    memset(longline + ll, ' ', DSMMI_MAX_LINE + 10);
    ll += DSMMI_MAX_LINE + 10;
    ll += (size_t)snprintf(longline + ll, lcap - ll, "2 2 2\n3 3 3\n");
    static const struct {
        const char *name, *text, *where;
        dsmm_status st;
    } cases[] = {
        {"few.mtx", "%%MatrixMarket matrix coordinate real general\n3 3 4\n1 1 1\n2 2 2\n3 3 3\n",
         ":5: file ends after 3 of 4 entries", DSMM_ERR_FORMAT},
        {"few2.mtx", "%%MatrixMarket matrix coordinate real general\n3 3 4\n1 1 1\n2 2 2\n3 3 3",
         ":5: file ends after 3 of 4 entries", DSMM_ERR_FORMAT},
        {"many.mtx",
         "%%MatrixMarket matrix coordinate real general\n% x\n3 3 2\n1 1 1\n\n2 2 2\n% y\n3 3 "
         "3\n",
         ":8: more than 2 entries", DSMM_ERR_FORMAT},
        {"range.mtx", "%%MatrixMarket matrix coordinate real general\n3 3 2\n1 1 1\n4 2 2\n",
         ":4: row index 4 out of range 1..3", DSMM_ERR_FORMAT},
        {"upper.mtx", "%%MatrixMarket matrix coordinate real symmetric\n3 3 2\n1 1 1\n1 2 2\n",
         ":4: symmetric file has entry (1, 2) above the diagonal", DSMM_ERR_FORMAT},
        {"banner.mtx", "%%MatrixMarket matrix coordinate real generel\n3 3 0\n",
         ":1: unknown symmetry 'generel'", DSMM_ERR_FORMAT},
        {"nosize.mtx", "%%MatrixMarket matrix coordinate real general\n% only\n",
         ":3: missing size line", DSMM_ERR_FORMAT},
        {"array.mtx", "%%MatrixMarket matrix array real general\n2 1\n1\n2\n", "dsmm_read_dense",
         DSMM_ERR_UNSUPPORTED},
        {"complex.mtx", "%%MatrixMarket matrix coordinate complex general\n1 1 1\n1 1 1 1\n",
         ":1: complex matrices are not supported", DSMM_ERR_UNSUPPORTED},
        {"fits.mtx", "%%MatrixMarket matrix coordinate real general\n3 3 1000000\n1 1 1\n",
         "declares 1000000 entries but only", DSMM_ERR_NOMEM},
        {"empty0.mtx", "", "empty file", DSMM_ERR_FORMAT},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        const char *path = tmp_path(cases[c].name);
        CHECK_ALL(write_shared(path, cases[c].text, strlen(cases[c].text)));
        dsmm_dist *D = NULL;
        dsmm_csr *A = NULL;
        dsmm_status want = cases[c].st;
        // The serial reader agrees (except for array files, which it reads).
        if (want != DSMM_ERR_UNSUPPORTED || strstr(cases[c].name, "array") == NULL) {
            CHECK_ALL_ST(ctx, dsmm_read(ctx, path, NULL, &A, NULL, NULL), want);
            CHECK_ALL_MSG(strstr(dsmm_ctx_last_error(ctx), cases[c].where) != NULL, "serial %s: %s",
                          cases[c].name, dsmm_ctx_last_error(ctx));
            dsmm_ctx_clear_error(ctx);
        }
        CHECK_ALL_ST(ctx, dsmm_dist_read(ctx, path, NULL, 0, 0, &D, NULL), want);
        CHECK_ALL(D == NULL);
        CHECK_ALL_MSG(strstr(dsmm_ctx_last_error(ctx), cases[c].where) != NULL &&
                          strstr(dsmm_ctx_last_error(ctx), path) != NULL,
                      "%s: %s", cases[c].name, dsmm_ctx_last_error(ctx));
        dsmm_ctx_clear_error(ctx);
    }
    // A line over the limit in the middle of the file (it spans several ranks' ranges).
    const char *lp = tmp_path("long.mtx");
    int wrote = write_shared(lp, longline, ll);
    free(longline);
    CHECK_ALL(wrote);
    dsmm_dist *D = NULL;
    CHECK_ALL_ST(ctx, dsmm_dist_read(ctx, lp, NULL, 0, 0, &D, NULL), DSMM_ERR_FORMAT);
    CHECK_ALL_MSG(strstr(dsmm_ctx_last_error(ctx), ":4: line longer than 1 MiB") != NULL, "%s",
                  dsmm_ctx_last_error(ctx));
    dsmm_ctx_clear_error(ctx);
    // Missing file, directory, bad grid, bad options.
    const char *missing = tmp_path("no-such-file.mtx");
    CHECK_ALL_ST(ctx, dsmm_dist_read(ctx, missing, NULL, 0, 0, &D, NULL), DSMM_ERR_IO);
    CHECK_ALL(strstr(dsmm_ctx_last_error(ctx), missing) != NULL);
    dsmm_ctx_clear_error(ctx);
    CHECK_ALL_ST(ctx, dsmm_dist_read(ctx, g_dir, NULL, 0, 0, &D, NULL), DSMM_ERR_IO);
    CHECK_ALL(strstr(dsmm_ctx_last_error(ctx), "is a directory") != NULL);
    dsmm_ctx_clear_error(ctx);
    CHECK_ALL_ST(ctx, dsmm_dist_read(ctx, tmp_path("few.mtx"), NULL, g_size + 1, 1, &D, NULL),
                 DSMM_ERR_ARG);
    dsmm_ctx_clear_error(ctx);
    dsmm_read_opts o;
    dsmm_read_opts_init(&o);
    o.base = 2;
    CHECK_ALL_ST(ctx, dsmm_dist_read(ctx, tmp_path("few.mtx"), &o, 0, 0, &D, NULL), DSMM_ERR_ARG);
    dsmm_ctx_clear_error(ctx);
    // A repeated entry under DSMM_DUP_ERROR (across ranks' ranges).
    const char *dp = tmp_path("dup.mtx");
    const char *dt = "%%MatrixMarket matrix coordinate real general\n2 2 4\n1 2 1\n2 2 2\n2 1 "
                     "3\n1 2 4\n";
    CHECK_ALL(write_shared(dp, dt, strlen(dt)));
    CHECK_ALL_ST(ctx, dsmm_dist_read(ctx, dp, NULL, 0, 0, &D, NULL), DSMM_ERR_FORMAT);
    CHECK_ALL_MSG(strstr(dsmm_ctx_last_error(ctx), "(1, 2)") != NULL, "%s",
                  dsmm_ctx_last_error(ctx));
    dsmm_ctx_clear_error(ctx);
    CHECK_ALL_NO_LEAK(ctx);
    return TEST_PASS;
}

// dsmm_dist_write (Matrix Market in parallel) gives the bytes of dsmm_write of the gathered
// matrix: symmetric real, pattern, general, float values, options (general forced, precision,
// comment), on every grid shape, with small write chunks; the file reads back to the matrix.
// Binary and abc go through rank 0.
static int test_write(void)
{
    dsmm_ctx *ctx = dist_ctx();
    setup_dir();
    dsmm_csr *M[5] = {NULL};
    CHECK_ALL_OK(ctx, read_data(ctx, "hep-th.mtx.gz", &M[0]));
    CHECK_ALL_OK(ctx, read_data(ctx, "fe_4elt2.mtx.gz", &M[1]));
    CHECK_ALL_OK(ctx, read_data(ctx, "bcsstk13.mtx.gz", &M[2]));
    CHECK_ALL_OK(ctx, dsmm_csr_copy(ctx, M[0], DSMM_FLOAT, &M[3]));
    // General (unsymmetric) with awkward values.
    test_mat tm;
    test_mat_init(&tm, 57, 43, 0.1, task_seed(11));
    CHECK_ALL_OK(ctx, test_rand_csr(ctx, &tm, &M[4]));
    for (dsmm_idx k = 0; k < M[4]->nnz; k++)
        ((double *)M[4]->val)[k] = sin((double)k) * pow(10.0, (double)(k % 40) - 20);
    dsmm_write_opts wo[3];
    for (int k = 0; k < 3; k++) dsmm_write_opts_init(&wo[k]);
    wo[1].symmetric = 0;
    wo[1].comment = "written by test_dist_io\nsecond line";
    wo[2].precision = 6;
    int pr[MAX_SHAPES], pc[MAX_SHAPES];
    int ns = grid_shapes(g_size, pr, pc);
    const char *got = tmp_path("w-got.mtx"), *want = tmp_path("w-want.mtx");
    for (int m = 0; m < 5; m++)
        for (int s = 0; s < ns; s++)
            for (int k = 0; k < 3; k++) {
                dsmm_dist *D = NULL, *B = NULL;
                dsmm_csr *G = NULL;
                if (s == 1) dsmmi_comm_set_chunk(ctx, 1000); // many collective write rounds
                CHECK_ALL_OK(ctx, dsmm_dist_scatter(ctx, 0, M[m], pr[s], pc[s], &D));
                CHECK_ALL_OK(ctx, dsmm_dist_write(ctx, got, D, &wo[k]));
                CHECK_ALL_OK(ctx, dsmm_dist_gather(ctx, D, 0, &G));
                dsmm_status st = g_rank == 0 ? dsmm_write(ctx, want, G, NULL, &wo[k]) : DSMM_OK;
                CHECK_ALL_OK(ctx, st);
                CHECK_ALL_MSG(same_bytes(got, want), "matrix %d grid %dx%d opts %d", m, pr[s],
                              pc[s], k);
                if (k == 0) {
                    dsmm_read_opts ro;
                    dsmm_read_opts_init(&ro);
                    ro.type = M[m]->type;
                    CHECK_ALL_OK(ctx, dsmm_dist_read(ctx, got, &ro, 0, 0, &B, NULL));
                    CHECK_ALL(dist_equals(ctx, B, M[m], 0, "written and read back"));
                }
                dsmm_dist_destroy(&B);
                dsmm_dist_destroy(&D);
                dsmm_csr_destroy(&G);
                dsmmi_comm_set_chunk(ctx, 0);
            }
    // symmetric = 1 on an unsymmetric matrix: every rank fails, nothing is written.
    dsmm_dist *D = NULL;
    dsmm_write_opts so;
    dsmm_write_opts_init(&so);
    so.symmetric = 1;
    const char *none = tmp_path("w-none.mtx");
    CHECK_ALL_OK(ctx, dsmm_dist_scatter(ctx, 0, M[4], 0, 0, &D));
    CHECK_ALL_ST(ctx, dsmm_dist_write(ctx, none, D, &so), DSMM_ERR_ARG);
    dsmm_ctx_clear_error(ctx);
    CHECK_ALL(!test_file_exists(none));
    dsmm_dist_destroy(&D);
    // Binary through rank 0.
    const char *bin = tmp_path("w.dsmm");
    CHECK_ALL_OK(ctx, dsmm_dist_scatter(ctx, 0, M[2], 0, 0, &D));
    CHECK_ALL_OK(ctx, dsmm_dist_write(ctx, bin, D, NULL));
    dsmm_dist_destroy(&D);
    CHECK_ALL_OK(ctx, dsmm_dist_read(ctx, bin, NULL, 0, 0, &D, NULL));
    CHECK_ALL(dist_equals(ctx, D, M[2], 0, "binary written and read back"));
    dsmm_dist_destroy(&D);
    for (int m = 0; m < 5; m++) dsmm_csr_destroy(&M[m]);
    CHECK_ALL_NO_LEAK(ctx);
    return TEST_PASS;
}

// Count the entries of the scratch directory whose name starts with prefix.
static int count_named(const char *prefix)
{
    int n = 0;
    DIR *d = opendir(g_dir);
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL)
        if (strncmp(e->d_name, prefix, strlen(prefix)) == 0) n++;
    if (d) closedir(d);
    return n;
}

// A write that cannot be created (its directory is missing, or a file) fails on every rank
// and leaves nothing behind, neither the file nor a temporary.
static int test_write_fail(void)
{
    dsmm_ctx *ctx = dist_ctx();
    setup_dir();
    dsmm_csr *A = NULL;
    dsmm_dist *D = NULL;
    CHECK_ALL_OK(ctx, read_data(ctx, "cora.adj.mtx.gz", &A));
    CHECK_ALL_OK(ctx, dsmm_dist_scatter(ctx, 0, A, 0, 0, &D));
    const char *p1 = tmp_path("missing-dir/out.mtx");
    CHECK_ALL_ST(ctx, dsmm_dist_write(ctx, p1, D, NULL), DSMM_ERR_IO);
    CHECK_ALL(strstr(dsmm_ctx_last_error(ctx), p1) != NULL);
    dsmm_ctx_clear_error(ctx);
    CHECK_ALL(!test_file_exists(p1));
    const char *plain = tmp_path("wf-plain");
    CHECK_ALL(write_shared(plain, "x", 1));
    const char *p2 = tmp_path("wf-plain/out.mtx");
    CHECK_ALL_ST(ctx, dsmm_dist_write(ctx, p2, D, NULL), DSMM_ERR_IO);
    dsmm_ctx_clear_error(ctx);
    const char *p3 = tmp_path("missing-dir/out.dsmm");
    CHECK_ALL_ST(ctx, dsmm_dist_write(ctx, p3, D, NULL), DSMM_ERR_IO);
    dsmm_ctx_clear_error(ctx);
    // The temporary is made, then the rename over a directory fails: it must be removed.
    const char *isdir = tmp_path("wf-isdir.mtx");
    int made = 1;
    if (g_rank == 0) made = mkdir(isdir, 0700) == 0;
    MPI_Bcast(&made, 1, MPI_INT, 0, MPI_COMM_WORLD);
    CHECK_ALL(made);
    CHECK_ALL_ST(ctx, dsmm_dist_write(ctx, isdir, D, NULL), DSMM_ERR_IO);
    CHECK_ALL(strstr(dsmm_ctx_last_error(ctx), "cannot rename") != NULL || g_rank != 0);
    dsmm_ctx_clear_error(ctx);
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_ALL(count_named("missing-dir") == 0);
    CHECK_ALL(count_named("wf-plain") == 1);
    CHECK_ALL(count_named("wf-isdir") == 1);
    if (g_rank == 0) rmdir(isdir);
    // A good write leaves exactly the file, no temporary.
    const char *ok = tmp_path("wf-ok.mtx");
    CHECK_ALL_OK(ctx, dsmm_dist_write(ctx, ok, D, NULL));
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_ALL(count_named("wf-ok") == 1);
    dsmm_dist_destroy(&D);
    dsmm_csr_destroy(&A);
    CHECK_ALL_NO_LEAK(ctx);
    return TEST_PASS;
}

int main(int argc, char **argv)
{
    static const test_case tests[] = {TEST(test_read_data),   TEST(test_read_small),
                                      TEST(test_read_binary), TEST(test_read_corrupt),
                                      TEST(test_read_errors), TEST(test_write),
                                      TEST(test_write_fail),  TEST(test_read_large)};
    return dist_main(argc, argv, tests, sizeof tests / sizeof tests[0]);
}
