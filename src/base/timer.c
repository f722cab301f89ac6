// src/base/timer.c: monotonic wall-clock time.
#include <time.h>

#include "base/base.h"

double dsmmi_wtime(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
