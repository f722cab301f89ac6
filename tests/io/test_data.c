// tests/io/test_data.c: dsmm_read on real files (tests/data and every *.mtx.gz under the shared
// data folder) against an independent naive reader (zlib line by line: banner, size line, data
// lines counted) and the numbers published in tests/data/README.md.
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>

#include "check.h"

// What the naive reader saw in a Matrix Market file.
typedef struct naive_mtx {
    char layout[32], field[32], symmetry[32];
    long long nrows, ncols, declared; // size line
    long long lines;                  // data lines counted
    long long diag;                   // data lines with i == j
} naive_mtx;

static void lower(char *s)
{
    for (; *s; s++)
        if (*s >= 'A' && *s <= 'Z') *s = (char)(*s - 'A' + 'a');
}

// Reads one line of any length into *buf (grown with realloc); 0 at end of file.
static int read_line(gzFile f, char **buf, size_t *cap)
{
    size_t len = 0;
    for (;;) {
        if (*cap - len < 2) {
            size_t ncap = *cap ? 2 * *cap : 4096;
            char *nb = realloc(*buf, ncap);
            if (nb == NULL) return 0;
            *buf = nb;
            *cap = ncap;
        }
        if (gzgets(f, *buf + len, (int)(*cap - len)) == NULL) return len > 0;
        len += strlen(*buf + len);
        if (len > 0 && (*buf)[len - 1] == '\n') return 1;
    }
}

// 0 on success; prints why not otherwise.
static int naive_read(const char *path, naive_mtx *r)
{
    memset(r, 0, sizeof *r);
    gzFile f = gzopen(path, "rb");
    if (f == NULL) {
        fprintf(stderr, "naive reader: cannot open %s\n", path);
        return 1;
    }
    char *line = NULL;
    size_t cap = 0;
    int stage = 0, rc = 1; // 0: banner, 1: size line, 2: data
    while (read_line(f, &line, &cap)) {
        if (stage == 0) {
            char mm[64] = "", obj[32] = "";
            if (sscanf(line, "%63s %31s %31s %31s %31s", mm, obj, r->layout, r->field,
                       r->symmetry) != 5) {
                fprintf(stderr, "naive reader: %s: bad banner\n", path);
                goto done;
            }
            lower(r->layout);
            lower(r->field);
            lower(r->symmetry);
            stage = 1;
            continue;
        }
        const char *p = line;
        while (*p == ' ' || *p == '\t') p++;
        if (*p == '%' || *p == '\n' || *p == '\r' || *p == '\0') continue;
        if (stage == 1) {
            int want = strcmp(r->layout, "array") == 0 ? 2 : 3;
            if (sscanf(p, "%lld %lld %lld", &r->nrows, &r->ncols, &r->declared) < want) {
                fprintf(stderr, "naive reader: %s: bad size line\n", path);
                goto done;
            }
            stage = 2;
            continue;
        }
        long long i = 0, j = 0;
        r->lines++;
        if (sscanf(p, "%lld %lld", &i, &j) == 2 && i == j) r->diag++;
    }
    rc = stage == 2 ? 0 : 1;
    if (rc) fprintf(stderr, "naive reader: %s: no size line\n", path);
done:
    free(line);
    gzclose(f);
    return rc;
}

