// src/base/size.c: parsing of human sizes ("64K", "1.5G", "2GiB") for budgets and options, and
// the CPU's cache sizes as sysfs gives them.
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"

dsmm_status dsmm_parse_size(const char *s, size_t *bytes)
{
    if (s == NULL || bytes == NULL) return DSMM_ERR_ARG;
    char *end = NULL;
    while (isspace((unsigned char)*s)) s++;
    if (*s == '-' || *s == '\0') return DSMM_ERR_ARG;
    double v = strtod(s, &end);
    if (end == s || !isfinite(v) || v < 0) return DSMM_ERR_ARG;
    double mult = 1;
    switch (toupper((unsigned char)*end)) {
    case '\0':
        break;
    case 'B':
        break;
    case 'K':
        mult = 1024.0;
        end++;
        break;
    case 'M':
        mult = 1024.0 * 1024;
        end++;
        break;
    case 'G':
        mult = 1024.0 * 1024 * 1024;
        end++;
        break;
    case 'T':
        mult = 1024.0 * 1024 * 1024 * 1024;
        end++;
        break;
    default:
        return DSMM_ERR_ARG;
    }
    if (mult > 1 && (*end == 'i' || *end == 'I')) end++;
    if (mult > 1 && (*end == 'b' || *end == 'B'))
        end++;
    else if (mult == 1 && (*end == 'b' || *end == 'B'))
        end++;
    if (*end != '\0') return DSMM_ERR_ARG;
    double b = v * mult;
    if (b >= 18446744073709551615.0) return DSMM_ERR_ARG;
    *bytes = (size_t)b;
    return DSMM_OK;
}

double dsmmi_cpu_cache_bytes(int level)
{
    double best = 0.0;
    int best_level = 0;
    for (int i = 0; i < 10; i++) {
        char path[96], type[32] = "";
        int lv = 0;
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/level", i);
        FILE *f = fopen(path, "r");
        if (f == NULL) continue;
        int got = fscanf(f, "%d", &lv);
        fclose(f);
        if (got != 1 || (level > 0 && lv != level) || (level == 0 && lv < best_level)) continue;
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/type", i);
        f = fopen(path, "r");
        if (f != NULL) {
            got = fscanf(f, "%31s", type);
            fclose(f);
            if (got == 1 && strcmp(type, "Instruction") == 0) continue;
        }
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/size", i);
        f = fopen(path, "r");
        if (f == NULL) continue;
        double size = 0.0;
        char unit = 0;
        got = fscanf(f, "%lf%c", &size, &unit);
        fclose(f);
        if (got < 1 || size <= 0) continue;
        if (unit == 'K') size *= 1024.0;
        if (unit == 'M') size *= 1048576.0;
        if (unit == 'G') size *= 1073741824.0;
        best = size;
        best_level = lv;
    }
    return best;
}
