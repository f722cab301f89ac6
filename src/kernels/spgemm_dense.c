// src/kernels/spgemm_dense.c: (in progress)
#include "kernels/kernels.h"
