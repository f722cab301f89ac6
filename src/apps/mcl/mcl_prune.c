// src/apps/mcl/mcl_prune.c: what mcl 22-282 does to one expanded column: threshold prune
// (-P), selection (-S), recovery (-R with -pct), rescale, the column's chaos, and inflation
// (-I). Values are float32 as mcl stores them; sums are double, in index order wherever the
// order can change the bits, so a column that arrives here with mcl's values leaves with mcl's
// values, bit for bit (docs/mcl.md "Exactness"). The k-th largest value is an exact order
// statistic (quickselect on a copy).
#include <float.h>
#include <math.h>
#include <string.h>

#include "apps/apps.h"

float dsmmi_mcl_kth_largest(float *v, dsmm_idx n, dsmm_idx k)
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
    return k <= 0 ? 0.0f : dsmmi_mcl_kth_largest(scratch, m, k);
}

// Whether mcl's running double sum of n floats, each at least bar and at most mx, is exact at
// every step, so that any order of the same additions gives its bits: with bar in
// [2^(e-1), 2^e), every such float is a multiple of 2^(e-24), and no partial sum (at most
// n mx) reaches 2^53 of those units (a factor 2 of margin for the rounding of n mx).
int dsmmi_mcl_sum_exact(double bar, double mx, dsmm_idx n)
{
    if (!(bar >= (double)FLT_MIN)) return 0; // 0, subnormal or NaN: not checked, run in order
    int e = 0;
    frexp(bar, &e);
    return (double)n * mx < ldexp(1.0, e + 28);
}

// The double sum of v[0..n) with four running sums, joined in a fixed order: mcl's sum when
// dsmmi_mcl_sum_exact holds; otherwise a sum within n ulps of it.
double dsmmi_mcl_sum4(const float *v, dsmm_idx n)
{
    double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
    dsmm_idx i = 0;
    for (; i + 4 <= n; i += 4) {
        s0 += (double)v[i];
        s1 += (double)v[i + 1];
        s2 += (double)v[i + 2];
        s3 += (double)v[i + 3];
    }
    for (; i < n; i++) s0 += (double)v[i];
    return (s0 + s1) + (s2 + s3);
}

typedef float mcl_v8f __attribute__((vector_size(32)));
typedef long long mcl_v4l __attribute__((vector_size(32)));

// Entries [i0, i1) with value >= fbar moved to positions m.. in order; returns the new m.
static inline dsmm_idx keep_range(int32_t *idx, float *val, dsmm_idx i0, dsmm_idx i1, float fbar,
                                  dsmm_idx m)
{
    for (dsmm_idx i = i0; i < i1; i++) {
        if (val[i] >= fbar) {
            idx[m] = idx[i];
            val[m] = val[i];
            m++;
        }
    }
    return m;
}

// Moves the entries with value >= fbar to the front, in order; returns their count. Eight
// values are compared at a time, and a group with none kept (most of an expanded column: a few
// percent survive the cut) costs one test.
DSMMI_CLONES static dsmm_idx compact_at_least(int32_t *idx, float *val, dsmm_idx n, float fbar)
{
    const mcl_v8f vb = {fbar, fbar, fbar, fbar, fbar, fbar, fbar, fbar};
    dsmm_idx m = 0, i = 0;
    for (; i + 8 <= n; i += 8) {
        mcl_v8f v;
        memcpy(&v, val + i, sizeof v);
        mcl_v4l k = (mcl_v4l)(v >= vb);
        if ((k[0] | k[1] | k[2] | k[3]) != 0) m = keep_range(idx, val, i, i + 8, fbar, m);
    }
    return keep_range(idx, val, i, n, fbar, m);
}

