// src/kernels/spgemm_masked.c: (in progress)
#include "kernels/kernels.h"
