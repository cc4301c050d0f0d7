/* torchplug_cpu._crandom: PyTorch's CPU random stream, bit for bit.
 *
 * The engine is mt19937 (as at::mt19937: 624 32-bit words seeded by init_genrand from the low
 * 32 bits of the seed); its state lives in the caller's ``torchplug.Generator`` as a writable
 * uint32[624] buffer plus the index of the next word (NumPy's MT19937 convention: 624 means
 * "regenerate before the next draw").  Every entry point takes (key, pos), draws, and returns the
 * new pos, so the Python generator object stays the single owner of the state.
 *
 * The distributions consume the engine exactly as ATen's CPU kernels do (DistributionsHelper.h,
 * TransformationHelper.h, cpu/DistributionTemplates.h): float uniforms take 24 bits of one
 * 32-bit draw, double uniforms 53 bits of random64() (first draw in the high word), the scalar
 * normal path is Box-Muller on double with the second sample cached in the generator, and
 * normal_fill transforms blocks of 16.  The transcendental functions are the C library's (as in
 * libtorch); where ATen uses avx_mathfun.h (float normal_fill on AVX2 machines) its Cephes
 * polynomials are replayed here, lane for lane (AVX2 intrinsics where the CPU has them, scalar
 * float otherwise).  ``fma`` selects the variant that PyTorch's AVX2/AVX512 kernels compute (their
 * compiler fuses a * b + c); 0 is the ATEN_CPU_CAPABILITY=default build.  Built with
 * -ffp-contract=off and without -ffast-math, so no operation here is fused unless written as
 * fma()/fmaf()/_mm256_fmadd_ps.
 *
 * Every entry point checks its buffers (sizes, alignment, item sizes) itself.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#define MT_N 624
#define MT_M 397

typedef struct {
    uint32_t *key;
    Py_ssize_t pos;
} mt_t;

static void mt_regenerate(uint32_t *s) {
    static const uint32_t mag01[2] = {0u, 0x9908b0dfu};
    int k;
    uint32_t y;
    for (k = 0; k < MT_N - MT_M; k++) {
        y = (s[k] & 0x80000000u) | (s[k + 1] & 0x7fffffffu);
        s[k] = s[k + MT_M] ^ (y >> 1) ^ mag01[y & 1u];
    }
    for (; k < MT_N - 1; k++) {
        y = (s[k] & 0x80000000u) | (s[k + 1] & 0x7fffffffu);
        s[k] = s[k + (MT_M - MT_N)] ^ (y >> 1) ^ mag01[y & 1u];
    }
    y = (s[MT_N - 1] & 0x80000000u) | (s[0] & 0x7fffffffu);
    s[MT_N - 1] = s[MT_M - 1] ^ (y >> 1) ^ mag01[y & 1u];
}

static inline uint32_t mt_next(mt_t *g) {
    if (g->pos >= MT_N) {
        mt_regenerate(g->key);
        g->pos = 0;
    }
    uint32_t y = g->key[g->pos++];
    y ^= (y >> 11);
    y ^= (y << 7) & 0x9d2c5680u;
    y ^= (y << 15) & 0xefc60000u;
    y ^= (y >> 18);
    return y;
}

/* CPUGeneratorImpl::random64: the first draw is the high word. */
static inline uint64_t mt_next64(mt_t *g) {
    uint64_t hi = mt_next(g);
    uint64_t lo = mt_next(g);
    return (hi << 32) | lo;
}

/* uniform_real_distribution<float>(0, 1) and <double>(0, 1) */
static inline float unit_f(mt_t *g) { return (float)(mt_next(g) & 0xffffffu) * (1.0f / 16777216.0f); }
static inline double unit_d(mt_t *g) {
    return (double)(mt_next64(g) & 0x1fffffffffffffull) * (1.0 / 9007199254740992.0);
}

/* at::normal_distribution<double>: Box-Muller with the second sample cached in the generator. */
typedef struct {
    int has;
    double value;
} cache_t;

static inline double normal_d(mt_t *g, cache_t *c, double mean, double std, int fused) {
    double ret;
    if (c->has) {
        c->has = 0;
        ret = c->value;
    } else {
        const double u1 = unit_d(g);
        const double u2 = unit_d(g);
        const double r = sqrt(-2.0 * log1p(-u2));
        const double theta = 2.0 * M_PI * u1;
        c->value = r * sin(theta);
        c->has = 1;
        ret = r * cos(theta);
    }
    /* transformation::normal: val * std + mean, fused by the AVX2 build */
    return fused ? fma(ret, std, mean) : ret * std + mean;
}

/* The fused variants run as the FMA instruction (the library fmaf is a call per operation):
 * compiled for avx2+fma and used only where the CPU has them (have_fma), else the same
 * arithmetic through the library's fmaf. */
