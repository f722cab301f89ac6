// src/gpu/device.cu: device discovery for the GPU gateway (CUDA runtime).
#include <cuda_runtime.h>
#include <stdio.h>

extern "C" {
#include "gpu/gpu.h"
}

extern "C" int dsmmi_gpu_device_count(void)
{
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) return 0;
    return n;
}

extern "C" void dsmmi_gpu_describe(char *buf, size_t len)
{
    int n = 0;
    cudaError_t rc = cudaGetDeviceCount(&n);
    if (rc != cudaSuccess || n == 0) {
        snprintf(buf, len, "none (%s)", rc != cudaSuccess ? cudaGetErrorString(rc) : "no device");
        return;
    }
    cudaDeviceProp p;
    if (cudaGetDeviceProperties(&p, 0) != cudaSuccess) {
        snprintf(buf, len, "device 0 (properties unavailable)");
        return;
    }
    snprintf(buf, len, "%s, %zu MiB, sm_%d%d", p.name, (size_t)(p.totalGlobalMem >> 20), p.major,
             p.minor);
}
