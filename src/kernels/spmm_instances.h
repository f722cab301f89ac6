// src/kernels/spmm_instances.h: every instance of an SpMM inner-loop template, the 32-byte-vector
// set and, where the compiler builds AVX-512 code (DSMMI_HAVE_WIDE), the 64-byte one
// (spmm_instance_set.h says what a set holds). The includer defines SPMM_TMPL and SPMM_FN.
// Not a header of its own: no include guard; spmm_row.c and spmm_col.c include it once each.
// SPMM_PICK(TY, CW) then names the instance for value type TY (d, f) and column width CW (32,
// 64), by the caller's variables pat (pattern A) and wide (64-byte vectors); the includer keeps
// SPMM_FN defined where it uses it.
#define SPMM_WIDE 0
#include "kernels/spmm_instance_set.h"
#undef SPMM_WIDE
#if DSMMI_HAVE_WIDE
#define SPMM_WIDE 1
#include "kernels/spmm_instance_set.h"
#undef SPMM_WIDE
#endif

#if DSMMI_HAVE_WIDE
#define SPMM_PICK(TY, CW)                                                                          \
    (wide ? (pat ? SPMM_FN(TY##CW##p_w) : SPMM_FN(TY##CW##_w))                                     \
          : (pat ? SPMM_FN(TY##CW##p) : SPMM_FN(TY##CW)))
#else
#define SPMM_PICK(TY, CW) (pat ? SPMM_FN(TY##CW##p) : SPMM_FN(TY##CW))
#endif
