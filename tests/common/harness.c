// tests/common/harness.c: the test-table runner, seeds, scratch files and leak checks.
#include <dirent.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "check.h"

static uint64_t seed_value;
static int seed_ready;
static char tmpdir[512];

uint64_t test_seed(void)
{
    if (!seed_ready) {
        const char *env = getenv("DSMM_TEST_SEED");
        if (env && *env)
            seed_value = strtoull(env, NULL, 0);
        else
            seed_value = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 20);
        seed_ready = 1;
        printf("seed %llu (replay with DSMM_TEST_SEED=%llu)\n", (unsigned long long)seed_value,
               (unsigned long long)seed_value);
    }
    return seed_value;
}

dsmm_ctx *test_ctx(void)
{
    dsmm_ctx *ctx = NULL;
    if (dsmm_ctx_create(&ctx) != DSMM_OK) return NULL;
    dsmm_ctx_set_log(ctx, DSMM_LOG_ERROR, NULL, NULL);
    dsmm_ctx_set_progress(ctx, 0);
    return ctx;
}

int test_ctx_done(dsmm_ctx **ctx)
{
    if (ctx == NULL || *ctx == NULL) return 1;
    size_t in_use = dsmm_ctx_mem_in_use(*ctx);
    dsmm_ctx_destroy(ctx);
    if (in_use != 0) {
        fprintf(stderr, "leak: %zu bytes still allocated through the context\n", in_use);
        return 1;
    }
    return 0;
}

static void remove_tree(const char *dir)
{
    DIR *d = opendir(dir);
    if (d) {
        struct dirent *e;
        char p[1024];
        while ((e = readdir(d)) != NULL) {
            if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
            snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
            struct stat sb;
            if (lstat(p, &sb) == 0 && S_ISDIR(sb.st_mode))
                remove_tree(p);
            else
                unlink(p);
        }
        closedir(d);
    }
    rmdir(dir);
}

static void cleanup_tmpdir(void)
{
    if (tmpdir[0] && getenv("DSMM_TEST_KEEP") == NULL) remove_tree(tmpdir);
}

const char *test_tmpdir(void)
{
    if (!tmpdir[0]) {
        const char *base = getenv("TMPDIR");
        snprintf(tmpdir, sizeof tmpdir, "%s/dsmm-test-XXXXXX", base && *base ? base : "/tmp");
        if (mkdtemp(tmpdir) == NULL) {
            perror("mkdtemp");
            tmpdir[0] = '\0';
            return ".";
        }
        atexit(cleanup_tmpdir);
    }
    return tmpdir;
}

const char *test_path(const char *name)
{
    static char bufs[8][1024];
    static int next;
    char *b = bufs[next++ % 8];
    snprintf(b, 1024, "%s/%s", test_tmpdir(), name);
    return b;
}

int test_write_file(const char *path, const void *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    if (!f) return 1;
    size_t w = len ? fwrite(data, 1, len, f) : 0;
    int rc = fclose(f);
    return (w != len || rc != 0) ? 1 : 0;
}

int test_file_exists(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0;
}

int test_main(int argc, char **argv, const test_case *tests, size_t ntests)
{
    int failed = 0, passed = 0, skipped = 0;
    test_seed();
    for (size_t i = 0; i < ntests; i++) {
        if (argc > 1) {
            int wanted = 0;
            for (int a = 1; a < argc; a++)
                if (strcmp(argv[a], tests[i].name) == 0) wanted = 1;
            if (!wanted) continue;
        }
        fflush(stdout);
        int rc = tests[i].fn();
        if (rc == TEST_PASS) {
            passed++;
            printf("ok   %s\n", tests[i].name);
        } else if (rc == TEST_SKIP) {
            skipped++;
            printf("skip %s\n", tests[i].name);
        } else {
            failed++;
            printf("FAIL %s\n", tests[i].name);
        }
        fflush(stdout);
    }
    printf("%d passed, %d failed, %d skipped\n", passed, failed, skipped);
    if (failed) return 1;
    if (passed == 0 && skipped > 0) return TEST_SKIP;
    return 0;
}