#if (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__)
#define FMA_TARGET __attribute__((target("avx2,fma")))
static int have_fma(void) { return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"); }
#else
#define FMA_TARGET
static int have_fma(void) { return 0; }
#endif
#define INLINE static inline __attribute__((always_inline))

/* ---- avx_mathfun.h (Cephes log/sincos in float), one lane at a time ---------------------- */
static inline float as_float(uint32_t b) { float f; memcpy(&f, &b, 4); return f; }
static inline uint32_t as_bits(float f) { uint32_t b; memcpy(&b, &f, 4); return b; }
/* a * b + c, fused where PyTorch's AVX2 build fuses it (GCC contracts the intrinsics' mul + add);
 * checked against torch on millions of samples */
#define MADD(fused, a, b, c) ((fused) ? __builtin_fmaf((a), (b), (c)) : (a) * (b) + (c))

INLINE float cephes_logf(float x, int fused) {
    const int invalid = !(x > 0.0f);
    if (x < as_float(0x00800000u))
        x = as_float(0x00800000u);
    uint32_t bits = as_bits(x);
    int32_t imm0 = (int32_t)(bits >> 23);
    x = as_float((bits & ~0x7f800000u) | as_bits(0.5f));
    imm0 -= 0x7f;
    float e = (float)imm0;
    e = e + 1.0f;
    const int lt = x < (float)0.707106781186547524;
    const float tmp0 = lt ? x : 0.0f;
    x = x - 1.0f;
    e = e - (lt ? 1.0f : 0.0f);
    x = x + tmp0;
    const float z = x * x;
    float y = (float)7.0376836292E-2;
    y = MADD(fused, y, x, (float)-1.1514610310E-1);
    y = MADD(fused, y, x, (float)1.1676998740E-1);
    y = MADD(fused, y, x, (float)-1.2420140846E-1);
    y = MADD(fused, y, x, (float)1.4249322787E-1);
    y = MADD(fused, y, x, (float)-1.6668057665E-1);
    y = MADD(fused, y, x, (float)2.0000714765E-1);
    y = MADD(fused, y, x, (float)-2.4999993993E-1);
    y = MADD(fused, y, x, (float)3.3333331174E-1);
    y = y * x;
    /* (y * z) + (e * q1): both are products; the compiler fuses the first */
    y = fused ? __builtin_fmaf(y, z, e * (float)-2.12194440e-4) : y * z + e * (float)-2.12194440e-4;
    y = MADD(fused, -z, 0.5f, y);
    x = x + y;
    x = MADD(fused, e, 0.693359375f, x);
    if (invalid)
        x = as_float(as_bits(x) | 0xffffffffu);
    return x;
}

INLINE void cephes_sincosf(float x, float *s, float *c, int fused) {
    uint32_t sign_sin = as_bits(x) & 0x80000000u;
    x = as_float(as_bits(x) & 0x7fffffffu);
    float y = x * (float)1.27323954473516;
    int32_t j = (int32_t)y; /* theta is in [0, 2 pi): no overflow */
    j = (j + 1) & ~1;
    y = (float)j;
    int32_t j4 = j;
    const uint32_t swap_sin = ((uint32_t)(j & 4)) << 29;
    const int poly = (j & 2) == 0;
    x = MADD(fused, y, -0.78515625f, x);
    x = MADD(fused, y, (float)-2.4187564849853515625e-4, x);
    x = MADD(fused, y, (float)-3.77489497744594108e-8, x);
    j4 = j4 - 2;
    const uint32_t sign_cos = ((uint32_t)(~j4 & 4)) << 29;
    sign_sin ^= swap_sin;
    const float z = x * x;
    float yc = (float)2.443315711809948E-005;
    yc = MADD(fused, yc, z, (float)-1.388731625493765E-003);
    yc = MADD(fused, yc, z, (float)4.166664568298827E-002);
    yc = yc * z;
    /* (yc * z) - (z * 0.5): the first product is fused */
    yc = fused ? __builtin_fmaf(yc, z, -(z * 0.5f)) : yc * z - z * 0.5f;
    yc = yc + 1.0f;
    float ys = (float)-1.9515295891E-4;
    ys = MADD(fused, ys, z, (float)8.3321608736E-3);
    ys = MADD(fused, ys, z, (float)-1.6666654611E-1);
    ys = ys * z;
    ys = MADD(fused, ys, x, x);
    const float ysin2 = poly ? ys : 0.0f;
    const float ysin1 = poly ? 0.0f : yc;
    ys = ys - ysin2;
    yc = yc - ysin1;
    const float r1 = ysin1 + ysin2;
    const float r2 = yc + ys;
    *s = as_float(as_bits(r1) ^ sign_sin);
    *c = as_float(as_bits(r2) ^ sign_cos);
}

/* NormalFill16<float> of the AVX2 build (avx_mathfun) on 16 uniforms in place: d[j] pairs with d[j + 8]. */
INLINE void fill16_avx_body(float *d, float mean, float std) {
    const float two_pi = (float)(2.0f * M_PI);
    for (int j = 0; j < 8; j++) {
        const float u1 = 1.0f - d[j];
        const float u2 = d[j + 8];
        const float radius = sqrtf(-2.0f * cephes_logf(u1, 1));
        const float theta = two_pi * u2;
        float st, ct;
        cephes_sincosf(theta, &st, &ct, 1);
        d[j] = __builtin_fmaf(radius * ct, std, mean);
        d[j + 8] = __builtin_fmaf(radius * st, std, mean);
    }
}

static void fill16_avx_portable(float *d, float mean, float std) { fill16_avx_body(d, mean, std); }

#if (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__)
#include <immintrin.h>

/* The same lanes eight at a time with AVX2 intrinsics (the operations of fill16_avx_body, in
 * order; _mm256_fmadd_ps where that body fuses), at PyTorch's speed. */
FMA_TARGET static inline __m256 log256(__m256 x) {
    const __m256 one = _mm256_set1_ps(1.0f);
    const __m256 invalid = _mm256_cmp_ps(x, _mm256_setzero_ps(), _CMP_LE_OS);
    x = _mm256_max_ps(x, _mm256_castsi256_ps(_mm256_set1_epi32(0x00800000)));
    __m256i imm0 = _mm256_srli_epi32(_mm256_castps_si256(x), 23);
    x = _mm256_and_ps(x, _mm256_castsi256_ps(_mm256_set1_epi32(~0x7f800000)));
    x = _mm256_or_ps(x, _mm256_set1_ps(0.5f));
    imm0 = _mm256_sub_epi32(imm0, _mm256_set1_epi32(0x7f));
    __m256 e = _mm256_add_ps(_mm256_cvtepi32_ps(imm0), one);
    const __m256 mask = _mm256_cmp_ps(x, _mm256_set1_ps((float)0.707106781186547524), _CMP_LT_OS);
    const __m256 tmp = _mm256_and_ps(x, mask);
    x = _mm256_sub_ps(x, one);
    e = _mm256_sub_ps(e, _mm256_and_ps(one, mask));
    x = _mm256_add_ps(x, tmp);
    const __m256 z = _mm256_mul_ps(x, x);
    __m256 y = _mm256_set1_ps((float)7.0376836292E-2);
    y = _mm256_fmadd_ps(y, x, _mm256_set1_ps((float)-1.1514610310E-1));
    y = _mm256_fmadd_ps(y, x, _mm256_set1_ps((float)1.1676998740E-1));
    y = _mm256_fmadd_ps(y, x, _mm256_set1_ps((float)-1.2420140846E-1));
    y = _mm256_fmadd_ps(y, x, _mm256_set1_ps((float)1.4249322787E-1));
    y = _mm256_fmadd_ps(y, x, _mm256_set1_ps((float)-1.6668057665E-1));
    y = _mm256_fmadd_ps(y, x, _mm256_set1_ps((float)2.0000714765E-1));
    y = _mm256_fmadd_ps(y, x, _mm256_set1_ps((float)-2.4999993993E-1));
    y = _mm256_fmadd_ps(y, x, _mm256_set1_ps((float)3.3333331174E-1));
    y = _mm256_mul_ps(y, x);
    y = _mm256_fmadd_ps(y, z, _mm256_mul_ps(e, _mm256_set1_ps((float)-2.12194440e-4)));
    y = _mm256_fnmadd_ps(z, _mm256_set1_ps(0.5f), y);
    x = _mm256_add_ps(x, y);
    x = _mm256_fmadd_ps(e, _mm256_set1_ps(0.693359375f), x);
    return _mm256_or_ps(x, invalid);
}

FMA_TARGET static inline void sincos256(__m256 x, __m256 *s, __m256 *c) {
    const __m256 sign_mask = _mm256_castsi256_ps(_mm256_set1_epi32((int)0x80000000));
    __m256 sign_sin = _mm256_and_ps(x, sign_mask);
    x = _mm256_andnot_ps(sign_mask, x);
    __m256 y = _mm256_mul_ps(x, _mm256_set1_ps((float)1.27323954473516));
    __m256i j = _mm256_cvttps_epi32(y);
    j = _mm256_add_epi32(j, _mm256_set1_epi32(1));
    j = _mm256_and_si256(j, _mm256_set1_epi32(~1));
    y = _mm256_cvtepi32_ps(j);
    const __m256 swap_sin = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_and_si256(j, _mm256_set1_epi32(4)), 29));
    const __m256 poly = _mm256_castsi256_ps(
        _mm256_cmpeq_epi32(_mm256_and_si256(j, _mm256_set1_epi32(2)), _mm256_setzero_si256()));
    x = _mm256_fmadd_ps(y, _mm256_set1_ps(-0.78515625f), x);
    x = _mm256_fmadd_ps(y, _mm256_set1_ps((float)-2.4187564849853515625e-4), x);
    x = _mm256_fmadd_ps(y, _mm256_set1_ps((float)-3.77489497744594108e-8), x);
    __m256i j4 = _mm256_sub_epi32(j, _mm256_set1_epi32(2));
    j4 = _mm256_andnot_si256(j4, _mm256_set1_epi32(4));
    const __m256 sign_cos = _mm256_castsi256_ps(_mm256_slli_epi32(j4, 29));
    sign_sin = _mm256_xor_ps(sign_sin, swap_sin);
    const __m256 z = _mm256_mul_ps(x, x);
    __m256 yc = _mm256_fmadd_ps(_mm256_set1_ps((float)2.443315711809948E-005), z,
                                _mm256_set1_ps((float)-1.388731625493765E-003));
    yc = _mm256_fmadd_ps(yc, z, _mm256_set1_ps((float)4.166664568298827E-002));
    yc = _mm256_mul_ps(yc, z);
    yc = _mm256_fmsub_ps(yc, z, _mm256_mul_ps(z, _mm256_set1_ps(0.5f)));
    yc = _mm256_add_ps(yc, _mm256_set1_ps(1.0f));
    __m256 ys = _mm256_fmadd_ps(_mm256_set1_ps((float)-1.9515295891E-4), z, _mm256_set1_ps((float)8.3321608736E-3));
    ys = _mm256_fmadd_ps(ys, z, _mm256_set1_ps((float)-1.6666654611E-1));
    ys = _mm256_mul_ps(ys, z);
    ys = _mm256_fmadd_ps(ys, x, x);
    const __m256 ysin2 = _mm256_and_ps(poly, ys);
    const __m256 ysin1 = _mm256_andnot_ps(poly, yc);
    ys = _mm256_sub_ps(ys, ysin2);
    yc = _mm256_sub_ps(yc, ysin1);
    *s = _mm256_xor_ps(_mm256_add_ps(ysin1, ysin2), sign_sin);
    *c = _mm256_xor_ps(_mm256_add_ps(yc, ys), sign_cos);
}