// dsmm_read of path against the naive reader: dims, stored entries, full nnz, header.
static int check_file(dsmm_ctx *ctx, const char *path, dsmm_csr **out)
{
    naive_mtx nv;
    CHECK_MSG(naive_read(path, &nv) == 0, "%s", path);
    CHECK_MSG(strcmp(nv.layout, "coordinate") == 0, "%s: only coordinate files are here", path);
    CHECK_MSG(nv.lines == nv.declared, "%s: %lld data lines but %lld declared", path, nv.lines,
              nv.declared);
    int sym = strcmp(nv.symmetry, "symmetric") == 0 || strcmp(nv.symmetry, "skew-symmetric") == 0;
    long long nnz = sym ? 2 * nv.lines - nv.diag : nv.lines;

    dsmm_csr *A = NULL;
    dsmm_file_info info;
    CHECK_OK(ctx, dsmm_read(ctx, path, NULL, &A, NULL, &info));
    CHECK_MSG(A->nrows == nv.nrows && A->ncols == nv.ncols, "%s: %lld x %lld, header %lld x %lld",
              path, (long long)A->nrows, (long long)A->ncols, nv.nrows, nv.ncols);
    CHECK_MSG(info.nrows == nv.nrows && info.ncols == nv.ncols, "%s: info dims", path);
    CHECK_MSG(info.stored == nv.lines, "%s: info.stored %lld, lines %lld", path,
              (long long)info.stored, nv.lines);
    CHECK_MSG(A->nnz == nnz, "%s: nnz %lld, expected %lld", path, (long long)A->nnz, nnz);
    CHECK_MSG(info.format == DSMM_FORMAT_MTX && info.gzipped && !info.array, "%s: info", path);
    dsmm_mm_symmetry ws = strcmp(nv.symmetry, "symmetric") == 0        ? DSMM_MM_SYMMETRIC
                          : strcmp(nv.symmetry, "skew-symmetric") == 0 ? DSMM_MM_SKEW
                                                                       : DSMM_MM_GENERAL;
    dsmm_mm_field wf = strcmp(nv.field, "pattern") == 0   ? DSMM_MM_PATTERN
                       : strcmp(nv.field, "integer") == 0 ? DSMM_MM_INTEGER
                                                          : DSMM_MM_REAL;
    CHECK_MSG(info.symmetry == ws && info.field == wf, "%s: header %s %s read as %d %d", path,
              nv.field, nv.symmetry, (int)info.field, (int)info.symmetry);
    CHECK_MSG((A->type == DSMM_PATTERN) == (wf == DSMM_MM_PATTERN), "%s: value type %s", path,
              dsmm_type_name(A->type));
    CHECK_OK(ctx, dsmm_csr_check(ctx, A));
    if (out)
        *out = A;
    else
        dsmm_csr_destroy(&A);
    return TEST_PASS;
}

// The README table of tests/data (numbers counted independently, see README.md).
static const struct {
    const char *name;
    long long n, stored, nnz, diag, maxdeg;
    double flops;
    int pattern;
} table[] = {
    {"hep-th.mtx.gz", 8361, 15751, 31502, 0, 50, 273668, 0},
    {"fe_4elt2.mtx.gz", 11143, 32818, 65636, 0, 12, 395450, 1},
    {"cora.adj.mtx.gz", 2708, 5278, 10556, 0, 168, 115158, 1},
    {"citeseer.adj.mtx.gz", 3327, 4676, 9228, 124, 99, 63576, 1},
    {"bcsstk13.mtx.gz", 2003, 42943, 83883, 2003, 95, 4554541, 0},
};