// Keeps entries with value >= bar; returns the count and the kept mass: mcl's running double
// sum in index order, or four running sums where that gives the same bits (dsmmi_mcl_sum_exact; mx
// bounds the values). A float is >= bar exactly when it is >= the smallest float >= bar.
static dsmm_idx keep_from(int32_t *idx, float *val, dsmm_idx n, double bar, double mx, double *mass)
{
    float fbar = (float)bar;
    if ((double)fbar < bar) fbar = nextafterf(fbar, INFINITY);
    dsmm_idx m = compact_at_least(idx, val, n, fbar);
    if (dsmmi_mcl_sum_exact(bar, mx, m)) { // the m kept values are what is summed
        *mass = dsmmi_mcl_sum4(val, m);
        return m;
    }
    double s = 0.0;
    for (dsmm_idx i = 0; i < m; i++) s += (double)val[i];
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
        n = keep_from(idx, val, n, rbar, cs->maxval, &mass_final);
    } else if (r->S > 0 && n_prune > r->S) {
        // Selection among the entries that survived the threshold, then recovery inside them.
        if (cut > 0.0) n = keep_from(idx, val, n, cut, cs->maxval, &mass_prune);
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
        n = keep_from(idx, val, n, bar, cs->maxval, &mass_final);
    } else if (cut > 0.0) {
        n = keep_from(idx, val, n, cut, cs->maxval, &mass_final);
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

// prune_whole's measures with a cut, in vectors (AVX2 where the CPU has it): the largest
// value, the sum of squares, and the count and mass at or above the cut. The max and the count
// are exact; the two sums are eight running sums each (two vectors of four, so that two adds
// are in flight), joined in a fixed order (a float's square is exact in double, so a fused
// multiply-add changes no bit).
typedef float mcl_v4f __attribute__((vector_size(16)));

#define MEASURE_STEP(V, Q, M, N, MX)                                                               \
    {                                                                                              \
        mcl_v4l gt_ = V > MX, keep_ = V >= vcut;                                                   \
        MX = (dsmmi_v4d)(((mcl_v4l)V & gt_) | ((mcl_v4l)MX & ~gt_));                               \
        Q += V * V;                                                                                \
        N -= keep_; /* a true lane is -1 */                                                        \
        M += (dsmmi_v4d)((mcl_v4l)V & keep_);                                                      \
    }

DSMMI_CLONES static void measure_cut(const float *val, dsmm_idx n, double cut, double *mx_out,
                                     double *sq_out, dsmm_idx *n_out, double *mass_out)
{
    const dsmmi_v4d zero = {0.0, 0.0, 0.0, 0.0}, vcut = {cut, cut, cut, cut};
    dsmmi_v4d mx0 = zero, mx1 = zero, q0 = zero, q1 = zero, m0 = zero, m1 = zero;
    mcl_v4l n0 = {0, 0, 0, 0}, n1 = n0;
    dsmm_idx i = 0;
    for (; i + 8 <= n; i += 8) {
        mcl_v4f f0, f1;
        memcpy(&f0, val + i, sizeof f0);
        memcpy(&f1, val + i + 4, sizeof f1);
        dsmmi_v4d v0 = __builtin_convertvector(f0, dsmmi_v4d);
        dsmmi_v4d v1 = __builtin_convertvector(f1, dsmmi_v4d);
        MEASURE_STEP(v0, q0, m0, n0, mx0)
        MEASURE_STEP(v1, q1, m1, n1, mx1)
    }
    double mx = 0.0, qs[8], ms[8];
    dsmm_idx cnt = 0;
    for (int l = 0; l < 4; l++) {
        mx = mx0[l] > mx ? mx0[l] : mx;
        mx = mx1[l] > mx ? mx1[l] : mx;
        cnt += (dsmm_idx)(n0[l] + n1[l]);
        qs[l] = q0[l];
        qs[4 + l] = q1[l];
        ms[l] = m0[l];
        ms[4 + l] = m1[l];
    }
    for (; i < n; i++) { // the tail joins the first running sums
        double v = (double)val[i];
        mx = v > mx ? v : mx;
        qs[0] += v * v;
        if (v >= cut) {
            cnt++;
            ms[0] += v;
        }
    }
    *mx_out = mx;
    *sq_out = ((qs[0] + qs[1]) + (qs[2] + qs[3])) + ((qs[4] + qs[5]) + (qs[6] + qs[7]));
    *n_out = cnt;
    *mass_out = ((ms[0] + ms[1]) + (ms[2] + ms[3])) + ((ms[4] + ms[5]) + (ms[6] + ms[7]));
}
#undef MEASURE_STEP

dsmm_idx dsmmi_mcl_prune_whole(const dsmmi_mcl_rules *r, int32_t c, int32_t *idx, float *val,
                               dsmm_idx n, float *scratch, float *chaos)
{
    // dsmmi_mcl_measure and the first pass of dsmmi_mcl_prune in one loop. With a cut, every
    // rescale sums the kept entries again (keep_from), so the mass above the cut is only
    // compared with pct, and the sum of squares only makes the chaos: both run as eight
    // running sums each (measure_cut; the max and the count are exact in any order). They can
    // differ from mcl's running sums in the last bits, as the distributed expansion's stage sums
    // do: the chaos, and a mass within n ulps of pct.
    const double cut = r->cut;
    dsmm_idx n_prune = 0;
    double mx = 0.0, sq = 0.0, mass_prune = 0.0;
    if (cut > 0.0) {
        measure_cut(val, n, cut, &mx, &sq, &n_prune, &mass_prune);
        dsmmi_mcl_col cs = {n, mx, sq};
        return prune_from(r, c, idx, val, n, &cs, n_prune, mass_prune, scratch, chaos);
    }
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
