// tests/common/check.h: assertion macros and the test-table runner shared by all test binaries.
// A test is `static int test_x(void)` returning TEST_PASS, TEST_FAIL or TEST_SKIP (77).
#ifndef DSMM_TEST_CHECK_H
#define DSMM_TEST_CHECK_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "dsmm.h"

#define TEST_PASS 0
#define TEST_FAIL 1
#define TEST_SKIP 77

typedef struct test_case {
    const char *name;
    int (*fn)(void);
} test_case;

#define TEST(fn)                                                                                   \
    {                                                                                              \
#fn, fn                                                                                    \
    }

/* test_main: runs every test (or those named on the command line), prints one line each and
 * returns 0 if all passed, 77 if all were skipped, else 1. Prints the seed first. */
int test_main(int argc, char **argv, const test_case *tests, size_t ntests);

/* test_seed: the run's seed: DSMM_TEST_SEED if set, else from the clock (printed once). */
uint64_t test_seed(void);

/* test_ctx: a fresh context with logging quiet; test_ctx_done checks that it leaks nothing
 * (bytes in use == 0), destroys it and returns 0 if clean. */
dsmm_ctx *test_ctx(void);
int test_ctx_done(dsmm_ctx **ctx);

/* test_tmpdir: a per-process scratch directory (created once, removed at exit). */
const char *test_tmpdir(void);
/* test_path: test_tmpdir()/name in a static rotating buffer. */
const char *test_path(const char *name);
/* test_write_file: writes len bytes to path; 0 on success. */
int test_write_file(const char *path, const void *data, size_t len);
int test_file_exists(const char *path);

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond);               \
            return TEST_FAIL;                                                                      \
        }                                                                                          \
    } while (0)

#define CHECK_MSG(cond, ...)                                                                       \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "%s:%d: CHECK failed: %s: ", __FILE__, __LINE__, #cond);               \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fprintf(stderr, "\n");                                                                 \
            return TEST_FAIL;                                                                      \
        }                                                                                          \
    } while (0)

#define CHECK_EQ_IDX(a, b)                                                                         \
    do {                                                                                           \
        long long a_ = (long long)(a), b_ = (long long)(b);                                        \
        if (a_ != b_) {                                                                            \
            fprintf(stderr, "%s:%d: CHECK_EQ_IDX failed: %s == %lld, %s == %lld\n", __FILE__,      \
                    __LINE__, #a, a_, #b, b_);                                                     \
            return TEST_FAIL;                                                                      \
        }                                                                                          \
    } while (0)

#define CHECK_NEAR(a, b, tol)                                                                      \
    do {                                                                                           \
        double a_ = (double)(a), b_ = (double)(b);                                                 \
        if (!(a_ - b_ <= (tol) && b_ - a_ <= (tol))) {                                             \
            fprintf(stderr, "%s:%d: CHECK_NEAR failed: %s == %.17g, %s == %.17g (tol %g)\n",       \
                    __FILE__, __LINE__, #a, a_, #b, b_, (double)(tol));                            \
            return TEST_FAIL;                                                                      \
        }                                                                                          \
    } while (0)

#define CHECK_OK(ctx, call)                                                                        \
    do {                                                                                           \
        dsmm_status st_ = (call);                                                                  \
        if (st_ != DSMM_OK) {                                                                      \
            fprintf(stderr, "%s:%d: %s returned %s: %s\n", __FILE__, __LINE__, #call,              \
                    dsmm_status_name(st_), dsmm_ctx_last_error(ctx));                              \
            return TEST_FAIL;                                                                      \
        }                                                                                          \
    } while (0)

/* CHECK_ST: call returns exactly `expected`. The context keeps its first error until
 * dsmm_ctx_clear_error, so clear it before checking the message of a later failure. */
#define CHECK_ST(ctx, call, expected)                                                              \
    do {                                                                                           \
        dsmm_status st_ = (call);                                                                  \
        if (st_ != (expected)) {                                                                   \
            fprintf(stderr, "%s:%d: %s returned %s, expected %s: %s\n", __FILE__, __LINE__, #call, \
                    dsmm_status_name(st_), dsmm_status_name(expected), dsmm_ctx_last_error(ctx));  \
            return TEST_FAIL;                                                                      \
        }                                                                                          \
    } while (0)

#define CHECK_CONTAINS(hay, needle)                                                                \
    do {                                                                                           \
        const char *h_ = (hay), *n_ = (needle);                                                    \
        if (h_ == NULL || strstr(h_, n_) == NULL) {                                                \
            fprintf(stderr, "%s:%d: \"%s\" does not contain \"%s\"\n", __FILE__, __LINE__,         \
                    h_ ? h_ : "(null)", n_);                                                       \
            return TEST_FAIL;                                                                      \
        }                                                                                          \
    } while (0)

#define CHECK_NO_LEAK(ctx) CHECK(test_ctx_done(&(ctx)) == 0)

#endif // DSMM_TEST_CHECK_H
