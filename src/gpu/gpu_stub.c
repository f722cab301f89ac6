// src/gpu/gpu_stub.c: the GPU gateway when dsmm is built without CUDA.
#include <stdio.h>

#include "gpu/gpu.h"

int dsmmi_gpu_device_count(void)
{
    return 0;
}

void dsmmi_gpu_describe(char *buf, size_t len)
{
    snprintf(buf, len, "none (built without CUDA)");
}
