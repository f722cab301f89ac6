// src/kernels/spmm_instance_type.h: the four instances of an SpMM inner-loop template for one
// value type (T, V, VL, VSPLAT, N2, N4, N8 (vectors of 2, 4 and 8 T), SPMV_UINT set by
// spmm_instance_set.h): 64- and 32-bit columns, values and pattern, named SPMM_TYNAME(64),
// (32), (64p), (32p); then undefines the type's macros. Not a header of its own: no include
// guard; spmm_instance_set.h includes it once per type.
// clang-format off
#define PAT 0
#define CI dsmm_idx
#define NAME SPMM_TYNAME(64)
#include SPMM_TMPL
#undef CI
#undef NAME
#define CI int32_t
#define NAME SPMM_TYNAME(32)
#include SPMM_TMPL
#undef CI
#undef NAME
#undef PAT
#define PAT 1
#define CI dsmm_idx
#define NAME SPMM_TYNAME(64p)
#include SPMM_TMPL
#undef CI
#undef NAME
#define CI int32_t
#define NAME SPMM_TYNAME(32p)
#include SPMM_TMPL
#undef CI
#undef NAME
#undef PAT
#undef SPMM_TYNAME
#undef VL
#undef V
#undef VSPLAT
#undef SPMV_UINT
#undef N2
#undef N4
#undef N8
#undef T
// clang-format on