FMA_TARGET static void fill16_avx_native(float *d, float mean, float std) {
    const __m256 u1 = _mm256_sub_ps(_mm256_set1_ps(1.0f), _mm256_loadu_ps(d));
    const __m256 u2 = _mm256_loadu_ps(d + 8);
    const __m256 radius = _mm256_sqrt_ps(_mm256_mul_ps(_mm256_set1_ps(-2.0f), log256(u1)));
    const __m256 theta = _mm256_mul_ps(_mm256_set1_ps((float)(2.0f * M_PI)), u2);
    __m256 st, ct;
    sincos256(theta, &st, &ct);
    _mm256_storeu_ps(d, _mm256_fmadd_ps(_mm256_mul_ps(radius, ct), _mm256_set1_ps(std), _mm256_set1_ps(mean)));
    _mm256_storeu_ps(d + 8, _mm256_fmadd_ps(_mm256_mul_ps(radius, st), _mm256_set1_ps(std), _mm256_set1_ps(mean)));
}
#else
static void fill16_avx_native(float *d, float mean, float std) { fill16_avx_body(d, mean, std); }
#endif

/* NormalFill16<float> of the default build: the C library's logf/cosf/sinf. */
static void fill16_libm(float *d, float mean, float std) {
    for (int j = 0; j < 8; j++) {
        const float u1 = 1 - d[j];
        const float u2 = d[j + 8];
        const float radius = sqrtf(-2 * logf(u1));
        const float theta = (float)(2.0f * M_PI * (double)u2);
        d[j] = fmaf(radius * cosf(theta), std, mean);
        d[j + 8] = fmaf(radius * sinf(theta), std, mean);
    }
}

