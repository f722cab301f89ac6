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

/* Format detection: from content (Matrix Market banner, binary magic), else from the name
 * (.mtx, .abc/.txt/.tsv/.edgelist, .dsmm/.bin; a trailing .gz is ignored). */
dsmm_format dsmmi_format_detect(const char *buf, size_t len, const char *name);
dsmm_format dsmmi_format_from_name(const char *name);

/* Parsers: src is complete; opts non-NULL (defaults filled by the caller); info non-NULL. */
dsmm_status dsmmi_mtx_parse(dsmm_ctx *ctx, const dsmmi_source *src, const dsmm_read_opts *opts,
                            dsmm_csr **A, dsmm_dense **D, dsmm_file_info *info);
dsmm_status dsmmi_abc_parse(dsmm_ctx *ctx, const dsmmi_source *src, const dsmm_read_opts *opts,
                            dsmm_csr **A, dsmm_labels **labels, dsmm_file_info *info);
dsmm_status dsmmi_bin_parse(dsmm_ctx *ctx, const dsmmi_source *src, const dsmm_read_opts *opts,
                            dsmm_csr **A, dsmm_file_info *info);

/* Writers to an open stream (dsmm_write handles the atomic file). */
dsmm_status dsmmi_mtx_write(dsmm_ctx *ctx, FILE *f, const dsmm_csr *A, const dsmm_write_opts *o);
dsmm_status dsmmi_mtx_write_dense(dsmm_ctx *ctx, FILE *f, const dsmm_dense *D);
dsmm_status dsmmi_abc_write(dsmm_ctx *ctx, FILE *f, const dsmm_csr *A, const dsmm_labels *labels,
                            const dsmm_write_opts *o);
dsmm_status dsmmi_bin_write(dsmm_ctx *ctx, FILE *f, const dsmm_csr *A);

/* Labels: a dictionary name <-> index in insertion order (hash table + arena). */
dsmm_status dsmmi_labels_create(dsmm_ctx *ctx, dsmm_labels **L);
/* dsmmi_labels_intern: index of name[0..len) (added if new). */
dsmm_status dsmmi_labels_intern(dsmm_labels *L, const char *name, size_t len, dsmm_idx *idx);

/* Shortest decimal that reads back to the same double ("%.17g" trimmed). buf >= 32 bytes. */
int dsmmi_format_double(char *buf, double v);

#endif // DSMM_IO_H
