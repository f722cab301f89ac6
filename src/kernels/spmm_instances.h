// src/kernels/spmm_instances.h: every instance of an SpMM inner-loop template, the 32-byte-vector
// set and, where the compiler builds AVX-512 code (DSMMI_HAVE_WIDE), the 64-byte one
// (spmm_instance_set.h says what a set holds). The includer defines SPMM_TMPL and SPMM_FN.
// Not a header of its own: no include guard; spmm_row.c and spmm_col.c include it once each.
#define SPMM_WIDE 0
#include "kernels/spmm_instance_set.h"
#undef SPMM_WIDE
#if DSMMI_HAVE_WIDE
#define SPMM_WIDE 1
#include "kernels/spmm_instance_set.h"
#undef SPMM_WIDE
#endif
