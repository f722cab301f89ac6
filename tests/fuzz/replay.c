// tests/fuzz/replay.c: runs a libFuzzer target without libFuzzer: every file named on the
// command line, or found (one level deep) in a directory named there, is fed to
// LLVMFuzzerTestOneInput once. Builds without -DDSMM_FUZZ=ON use it to keep each corpus,
// crashes found included, as a regression test. Shared by all fuzz targets.
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz.h"

static int run_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        fprintf(stderr, "replay: cannot open %s\n", path);
        return 1;
    }
    size_t cap = 4096, len = 0;
    uint8_t *buf = malloc(cap);
    for (;;) {
        if (buf == NULL) {
            fclose(f);
            fprintf(stderr, "replay: out of memory reading %s\n", path);
            return 1;
        }
        len += fread(buf + len, 1, cap - len, f);
        if (len < cap) break;
        cap *= 2;
        uint8_t *nb = realloc(buf, cap);
        if (nb == NULL) free(buf);
        buf = nb;
    }
    int bad = ferror(f);
    fclose(f);
    if (bad) {
        free(buf);
        fprintf(stderr, "replay: read error on %s\n", path);
        return 1;
    }
    // An exact-size copy, so reading past the input is caught by ASan as under libFuzzer.
    uint8_t *exact = malloc(len ? len : 1);
    if (exact == NULL) {
        free(buf);
        return 1;
    }
    if (len) memcpy(exact, buf, len);
    free(buf);
    LLVMFuzzerTestOneInput(exact, len);
    free(exact);
    return 0;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int main(int argc, char **argv)
{
    int failures = 0, files = 0;
    for (int a = 1; a < argc; a++) {
        struct stat sb;
        if (stat(argv[a], &sb) != 0) {
            fprintf(stderr, "replay: %s: no such file or directory\n", argv[a]);
            failures++;
            continue;
        }
        if (!S_ISDIR(sb.st_mode)) {
            failures += run_file(argv[a]);
            files++;
            continue;
        }
        DIR *d = opendir(argv[a]);
        if (d == NULL) {
            fprintf(stderr, "replay: cannot open directory %s\n", argv[a]);
            failures++;
            continue;
        }
        char **names = NULL;
        size_t n = 0, cap = 0;
        struct dirent *e;
        while ((e = readdir(d)) != NULL) {
            if (e->d_name[0] == '.') continue;
            if (n == cap) {
                cap = cap ? 2 * cap : 64;
                char **nn = realloc(names, cap * sizeof *names);
                if (nn == NULL) break;
                names = nn;
            }
            size_t len = strlen(argv[a]) + strlen(e->d_name) + 2;
            names[n] = malloc(len);
            if (names[n] == NULL) break;
            snprintf(names[n], len, "%s/%s", argv[a], e->d_name);
            n++;
        }
        closedir(d);
        if (n) qsort(names, n, sizeof *names, cmp_str); // a stable order for reproducible logs
        for (size_t k = 0; k < n; k++) {
            struct stat fb;
            if (stat(names[k], &fb) == 0 && S_ISREG(fb.st_mode)) {
                failures += run_file(names[k]);
                files++;
            }
            free(names[k]);
        }
        free(names);
    }
    printf("replay: %d inputs, %d failures\n", files, failures);
    if (files == 0) {
        fprintf(stderr, "replay: no inputs found\n");
        return 1;
    }
    return failures ? 1 : 0;
}
