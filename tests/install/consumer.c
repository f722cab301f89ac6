// tests/install/consumer.c: uses the installed dsmm through its public header only.
#include <stdio.h>

#include <dsmm.h>

int main(void)
{
    dsmm_ctx *ctx = NULL;
    dsmm_csr *A = NULL, *T = NULL;
    dsmm_gen_params p;
    if (dsmm_ctx_create(&ctx) != DSMM_OK) return 1;
    dsmm_gen_params_init(&p);
    p.scale = 8;
    int rc = 1;
    if (dsmm_gen_rmat(ctx, &p, &A) == DSMM_OK && dsmm_csr_transpose(ctx, A, &T) == DSMM_OK &&
        T->nnz == A->nnz) {
        printf("dsmm %s: %lld x %lld, nnz %lld\n", dsmm_version(), (long long)A->nrows,
               (long long)A->ncols, (long long)A->nnz);
        rc = 0;
    } else {
        fprintf(stderr, "consumer: %s\n", dsmm_ctx_last_error(ctx));
    }
    dsmm_csr_destroy(&T);
    dsmm_csr_destroy(&A);
    dsmm_ctx_destroy(&ctx);
    return rc;
}
