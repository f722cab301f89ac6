// src/kernels/spmm_instances.h: instantiates an SpMM inner-loop template once per value type
// (double with 4-lane vectors, float with 8), column width (64- and 32-bit) and pattern A
// (values, or all 1). The includer defines SPMM_TMPL (the template's path) and SPMM_FN(suffix)
// (the function name for suffix d64, d32, d64p, d32p, f64, f32, f64p, f32p). Not a header of
// its own: no include guard; spmm_row.c and spmm_col.c include it once each.
// clang-format off
#define T double
#define SPMV_UINT uint64_t
#define V dsmmi_v4d
#define VSPLAT(x) ((V){(x), (x), (x), (x)})
#define VL 4
#define PAT 0
#define CI dsmm_idx
#define NAME SPMM_FN(d64)
#include SPMM_TMPL
#undef CI
#undef NAME
#define CI int32_t
#define NAME SPMM_FN(d32)
#include SPMM_TMPL
#undef CI
#undef NAME
#undef PAT
#define PAT 1
#define CI dsmm_idx
#define NAME SPMM_FN(d64p)
#include SPMM_TMPL
#undef CI
#undef NAME
#define CI int32_t
#define NAME SPMM_FN(d32p)
#include SPMM_TMPL
#undef CI
#undef NAME
#undef PAT
#undef VL
#undef V
#undef VSPLAT
#undef SPMV_UINT
#undef T

#define T float
#define SPMV_UINT uint32_t
#define V dsmmi_v8f
#define VSPLAT(x) ((V){(x), (x), (x), (x), (x), (x), (x), (x)})
#define VL 8
#define PAT 0
#define CI dsmm_idx
#define NAME SPMM_FN(f64)
#include SPMM_TMPL
#undef CI
#undef NAME
#define CI int32_t
#define NAME SPMM_FN(f32)
#include SPMM_TMPL
#undef CI
#undef NAME
#undef PAT
#define PAT 1
#define CI dsmm_idx
#define NAME SPMM_FN(f64p)
#include SPMM_TMPL
#undef CI
#undef NAME
#define CI int32_t
#define NAME SPMM_FN(f32p)
#include SPMM_TMPL
#undef CI
#undef NAME
#undef PAT
#undef VL
#undef V
#undef VSPLAT
#undef SPMV_UINT
#undef T
// clang-format on
