// src/kernels/spmm_instance_set.h: instantiates an SpMM inner-loop template once per value type
// (double with 4-lane vectors, float with 8; 8 and 16 when wide), column width (64- and
// 32-bit) and pattern A (values, or all 1). The includer defines SPMM_TMPL (the template's
// path) and SPMM_FN(suffix) (the function name for suffix d64, d32, d64p, d32p, f64, f32,
// f64p, f32p), the four of a type through spmm_instance_type.h. Not a header of its own: no
// include guard; spmm_instances.h includes it once or twice.
// With SPMM_WIDE defined to 1, the instances take 64-byte vectors and are compiled for
// AVX-512 only (DSMMI_WIDE), named SPMM_FN(d64_w) etc.; with 0, 32-byte vectors under
// DSMMI_CLONES. The templates read SPMM_ATTR (the function attribute) and SPMM_WIDE.
// clang-format off
#if SPMM_WIDE
#define SPMM_ATTR DSMMI_WIDE
#define SPMM_NAME(s) SPMM_FN(s##_w)
#define VD dsmmi_v8d
#define VDL 8
#define VDSPLAT(x) ((V){(x), (x), (x), (x), (x), (x), (x), (x)})
#define VF dsmmi_v16f
#define VFL 16
#define VFSPLAT(x) ((V){(x), (x), (x), (x), (x), (x), (x), (x), (x), (x), (x), (x), (x), (x), (x), (x)})
#else
#define SPMM_ATTR DSMMI_CLONES
#define SPMM_NAME(s) SPMM_FN(s)
#define VD dsmmi_v4d
#define VDL 4
#define VDSPLAT(x) ((V){(x), (x), (x), (x)})
#define VF dsmmi_v8f
#define VFL 8
#define VFSPLAT(x) ((V){(x), (x), (x), (x), (x), (x), (x), (x)})
#endif
#define T double
#define N2 dsmmi_v2d
#define N4 dsmmi_v4d
#define N8 dsmmi_v8d
#define SPMV_UINT uint64_t
#define V VD
#define VSPLAT(x) VDSPLAT(x)
#define VL VDL
#define SPMM_TYNAME(s) SPMM_NAME(d##s)
#include "kernels/spmm_instance_type.h"

#define T float
#define N2 dsmmi_v2f
#define N4 dsmmi_v4f
#define N8 dsmmi_v8f
#define SPMV_UINT uint32_t
#define V VF
#define VSPLAT(x) VFSPLAT(x)
#define VL VFL
#define SPMM_TYNAME(s) SPMM_NAME(f##s)
#include "kernels/spmm_instance_type.h"
#undef VD
#undef VDL
#undef VDSPLAT
#undef VF
#undef VFL
#undef VFSPLAT
#undef SPMM_NAME
#undef SPMM_ATTR
// clang-format on
