// src/io/io.h: internal header of the io layer: whole-input sources (file or .gz), the
// per-format parsers and writers behind dsmm_read / dsmm_write, labels, and line lookup.
#ifndef DSMM_IO_H
#define DSMM_IO_H

#include "sparse/sparse.h"

// A data line longer than this is rejected (a valid entry is < 100 bytes; this bounds the
// damage a corrupt or hostile file can do to error messages and scanners).
#define DSMMI_MAX_LINE ((size_t)1 << 20)

/* The whole (decompressed) input in memory, NUL-terminated at buf[len]. */
typedef struct dsmmi_source {
    char *buf;
    size_t len;
    const char *name; // for messages; not owned
    int gzipped;
} dsmmi_source;

/* dsmmi_source_load: reads path (gzip detected by its magic bytes, not the name).
 * Errors: DSMM_ERR_IO naming the path for missing files, directories, read errors, corrupt
 *         gzip streams; DSMM_ERR_NOMEM (budget). */
dsmm_status dsmmi_source_load(dsmm_ctx *ctx, const char *path, dsmmi_source *src);
/* dsmmi_source_wrap: buf/len as a source, copying to add the terminating NUL; a gzip buffer
 * is decompressed. */
dsmm_status dsmmi_source_wrap(dsmm_ctx *ctx, const char *buf, size_t len, const char *name,
                              dsmmi_source *src);
void dsmmi_source_free(dsmm_ctx *ctx, dsmmi_source *src);

/* dsmmi_line_of: 1-based line number of byte offset off in buf (counts newlines; error
 * paths only). */
dsmm_idx dsmmi_line_of(const char *buf, size_t off);

/* Format detection: from content (Matrix Market banner, binary magic, a "(mclheader" line in
 * the first 64 KiB), else from the name (.mtx, .abc/.txt/.tsv/.edgelist, .dsmm/.bin, .mci; a
 * trailing .gz is ignored). */
dsmm_format dsmmi_format_detect(const char *buf, size_t len, const char *name);
dsmm_format dsmmi_format_from_name(const char *name);
/* dsmmi_write_format: the format dsmm_write and dsmm_dist_write use for path: asked, else from
 * the name, else Matrix Market. Errors: DSMM_ERR_UNSUPPORTED (mcl's native format, read only),
 * DSMM_ERR_ARG (unknown format). */
dsmm_status dsmmi_write_format(dsmm_ctx *ctx, const char *path, dsmm_format asked,
                               dsmm_format *fmt);
/* dsmmi_mci_find_header: the "(mclheader" word that starts a line (after blanks) in
 * [buf, end), or NULL: how mcl's native format is recognised and where its parser starts. */
const char *dsmmi_mci_find_header(const char *buf, const char *end);

/* dsmmi_read_check_opts: dsmm_read's checks of its options (format, value type, duplicate
 * policy, index base, threads), with its messages; the distributed reader shares them. */
dsmm_status dsmmi_read_check_opts(dsmm_ctx *ctx, const dsmm_read_opts *o);

/* Parsers: src is complete; opts non-NULL (defaults filled by the caller); info non-NULL. */
dsmm_status dsmmi_mtx_parse(dsmm_ctx *ctx, const dsmmi_source *src, const dsmm_read_opts *opts,
                            dsmm_csr **A, dsmm_dense **D, dsmm_file_info *info);
dsmm_status dsmmi_abc_parse(dsmm_ctx *ctx, const dsmmi_source *src, const dsmm_read_opts *opts,
                            dsmm_csr **A, dsmm_labels **labels, dsmm_file_info *info);
dsmm_status dsmmi_bin_parse(dsmm_ctx *ctx, const dsmmi_source *src, const dsmm_read_opts *opts,
                            dsmm_csr **A, dsmm_file_info *info);
dsmm_status dsmmi_mci_parse(dsmm_ctx *ctx, const dsmmi_source *src, const dsmm_read_opts *opts,
                            dsmm_csr **A, dsmm_file_info *info);

/* Matrix Market pieces for readers that parse a file in parts (dist/read.c: every rank reads
 * the header, then parses the entry lines of its byte range). The checks and messages are those
 * of dsmmi_mtx_parse, which is built from the same calls. */

/* The header: banner, comments and the size line. */
typedef struct dsmmi_mtx_header {
    int array; // "array" (dense) layout
    dsmm_mm_field field;
    dsmm_mm_symmetry sym;
    dsmm_idx nrows, ncols, stored; // stored: entry lines (values of an array file) declared
    size_t data_off;               // first byte after the size line
    dsmm_idx size_line;            // 1-based line number of the size line
} dsmmi_mtx_header;

/* dsmmi_mtx_header_parse: the header at the start of src. partial != 0: src holds only a
 * prefix of the file; when that prefix ends before the size line is complete, *more is set
 * to 1 and nothing is recorded (read a longer prefix and call again; with the whole file,
 * pass partial = 0). Errors: DSMM_ERR_FORMAT (file:line and the problem),
 * DSMM_ERR_UNSUPPORTED (complex, hermitian). */