typedef void (*fill16_fn)(float *, float, float);

static fill16_fn pick_fill16(int fused) {
    if (!fused)
        return fill16_libm;
    return have_fma() ? fill16_avx_native : fill16_avx_portable;
}

/* uniform_real_distribution<float>(from, to) with the fused multiply-add of the AVX2 build */
INLINE void uniform_f_body(mt_t *g, float *o, Py_ssize_t n, float from, float range) {
    for (Py_ssize_t i = 0; i < n; i++) {
        const float x = (float)(mt_next(g) & 0xffffffu) * (1.0f / 16777216.0f);
        o[i] = __builtin_fmaf(x, range, from);
    }
}

INLINE void uniform_d_body(mt_t *g, double *o, Py_ssize_t n, double from, double range) {
    for (Py_ssize_t i = 0; i < n; i++)
        o[i] = __builtin_fma(unit_d(g), range, from);
}

FMA_TARGET static void uniform_f_native(mt_t *g, float *o, Py_ssize_t n, float from, float range) {
    uniform_f_body(g, o, n, from, range);
}
static void uniform_f_portable(mt_t *g, float *o, Py_ssize_t n, float from, float range) {
    uniform_f_body(g, o, n, from, range);
}
FMA_TARGET static void uniform_d_native(mt_t *g, double *o, Py_ssize_t n, double from, double range) {
    uniform_d_body(g, o, n, from, range);
}
static void uniform_d_portable(mt_t *g, double *o, Py_ssize_t n, double from, double range) {
    uniform_d_body(g, o, n, from, range);
}

static void fill16_double(double *d, double mean, double std) {
    for (int j = 0; j < 8; j++) {
        const double u1 = 1 - d[j];
        const double u2 = d[j + 8];
        const double radius = sqrt(-2 * log(u1));
        const double theta = 2.0f * M_PI * u2;
        d[j] = fma(radius * cos(theta), std, mean);
        d[j + 8] = fma(radius * sin(theta), std, mean);
    }
}