static int test_local_mtx_files(void)
{
    dsmm_ctx *ctx = test_ctx();
    char path[4096];
    for (size_t t = 0; t < sizeof table / sizeof table[0]; t++) {
        snprintf(path, sizeof path, "%s/%s", DSMM_TEST_DATA_DIR, table[t].name);
        dsmm_csr *A = NULL;
        if (check_file(ctx, path, &A) != TEST_PASS) {
            dsmm_csr_destroy(&A);
            return TEST_FAIL;
        }
        dsmm_summary s;
        dsmm_status st = dsmm_csr_summary(ctx, A, 4, &s);
        dsmm_csr_destroy(&A);
        CHECK_OK(ctx, st);
        CHECK_EQ_IDX(s.nrows, table[t].n);
        CHECK_EQ_IDX(s.ncols, table[t].n);
        CHECK_EQ_IDX(s.nnz, table[t].nnz);
        CHECK_EQ_IDX(s.diag_nnz, table[t].diag);
        CHECK_EQ_IDX(s.row_deg_max, table[t].maxdeg);
        CHECK_EQ_IDX(s.col_deg_max, table[t].maxdeg); // symmetric
        CHECK_NEAR(s.flops_aa, table[t].flops, 0);
        CHECK_MSG(s.pattern_symmetric && s.value_symmetric, "%s", table[t].name);
    }
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

// Every *.mtx.gz in tests/data is checked, including ones added later without a table row.
static int test_local_dir(void)
{
    dsmm_ctx *ctx = test_ctx();
    DIR *d = opendir(DSMM_TEST_DATA_DIR);
    CHECK(d != NULL);
    int seen = 0;
    struct dirent *e;
    char path[4096];
    while ((e = readdir(d)) != NULL) {
        size_t len = strlen(e->d_name);
        if (len < 7 || strcmp(e->d_name + len - 7, ".mtx.gz") != 0) continue;
        snprintf(path, sizeof path, "%s/%s", DSMM_TEST_DATA_DIR, e->d_name);
        if (check_file(ctx, path, NULL) != TEST_PASS) {
            closedir(d);
            return TEST_FAIL;
        }
        seen++;
    }
    closedir(d);
    CHECK(seen >= 5);
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

static int check_abc(dsmm_ctx *ctx, const char *name, dsmm_idx n, dsmm_idx stored)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", DSMM_TEST_DATA_DIR, name);
    dsmm_csr *A = NULL;
    dsmm_labels *L = NULL;
    dsmm_file_info info;
    CHECK_OK(ctx, dsmm_read(ctx, path, NULL, &A, &L, &info));
    int ok = L != NULL && dsmm_labels_count(L) == n && A->nrows == n && A->ncols == n &&
             A->nnz == stored && info.stored == stored && info.format == DSMM_FORMAT_ABC &&
             info.gzipped;
    if (!ok)
        fprintf(stderr, "%s: labels %lld, %lld x %lld, nnz %lld, stored %lld, format %d\n", name,
                L ? (long long)dsmm_labels_count(L) : -1LL, (long long)A->nrows,
                (long long)A->ncols, (long long)A->nnz, (long long)info.stored, (int)info.format);
    dsmm_csr_destroy(&A);
    dsmm_labels_destroy(&L);
    CHECK(ok);
    return TEST_PASS;
}

static int test_abc_files(void)
{
    dsmm_ctx *ctx = test_ctx();
    CHECK(check_abc(ctx, "collins2007.txt.gz", 1622, 9074) == TEST_PASS);
    CHECK(check_abc(ctx, "p2p-Gnutella08.edgelist.gz", 6301, 20777) == TEST_PASS);
    // first label of collins2007 is YAL001C, of Gnutella "0"
    char path[4096];
    snprintf(path, sizeof path, "%s/collins2007.txt.gz", DSMM_TEST_DATA_DIR);
    dsmm_csr *A = NULL;
    dsmm_labels *L = NULL;
    CHECK_OK(ctx, dsmm_read(ctx, path, NULL, &A, &L, NULL));
    int ok = strcmp(dsmm_labels_name(L, 0), "YAL001C") == 0 &&
             dsmm_labels_find(L, "YBR123C") == 1 && A->type != DSMM_PATTERN;
    dsmm_csr_destroy(&A);
    dsmm_labels_destroy(&L);
    CHECK(ok);
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

// Recursively every *.mtx.gz below dir; counts the files checked.
static int walk(dsmm_ctx *ctx, const char *dir, int *count)
{
    DIR *d = opendir(dir);
    if (d == NULL) return TEST_PASS;
    struct dirent *e;
    int rc = TEST_PASS;
    while (rc == TEST_PASS && (e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.') continue;
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        struct stat sb;
        if (stat(path, &sb) != 0) continue;
        if (S_ISDIR(sb.st_mode)) {
            rc = walk(ctx, path, count);
            continue;
        }
        size_t len = strlen(e->d_name);
        if (len < 7 || strcmp(e->d_name + len - 7, ".mtx.gz") != 0) continue;
        rc = check_file(ctx, path, NULL);
        if (rc == TEST_PASS) (*count)++;
    }
    closedir(d);
    return rc;
}

// Acceptance: dsmm matches the header and line count of every Matrix Market file shared.
static int test_shared_data(void)
{
    struct stat sb;
    if (stat(DSMM_SHARED_DATA_DIR, &sb) != 0 || !S_ISDIR(sb.st_mode)) {
        fprintf(stderr, "%s absent: skipped\n", DSMM_SHARED_DATA_DIR);
        return TEST_SKIP;
    }
    dsmm_ctx *ctx = test_ctx();
    int count = 0;
    CHECK(walk(ctx, DSMM_SHARED_DATA_DIR, &count) == TEST_PASS);
    fprintf(stderr, "checked %d Matrix Market files under %s\n", count, DSMM_SHARED_DATA_DIR);
    CHECK(count >= 1);
    CHECK_NO_LEAK(ctx);
    return TEST_PASS;
}

int main(int argc, char **argv)
{
    static const test_case tests[] = {
        TEST(test_local_mtx_files),
        TEST(test_local_dir),
        TEST(test_abc_files),
        TEST(test_shared_data),
    };
    return test_main(argc, argv, tests, sizeof tests / sizeof tests[0]);
}