dsmm_status dsmmi_mtx_header_parse(dsmm_ctx *ctx, const dsmmi_source *src, int partial,
                                   dsmmi_mtx_header *h, int *more);

/* dsmmi_mtx_check_fits: DSMM_ERR_NOMEM when h declares more entries than `avail` bytes of data
 * section can hold (a wrong size line or a truncated file, caught before any allocation). */
dsmm_status dsmmi_mtx_check_fits(dsmm_ctx *ctx, const char *name, const dsmmi_mtx_header *h,
                                 size_t avail);

/* Ranges of entry lines: [p, end) holds whole lines (only a range that ends the file may end
 * without a newline), the byte at end is readable and is NUL or the first byte of the next
 * line, and p starts line number `line` of the file (for messages). nthreads 0: the
 * context's. */

/* dsmmi_mtx_count_lines: the number of entry lines (neither blank nor comments) in [p, end).
 * Errors: DSMM_ERR_FORMAT for a line longer than DSMMI_MAX_LINE. */
dsmm_status dsmmi_mtx_count_lines(dsmm_ctx *ctx, const char *name, const char *p, const char *end,
                                  dsmm_idx line, int nthreads, dsmm_idx *count);

/* dsmmi_mtx_parse_lines: the entries of the coordinate lines in [p, end) as 0-based global
 * triples (new arrays, dsmmi_free; *V NULL for pattern files, else doubles), validated as
 * dsmmi_mtx_parse does (index range, value syntax, NaN/Inf and float range per opts, triangle
 * of symmetric and skew files). Symmetric and skew storage is expanded: each off-diagonal
 * entry k is followed by its mirror (j, i, v or -v), so rows keep file order. *n: triples.
 * Errors: DSMM_ERR_FORMAT "name:line: problem" (the first bad line); DSMM_ERR_NOMEM. */
dsmm_status dsmmi_mtx_parse_lines(dsmm_ctx *ctx, const char *name, const dsmmi_mtx_header *h,
                                  const dsmm_read_opts *opts, const char *p, const char *end,
                                  dsmm_idx line, dsmm_idx *n, dsmm_idx **I, dsmm_idx **J,
                                  double **V);

/* dsmmi_mtx_entry_offset: the offset from p of the start of entry line number `which`
 * (0-based) in [p, end), or end - p when there are fewer (error paths only). */
size_t dsmmi_mtx_entry_offset(const char *p, const char *end, dsmm_idx which);

/* Matrix Market text exactly as dsmmi_mtx_write writes it, for writers that assemble the file
 * in parts (dist/write.c: every rank formats its rows into its own buffer). */

/* dsmmi_mtx_format_header: the banner ("coordinate", "pattern" or "real", "symmetric" or
 * "general"), the comment lines (each given a leading '%' if it lacks one; may be NULL) and
 * the size line of an nrows x ncols matrix with `count` entry lines. Like snprintf: returns
 * the length, and out holds the whole header, NUL-terminated, only when it is < cap. */
size_t dsmmi_mtx_format_header(char *out, size_t cap, dsmm_type type, int sym, const char *comment,
                               dsmm_idx nrows, dsmm_idx ncols, dsmm_idx count);

// The longest entry line dsmmi_mtx_format_rows writes: two indices, a value and the newline.
#define DSMMI_MTX_LINE_MAX 128

/* A cursor over the entry lines of A, a whole matrix or one rank's rows of a larger one. */
typedef struct dsmmi_mtx_rows {
    const dsmm_csr *A;
    dsmm_idx row0, col0; // global index of A's first row and column (0 for a whole matrix)
    int lower;           // symmetric output: only entries with global column <= global row
    int precision;       // dsmm_write_opts.precision: > 0 digits ("%.*g", at most 17), 0 shortest
    dsmm_idx i, k;       // the next line comes from row i, entry k; start both at 0
} dsmmi_mtx_rows;

/* dsmmi_mtx_format_rows: lines "i j[ value]\n" (1-based global indices; no value for pattern
 * matrices) from r's position on into out[0..cap), advancing r; returns the bytes written.
 * Stops when A's rows are done (r->i == A->nrows) or less than DSMMI_MTX_LINE_MAX bytes are
 * left; no NUL is added. Progress needs cap >= DSMMI_MTX_LINE_MAX. */
size_t dsmmi_mtx_format_rows(dsmmi_mtx_rows *r, char *out, size_t cap);

/* Writers to an open stream (dsmm_write handles the atomic file). */
dsmm_status dsmmi_mtx_write(dsmm_ctx *ctx, FILE *f, const dsmm_csr *A, const dsmm_write_opts *o);
dsmm_status dsmmi_mtx_write_dense(dsmm_ctx *ctx, FILE *f, const dsmm_dense *D);
dsmm_status dsmmi_abc_write(dsmm_ctx *ctx, FILE *f, const dsmm_csr *A, const dsmm_labels *labels,
                            const dsmm_write_opts *o);
dsmm_status dsmmi_bin_write(dsmm_ctx *ctx, FILE *f, const dsmm_csr *A);
/* dsmmi_mci_write: mcl's native format (canonical domains; the columns with entries, rows sorted;
 * pattern entries without a value; values as dsmmi_abc_write writes them). */