/* ---- argument checks ------------------------------------------------------------------- */
static int check_key(Py_buffer *key, Py_ssize_t pos) {
    if (key->len != (Py_ssize_t)(MT_N * sizeof(uint32_t)) || (uintptr_t)key->buf % sizeof(uint32_t)) {
        PyErr_Format(PyExc_ValueError, "_crandom: the mt19937 key must be an aligned uint32 array of %d words "
                     "(got %zd bytes)", MT_N, key->len);
        return -1;
    }
    if (pos < 0 || pos > MT_N) {
        PyErr_Format(PyExc_ValueError, "_crandom: the mt19937 position must be in [0, %d], got %zd", MT_N, pos);
        return -1;
    }
    return 0;
}

/* The item count of ``b`` for items of ``size`` bytes; -1 with ValueError when it does not divide. */
static Py_ssize_t items(Py_buffer *b, Py_ssize_t size, const char *what) {
    if (b->len % size || (uintptr_t)b->buf % (uintptr_t)size) {
        PyErr_Format(PyExc_ValueError, "_crandom: %s must be an aligned array of %zd-byte items (got %zd bytes)",
                     what, size, b->len);
        return -1;
    }
    return b->len / size;
}

enum {
    K_RAW32 = 0,       /* uint32 out */
    K_UNIFORM_F = 1,   /* float32 out: uniform_real_distribution<float>(a, b) */
    K_UNIFORM_D = 2,   /* float64 out: uniform_real_distribution<double>(a, b) */
    K_NORMFILL_F = 3,  /* float32 out, n >= 16: normal_fill<float> */
    K_NORMFILL_H = 4,  /* float32 out, n >= 16: normal_fill for half/bfloat16 (opmath float, per-block) */
    K_NORMFILL_D = 5,  /* float64 out, n >= 16: normal_fill<double> */
    K_NORMAL = 6,      /* float64 out: normal_distribution<double>(a, b), cached */
    K_LOGNORMAL = 7,   /* float64 out: exp(normal(a, b)), cached */
    K_EXPONENTIAL = 8, /* float64 out: -1/a * log1p(-u) */
    K_GEOMETRIC = 9,   /* float64 out: ceil(log(u) / log1p(-a)) */
    K_CAUCHY = 10,     /* float64 out: a + b * tan(pi * (u - 0.5)) */
    K_BERNOULLI = 11,  /* uint8 out: u_double < a */
    K_BERN_PF = 12,    /* uint8 out: u_float < p[i] (float32 p) */
    K_BERN_PD = 13,    /* uint8 out: u_double < p[i] (float64 p) */
    K_POISSON = 14,    /* float64 out from float64 rates p[i] */
    K_GAMMA = 15,      /* float64 out from float64 concentrations p[i]; a != 0: float32 arithmetic (scalar_t float) */
    K_BINOMIAL = 16,   /* float64 out from p = [counts..., probs...] (2n float64 items) */
};

/* Hoermann's transformed rejection (lambda >= 10) or multiplication (ATen's sample_poisson). */
static double poisson_one(mt_t *g, double lambda) {
    if (lambda >= 10) {
        int64_t k;
        double U, V, us;
        const double slam = sqrt(lambda);
        const double loglam = log(lambda);
        const double b = 0.931 + 2.53 * slam;
        const double a = -0.059 + 0.02483 * b;
        const double invalpha = 1.1239 + 1.1328 / (b - 3.4);
        const double vr = 0.9277 - 3.6224 / (b - 2);
        for (;;) {
            U = unit_d(g) - 0.5;
            V = unit_d(g);
            us = 0.5 - fabs(U);
            k = (int64_t)floor((2 * a / us + b) * U + lambda + 0.43);
            if ((us >= 0.07) && (V <= vr))
                return (double)k;
            if ((k < 0) || ((us < 0.013) && (V > us)))
                continue;
            if ((log(V) + log(invalpha) - log(a / (us * us) + b)) <= (-lambda + k * loglam - lgamma((double)k + 1)))
                return (double)k;
        }
    } else if (lambda == 0) {
        return 0;
    } else {
        int64_t x = 0;
        double prod = 1.0;
        const double enlam = exp(-lambda);
        for (;;) {
            prod *= unit_d(g);
            if (prod > enlam)
                x += 1;
            else
                return (double)x;
        }
    }
}

/* ATen's sample_gamma (Marsaglia and Tsang, with the boost for alpha < 1) as _s_gamma_cpu runs it:
 * uniform and normal draws from uniform_real_distribution<double> / normal_distribution<double>,
 * accscalar_t double; with ``single`` the scalar_t float steps (alpha, 1/alpha, d) and the final
 * cast and clamp to FLT_MIN are float's, else the result is clamped to DBL_MIN. */
