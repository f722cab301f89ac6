// src/sparse/sparse.h: internal header of the sparse layer (local formats and their tools).
#ifndef DSMM_SPARSE_H
#define DSMM_SPARSE_H

#include "base/base.h"

#endif // DSMM_SPARSE_H
