// src/base/size.c: parsing of human sizes ("64K", "1.5G", "2GiB") for budgets and options.
#include <ctype.h>
#include <math.h>
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