static double gamma_one(mt_t *g, cache_t *cache, double alpha_in, int single) {
    double scale = 1.0, d;
    if (single) {
        float alpha = (float)alpha_in;
        if (alpha < 1.0f) {
            if (alpha == 0.f)
                return FLT_MIN; /* sample_gamma's 0, clamped as every result */
            scale *= pow(1 - unit_d(g), (double)(1.0f / alpha));
            alpha += 1.0f;
        }
        d = (double)(alpha - 1.0f / 3.0f);
    } else {
        double alpha = alpha_in;
        if (alpha < 1.0) {
            if (alpha == 0.0)
                return DBL_MIN;
            scale *= pow(1 - unit_d(g), 1.0 / alpha);
            alpha += 1.0;
        }
        d = alpha - (double)(1.0f / 3.0f);
    }
    const double c = 1.0 / sqrt(9.0 * d);
    double sample;
    for (;;) {
        double x, y;
        do {
            x = normal_d(g, cache, 0.0, 1.0, 0);
            y = 1.0 + c * x;
        } while (y <= 0);
        const double v = y * y * y;
        const double u = 1 - unit_d(g);
        const double xx = x * x;
        if (u < 1.0 - (double)0.0331f * xx * xx) {
            sample = scale * d * v;
            break;
        }
        if (log(u) < 0.5 * xx + d * (1.0 - v + log(v))) {
            sample = scale * d * v;
            break;
        }
    }
    if (single) {
        const float f = (float)sample;
        return f > FLT_MIN ? f : FLT_MIN;
    }
    return sample > DBL_MIN ? sample : DBL_MIN;
}

static double stirling_approx_tail(double k) {
    static const double tail[] = {0.0810614667953272, 0.0413406959554092, 0.0276779256849983, 0.02079067210376509,
                                  0.0166446911898211, 0.0138761288230707, 0.0118967099458917, 0.0104112652619720,
                                  0.00925546218271273, 0.00833056343336287};
    if (k <= 9)
        return tail[(size_t)k];
    const double kp1sq = (k + 1) * (k + 1);
    return (1.0 / 12 - (1.0 / 360 - 1.0 / 1260 / kp1sq) / kp1sq) / (k + 1);
}

/* ATen's btrs: Hoermann's transformed rejection for count * prob >= 10. */
static double btrs(mt_t *g, double count, double prob) {
    const double stddev = sqrt(count * prob * (1 - prob));
    const double b = 1.15 + 2.53 * stddev;
    const double a = -0.0873 + 0.0248 * b + 0.01 * prob;
    const double c = count * prob + 0.5;
    const double v_r = 0.92 - 4.2 / b;
    const double r = prob / (1 - prob);
    const double alpha = (2.83 + 5.1 / b) * stddev;
    const double m = floor((count + 1) * prob);
    for (;;) {
        const double U = unit_d(g) - 0.5;
        double V = unit_d(g);
        const double us = 0.5 - fabs(U);
        const double k = floor((2 * a / us + b) * U + c);
        if (k < 0 || k > count)
            continue;
        if (us >= 0.07 && V <= v_r)
            return k;
        V = log(V * alpha / (a / (us * us) + b));
        const double upperbound = (m + 0.5) * log((m + 1) / (r * (count - m + 1))) +
                                  (count + 1) * log((count - m + 1) / (count - k + 1)) +
                                  (k + 0.5) * log(r * (count - k + 1) / (k + 1)) + stirling_approx_tail(m) +
                                  stirling_approx_tail(count - m) - stirling_approx_tail(k) -
                                  stirling_approx_tail(count - k);
        if (V <= upperbound)
            return k;
    }
}

/* ATen's binomial_inversion: count geometric waiting times until they pass ``count``. */
static double binomial_inversion(mt_t *g, double count, double prob) {
    double geom_sum = 0, num_geom = 0;
    const double logprob = log1p(-prob);
    for (;;) {
        const double geom = ceil(log(unit_d(g)) / logprob);
        geom_sum += geom;
        if (geom_sum > count)
            break;
        num_geom = num_geom + 1;
    }
    return num_geom;
}

/* ATen's sample_binomial (scalar_t double). */
static double binomial_one(mt_t *g, double count, double prob) {
    if (count <= 0.0 || prob <= 0.0)
        return 0;
    if (prob >= 1.0)
        return count;
    if (prob <= 0.5)
        return count * prob >= 10.0 ? btrs(g, count, prob) : binomial_inversion(g, count, prob);
    if (prob > 0.5) {
        const double qprob = 1.0 - prob;
        return count - (count * qprob >= 10.0 ? btrs(g, count, qprob) : binomial_inversion(g, count, qprob));
    }
    return NAN;
}