dsmm_status dsmmi_mci_write(dsmm_ctx *ctx, FILE *f, const dsmm_csr *A, const dsmm_write_opts *o);

/* The dsmm binary format (binary.c, docs/formats.md): a 64-byte header, the payload (rowptr
 * and colidx as 8-byte integers, then the values) and an 8-byte trailer holding the crc32 of
 * the payload. */
#define DSMMI_BIN_HEADER 64

/* A checked header and where the file's parts lie. */
typedef struct dsmmi_bin_header {
    dsmm_type type;             // value type
    int index_width;            // bytes of a row pointer or column (8)
    int sorted;                 // flag: columns strictly increasing within each row
    dsmm_idx nrows, ncols, nnz; // >= 0
    size_t rowptr_off, colidx_off, val_off, trailer_off; // byte offsets in the file
    size_t payload;                                      // trailer_off - rowptr_off
} dsmmi_bin_header;

/* dsmmi_bin_header_parse: parses and checks h, the first min(size, DSMMI_BIN_HEADER) bytes of
 * a binary file of `size` bytes: magic, version, header checksum, flags, value type, index
 * width, reserved bytes, and sizes that fit the file exactly (so nothing is allocated for a
 * corrupt or hostile file). The payload checksum and the matrix invariants are the caller's.
 * Errors: DSMM_ERR_UNSUPPORTED (big-endian host); DSMM_ERR_FORMAT "name: problem". */
dsmm_status dsmmi_bin_header_parse(dsmm_ctx *ctx, const char *name, const char *h, size_t size,
                                   dsmmi_bin_header *bh);

/* dsmmi_crc32: zlib's crc32 of p[0..n) continuing crc (0 to start), for any n. */
uint32_t dsmmi_crc32(uint32_t crc, const void *p, size_t n);

/* Labels: a dictionary name <-> index in insertion order (hash table + arena). */
dsmm_status dsmmi_labels_create(dsmm_ctx *ctx, dsmm_labels **L);
/* dsmmi_labels_intern: index of name[0..len) (added if new). */
dsmm_status dsmmi_labels_intern(dsmm_labels *L, const char *name, size_t len, dsmm_idx *idx);

/* Shortest decimal that reads back to the same double ("%.17g" trimmed). buf >= 32 bytes. */
int dsmmi_format_double(char *buf, double v);

/* dsmmi_labels_read_tab: the label dictionary of an mcl tab file (mcxload -write-tab, mcl
 * -use-tab): lines "index<TAB>label", every index of 0..n-1 once, in any order; labels
 * distinct. Errors: DSMM_ERR_IO, DSMM_ERR_FORMAT (naming the line), DSMM_ERR_NOMEM. */
dsmm_status dsmmi_labels_read_tab(dsmm_ctx *ctx, const char *path, dsmm_idx n, dsmm_labels **L);
/* dsmmi_write_clusters_native: the clustering in mcl's native format, as mcl writes it for
 * native (.mci) input: a header "dimensions NxK", then per cluster its 0-based index and its
 * members (0-based vertex numbers), "$", with mcl 22-282's line breaks (mcl's "# cline"
 * comment is not written).
 * Atomic, as dsmm_write_clusters.
 * Errors: DSMM_ERR_ARG (an id outside 0..n-1), DSMM_ERR_IO, DSMM_ERR_NOMEM. */
dsmm_status dsmmi_write_clusters_native(dsmm_ctx *ctx, const char *path, dsmm_idx n,
                                        const dsmm_idx *cluster);
/* dsmmi_write_cluster_lists: nc clusters given as lists (cluster c: members[start[c] ..
 * start[c + 1]), written in that order; empty ones write nothing; a vertex may be in several),
 * as dsmm_write_clusters (labels, or numbers from base) or, with native, in mcl's native
 * format. Atomic. Errors: DSMM_ERR_ARG (a member outside 0..n-1), DSMM_ERR_IO. */
dsmm_status dsmmi_write_cluster_lists(dsmm_ctx *ctx, const char *path, dsmm_idx n, dsmm_idx nc,
                                      const dsmm_idx *start, const dsmm_idx *members,
                                      const dsmm_labels *labels, int base, int native);
/* dsmmi_write_cluster_lists_trailer: the same, with the text trailer (NULL: none) written after
 * the clusters, in the same atomic file (mcl --analyze's measures). */
dsmm_status dsmmi_write_cluster_lists_trailer(dsmm_ctx *ctx, const char *path, dsmm_idx n,
                                              dsmm_idx nc, const dsmm_idx *start,
                                              const dsmm_idx *members, const dsmm_labels *labels,
                                              int base, int native, const char *trailer);
/* dsmmi_write_clusters_base: dsmm_write_clusters with vertex numbers counted from base when
 * labels is NULL. */
dsmm_status dsmmi_write_clusters_base(dsmm_ctx *ctx, const char *path, dsmm_idx n,
                                      const dsmm_idx *cluster, const dsmm_labels *labels, int base);

#endif // DSMM_IO_H
