// src/kernels/spgemm_hash.c: (in progress)
#include "kernels/kernels.h"