/* fill(key, pos, kind, out, a, b, fma, cache_has, cache_value, p) -> (pos, cache_has, cache_value) */
static PyObject *py_fill(PyObject *self, PyObject *args) {
    Py_buffer key, out, p;
    Py_ssize_t pos;
    int kind, fused, chas;
    double a, b, cval;
    if (!PyArg_ParseTuple(args, "w*niw*ddipdy*:fill", &key, &pos, &kind, &out, &a, &b, &fused, &chas, &cval, &p))
        return NULL;
    PyObject *result = NULL;
    mt_t g = {(uint32_t *)key.buf, pos};
    cache_t cache = {chas, cval};
    Py_ssize_t n = -1, np_ = 0;
    static const Py_ssize_t itemsize[] = {4, 4, 8, 4, 4, 8, 8, 8, 8, 8, 8, 1, 1, 1, 8, 8, 8};
    if (check_key(&key, pos) < 0)
        goto done;
    if (kind < 0 || kind > K_BINOMIAL) {
        PyErr_Format(PyExc_ValueError, "_crandom.fill: unknown kind %d", kind);
        goto done;
    }
    if ((n = items(&out, itemsize[kind], "out")) < 0)
        goto done;
    if (kind == K_BERN_PF || kind == K_BERN_PD || kind == K_POISSON || kind == K_GAMMA || kind == K_BINOMIAL) {
        np_ = items(&p, kind == K_BERN_PF ? 4 : 8, "p");
        if (np_ < 0)
            goto done;
        if (np_ != (kind == K_BINOMIAL ? 2 * n : n)) {
            PyErr_Format(PyExc_ValueError, "_crandom.fill: p holds %zd items for %zd outputs", np_, n);
            goto done;
        }
    }
    if ((kind == K_NORMFILL_F || kind == K_NORMFILL_H || kind == K_NORMFILL_D) && n < 16) {
        PyErr_Format(PyExc_ValueError, "_crandom.fill: normal_fill needs at least 16 items, got %zd", n);
        goto done;
    }
    Py_BEGIN_ALLOW_THREADS
    switch (kind) {
    case K_RAW32: {
        uint32_t *o = (uint32_t *)out.buf;
        for (Py_ssize_t i = 0; i < n; i++)
            o[i] = mt_next(&g);
        break;
    }
    case K_UNIFORM_F: {
        float *o = (float *)out.buf;
        const float from = (float)a, range = (float)b - (float)a;
        if (fused) {
            (have_fma() ? uniform_f_native : uniform_f_portable)(&g, o, n, from, range);
        } else {
            for (Py_ssize_t i = 0; i < n; i++) {
                const float x = (float)(mt_next(&g) & 0xffffffu) * (1.0f / 16777216.0f);
                o[i] = x * range + from;
            }
        }
        break;
    }
    case K_UNIFORM_D: {
        double *o = (double *)out.buf;
        const double range = b - a;
        if (fused) {
            (have_fma() ? uniform_d_native : uniform_d_portable)(&g, o, n, a, range);
        } else {
            for (Py_ssize_t i = 0; i < n; i++)
                o[i] = unit_d(&g) * range + a;
        }
        break;
    }
    case K_NORMFILL_F: {
        const fill16_fn fill16_float = pick_fill16(fused);
        float *o = (float *)out.buf;
        for (Py_ssize_t i = 0; i < n; i++)
            o[i] = unit_f(&g);
        for (Py_ssize_t i = 0; i + 16 <= n; i += 16)
            fill16_float(o + i, (float)a, (float)b);
        if (n % 16) {
            float *t = o + n - 16;
            for (int j = 0; j < 16; j++)
                t[j] = unit_f(&g);
            fill16_float(t, (float)a, (float)b);
        }
        break;
    }
    case K_NORMFILL_H: {
        const fill16_fn fill16_float = pick_fill16(fused);
        float *o = (float *)out.buf;
        float buf[16];
        for (Py_ssize_t i = 0; i + 16 <= n; i += 16) {
            for (int j = 0; j < 16; j++)
                buf[j] = unit_f(&g);
            fill16_float(buf, (float)a, (float)b);
            memcpy(o + i, buf, sizeof buf);
        }
        if (n % 16) {
            for (int j = 0; j < 16; j++)
                buf[j] = unit_f(&g);
            fill16_float(buf, (float)a, (float)b);
            memcpy(o + n - 16, buf, sizeof buf);
        }
        break;
    }
    case K_NORMFILL_D: {
        double *o = (double *)out.buf;
        for (Py_ssize_t i = 0; i < n; i++)
            o[i] = unit_d(&g);
        for (Py_ssize_t i = 0; i + 16 <= n; i += 16)
            fill16_double(o + i, a, b);
        if (n % 16) {
            double *t = o + n - 16;
            for (int j = 0; j < 16; j++)
                t[j] = unit_d(&g);
            fill16_double(t, a, b);
        }
        break;
    }
    case K_NORMAL:
    case K_LOGNORMAL: {
        double *o = (double *)out.buf;
        for (Py_ssize_t i = 0; i < n; i++) {
            const double v = normal_d(&g, &cache, a, b, fused);
            o[i] = kind == K_LOGNORMAL ? exp(v) : v;
        }
        break;
    }
    case K_EXPONENTIAL: {
        double *o = (double *)out.buf;
        for (Py_ssize_t i = 0; i < n; i++)
            o[i] = -1.0 / a * log1p(-unit_d(&g));
        break;
    }
    case K_GEOMETRIC: {
        double *o = (double *)out.buf;
        const double denom = log1p(-a);
        for (Py_ssize_t i = 0; i < n; i++)
            o[i] = ceil(log(unit_d(&g)) / denom);
        break;
    }
    case K_CAUCHY: {
        double *o = (double *)out.buf;
        for (Py_ssize_t i = 0; i < n; i++) {
            const double t = tan(M_PI * (unit_d(&g) - 0.5));
            o[i] = fused ? fma(b, t, a) : a + b * t; /* fused by the AVX2 build */
        }
        break;
    }
    case K_BERNOULLI: {
        uint8_t *o = (uint8_t *)out.buf;
        for (Py_ssize_t i = 0; i < n; i++)
            o[i] = unit_d(&g) < a;
        break;
    }
    case K_BERN_PF: {
        uint8_t *o = (uint8_t *)out.buf;
        const float *pp = (const float *)p.buf;
        for (Py_ssize_t i = 0; i < n; i++)
            o[i] = unit_f(&g) < pp[i];
        break;
    }
    case K_BERN_PD: {
        uint8_t *o = (uint8_t *)out.buf;
        const double *pp = (const double *)p.buf;
        for (Py_ssize_t i = 0; i < n; i++)
            o[i] = unit_d(&g) < pp[i];
        break;
    }
    case K_POISSON: {
        double *o = (double *)out.buf;
        const double *pp = (const double *)p.buf;
        for (Py_ssize_t i = 0; i < n; i++)
            o[i] = poisson_one(&g, pp[i]);
        break;
    }
    case K_GAMMA: {
        double *o = (double *)out.buf;
        const double *pp = (const double *)p.buf;
        for (Py_ssize_t i = 0; i < n; i++)
            o[i] = gamma_one(&g, &cache, pp[i], a != 0);
        break;
    }
    case K_BINOMIAL: {
        double *o = (double *)out.buf;
        const double *pp = (const double *)p.buf;
        for (Py_ssize_t i = 0; i < n; i++)
            o[i] = binomial_one(&g, pp[i], pp[n + i]);
        break;
    }
    }
    Py_END_ALLOW_THREADS
    result = Py_BuildValue("nid", g.pos, cache.has, cache.value);
done:
    PyBuffer_Release(&key);
    PyBuffer_Release(&out);
    PyBuffer_Release(&p);
    return result;
}

