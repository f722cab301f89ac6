// src/gpu/gpu.h: the C-callable gateway to the CUDA backend; other layers see only this.
#ifndef DSMM_GPU_H
#define DSMM_GPU_H

#include "base/base.h"

/* dsmmi_gpu_device_count: CUDA devices visible (0 without CUDA or without a device). */
int dsmmi_gpu_device_count(void);
/* dsmmi_gpu_describe: "NVIDIA H100 80GB HBM3, 79 GiB, sm_90" or a reason there is none. */
void dsmmi_gpu_describe(char *buf, size_t len);

#endif // DSMM_GPU_H
