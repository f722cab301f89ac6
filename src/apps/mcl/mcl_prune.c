// src/apps/mcl/mcl_prune.c: what mcl 22-282 does to one expanded column: threshold prune
// (-P), selection (-S), recovery (-R with -pct), rescale, the column's chaos, and inflation
// (-I). Values are float32 as mcl stores them; sums are double in index order, so a column
// that arrives here with mcl's values leaves with mcl's values, bit for bit (docs/mcl.md
// "Exactness"). The k-th largest value is an exact order statistic (quickselect on a copy).
#include <math.h>
#include <string.h>

#include "apps/apps.h"

// The k-th largest (1-based, with multiplicity) of v[0..n), 1 <= k <= n; reorders v.
static float kth_largest(float *v, dsmm_idx n, dsmm_idx k)
{
    dsmm_idx lo = 0, hi = n - 1, want = k - 1; // position in descending order
    while (lo < hi) {
        float pivot = v[lo + (hi - lo) / 2];
        dsmm_idx i = lo, j = hi;
        while (i <= j) {
            while (v[i] > pivot) i++;
            while (v[j] < pivot) j--;
            if (i <= j) {
                float t = v[i];
                v[i] = v[j];
                v[j] = t;
                i++;
                j--;
            }
        }
        if (want <= j)
            hi = j;
        else if (want >= i)
            lo = i;
        else
            return v[want];
    }
    return v[want];
}

// The k-th largest of the entries of val[0..n) with lo <= value < hi (as doubles).
static float kth_in(const float *val, dsmm_idx n, double lo, double hi, dsmm_idx k, float *scratch)
{
    dsmm_idx m = 0;
    for (dsmm_idx i = 0; i < n; i++)
        if ((double)val[i] >= lo && (double)val[i] < hi) scratch[m++] = val[i];
    if (k > m) k = m; // cannot happen for a full column or an exact candidate set
    return k <= 0 ? 0.0f : kth_largest(scratch, m, k);
}

// Keeps entries with value >= bar (and, when below_only, only those below cap); returns the
// count and the kept mass (double, index order).
static dsmm_idx keep_from(int32_t *idx, float *val, dsmm_idx n, double bar, double *mass)
{
    dsmm_idx m = 0;
    double s = 0.0;
    for (dsmm_idx i = 0; i < n; i++) {
        if ((double)val[i] >= bar) {
            idx[m] = idx[i];
            val[m] = val[i];
            s += (double)val[i];
            m++;
        }
    }
    *mass = s;
    return m;
}

// The rules after the first pass (n_prune entries at or above the cut, of mass mass_prune).
static dsmm_idx prune_from(const dsmmi_mcl_rules *r, int32_t c, int32_t *idx, float *val,
                           dsmm_idx n, const dsmmi_mcl_col *cs, dsmm_idx n_prune, double mass_prune,
                           float *scratch, float *chaos)
{
    const double cut = r->cut;
    double mass_final = mass_prune;

    if (r->R > 0 && n_prune < r->R && mass_prune < r->pct) {
        // Recovery: everything at or above cut, plus the largest pruned entries (ties kept).
        double rbar = 0.0;
        if (cs->n_expand > r->R) rbar = kth_in(val, n, -INFINITY, cut, r->R - n_prune, scratch);
        n = keep_from(idx, val, n, rbar, &mass_final);
    } else if (r->S > 0 && n_prune > r->S) {
        // Selection among the entries that survived the threshold, then recovery inside them.
        if (cut > 0.0) n = keep_from(idx, val, n, cut, &mass_prune);
        double sbar = kth_in(val, n, -INFINITY, INFINITY, r->S, scratch);
        dsmm_idx n_select = 0;
        double mass_select = 0.0;
        for (dsmm_idx i = 0; i < n; i++)
            if ((double)val[i] >= (double)sbar) {
                n_select++;
                mass_select += (double)val[i];
            }
        double bar = sbar;
        if (r->R > 0 && n_select < r->R && mass_select < r->pct)
            bar = n > r->R ? kth_in(val, n, -INFINITY, sbar, r->R - n_select, scratch) : 0.0;
        n = keep_from(idx, val, n, bar, &mass_final);
    } else if (cut > 0.0) {
        n = keep_from(idx, val, n, cut, &mass_final);
    }
    if (n == 0 && r->R == 0) { // mcl's "emergency measure": the column keeps only its loop
        idx[0] = c;
        val[0] = 1.0f;
        n = 1;
        mass_final = 0.0;
    }
    if (mass_final != 0.0)
        for (dsmm_idx i = 0; i < n; i++) val[i] = (float)((double)val[i] / mass_final);
    *chaos = (float)((cs->maxval - cs->center) * (double)n);
    return n;
}

dsmm_idx dsmmi_mcl_prune(const dsmmi_mcl_rules *r, int32_t c, int32_t *idx, float *val, dsmm_idx n,
                         const dsmmi_mcl_col *cs, float *scratch, float *chaos)
{
    const double cut = r->cut;
    dsmm_idx n_prune = 0;
    double mass_prune = 0.0;
    for (dsmm_idx i = 0; i < n; i++) {
        if (cut <= 0.0 || (double)val[i] >= cut) {
            n_prune++;
            mass_prune += (double)val[i];
        }
    }
    return prune_from(r, c, idx, val, n, cs, n_prune, mass_prune, scratch, chaos);
}

dsmm_idx dsmmi_mcl_prune_whole(const dsmmi_mcl_rules *r, int32_t c, int32_t *idx, float *val,
                               dsmm_idx n, float *scratch, float *chaos)
{
    // dsmmi_mcl_measure and the first pass of dsmmi_mcl_prune in one loop: the same sums in
    // the same order, two dependency chains side by side instead of one after the other.
    const double cut = r->cut;
    dsmm_idx n_prune = 0;
    double mx = 0.0, sq = 0.0, mass_prune = 0.0;
    for (dsmm_idx i = 0; i < n; i++) {
        double v = (double)val[i];
        if (v > mx) mx = v;
        sq += v * v;
        if (cut <= 0.0 || v >= cut) {
            n_prune++;
            mass_prune += v;
        }
    }
    dsmmi_mcl_col cs = {n, mx, sq};
    return prune_from(r, c, idx, val, n, &cs, n_prune, mass_prune, scratch, chaos);
}

dsmm_idx dsmmi_mcl_inflate(float *val, dsmm_idx n, double power)
{
    double s = 0.0;
    if (power == 2.0) { // pow(x, 2) is x * x exactly: a float's square fits a double
        for (dsmm_idx i = 0; i < n; i++) {
            val[i] = (float)((double)val[i] * (double)val[i]);
            s += (double)val[i];
        }
    } else {
        for (dsmm_idx i = 0; i < n; i++) {
            val[i] = (float)pow((double)val[i], power);
            s += (double)val[i];
        }
    }
    if (!(s > 0.0)) return 0;
    for (dsmm_idx i = 0; i < n; i++) val[i] = (float)((double)val[i] / s);
    return n;
}

void dsmmi_mcl_measure(const float *val, dsmm_idx n, dsmmi_mcl_col *cs)
{
    double mx = 0.0, sq = 0.0;
    for (dsmm_idx i = 0; i < n; i++) {
        double v = (double)val[i];
        if (v > mx) mx = v;
        sq += v * v;
    }
    cs->maxval = mx;
    cs->center = sq;
    cs->n_expand = n;
}