/* integers(key, pos, out_int64, wide, range, base) -> pos: int64((draw % range) + base), range 0 = no modulo;
 * ``wide`` draws random64() instead of random(). */
static PyObject *py_integers(PyObject *self, PyObject *args) {
    Py_buffer key, out;
    Py_ssize_t pos;
    int wide;
    unsigned long long range;
    long long base;
    if (!PyArg_ParseTuple(args, "w*nw*iKL:integers", &key, &pos, &out, &wide, &range, &base))
        return NULL;
    PyObject *result = NULL;
    mt_t g = {(uint32_t *)key.buf, pos};
    Py_ssize_t n;
    if (check_key(&key, pos) == 0 && (n = items(&out, 8, "out")) >= 0) {
        int64_t *o = (int64_t *)out.buf;
        Py_BEGIN_ALLOW_THREADS
        for (Py_ssize_t i = 0; i < n; i++) {
            uint64_t v = wide ? mt_next64(&g) : (uint64_t)mt_next(&g);
            if (range)
                v %= range;
            o[i] = (int64_t)(v + (uint64_t)base); /* two's complement wrap, as ATen's int64 cast */
        }
        Py_END_ALLOW_THREADS
        result = PyLong_FromSsize_t(g.pos);
    }
    PyBuffer_Release(&key);
    PyBuffer_Release(&out);
    return result;
}

/* randperm(key, pos, out_int64) -> pos: randperm_cpu's two algorithms over out's length n. */
static PyObject *py_randperm(PyObject *self, PyObject *args) {
    Py_buffer key, out;
    Py_ssize_t pos;
    if (!PyArg_ParseTuple(args, "w*nw*:randperm", &key, &pos, &out))
        return NULL;
    PyObject *result = NULL;
    mt_t g = {(uint32_t *)key.buf, pos};
    Py_ssize_t n;
    if (check_key(&key, pos) == 0 && (n = items(&out, 8, "out")) >= 0) {
        int64_t *r = (int64_t *)out.buf;
        Py_BEGIN_ALLOW_THREADS
        if ((uint64_t)n < UINT32_MAX / 20) {
            for (Py_ssize_t i = 0; i < n; i++)
                r[i] = i;
            for (Py_ssize_t i = 0; i < n - 1; i++) {
                const int64_t z = (int64_t)(mt_next(&g) % (uint64_t)(n - i));
                const int64_t sav = r[i];
                r[i] = r[z + i];
                r[z + i] = sav;
            }
        } else {
            for (Py_ssize_t i = 0; i < n; i++) {
                const int64_t z = (int64_t)(mt_next64(&g) % (uint64_t)(i + 1));
                r[i] = i;
                r[i] = r[z];
                r[z] = i;
            }
        }
        Py_END_ALLOW_THREADS
        result = PyLong_FromSsize_t(g.pos);
    }
    PyBuffer_Release(&key);
    PyBuffer_Release(&out);
    return result;
}

static PyMethodDef methods[] = {
    {"fill", py_fill, METH_VARARGS,
     "fill(key, pos, kind, out, a, b, fma, cache_has, cache_value, p) -> (pos, cache_has, cache_value)."},
    {"integers", py_integers, METH_VARARGS, "integers(key, pos, out, wide, range, base) -> pos."},
    {"randperm", py_randperm, METH_VARARGS, "randperm(key, pos, out) -> pos."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "torchplug_cpu._crandom",
                                    "PyTorch's CPU random stream (mt19937 and its distributions) in C.", -1,
                                    methods};

PyMODINIT_FUNC PyInit__crandom(void) { return PyModule_Create(&module); }
