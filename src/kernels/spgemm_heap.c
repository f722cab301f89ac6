// src/kernels/spgemm_heap.c: (in progress)
#include "kernels/kernels.h"
