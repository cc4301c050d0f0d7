/* torchplug_cpu._ckernels: the sliding-window loops NumPy cannot express as one fast pass.
 *
 * im2col/col2im (2-d convolution's column matrix and its adjoint), 2-d max pooling with
 * indices (forward and backward), softmax/log_softmax and nll_loss with their backward, and
 * relu's backward select.  On small feature maps NumPy runs these as strided copies
 * over rows of a few elements, or as a dozen whole-array passes, and spends most of its time
 * in per-row loop overhead; here each is one pass in C.  A small pthread pool runs large
 * float32/float64 add/sub/mul/div, neg/abs/sqrt/square/relu, sums, dim reductions (reduce_dim),
 * softmax rows and copies on all cores (see ``parallel_for``; torchplug_cpu._parallel decides which
 * calls take it).
 *
 * Optional: built when a compiler is present (backends/cpu/setup.py marks it optional) and
 * used through torchplug_cpu._native, whose callers keep their NumPy versions as the fallback.
 * Arrays arrive through the buffer protocol (C-contiguous, checked by size here and prepared by
 * the callers), so no NumPy headers are needed.  ``dbl`` selects float64 (else float32).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <pthread.h>
#include <sched.h>
#include <math.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

/* Defence in depth: every entry point checks its own arguments, whatever its Python callers
 * checked.  Buffers must hold exactly the items the geometry describes (from the buffer
 * protocol's len), be aligned for their item type, sizes are non-negative, kernels, strides and
 * dilations positive, padding non-negative, and every size product or window extent is computed
 * with overflow checks, so that no argument can make a kernel touch memory outside its buffers:
 * a bad one raises ValueError or OverflowError (IndexError for a bad index or target). */

typedef struct {
    long long n, c, h, w, kh, kw, sh, sw, ph, pw, dh, dw, oh, ow;
} geom_t;

/* The thread pool (defined below with its description): runs fn over [0, n) in ranges. */
typedef void (*range_fn)(void *ctx, long long begin, long long end, int part);
static int parallel_for(range_fn fn, void *ctx, long long n, long long grain);

/* a * b and a + b on 64-bit sizes; -1 with OverflowError set when the result does not fit. */
static int mul64(long long a, long long b, long long *out, const char *what) {
    if (__builtin_mul_overflow(a, b, out)) {
        PyErr_Format(PyExc_OverflowError, "_ckernels: %s overflows a 64-bit size (%lld * %lld)", what, a, b);
        return -1;
    }
    return 0;
}

static int add64(long long a, long long b, long long *out, const char *what) {
    if (__builtin_add_overflow(a, b, out)) {
        PyErr_Format(PyExc_OverflowError, "_ckernels: %s overflows a 64-bit size (%lld + %lld)", what, a, b);
        return -1;
    }
    return 0;
}

/* The product of ``k`` sizes, each checked to be non-negative first. */
static int product(const char *what, long long *out, int k, const long long *v) {
    long long p = 1;
    for (int i = 0; i < k; i++) {
        if (v[i] < 0) {
            PyErr_Format(PyExc_ValueError, "_ckernels: %s has a negative size (%lld)", what, v[i]);
            return -1;
        }
        if (mul64(p, v[i], &p, what) < 0)
            return -1;
    }
    *out = p;
    return 0;
}

/* Checks that a buffer holds exactly ``count`` items of ``itemsize`` bytes, aligned for them. */
static int check_size(Py_buffer *b, const char *what, long long count, Py_ssize_t itemsize) {
    long long bytes;
    if (count < 0) {
        PyErr_Format(PyExc_ValueError, "_ckernels: %s: negative item count %lld", what, count);
        return -1;
    }
    if (mul64(count, (long long)itemsize, &bytes, what) < 0)
        return -1;
    if ((long long)b->len != bytes) {
        PyErr_Format(PyExc_ValueError, "_ckernels: %s holds %zd bytes, expected %lld items of %zd bytes",
                     what, b->len, count, itemsize);
        return -1;
    }
    if (bytes && (uintptr_t)b->buf % (uintptr_t)itemsize) {
        PyErr_Format(PyExc_ValueError, "_ckernels: %s is not aligned to its %zd-byte items; pass an aligned array",
                     what, itemsize);
        return -1;
    }
    return 0;
}

/* The number of ``itemsize``-byte items a flat buffer holds (the elementwise, reduction and row kernels
 * take their length from their first buffer): the length must be a whole number of items and the
 * buffer aligned for them; ``count`` receives it.  The other buffers of a call are then checked
 * against that count with check_size. */
static int buffer_items(Py_buffer *b, const char *what, Py_ssize_t itemsize, long long *count) {
    if (itemsize <= 0 || b->len % itemsize) {
        PyErr_Format(PyExc_ValueError, "_ckernels: %s holds %zd bytes, not a whole number of %zd-byte items", what,
                     b->len, itemsize);
        return -1;
    }
    *count = (long long)(b->len / itemsize);
    return check_size(b, what, *count, itemsize);
}

static int parse_geom(PyObject *g, geom_t *out) {
    if (!PyArg_ParseTuple(g, "LLLLLLLLLLLLLL;geometry is (N, C, H, W, KH, KW, SH, SW, PH, PW, DH, DW, OH, OW)",
                          &out->n, &out->c, &out->h, &out->w, &out->kh, &out->kw, &out->sh, &out->sw, &out->ph,
                          &out->pw, &out->dh, &out->dw, &out->oh, &out->ow))
        return 0;
    /* a one-tap kernel's dilation never applies (PyTorch accepts any): 1 keeps the loops' steps small */
    if (out->kh == 1 && out->dh > 0)
        out->dh = 1;
    if (out->kw == 1 && out->dw > 0)
        out->dw = 1;
    return 1;
}

/* One spatial axis of a window geometry: input ``size``, ``out`` windows of ``k`` taps ``d`` apart,
 * ``s`` apart, ``p`` padding.  The loops compute tap positions from -p up to
 * (out - 1) * s - p + (k - 1) * d, step one more ``d`` past the last, and add them to row offsets
 * below ``plane``: checks that (out - 1) * s + (k - 1) * d + d + 1 + plane fits in 64 bits, so no
 * index arithmetic can overflow. */
static int check_axis(const char *op, const char *axis, long long size, long long k, long long s, long long p,
                      long long d, long long out, long long plane) {
    long long last, extent, reach;
    if (k < 1 || s < 1 || d < 1) {
        PyErr_Format(PyExc_ValueError, "_ckernels.%s: kernel (%lld), stride (%lld) and dilation (%lld) of %s must "
                     "be positive", op, k, s, d, axis);
        return -1;
    }
    if (p < 0) {
        PyErr_Format(PyExc_ValueError, "_ckernels.%s: padding of %s must be non-negative, got %lld", op, axis, p);
        return -1;
    }
    if (mul64(out > 0 ? out - 1 : 0, s, &last, op) < 0 || mul64(k - 1, d, &extent, op) < 0 ||
        add64(last, extent, &reach, op) < 0 || add64(reach, d, &reach, op) < 0 || add64(reach, 1, &reach, op) < 0 ||
        add64(reach, plane, &reach, op) < 0)
        return -1;
    (void)size;
    return 0;
}

/* The checks every window geometry needs (sizes, positive kernel/stride/dilation, padding, no
 * overflow); ``image``/``outputs`` receive N*C*H*W and N*C*OH*OW. */
static int check_geom(const char *op, const geom_t *g, long long *image, long long *outputs) {
    const long long in_sizes[4] = {g->n, g->c, g->h, g->w}, out_sizes[4] = {g->n, g->c, g->oh, g->ow};
    long long plane;
    if (product("input size", image, 4, in_sizes) < 0 || product("output size", outputs, 4, out_sizes) < 0 ||
        mul64(g->h, g->w, &plane, op) < 0)
        return -1;
    return check_axis(op, "height", g->h, g->kh, g->sh, g->ph, g->dh, g->oh, plane) < 0 ||
                   check_axis(op, "width", g->w, g->kw, g->sw, g->pw, g->dw, g->ow, plane) < 0
               ? -1
               : 0;
}

/* Max pooling's own preconditions (PyTorch's): padding at most half the dilated kernel, and no
 * more windows than PyTorch's pooling_output_shape gives with ceil_mode (each starts inside the
 * input or its left padding). */
static int check_pool_axis(const char *axis, long long size, long long k, long long s, long long p, long long d,
                           long long out) {
    const long long effective = (k - 1) * d + 1; /* fits: check_axis ran first */
    long long first_inside, span;
    /* the kernel computes (p + s - 1) / s and size - 1 - (k - 1) * d + p; this, size + 2 * p - effective */
    if (add64(p, s, &first_inside, "max_pool2d") < 0 || add64(size, p, &span, "max_pool2d") < 0 ||
        add64(span, p, &span, "max_pool2d") < 0)
        return -1;
    span -= effective;
    if (p > effective / 2) {
        PyErr_Format(PyExc_ValueError, "_ckernels.max_pool2d: padding %lld of %s exceeds half the dilated kernel "
                     "(%lld)", p, axis, effective);
        return -1;
    }
    /* pooling_output_shape with ceil_mode: ceil(span / s) + 1 (C's division rounds a negative span up) */
    long long most = span / s + (span > 0 && span % s != 0) + 1;
    /* ... less one unless the last window starts inside the input or its left padding: (most - 1) * s < size + p */
    if (most > 0 && most - 1 >= (size + p) / s + ((size + p) % s != 0))
        most--;
    if (most < 0)
        most = 0;
    if (out > 0 && size < 1) {
        PyErr_Format(PyExc_ValueError, "_ckernels.max_pool2d: %lld windows over an empty %s", out, axis);
        return -1;
    }
    if (out > most) {
        PyErr_Format(PyExc_ValueError, "_ckernels.max_pool2d: %lld windows over %s %lld (kernel %lld, stride %lld, "
                     "padding %lld, dilation %lld) are more than the %lld that fit", out, axis, size, k, s, p, d,
                     most);
        return -1;
    }
    return 0;
}

/* A window's first row and column inside the input lie below max(H, DH) and max(W, DW) (a window of
 * padding only starts past the input, as in PyTorch): their flat offset row * W + column must fit. */
static int check_pool_starts(const geom_t *g) {
    long long at;
    if (mul64(g->h > g->dh ? g->h : g->dh, g->w, &at, "max_pool2d") < 0 ||
        add64(at, g->w > g->dw ? g->w : g->dw, &at, "max_pool2d") < 0)
        return -1;
    return 0;
}

/* cols[(c*KH + ki)*KW + kj, (n*OH + oy)*OW + ox] = x[n, c, oy*SH - PH + ki*DH, ox*SW - PW + kj*DW] (0 outside) */
#define IM2COL(T)                                                                                             \
    static void im2col_##T(const T *x, T *cols, const geom_t *g) {                                           \
        const long long L = g->oh * g->ow, NL = g->n * L;                                                    \
        for (long long c = 0; c < g->c; c++)                                                                 \
            for (long long ki = 0; ki < g->kh; ki++)                                                         \
                for (long long kj = 0; kj < g->kw; kj++) {                                                   \
                    T *row = cols + ((c * g->kh + ki) * g->kw + kj) * NL;                                    \
                    for (long long n = 0; n < g->n; n++) {                                                   \
                        const T *plane = x + (n * g->c + c) * g->h * g->w;                                   \
                        T *dst = row + n * L;                                                                \
                        for (long long oy = 0; oy < g->oh; oy++) {                                           \
                            const long long iy = oy * g->sh - g->ph + ki * g->dh;                            \
                            T *d = dst + oy * g->ow;                                                         \
                            if (iy < 0 || iy >= g->h) {                                                      \
                                for (long long ox = 0; ox < g->ow; ox++) d[ox] = 0;                          \
                                continue;                                                                    \
                            }                                                                                \
                            const T *src = plane + iy * g->w;                                                \
                            const long long off = kj * g->dw - g->pw;                                        \
                            if (g->sw == 1 && off >= 0 && off + g->ow <= g->w) {                             \
                                const T *s = src + off; /* a plain loop: rows are a few elements long */     \
                                for (long long ox = 0; ox < g->ow; ox++) d[ox] = s[ox];                      \
                                continue;                                                                    \
                            }                                                                                \
                            for (long long ox = 0; ox < g->ow; ox++) {                                       \
                                const long long ix = ox * g->sw + off;                                       \
                                d[ox] = (ix >= 0 && ix < g->w) ? src[ix] : 0;                                \
                            }                                                                                \
                        }                                                                                    \
                    }                                                                                        \
                }                                                                                            \
    }

/* The adjoint: dx[n, c, iy, ix] += cols[...] for every window position inside the input. */
#define COL2IM(T)                                                                                             \
    static void col2im_##T(const T *cols, T *dx, const geom_t *g) {                                          \
        const long long L = g->oh * g->ow, NL = g->n * L;                                                    \
        for (long long c = 0; c < g->c; c++)                                                                 \
            for (long long ki = 0; ki < g->kh; ki++)                                                         \
                for (long long kj = 0; kj < g->kw; kj++) {                                                   \
                    const T *row = cols + ((c * g->kh + ki) * g->kw + kj) * NL;                              \
                    for (long long n = 0; n < g->n; n++) {                                                   \
                        T *plane = dx + (n * g->c + c) * g->h * g->w;                                        \
                        const T *src = row + n * L;                                                          \
                        for (long long oy = 0; oy < g->oh; oy++) {                                           \
                            const long long iy = oy * g->sh - g->ph + ki * g->dh;                            \
                            if (iy < 0 || iy >= g->h) continue;                                              \
                            T *d = plane + iy * g->w;                                                        \
                            const T *s = src + oy * g->ow;                                                   \
                            const long long off = kj * g->dw - g->pw;                                        \
                            for (long long ox = 0; ox < g->ow; ox++) {                                       \
                                const long long ix = ox * g->sw + off;                                       \
                                if (ix >= 0 && ix < g->w) d[ix] += s[ox];                                    \
                            }                                                                                \
                        }                                                                                    \
                    }                                                                                        \
                }                                                                                            \
    }

/* PyTorch's cpu_max_pool scan: the window's first in-bounds element is the initial index, a
 * value wins when strictly greater or NaN (so the first maximum, or the last NaN), scanning the
 * window row by row.  Output columns whose windows lie inside the input run the scan for the
 * whole output row at once (independent updates the CPU can overlap, instead of one dependent
 * chain per window); the border columns (padding, ceil_mode) take the clamped per-window scan. */
#define MAXPOOL(T)                                                                                            \
    static inline void max_window_##T(const T *plane, const geom_t *g, long long y0, long long y1,           \
                                      long long ox, T *out, int64_t *idx) {                                 \
        long long x0 = ox * g->sw - g->pw;                                                                   \
        const long long x1 = x0 + (g->kw - 1) * g->dw + 1 < g->w ? x0 + (g->kw - 1) * g->dw + 1 : g->w;     \
        while (x0 < 0) x0 += g->dw;                                                                          \
        long long best_at = y0 * g->w + x0;                                                                  \
        T best = -INFINITY;                                                                                  \
        for (long long iy = y0; iy < y1; iy += g->dh)                                                        \
            for (long long ix = x0; ix < x1; ix += g->dw) {                                                  \
                const long long at = iy * g->w + ix;                                                         \
                const T v = plane[at];                                                                       \
                if (v > best || v != v) {                                                                    \
                    best = v;                                                                                \
                    best_at = at;                                                                            \
                }                                                                                            \
            }                                                                                                \
        *out = best;                                                                                         \
        *idx = best_at;                                                                                      \
    }                                                                                                        \
    static void max_pool_##T(const T *x, T *out, int64_t *idx, long long planes, const geom_t *g) {          \
        /* [lo, hi): output columns whose whole window is inside the input's columns */                     \
        long long lo = (g->pw + g->sw - 1) / g->sw;                                                          \
        long long hi = (g->w - 1 - (g->kw - 1) * g->dw + g->pw) / g->sw + 1;                                 \
        if (g->w - 1 - (g->kw - 1) * g->dw + g->pw < 0) hi = 0;                                              \
        if (hi > g->ow) hi = g->ow;                                                                          \
        if (lo > hi) lo = hi;                                                                                \
        for (long long p = 0; p < planes; p++) {                                                             \
            const T *plane = x + p * g->h * g->w;                                                            \
            for (long long oy = 0; oy < g->oh; oy++) {                                                       \
                long long y0 = oy * g->sh - g->ph;                                                           \
                const long long y1 = y0 + (g->kh - 1) * g->dh + 1 < g->h ? y0 + (g->kh - 1) * g->dh + 1 : g->h; \
                while (y0 < 0) y0 += g->dh;                                                                  \
                T *orow = out + (p * g->oh + oy) * g->ow;                                                    \
                int64_t *irow = idx + (p * g->oh + oy) * g->ow;                                              \
                for (long long ox = 0; ox < lo; ox++) max_window_##T(plane, g, y0, y1, ox, orow + ox, irow + ox); \
                for (long long ox = hi > lo ? hi : lo; ox < g->ow; ox++)                                     \
                    max_window_##T(plane, g, y0, y1, ox, orow + ox, irow + ox);                              \
                if (hi <= lo) continue;                                                                      \
                for (long long ox = lo; ox < hi; ox++) {                                                     \
                    orow[ox] = -INFINITY;                                                                    \
                    irow[ox] = y0 * g->w + ox * g->sw - g->pw;                                               \
                }                                                                                            \
                for (long long iy = y0; iy < y1; iy += g->dh)                                                \
                    for (long long kj = 0; kj < g->kw; kj++) {                                               \
                        const long long base = iy * g->w + kj * g->dw - g->pw;                               \
                        const T *src = plane + base;                                                         \
                        for (long long ox = lo; ox < hi; ox++) {                                             \
                            const T v = src[ox * g->sw];                                                     \
                            const int take = (v > orow[ox]) | (v != v);                                      \
                            orow[ox] = take ? v : orow[ox];                                                  \
                            irow[ox] = take ? base + ox * g->sw : irow[ox];                                  \
                        }                                                                                    \
                    }                                                                                        \
            }                                                                                                \
        }                                                                                                    \
    }

/* Windows inside the input (no padding, dilation 1, no partial ceil_mode window): the same scan
 * with the window held in registers.  Always inlined, so the common shapes below get their
 * kernel and stride as constants (the loops unroll; runtime-sized windows of 2-3 elements
 * spend most of their time in loop overhead). */
#define MAXPOOL_VALID(T)                                                                                      \
    static inline __attribute__((always_inline)) void max_pool_valid_##T(                                    \
        const T *x, T *out, int64_t *idx, long long planes, const geom_t *g, const long long KH,             \
        const long long KW, const long long SH, const long long SW) {                                        \
        const long long W = g->w;                                                                            \
        for (long long p = 0; p < planes; p++) {                                                             \
            const T *plane = x + p * g->h * W;                                                               \
            T *o = out + p * g->oh * g->ow;                                                                  \
            int64_t *io = idx + p * g->oh * g->ow;                                                           \
            for (long long oy = 0; oy < g->oh; oy++)                                                         \
                for (long long ox = 0; ox < g->ow; ox++) {                                                   \
                    const long long at0 = oy * SH * W + ox * SW;                                             \
                    T best = plane[at0];                                                                     \
                    long long best_at = at0;                                                                 \
                    for (long long ki = 0; ki < KH; ki++)                                                    \
                        for (long long kj = (ki == 0); kj < KW; kj++) {                                      \
                            const long long at = at0 + ki * W + kj;                                          \
                            const T v = plane[at];                                                           \
                            const int take = (v > best) | (v != v);                                          \
                            best = take ? v : best;                                                          \
                            best_at = take ? at : best_at;                                                   \
                        }                                                                                    \
                    *o++ = best;                                                                             \
                    *io++ = best_at;                                                                         \
                }                                                                                            \
        }                                                                                                    \
    }                                                                                                        \
    static void max_pool_dispatch_##T(const T *x, T *out, int64_t *idx, long long planes, const geom_t *g) { \
        const int valid = g->ph == 0 && g->pw == 0 && g->dh == 1 && g->dw == 1 &&                            \
                          (g->oh - 1) * g->sh + g->kh <= g->h && (g->ow - 1) * g->sw + g->kw <= g->w;       \
        if (valid && g->kh == 2 && g->kw == 2 && g->sh == 2 && g->sw == 2)                                   \
            max_pool_valid_##T(x, out, idx, planes, g, 2, 2, 2, 2);                                          \
        else if (valid && g->kh == 3 && g->kw == 3 && g->sh == 2 && g->sw == 2)                              \
            max_pool_valid_##T(x, out, idx, planes, g, 3, 3, 2, 2);                                          \
        else if (valid && g->kh == 3 && g->kw == 3 && g->sh == 1 && g->sw == 1)                              \
            max_pool_valid_##T(x, out, idx, planes, g, 3, 3, 1, 1);                                          \
        else if (valid && g->kh == 1 && g->kw == 2 && g->sh == 1 && g->sw == 2) /* max_pool1d(2) */          \
            max_pool_valid_##T(x, out, idx, planes, g, 1, 2, 1, 2);                                          \
        else /* padding, dilation, partial windows, other shapes: the general scan */                       \
            max_pool_##T(x, out, idx, planes, g);                                                            \
    }

/* grad_input[p, idx[p, o]] += grad_output[p, o]; returns the first out-of-range index position, or -1. */
#define MAXPOOL_BWD(T)                                                                                        \
    static long long max_pool_backward_##T(const T *go, const int64_t *idx, T *gi, long long planes,          \
                                           long long out_per_plane, long long in_per_plane) {                \
        for (long long p = 0; p < planes; p++) {                                                             \
            const T *gp = go + p * out_per_plane;                                                            \
            const int64_t *ip = idx + p * out_per_plane;                                                     \
            T *dst = gi + p * in_per_plane;                                                                  \
            for (long long o = 0; o < out_per_plane; o++) {                                                  \
                const int64_t at = ip[o];                                                                    \
                if (at < 0 || at >= in_per_plane) return p * out_per_plane + o;                              \
                dst[at] += gp[o];                                                                            \
            }                                                                                                \
        }                                                                                                    \
        return -1;                                                                                           \
    }

/* relu's backward: out = x <= threshold ? 0 : g (NaN inputs keep g, as in PyTorch).  NumPy needs a
 * select (np.where, slow on random masks) or a multiply plus a NaN/inf repair pass. */
#define THRESHOLD_BWD(T)                                                                                      \
    static void threshold_backward_##T(const T *restrict x, const T *restrict g, T *restrict out, T threshold, \
                                       Py_ssize_t n) {                                                       \
        for (Py_ssize_t i = 0; i < n; i++) {                                                                 \
            const T gi = g[i]; /* loaded unconditionally, so the select vectorizes (no branch) */            \
            out[i] = x[i] <= threshold ? (T)0 : gi;                                                          \
        }                                                                                                    \
    }

THRESHOLD_BWD(float)
THRESHOLD_BWD(double)
/* softmax / log_softmax over the rows of a (rows, n) array, and their backward.  NumPy needs five
 * whole-array passes with reductions over short rows (a 10-class softmax is dominated by them);
 * here each row is one pass for the maximum and one or two more.  NaN and inf follow the same
 * arithmetic as the NumPy version (a NaN maximum poisons the row). */
#define SOFTMAX(T, EXP, LOG)                                                                                  \
    static void softmax_##T(const T *x, T *out, long long rows, long long n, int log_) {                    \
        for (long long r = 0; r < rows; r++) {                                                               \
            const T *xs = x + r * n;                                                                         \
            T *os = out + r * n;                                                                             \
            T m = xs[0];                                                                                     \
            for (long long k = 1; k < n; k++) m = (xs[k] > m || xs[k] != xs[k]) ? xs[k] : m;                 \
            double sum = 0;                                                                                  \
            if (log_) {                                                                                      \
                for (long long k = 0; k < n; k++) sum += EXP(xs[k] - m);                                     \
                const T lse = (T)LOG((T)sum);                                                                \
                for (long long k = 0; k < n; k++) os[k] = (xs[k] - m) - lse;                                 \
            } else {                                                                                         \
                for (long long k = 0; k < n; k++) {                                                          \
                    os[k] = EXP(xs[k] - m);                                                                  \
                    sum += os[k];                                                                            \
                }                                                                                            \
                const T total = (T)sum;                                                                      \
                for (long long k = 0; k < n; k++) os[k] /= total;                                            \
            }                                                                                                \
        }                                                                                                    \
    }                                                                                                        \
    static void softmax_backward_##T(const T *g, const T *y, T *out, long long rows, long long n, int log_) { \
        for (long long r = 0; r < rows; r++) {                                                               \
            const T *gs = g + r * n, *ys = y + r * n;                                                        \
            T *os = out + r * n;                                                                             \
            double sum = 0;                                                                                  \
            if (log_) {                                                                                      \
                for (long long k = 0; k < n; k++) sum += gs[k];                                              \
                for (long long k = 0; k < n; k++) os[k] = gs[k] - EXP(ys[k]) * (T)sum;                       \
            } else {                                                                                         \
                for (long long k = 0; k < n; k++) sum += gs[k] * ys[k];                                      \
                for (long long k = 0; k < n; k++) os[k] = gs[k] * ys[k] - ys[k] * (T)sum;                    \
            }                                                                                                \
        }                                                                                                    \
    }

SOFTMAX(float, expf, logf)
SOFTMAX(double, exp, log)
/* nll_loss without class weights over (rows, n) log-probabilities: the negated sum of each row's
 * target entry and the number of rows not ignored (accumulated in double, as PyTorch's CPU
 * kernel accumulates float in its double acc_type); the backward writes ``value`` at each
 * counted row's target.  Both return the first row whose target is out of range, or -1. */
#define NLL(T)                                                                                                \
    static long long nll_##T(const T *x, const int64_t *t, long long rows, long long n, long long ignore,    \
                             double *total, long long *count) {                                             \
        double sum = 0;                                                                                      \
        long long counted = 0;                                                                               \
        for (long long r = 0; r < rows; r++) {                                                               \
            const int64_t k = t[r];                                                                          \
            if (k == ignore) continue;                                                                       \
            if (k < 0 || k >= n) return r;                                                                   \
            sum -= x[r * n + k];                                                                             \
            counted++;                                                                                       \
        }                                                                                                    \
        *total = sum;                                                                                        \
        *count = counted;                                                                                    \
        return -1;                                                                                           \
    }                                                                                                        \
    static long long nll_backward_##T(const int64_t *t, T *gi, long long rows, long long n, long long ignore, \
                                      T value) {                                                             \
        for (long long r = 0; r < rows; r++) {                                                               \
            const int64_t k = t[r];                                                                          \
            if (k == ignore) continue;                                                                       \
            if (k < 0 || k >= n) return r;                                                                   \
            gi[r * n + k] = value;                                                                           \
        }                                                                                                    \
        return -1;                                                                                           \
    }

NLL(float)
NLL(double)
IM2COL(float)
IM2COL(double)
COL2IM(float)
COL2IM(double)
MAXPOOL(float)
MAXPOOL(double)
MAXPOOL_VALID(float)
MAXPOOL_VALID(double)
MAXPOOL_BWD(float)
MAXPOOL_BWD(double)

/* im2col(x, cols, dbl, geometry) fills the column matrix; col2im(cols, dx, dbl, geometry) accumulates
 * it into dx (the caller zeroes dx).  geometry = (N, C, H, W, KH, KW, SH, SW, PH, PW, DH, DW, OH, OW). */
static PyObject *run_columns(PyObject *args, int to_columns) {
    Py_buffer src, dst;
    int dbl;
    PyObject *gt;
    geom_t g;
    const char *op = to_columns ? "im2col" : "col2im";
    if (!PyArg_ParseTuple(args, to_columns ? "y*w*pO!:im2col" : "y*w*pO!:col2im", &src, &dst, &dbl, &PyTuple_Type,
                          &gt))
        return NULL;
    PyObject *result = NULL;
    const Py_ssize_t size = dbl ? sizeof(double) : sizeof(float);
    long long image, outputs, columns;
    if (parse_geom(gt, &g) && check_geom(op, &g, &image, &outputs) == 0 && mul64(outputs, g.kh, &columns, op) == 0 &&
        mul64(columns, g.kw, &columns, op) == 0) {
        Py_buffer *img = to_columns ? &src : &dst, *cols = to_columns ? &dst : &src;
        if (check_size(img, to_columns ? "input" : "input gradient", image, size) == 0 &&
            check_size(cols, "columns", columns, size) == 0) {
            if (image && columns) {
                Py_BEGIN_ALLOW_THREADS
                if (to_columns && dbl)
                    im2col_double((const double *)src.buf, (double *)dst.buf, &g);
                else if (to_columns)
                    im2col_float((const float *)src.buf, (float *)dst.buf, &g);
                else if (dbl)
                    col2im_double((const double *)src.buf, (double *)dst.buf, &g);
                else
                    col2im_float((const float *)src.buf, (float *)dst.buf, &g);
                Py_END_ALLOW_THREADS
            } else if (to_columns && columns) { /* an empty input: every column entry is padding */
                memset(dst.buf, 0, (size_t)dst.len);
            }
            result = Py_NewRef(Py_None);
        }
    }
    PyBuffer_Release(&src);
    PyBuffer_Release(&dst);
    return result;
}

static PyObject *py_im2col(PyObject *self, PyObject *args) { return run_columns(args, 1); }

static PyObject *py_col2im(PyObject *self, PyObject *args) { return run_columns(args, 0); }

/* max_pool2d(x, out, indices, dbl, geometry): N*C planes; indices are int64 offsets within a plane */
static PyObject *py_max_pool2d(PyObject *self, PyObject *args) {
    Py_buffer x, out, idx;
    int dbl;
    PyObject *gt;
    geom_t g;
    if (!PyArg_ParseTuple(args, "y*w*w*pO!:max_pool2d", &x, &out, &idx, &dbl, &PyTuple_Type, &gt))
        return NULL;
    PyObject *result = NULL;
    const Py_ssize_t size = dbl ? sizeof(double) : sizeof(float);
    long long image, outputs;
    if (parse_geom(gt, &g) && check_geom("max_pool2d", &g, &image, &outputs) == 0 &&
        check_pool_axis("height", g.h, g.kh, g.sh, g.ph, g.dh, g.oh) == 0 &&
        check_pool_axis("width", g.w, g.kw, g.sw, g.pw, g.dw, g.ow) == 0 && check_pool_starts(&g) == 0 &&
        check_size(&x, "input", image, size) == 0 &&
        check_size(&out, "output", outputs, size) == 0 && check_size(&idx, "indices", outputs, sizeof(int64_t)) == 0) {
        if (outputs) {
            const long long planes = g.n * g.c; /* divides ``outputs``: no overflow */
            Py_BEGIN_ALLOW_THREADS
            if (dbl)
                max_pool_dispatch_double((const double *)x.buf, (double *)out.buf, (int64_t *)idx.buf, planes, &g);
            else
                max_pool_dispatch_float((const float *)x.buf, (float *)out.buf, (int64_t *)idx.buf, planes, &g);
            Py_END_ALLOW_THREADS
        }
        result = Py_NewRef(Py_None);
    }
    PyBuffer_Release(&x);
    PyBuffer_Release(&out);
    PyBuffer_Release(&idx);
    return result;
}

/* max_pool_backward(grad_output, indices, grad_input, dbl, planes, out_per_plane, in_per_plane):
 * accumulates into grad_input (the caller zeroes it); an index outside its plane raises IndexError */
static PyObject *py_max_pool_backward(PyObject *self, PyObject *args) {
    Py_buffer go, idx, gi;
    int dbl;
    long long planes, out_pp, in_pp;
    if (!PyArg_ParseTuple(args, "y*y*w*pLLL:max_pool_backward", &go, &idx, &gi, &dbl, &planes, &out_pp, &in_pp))
        return NULL;
    PyObject *result = NULL;
    const Py_ssize_t size = dbl ? sizeof(double) : sizeof(float);
    const long long out_sizes[2] = {planes, out_pp}, in_sizes[2] = {planes, in_pp};
    long long outputs, inputs;
    if (product("grad_output size", &outputs, 2, out_sizes) == 0 && product("grad_input size", &inputs, 2, in_sizes) == 0 &&
        check_size(&go, "grad_output", outputs, size) == 0 && check_size(&idx, "indices", outputs, sizeof(int64_t)) == 0 &&
        check_size(&gi, "grad_input", inputs, size) == 0) {
        long long bad = -1;
        if (outputs) {
            Py_BEGIN_ALLOW_THREADS
            if (dbl)
                bad = max_pool_backward_double((const double *)go.buf, (const int64_t *)idx.buf, (double *)gi.buf,
                                               planes, out_pp, in_pp);
            else
                bad = max_pool_backward_float((const float *)go.buf, (const int64_t *)idx.buf, (float *)gi.buf, planes,
                                              out_pp, in_pp);
            Py_END_ALLOW_THREADS
        }
        if (bad >= 0)
            PyErr_Format(PyExc_IndexError,
                         "max pooling backward: index %lld (at flat position %lld of indices) is outside its "
                         "input plane of %lld elements; pass the indices returned by the forward",
                         (long long)((const int64_t *)idx.buf)[bad], bad, in_pp);
        else
            result = Py_NewRef(Py_None);
    }
    PyBuffer_Release(&go);
    PyBuffer_Release(&idx);
    PyBuffer_Release(&gi);
    return result;
}

/* Whether two buffers share any byte (the kernels' restrict-qualified outputs must not). */
static int overlap(const Py_buffer *a, const Py_buffer *b) {
    const uintptr_t a0 = (uintptr_t)a->buf, b0 = (uintptr_t)b->buf;
    return a->len > 0 && b->len > 0 && a0 < b0 + (uintptr_t)b->len && b0 < a0 + (uintptr_t)a->len;
}

/* threshold_backward(x, grad, out, threshold, dbl): three buffers of one size and dtype */
static PyObject *py_threshold_backward(PyObject *self, PyObject *args) {
    Py_buffer x, g, out;
    double threshold;
    int dbl;
    if (!PyArg_ParseTuple(args, "y*y*w*dp:threshold_backward", &x, &g, &out, &threshold, &dbl))
        return NULL;
    PyObject *result = NULL;
    const Py_ssize_t size = dbl ? sizeof(double) : sizeof(float);
    long long n;
    if (buffer_items(&x, "input", size, &n) == 0 && check_size(&g, "grad", n, size) == 0 &&
        check_size(&out, "output", n, size) == 0) {
        if (overlap(&out, &x) || overlap(&out, &g)) {
            PyErr_SetString(PyExc_ValueError, "_ckernels.threshold_backward: the output shares memory with an input; "
                            "pass a fresh output array");
        } else {
            if (n) {
                Py_BEGIN_ALLOW_THREADS
                if (dbl)
                    threshold_backward_double((const double *)x.buf, (const double *)g.buf, (double *)out.buf,
                                              threshold, n);
                else
                    threshold_backward_float((const float *)x.buf, (const float *)g.buf, (float *)out.buf,
                                             (float)threshold, n);
                Py_END_ALLOW_THREADS
            }
            result = Py_NewRef(Py_None);
        }
    }
    PyBuffer_Release(&x);
    PyBuffer_Release(&g);
    PyBuffer_Release(&out);
    return result;
}

/* (rows, n) of a row-wise kernel: rows >= 0, n >= ``min_n``; ``count`` receives rows * n. */
static int check_rows(const char *op, long long rows, long long n, long long min_n, long long *count) {
    if (rows < 0 || n < min_n) {
        PyErr_Format(PyExc_ValueError, "_ckernels.%s: got %lld rows of %lld elements; the row count must be "
                     "non-negative and rows %s", op, rows, n, min_n ? "must not be empty" : "not of negative length");
        return -1;
    }
    return mul64(rows, n, count, op);
}

/* Rows of a row-wise kernel go to the pool in ranges of at least ROW_GRAIN items; each row is computed
 * the same way whichever range holds it, so results do not depend on the thread count. */
#define ROW_GRAIN (1LL << 15)

typedef struct {
    const void *a, *b; /* the input (forward) or the gradient and the output (backward) */
    void *out;
    long long n;
    int dbl, log_, backward;
} rows_t;

static void softmax_rows(void *ctx, long long begin, long long end, int part) {
    const rows_t *r = (const rows_t *)ctx;
    const long long at = begin * r->n, rows = end - begin; /* at <= rows * n: checked by the caller */
    (void)part;
    if (r->dbl && r->backward)
        softmax_backward_double((const double *)r->a + at, (const double *)r->b + at, (double *)r->out + at, rows, r->n,
                                r->log_);
    else if (r->backward)
        softmax_backward_float((const float *)r->a + at, (const float *)r->b + at, (float *)r->out + at, rows, r->n,
                               r->log_);
    else if (r->dbl)
        softmax_double((const double *)r->a + at, (double *)r->out + at, rows, r->n, r->log_);
    else
        softmax_float((const float *)r->a + at, (float *)r->out + at, rows, r->n, r->log_);
}

/* softmax(x, out, dbl, rows, n, log) and softmax_backward(grad, output, out, dbl, rows, n, log): row-wise */
static PyObject *py_softmax(PyObject *self, PyObject *args) {
    Py_buffer x, out;
    int dbl, log_;
    long long rows, n, count;
    if (!PyArg_ParseTuple(args, "y*w*pLLp:softmax", &x, &out, &dbl, &rows, &n, &log_))
        return NULL;
    PyObject *result = NULL;
    const Py_ssize_t size = dbl ? sizeof(double) : sizeof(float);
    if (check_rows("softmax", rows, n, 1, &count) == 0 && check_size(&x, "input", count, size) == 0 &&
        check_size(&out, "output", count, size) == 0) {
        if (count) {
            rows_t r = {x.buf, NULL, out.buf, n, dbl, log_, 0};
            Py_BEGIN_ALLOW_THREADS
            parallel_for(softmax_rows, &r, rows, ROW_GRAIN / n + 1);
            Py_END_ALLOW_THREADS
        }
        result = Py_NewRef(Py_None);
    }
    PyBuffer_Release(&x);
    PyBuffer_Release(&out);
    return result;
}

static PyObject *py_softmax_backward(PyObject *self, PyObject *args) {
    Py_buffer g, y, out;
    int dbl, log_;
    long long rows, n, count;
    if (!PyArg_ParseTuple(args, "y*y*w*pLLp:softmax_backward", &g, &y, &out, &dbl, &rows, &n, &log_))
        return NULL;
    PyObject *result = NULL;
    const Py_ssize_t size = dbl ? sizeof(double) : sizeof(float);
    if (check_rows("softmax_backward", rows, n, 1, &count) == 0 && check_size(&g, "grad", count, size) == 0 &&
        check_size(&y, "output", count, size) == 0 && check_size(&out, "grad_input", count, size) == 0) {
        if (count) {
            rows_t r = {g.buf, y.buf, out.buf, n, dbl, log_, 1};
            Py_BEGIN_ALLOW_THREADS
            parallel_for(softmax_rows, &r, rows, ROW_GRAIN / n + 1);
            Py_END_ALLOW_THREADS
        }
        result = Py_NewRef(Py_None);
    }
    PyBuffer_Release(&g);
    PyBuffer_Release(&y);
    PyBuffer_Release(&out);
    return result;
}

static PyObject *target_error(const Py_buffer *t, long long row) {
    PyErr_Format(PyExc_IndexError, "Target %lld is out of bounds.", (long long)((const int64_t *)t->buf)[row]);
    return NULL;
}

/* nll(x, target, dbl, rows, n, ignore_index) -> (negated sum of the picked entries, rows counted) */
static PyObject *py_nll(PyObject *self, PyObject *args) {
    Py_buffer x, t;
    int dbl;
    long long rows, n, ignore, count;
    if (!PyArg_ParseTuple(args, "y*y*pLLL:nll", &x, &t, &dbl, &rows, &n, &ignore))
        return NULL;
    PyObject *result = NULL;
    const Py_ssize_t size = dbl ? sizeof(double) : sizeof(float);
    if (check_rows("nll", rows, n, 0, &count) == 0 && check_size(&x, "input", count, size) == 0 &&
        check_size(&t, "target", rows, sizeof(int64_t)) == 0) {
        double total = 0;
        long long counted = 0, bad = -1;
        if (rows) {
            Py_BEGIN_ALLOW_THREADS
            if (dbl)
                bad = nll_double((const double *)x.buf, (const int64_t *)t.buf, rows, n, ignore, &total, &counted);
            else
                bad = nll_float((const float *)x.buf, (const int64_t *)t.buf, rows, n, ignore, &total, &counted);
            Py_END_ALLOW_THREADS
        }
        result = bad >= 0 ? target_error(&t, bad) : Py_BuildValue("(dL)", total, counted);
    }
    PyBuffer_Release(&x);
    PyBuffer_Release(&t);
    return result;
}

/* nll_backward(target, grad_input, dbl, rows, n, ignore_index, value): grad_input[r, target[r]] = value */
static PyObject *py_nll_backward(PyObject *self, PyObject *args) {
    Py_buffer t, gi;
    int dbl;
    long long rows, n, ignore, count;
    double value;
    if (!PyArg_ParseTuple(args, "y*w*pLLLd:nll_backward", &t, &gi, &dbl, &rows, &n, &ignore, &value))
        return NULL;
    PyObject *result = NULL;
    const Py_ssize_t size = dbl ? sizeof(double) : sizeof(float);
    if (check_rows("nll_backward", rows, n, 0, &count) == 0 && check_size(&gi, "grad_input", count, size) == 0 &&
        check_size(&t, "target", rows, sizeof(int64_t)) == 0) {
        long long bad = -1;
        if (rows) {
            Py_BEGIN_ALLOW_THREADS
            if (dbl)
                bad = nll_backward_double((const int64_t *)t.buf, (double *)gi.buf, rows, n, ignore, value);
            else
                bad = nll_backward_float((const int64_t *)t.buf, (float *)gi.buf, rows, n, ignore, (float)value);
            Py_END_ALLOW_THREADS
        }
        result = bad >= 0 ? target_error(&t, bad) : Py_NewRef(Py_None);
    }
    PyBuffer_Release(&t);
    PyBuffer_Release(&gi);
    return result;
}

/* ---- the thread pool: large elementwise, reduction and copy loops on all cores -------------------------
 *
 * A loop of ``n`` items is cut into ``parts`` contiguous ranges of nearly equal length (at most the
 * thread count set by ``set_num_threads``, and none shorter than the grain), and range ``p`` always runs
 * the same code over the same items whichever thread runs it: elementwise results are bit-identical
 * for every thread count.  The calling thread runs range 0; ranges 1.. go to workers started on first
 * use, which sleep on a condition variable between loops.  One loop at a time uses the pool: a second
 * Python thread calling in meanwhile (the GIL is released) runs its loop on its own thread, as does a
 * forked child until it starts its own workers. */

#define POOL_MAX 64

static struct {
    pthread_mutex_t busy; /* held by the one loop that uses the workers */
    pthread_mutex_t mu;
    pthread_cond_t work, done;
    int started;          /* workers running */
    int threads;          /* the count set_num_threads gave */
    unsigned long gen;    /* bumped once per loop handed to the workers (read without ``mu`` while spinning) */
    range_fn fn;
    void *ctx;
    long long n;
    int parts;
    unsigned long pending; /* ranges still running (read without ``mu`` while the caller spins) */
    int sleeping;         /* workers waiting on ``work`` */
    int waiting;          /* the caller waits on ``done`` */
} pool = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, PTHREAD_COND_INITIALIZER,
          0, 1, 0, NULL, NULL, 0, 0, 0, 0, 0};

/* [begin, end) of range ``part`` of ``parts`` over ``n`` items: no product that could overflow. */
static void range_of(long long n, int parts, int part, long long *begin, long long *end) {
    const long long q = n / parts, r = n % parts;
    *begin = part * q + (part < r ? part : r);
    *end = *begin + q + (part < r ? 1 : 0);
}

/* Spin-waits before sleeping: a worker that finished a loop, and a caller waiting for its workers,
 * poll for up to SPIN_NS before taking the condition variable, yielding the core to any other runnable
 * thread as they poll.  Loops that follow within SPIN_NS (a product after a product, or the next product
 * of a training step a few hundred microseconds later) then hand over in about a microsecond instead of
 * waking a sleeping thread: a futex wake-up measured 10-12 us on a 2-vCPU VM, and waking the idle
 * second vCPU made a two-thread 256x256 product slower than one thread.  With 50 us the MLP step of
 * peers.py measured 0.79x PyTorch's steps/s and with 300 us 1.19x (one run each, SCHED_FIFO); an idle
 * pool still sleeps within SPIN_NS of its last loop. */
#define SPIN_NS 300000LL

static long long now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static inline void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

/* Polls ``*word`` until it differs from ``value`` (``differ``) or equals it (!``differ``), or SPIN_NS pass. */
static void spin_on(const unsigned long *word, unsigned long value, int differ) {
    const long long until = now_ns() + SPIN_NS;
    for (int i = 0;; i++) {
        if ((__atomic_load_n(word, __ATOMIC_ACQUIRE) != value) == differ)
            return;
        if (i < 256) {
            cpu_relax();
            continue;
        }
        sched_yield(); /* a thread of this process (or another's) waiting for this core runs first */
        if (now_ns() > until)
            return;
    }
}

static void *pool_worker(void *arg) {
    const int id = (int)(intptr_t)arg;
    unsigned long seen = 0;
    for (;;) {
        spin_on(&pool.gen, seen, 1); /* until a new loop */
        pthread_mutex_lock(&pool.mu);
        while (pool.gen == seen) {
            pool.sleeping++;
            pthread_cond_wait(&pool.work, &pool.mu);
            pool.sleeping--;
        }
        seen = pool.gen;
        if (id >= pool.parts) {
            pthread_mutex_unlock(&pool.mu);
            continue;
        }
        const range_fn fn = pool.fn;
        void *const ctx = pool.ctx;
        long long begin, end;
        range_of(pool.n, pool.parts, id, &begin, &end);
        pthread_mutex_unlock(&pool.mu);
        fn(ctx, begin, end, id);
        pthread_mutex_lock(&pool.mu);
        if (__atomic_sub_fetch(&pool.pending, 1, __ATOMIC_RELEASE) == 0 && pool.waiting)
            pthread_cond_signal(&pool.done);
        pthread_mutex_unlock(&pool.mu);
    }
    return NULL;
}

/* A forked child has none of the parent's workers: it starts its own when it needs them. */
static void pool_after_fork_child(void) {
    pthread_mutex_init(&pool.busy, NULL);
    pthread_mutex_init(&pool.mu, NULL);
    pthread_cond_init(&pool.work, NULL);
    pthread_cond_init(&pool.done, NULL);
    pool.started = 0;
    pool.pending = 0;
    pool.sleeping = 0;
    pool.waiting = 0;
}

/* Runs fn over [0, n) in ranges of at least ``grain`` items on up to ``threads`` threads; call without
 * the GIL.  Returns the number of ranges used (each got its own ``part`` index, 0-based). */
static int parallel_for(range_fn fn, void *ctx, long long n, long long grain) {
    int parts = pool.threads;
    if (grain < 1)
        grain = 1;
    if (n / grain < parts)
        parts = (int)(n / grain);
    if (parts <= 1 || pthread_mutex_trylock(&pool.busy) != 0) {
        fn(ctx, 0, n, 0);
        return 1;
    }
    pthread_mutex_lock(&pool.mu);
    while (pool.started < parts - 1) {
        pthread_t t;
        pthread_attr_t attr;
        pthread_attr_init(&attr);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        const int ok = pthread_create(&t, &attr, pool_worker, (void *)(intptr_t)(pool.started + 1)) == 0;
        pthread_attr_destroy(&attr);
        if (!ok)
            break;
        pool.started++;
    }
    if (parts > pool.started + 1) /* fewer workers than wanted could start: fewer, longer ranges */
        parts = pool.started + 1;
    pool.fn = fn;
    pool.ctx = ctx;
    pool.n = n;
    pool.parts = parts;
    pool.pending = (unsigned long)(parts - 1);
    __atomic_add_fetch(&pool.gen, 1, __ATOMIC_RELEASE);
    if (parts > 1 && pool.sleeping)
        pthread_cond_broadcast(&pool.work);
    pthread_mutex_unlock(&pool.mu);
    long long begin, end;
    range_of(n, parts, 0, &begin, &end);
    fn(ctx, begin, end, 0);
    spin_on(&pool.pending, 0, 0); /* until the workers are done: they usually finish about when this thread does */
    if (__atomic_load_n(&pool.pending, __ATOMIC_ACQUIRE) != 0) {
        pthread_mutex_lock(&pool.mu);
        pool.waiting = 1;
        while (pool.pending > 0)
            pthread_cond_wait(&pool.done, &pool.mu);
        pool.waiting = 0;
        pthread_mutex_unlock(&pool.mu);
    }
    pthread_mutex_unlock(&pool.busy);
    return parts;
}

static PyObject *py_set_num_threads(PyObject *self, PyObject *args) {
    int n;
    if (!PyArg_ParseTuple(args, "i:set_num_threads", &n))
        return NULL;
    if (n < 1) {
        PyErr_Format(PyExc_ValueError, "_ckernels.set_num_threads: the thread count must be positive, got %d", n);
        return NULL;
    }
    pool.threads = n < POOL_MAX ? n : POOL_MAX;
    Py_RETURN_NONE;
}

static PyObject *py_get_num_threads(PyObject *self, PyObject *args) { return PyLong_FromLong(pool.threads); }

/* ---- elementwise loops ---- */
enum { OP_ADD, OP_SUB, OP_MUL, OP_DIV, N_BINARY };
enum { OP_NEG, OP_ABS, OP_SQRT, OP_SQUARE, OP_RELU, N_UNARY };

typedef struct {
    const void *x, *y; /* y: NULL for a scalar operand */
    void *out;
    double scalar;
    int op, dbl, scalar_first;
} ew_t;

/* out[i] = x[i] OP y[i], or with a scalar on either side; no ``restrict``: out may be x or y (out= an input). */
#define ELEMENTWISE(T, A, B)                                                                                        \
    switch (e->op) {                                                                                                \
    case OP_ADD: for (long long i = begin; i < end; i++) out[i] = (A) + (B); break;                                 \
    case OP_SUB: for (long long i = begin; i < end; i++) out[i] = (A) - (B); break;                                 \
    case OP_MUL: for (long long i = begin; i < end; i++) out[i] = (A) * (B); break;                                 \
    default: for (long long i = begin; i < end; i++) out[i] = (A) / (B); break;                                     \
    }

#define DEFINE_BINARY(T)                                                                                            \
    static void binary_##T(void *ctx, long long begin, long long end, int part) {                                   \
        const ew_t *e = (const ew_t *)ctx;                                                                          \
        const T *x = (const T *)e->x;                                                                               \
        T *out = (T *)e->out;                                                                                       \
        const T s = (T)e->scalar;                                                                                   \
        (void)part;                                                                                                 \
        if (e->y) {                                                                                                 \
            const T *y = (const T *)e->y;                                                                           \
            ELEMENTWISE(T, x[i], y[i])                                                                              \
        } else if (e->scalar_first) {                                                                               \
            ELEMENTWISE(T, s, x[i])                                                                                 \
        } else {                                                                                                    \
            ELEMENTWISE(T, x[i], s)                                                                                 \
        }                                                                                                           \
    }

/* The unary ops whose results are exactly rounded (the same bits as NumPy's and PyTorch's loops), and relu. */
#define DEFINE_UNARY(T, SQRT, ABS)                                                                                  \
    static void unary_##T(void *ctx, long long begin, long long end, int part) {                                    \
        const ew_t *e = (const ew_t *)ctx;                                                                          \
        const T *x = (const T *)e->x;                                                                               \
        T *out = (T *)e->out;                                                                                       \
        (void)part;                                                                                                 \
        switch (e->op) {                                                                                            \
        case OP_NEG: for (long long i = begin; i < end; i++) out[i] = -x[i]; break;                                 \
        case OP_ABS: for (long long i = begin; i < end; i++) out[i] = ABS(x[i]); break;                             \
        case OP_SQRT: for (long long i = begin; i < end; i++) out[i] = SQRT(x[i]); break;                           \
        case OP_SQUARE: for (long long i = begin; i < end; i++) out[i] = x[i] * x[i]; break;                        \
        default: /* relu: x < 0 ? 0 : x keeps -0.0 and NaN as they are, as PyTorch's clamp_min does */              \
            for (long long i = begin; i < end; i++) out[i] = x[i] < 0 ? (T)0 : x[i];                                \
            break;                                                                                                  \
        }                                                                                                           \
    }

DEFINE_BINARY(float)
DEFINE_BINARY(double)
DEFINE_UNARY(float, sqrtf, fabsf)
DEFINE_UNARY(double, sqrt, fabs)

/* Items per range: below this a hand-off to a worker costs more than the loop (about 2 x 256 KiB). */
#define EW_GRAIN (1LL << 16)

/* The output may be exactly an input (out= the input) but may not overlap one partly. */
static int check_out_alias(const char *op, const Py_buffer *out, const Py_buffer *in) {
    if (overlap(out, in) && out->buf != in->buf) {
        PyErr_Format(PyExc_ValueError, "_ckernels.%s: the output partly overlaps an input; pass a fresh output "
                     "array or the input itself", op);
        return -1;
    }
    return 0;
}

/* binary(op, x, y, out, dbl): out = x op y over three buffers of one size (op 0..3: add, sub, mul, div) */
static PyObject *py_binary(PyObject *self, PyObject *args) {
    Py_buffer x, y, out;
    int op, dbl;
    if (!PyArg_ParseTuple(args, "iy*y*w*p:binary", &op, &x, &y, &out, &dbl))
        return NULL;
    PyObject *result = NULL;
    const Py_ssize_t size = dbl ? sizeof(double) : sizeof(float);
    long long n;
    if (op < 0 || op >= N_BINARY) {
        PyErr_Format(PyExc_ValueError, "_ckernels.binary: unknown op %d (0..%d)", op, N_BINARY - 1);
    } else if (buffer_items(&x, "x", size, &n) == 0 && check_size(&y, "y", n, size) == 0 &&
               check_size(&out, "out", n, size) == 0 && check_out_alias("binary", &out, &x) == 0 &&
               check_out_alias("binary", &out, &y) == 0) {
        ew_t e = {x.buf, y.buf, out.buf, 0.0, op, dbl, 0};
        if (n) {
            Py_BEGIN_ALLOW_THREADS
            parallel_for(dbl ? binary_double : binary_float, &e, n, EW_GRAIN);
            Py_END_ALLOW_THREADS
        }
        result = Py_NewRef(Py_None);
    }
    PyBuffer_Release(&x);
    PyBuffer_Release(&y);
    PyBuffer_Release(&out);
    return result;
}

/* ---- axpy: y += alpha * x (the optimizers' ``p.add_(grad, alpha=-lr)``) ----
 * One pass over both buffers, on the pool when large.  The FMA clone fuses the multiply-add (one
 * rounding), as PyTorch's vectorized add kernel (fmadd) and BLAS axpy kernels do on such CPUs; the
 * baseline clone rounds the product first. */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__ELF__)
#define FMA_CLONES __attribute__((target_clones("arch=x86-64-v3", "default")))
#else
#define FMA_CLONES
#endif

typedef struct {
    const void *x;
    void *y;
    double alpha;
} axpy_t;

FMA_CLONES static void axpy_float(void *ctx, long long begin, long long end, int part) {
    const axpy_t *a = (const axpy_t *)ctx;
    const float *x = (const float *)a->x;
    float *y = (float *)a->y;
    const float alpha = (float)a->alpha;
    (void)part;
    for (long long i = begin; i < end; i++)
        y[i] = y[i] + alpha * x[i]; /* (contracted to one fma where the clone has it) */
}

FMA_CLONES static void axpy_double(void *ctx, long long begin, long long end, int part) {
    const axpy_t *a = (const axpy_t *)ctx;
    const double *x = (const double *)a->x;
    double *y = (double *)a->y;
    (void)part;
    for (long long i = begin; i < end; i++)
        y[i] = y[i] + a->alpha * x[i];
}

/* axpy(x, y, alpha, dbl): y += alpha * x for two buffers of one size; y may be x, not overlap it partly */
static PyObject *py_axpy(PyObject *self, PyObject *args) {
    Py_buffer x, y;
    double alpha;
    int dbl;
    if (!PyArg_ParseTuple(args, "y*w*dp:axpy", &x, &y, &alpha, &dbl))
        return NULL;
    PyObject *result = NULL;
    const Py_ssize_t size = dbl ? sizeof(double) : sizeof(float);
    long long n;
    if (buffer_items(&x, "x", size, &n) == 0 && check_size(&y, "y", n, size) == 0 &&
        check_out_alias("axpy", &y, &x) == 0) {
        axpy_t a = {x.buf, y.buf, alpha};
        if (n) {
            Py_BEGIN_ALLOW_THREADS
            parallel_for(dbl ? axpy_double : axpy_float, &a, n, EW_GRAIN);
            Py_END_ALLOW_THREADS
        }
        result = Py_NewRef(Py_None);
    }
    PyBuffer_Release(&x);
    PyBuffer_Release(&y);
    return result;
}

/* binary_scalar(op, x, scalar, out, dbl, scalar_first): out = x op s (or s op x); s is rounded to the
 * buffers' type first, as NumPy and PyTorch do with a Python number and a float32 tensor */
static PyObject *py_binary_scalar(PyObject *self, PyObject *args) {
    Py_buffer x, out;
    int op, dbl, first;
    double s;
    if (!PyArg_ParseTuple(args, "iy*dw*pp:binary_scalar", &op, &x, &s, &out, &dbl, &first))
        return NULL;
    PyObject *result = NULL;
    const Py_ssize_t size = dbl ? sizeof(double) : sizeof(float);
    long long n;
    if (op < 0 || op >= N_BINARY) {
        PyErr_Format(PyExc_ValueError, "_ckernels.binary_scalar: unknown op %d (0..%d)", op, N_BINARY - 1);
    } else if (buffer_items(&x, "x", size, &n) == 0 && check_size(&out, "out", n, size) == 0 &&
               check_out_alias("binary_scalar", &out, &x) == 0) {
        ew_t e = {x.buf, NULL, out.buf, s, op, dbl, first};
        if (n) {
            Py_BEGIN_ALLOW_THREADS
            parallel_for(dbl ? binary_double : binary_float, &e, n, EW_GRAIN);
            Py_END_ALLOW_THREADS
        }
        result = Py_NewRef(Py_None);
    }
    PyBuffer_Release(&x);
    PyBuffer_Release(&out);
    return result;
}

/* unary(op, x, out, dbl): op 0..4: neg, abs, sqrt, square, relu */
static PyObject *py_unary(PyObject *self, PyObject *args) {
    Py_buffer x, out;
    int op, dbl;
    if (!PyArg_ParseTuple(args, "iy*w*p:unary", &op, &x, &out, &dbl))
        return NULL;
    PyObject *result = NULL;
    const Py_ssize_t size = dbl ? sizeof(double) : sizeof(float);
    long long n;
    if (op < 0 || op >= N_UNARY) {
        PyErr_Format(PyExc_ValueError, "_ckernels.unary: unknown op %d (0..%d)", op, N_UNARY - 1);
    } else if (buffer_items(&x, "x", size, &n) == 0 && check_size(&out, "out", n, size) == 0 &&
               check_out_alias("unary", &out, &x) == 0) {
        ew_t e = {x.buf, NULL, out.buf, 0.0, op, dbl, 0};
        if (n) {
            Py_BEGIN_ALLOW_THREADS
            parallel_for(dbl ? unary_double : unary_float, &e, n, EW_GRAIN);
            Py_END_ALLOW_THREADS
        }
        result = Py_NewRef(Py_None);
    }
    PyBuffer_Release(&x);
    PyBuffer_Release(&out);
    return result;
}

/* ---- sum: the summation order ----
 * The items are cut into the pool's ranges (one per thread, see parallel_for); each range is summed
 * pairwise: a run of at most SUM_BLOCK items is summed in 16 interleaved lanes (item i of the run into
 * lane i % 16) that are then added as a binary tree, and longer runs are split in two halves (the first
 * a multiple of 16 items long) whose sums are added.  The ranges' sums are then added in order.  float32
 * items accumulate in double, float64 in double, so the result moves by at most a rounding of its
 * type between thread counts (the rounding error of pairwise summation grows with log n). */
#define SUM_BLOCK 4096
#define SUM_LANES 16

typedef struct {
    const void *x;
    int dbl;
    double partial[POOL_MAX];
} sum_t;

#define DEFINE_SUM(T)                                                                                               \
    static double lanes_##T(const T *x, long long n) {                                                              \
        double acc[SUM_LANES] = {0};                                                                                \
        long long i = 0;                                                                                            \
        for (; i + SUM_LANES <= n; i += SUM_LANES)                                                                  \
            for (int l = 0; l < SUM_LANES; l++)                                                                     \
                acc[l] += (double)x[i + l];                                                                         \
        for (int l = 0; i < n; i++, l++)                                                                            \
            acc[l] += (double)x[i];                                                                                 \
        for (int w = SUM_LANES / 2; w > 0; w /= 2)                                                                  \
            for (int l = 0; l < w; l++)                                                                             \
                acc[l] += acc[l + w];                                                                               \
        return acc[0];                                                                                              \
    }                                                                                                               \
    static double pairwise_##T(const T *x, long long n) {                                                           \
        if (n <= SUM_BLOCK)                                                                                         \
            return lanes_##T(x, n);                                                                                 \
        const long long half = n / 2 / SUM_LANES * SUM_LANES;                                                       \
        return pairwise_##T(x, half) + pairwise_##T(x + half, n - half);                                            \
    }                                                                                                               \
    static void sum_range_##T(void *ctx, long long begin, long long end, int part) {                                \
        sum_t *s = (sum_t *)ctx;                                                                                    \
        s->partial[part] = pairwise_##T((const T *)s->x + begin, end - begin);                                      \
    }

DEFINE_SUM(float)
DEFINE_SUM(double)

/* Items per range of a sum (it only reads: a larger grain than the elementwise loops). */
#define SUM_GRAIN (1LL << 17)

/* sum(x, dbl) -> the sum of a float32/float64 buffer as a Python float (see the summation order above) */
static PyObject *py_sum(PyObject *self, PyObject *args) {
    Py_buffer x;
    int dbl;
    if (!PyArg_ParseTuple(args, "y*p:sum", &x, &dbl))
        return NULL;
    PyObject *result = NULL;
    const Py_ssize_t size = dbl ? sizeof(double) : sizeof(float);
    long long n;
    if (buffer_items(&x, "x", size, &n) == 0) {
        sum_t s;
        s.x = x.buf;
        s.dbl = dbl;
        double total = 0;
        if (n) {
            Py_BEGIN_ALLOW_THREADS
            const int parts = parallel_for(dbl ? sum_range_double : sum_range_float, &s, n, SUM_GRAIN);
            for (int p = 0; p < parts; p++)
                total += s.partial[p];
            Py_END_ALLOW_THREADS
        }
        result = PyFloat_FromDouble(total);
    }
    PyBuffer_Release(&x);
    return result;
}

/* ---- reductions over one run of dims ----
 * reduce_dim views a C-contiguous buffer as (outer, r, inner) and reduces the middle axis into an
 * (outer, inner) output: op 0 sums (in double, rounded once), 1 takes the maximum, 2 the minimum (NaN
 * propagates, as in PyTorch's amax/amin).  A row (inner == 1) is summed pairwise like ``sum`` above; with
 * inner > 1 the rows are added in order into double accumulators, REDUCE_TILE columns at a time.  The
 * ranges are cut over output items, and each item is computed the same way whichever range holds it. */
enum { RED_SUM, RED_MAX, RED_MIN, N_RED };

/* The reduction loops are compiled for AVX2 as well as the baseline and picked when the module loads
 * (GCC's target_clones, an ifunc on ELF): NumPy's own reductions use the CPU's widest vectors, and on
 * SSE2 alone these were 2-5x slower per thread than NumPy's.  The clones compute the same result: the
 * summation order is fixed by the code (lanes), not by the vector width. */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__ELF__)
#define WIDE_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define WIDE_CLONES
#endif
#define REDUCE_TILE 256

typedef struct {
    const void *x;
    void *out;
    long long r, inner;
    int op;
} reduce_t;

/* v replaces m when beyond it or NaN; ``|``, not ``||``: no branch, so the loops vectorize */
#define PICK(op, v, m) ((op) == RED_MAX ? ((((v) > (m)) | ((v) != (v))) ? (v) : (m)) : ((((v) < (m)) | ((v) != (v))) ? (v) : (m)))

/* The maximum or minimum of a row in SUM_LANES interleaved lanes (independent selects the compiler
 * vectorizes), then across the lanes; a NaN anywhere makes the result NaN. */
#define DEFINE_EXTREME(T, NAME, OP)                                                                                 \
    WIDE_CLONES static T extreme_##NAME##_##T(const T *x, long long n) {                                            \
        T acc[SUM_LANES];                                                                                           \
        long long i = 0;                                                                                            \
        for (int l = 0; l < SUM_LANES; l++) acc[l] = x[0];                                                          \
        for (; i + SUM_LANES <= n; i += SUM_LANES)                                                                  \
            for (int l = 0; l < SUM_LANES; l++) acc[l] = PICK(OP, x[i + l], acc[l]);                                \
        for (; i < n; i++) acc[0] = PICK(OP, x[i], acc[0]);                                                         \
        T m = acc[0];                                                                                               \
        for (int l = 1; l < SUM_LANES; l++) m = PICK(OP, acc[l], m);                                                \
        return m;                                                                                                   \
    }

DEFINE_EXTREME(float, max, RED_MAX)
DEFINE_EXTREME(float, min, RED_MIN)
DEFINE_EXTREME(double, max, RED_MAX)
DEFINE_EXTREME(double, min, RED_MIN)

#define DEFINE_REDUCE(T)                                                                                            \
    WIDE_CLONES static void reduce_range_##T(void *ctx, long long begin, long long end, int part) {                 \
        const reduce_t *c = (const reduce_t *)ctx;                                                                  \
        const T *x = (const T *)c->x;                                                                               \
        T *out = (T *)c->out;                                                                                       \
        const long long r = c->r, inner = c->inner;                                                                 \
        (void)part;                                                                                                 \
        if (inner == 1) { /* one row per output item */                                                            \
            for (long long o = begin; o < end; o++) {                                                               \
                const T *row = x + o * r;                                                                           \
                if (c->op == RED_SUM)                                                                               \
                    out[o] = (T)pairwise_##T(row, r);                                                               \
                else if (c->op == RED_MAX)                                                                          \
                    out[o] = extreme_max_##T(row, r);                                                               \
                else                                                                                                \
                    out[o] = extreme_min_##T(row, r);                                                               \
            }                                                                                                       \
            return;                                                                                                 \
        }                                                                                                           \
        for (long long at = begin; at < end;) { /* a tile of columns inside one outer block */                      \
            const long long o = at / inner, j0 = at % inner;                                                        \
            long long j1 = j0 + REDUCE_TILE;                                                                        \
            if (j1 > inner) j1 = inner;                                                                             \
            if (j1 - j0 > end - at) j1 = j0 + (end - at);                                                           \
            const long long w = j1 - j0;                                                                            \
            const T *base = x + o * r * inner + j0;                                                                 \
            T *dst = out + o * inner + j0;                                                                          \
            if (c->op == RED_SUM) {                                                                                 \
                double acc[REDUCE_TILE];                                                                            \
                for (long long j = 0; j < w; j++) acc[j] = 0;                                                       \
                for (long long p = 0; p < r; p++) {                                                                 \
                    const T *row = base + p * inner;                                                                \
                    for (long long j = 0; j < w; j++) acc[j] += (double)row[j];                                     \
                }                                                                                                   \
                for (long long j = 0; j < w; j++) dst[j] = (T)acc[j];                                               \
            } else {                                                                                                \
                for (long long j = 0; j < w; j++) dst[j] = base[j];                                                 \
                for (long long p = 1; p < r; p++) {                                                                 \
                    const T *row = base + p * inner;                                                                \
                    if (c->op == RED_MAX)                                                                           \
                        for (long long j = 0; j < w; j++) dst[j] = PICK(RED_MAX, row[j], dst[j]);                   \
                    else                                                                                            \
                        for (long long j = 0; j < w; j++) dst[j] = PICK(RED_MIN, row[j], dst[j]);                   \
                }                                                                                                   \
            }                                                                                                       \
            at += w;                                                                                                \
        }                                                                                                           \
    }

DEFINE_REDUCE(float)
DEFINE_REDUCE(double)

/* reduce_dim(op, x, out, dbl, outer, r, inner): out[o, j] = op over p of x[o, p, j] (see above) */
static PyObject *py_reduce_dim(PyObject *self, PyObject *args) {
    Py_buffer x, out;
    int op, dbl;
    long long outer, r, inner;
    if (!PyArg_ParseTuple(args, "iy*w*pLLL:reduce_dim", &op, &x, &out, &dbl, &outer, &r, &inner))
        return NULL;
    PyObject *result = NULL;
    const Py_ssize_t size = dbl ? sizeof(double) : sizeof(float);
    const long long in_sizes[3] = {outer, r, inner}, out_sizes[2] = {outer, inner};
    long long items, outputs;
    if (op < 0 || op >= N_RED) {
        PyErr_Format(PyExc_ValueError, "_ckernels.reduce_dim: unknown op %d (0..%d)", op, N_RED - 1);
    } else if (product("reduce_dim input", &items, 3, in_sizes) == 0 &&
               product("reduce_dim output", &outputs, 2, out_sizes) == 0 &&
               check_size(&x, "x", items, size) == 0 && check_size(&out, "out", outputs, size) == 0) {
        if (r < 1 && outputs && op != RED_SUM) {
            PyErr_SetString(PyExc_ValueError, "_ckernels.reduce_dim: a maximum or minimum over an empty dim has no "
                            "value; check the dim's size first");
        } else if (overlap(&x, &out)) {
            PyErr_SetString(PyExc_ValueError, "_ckernels.reduce_dim: the output shares memory with the input; pass "
                            "a fresh output array");
        } else {
            reduce_t c = {x.buf, out.buf, r, inner, op};
            if (outputs) {
                /* a range: at least EW_GRAIN items read */
                const long long grain = r > 0 ? EW_GRAIN / r + 1 : outputs;
                Py_BEGIN_ALLOW_THREADS
                parallel_for(dbl ? reduce_range_double : reduce_range_float, &c, outputs, grain);
                Py_END_ALLOW_THREADS
            }
            result = Py_NewRef(Py_None);
        }
    }
    PyBuffer_Release(&x);
    PyBuffer_Release(&out);
    return result;
}

/* ---- copy ---- */
typedef struct {
    const char *src;
    char *dst;
} copy_t;

static void copy_range(void *ctx, long long begin, long long end, int part) {
    const copy_t *c = (const copy_t *)ctx;
    (void)part;
    memcpy(c->dst + begin, c->src + begin, (size_t)(end - begin));
}

/* Bytes per range of a copy. */
#define COPY_GRAIN (1LL << 19)

/* copy(src, dst): dst[:] = src[:] for two buffers of one length that do not overlap */
static PyObject *py_copy(PyObject *self, PyObject *args) {
    Py_buffer src, dst;
    if (!PyArg_ParseTuple(args, "y*w*:copy", &src, &dst))
        return NULL;
    PyObject *result = NULL;
    if (src.len != dst.len) {
        PyErr_Format(PyExc_ValueError, "_ckernels.copy: the source holds %zd bytes and the destination %zd; pass "
                     "buffers of one length", src.len, dst.len);
    } else if (overlap(&src, &dst)) {
        PyErr_SetString(PyExc_ValueError, "_ckernels.copy: the source and the destination overlap; copy through a "
                        "fresh buffer");
    } else {
        copy_t c = {(const char *)src.buf, (char *)dst.buf};
        if (src.len) {
            Py_BEGIN_ALLOW_THREADS
            parallel_for(copy_range, &c, (long long)src.len, COPY_GRAIN);
            Py_END_ALLOW_THREADS
        }
        result = Py_NewRef(Py_None);
    }
    PyBuffer_Release(&src);
    PyBuffer_Release(&dst);
    return result;
}

/* A strided source (any layout NumPy exports, negative strides included) into a C-contiguous
 * destination: rows of the last dim, the ranges cut over rows. */
typedef struct {
    const char *src;
    char *dst;
    int ndim;
    Py_ssize_t itemsize, inner;
    const Py_ssize_t *shape, *strides;
} strided_t;

#define STRIDED_ROW(T)                                                                                              \
    for (Py_ssize_t j = 0; j < c->inner; j++)                                                                       \
        ((T *)d)[j] = *(const T *)(s + j * step);

static void strided_range(void *ctx, long long begin, long long end, int part) {
    const strided_t *c = (const strided_t *)ctx;
    const int outer = c->ndim - 1;
    Py_ssize_t index[64];
    const char *s = c->src;
    long long rest = begin;
    (void)part;
    for (int k = outer - 1; k >= 0; k--) { /* the multi-index of row ``begin`` */
        index[k] = (Py_ssize_t)(rest % c->shape[k]);
        rest /= c->shape[k];
        s += index[k] * c->strides[k];
    }
    const Py_ssize_t step = c->strides[outer], row_bytes = c->inner * c->itemsize;
    char *d = c->dst + begin * row_bytes;
    for (long long r = begin; r < end; r++, d += row_bytes) {
        if (step == c->itemsize)
            memcpy(d, s, (size_t)row_bytes);
        else
            switch (c->itemsize) {
        case 1: STRIDED_ROW(uint8_t) break;
        case 2: STRIDED_ROW(uint16_t) break;
        case 4: STRIDED_ROW(uint32_t) break;
        case 8: STRIDED_ROW(uint64_t) break;
        default:
            for (Py_ssize_t j = 0; j < c->inner; j++)
                memcpy(d + j * c->itemsize, s + j * step, (size_t)c->itemsize);
        }
        for (int k = outer - 1; k >= 0; k--) { /* the next row: carry through the outer dims */
            s += c->strides[k];
            if (++index[k] < c->shape[k])
                break;
            s -= index[k] * c->strides[k];
            index[k] = 0;
        }
    }
}

/* copy_strided(src, dst): dst (C-contiguous, one item size) = src in row-major order, for a src of
 * at least one dim and any strides (as its exporter describes them) that does not overlap dst */
static PyObject *py_copy_strided(PyObject *self, PyObject *args) {
    PyObject *src_obj;
    Py_buffer src, dst;
    if (!PyArg_ParseTuple(args, "Ow*:copy_strided", &src_obj, &dst))
        return NULL;
    if (PyObject_GetBuffer(src_obj, &src, PyBUF_RECORDS_RO) < 0) {
        PyBuffer_Release(&dst);
        return NULL;
    }
    PyObject *result = NULL;
    long long items = 1, rows = 1;
    int ok = src.ndim >= 1 && src.ndim <= 64 && src.shape != NULL && src.strides != NULL && src.itemsize > 0;
    if (!ok)
        PyErr_Format(PyExc_ValueError, "_ckernels.copy_strided: the source must have 1 to 64 dims with strides, "
                     "got %d", src.ndim);
    for (int k = 0; ok && k < src.ndim; k++) {
        if (mul64(items, (long long)src.shape[k], &items, "copy_strided") < 0)
            ok = 0;
        else if (k < src.ndim - 1)
            rows *= src.shape[k]; /* rows <= items: cannot overflow */
    }
    if (ok && check_size(&dst, "destination", items, src.itemsize) == 0) {
        /* the source's byte span (its exporter's layout), to refuse a destination inside it */
        const char *lo = (const char *)src.buf, *hi = (const char *)src.buf + src.itemsize;
        for (int k = 0; items && k < src.ndim; k++) {
            if (src.strides[k] < 0)
                lo += (src.shape[k] - 1) * src.strides[k];
            else
                hi += (src.shape[k] - 1) * src.strides[k];
        }
        const char *d0 = (const char *)dst.buf;
        if (items && d0 < hi && lo < d0 + dst.len) {
            PyErr_SetString(PyExc_ValueError, "_ckernels.copy_strided: the destination overlaps the source; copy "
                            "through a fresh buffer");
        } else {
            strided_t c = {(const char *)src.buf, (char *)dst.buf, src.ndim, src.itemsize, src.shape[src.ndim - 1],
                           src.shape, src.strides};
            if (items) {
                /* a range's grain in rows: at least COPY_GRAIN bytes of destination */
                long long row_bytes = (long long)c.inner * src.itemsize, grain = COPY_GRAIN / row_bytes + 1;
                Py_BEGIN_ALLOW_THREADS
                parallel_for(strided_range, &c, rows, grain);
                Py_END_ALLOW_THREADS
            }
            result = Py_NewRef(Py_None);
        }
    }
    PyBuffer_Release(&src);
    PyBuffer_Release(&dst);
    return result;
}

/* ---- matrix products on the pool ----
 * The GEMM itself is a BLAS library's (MKL's or NumPy's own OpenBLAS, found by torchplug_cpu._gemm and
 * bound here with load_gemm), called single-threaded on one block of the result per pool range: the
 * pool is the only thread pool a product wakes, so products and the elementwise loops never have two
 * pools spinning for two cores.  The result is cut along its longer side into blocks of GEMM_ALIGN
 * rows or columns, so that each part keeps whole register tiles; each element is still the same
 * dot product over K, computed by the same library kernel. */

#include <dlfcn.h>
#include <limits.h>

enum { CBLAS_ROW_MAJOR = 101, CBLAS_NO_TRANS = 111, CBLAS_TRANS = 112 };
#define GEMM_ALIGN 16

typedef void (*sgemm_lp64_t)(int, int, int, int, int, int, float, const float *, int, const float *, int, float,
                             float *, int);
typedef void (*dgemm_lp64_t)(int, int, int, int, int, int, double, const double *, int, const double *, int, double,
                             double *, int);
typedef void (*sgemm_ilp64_t)(int, int, int, long long, long long, long long, float, const float *, long long,
                              const float *, long long, float, float *, long long);
typedef void (*dgemm_ilp64_t)(int, int, int, long long, long long, long long, double, const double *, long long,
                              const double *, long long, double, double *, long long);

static struct {
    void *s, *d;  /* cblas_sgemm / cblas_dgemm of the bound library */
    int ilp64;    /* 64-bit sizes */
} gemm_lib = {NULL, NULL, 0};

typedef struct {
    const char *a, *b;
    char *c;
    long long m, n, k, lda, ldb;
    int ta, tb, dbl, by_rows;
} gemm_t;

/* One library call for the result's rows (or columns) [begin, end) x GEMM_ALIGN. */
static void gemm_range(void *ctx, long long begin, long long end, int part) {
    const gemm_t *g = (const gemm_t *)ctx;
    const long long item = g->dbl ? sizeof(double) : sizeof(float);
    long long lo = begin * GEMM_ALIGN, hi = end * GEMM_ALIGN;
    const long long side = g->by_rows ? g->m : g->n;
    if (hi > side)
        hi = side;
    (void)part;
    if (hi <= lo)
        return;
    long long m = g->m, n = g->n;
    const char *a = g->a, *b = g->b;
    char *c = g->c;
    if (g->by_rows) { /* rows lo..hi of A (a column offset when A is stored transposed) and of C */
        m = hi - lo;
        a += (g->ta ? lo : lo * g->lda) * item;
        c += lo * g->n * item;
    } else { /* columns lo..hi of B and of C */
        n = hi - lo;
        b += (g->tb ? lo * g->ldb : lo) * item;
        c += lo * item;
    }
    const int ta = g->ta ? CBLAS_TRANS : CBLAS_NO_TRANS, tb = g->tb ? CBLAS_TRANS : CBLAS_NO_TRANS;
    if (gemm_lib.ilp64) {
        if (g->dbl)
            ((dgemm_ilp64_t)gemm_lib.d)(CBLAS_ROW_MAJOR, ta, tb, m, n, g->k, 1.0, (const double *)a, g->lda,
                                        (const double *)b, g->ldb, 0.0, (double *)c, g->n);
        else
            ((sgemm_ilp64_t)gemm_lib.s)(CBLAS_ROW_MAJOR, ta, tb, m, n, g->k, 1.0f, (const float *)a, g->lda,
                                        (const float *)b, g->ldb, 0.0f, (float *)c, g->n);
    } else {
        if (g->dbl)
            ((dgemm_lp64_t)gemm_lib.d)(CBLAS_ROW_MAJOR, ta, tb, (int)m, (int)n, (int)g->k, 1.0, (const double *)a,
                                       (int)g->lda, (const double *)b, (int)g->ldb, 0.0, (double *)c, (int)g->n);
        else
            ((sgemm_lp64_t)gemm_lib.s)(CBLAS_ROW_MAJOR, ta, tb, (int)m, (int)n, (int)g->k, 1.0f, (const float *)a,
                                       (int)g->lda, (const float *)b, (int)g->ldb, 0.0f, (float *)c, (int)g->n);
    }
}

/* load_gemm(path, sgemm_name, dgemm_name, ilp64) -> bool: binds the cblas_sgemm/cblas_dgemm of the
 * library at ``path`` (normally already loaded by the process; dlopen then returns it); False, with
 * nothing bound, when the library or a symbol is missing. */
static PyObject *py_load_gemm(PyObject *self, PyObject *args) {
    const char *path, *sname, *dname;
    int ilp64;
    if (!PyArg_ParseTuple(args, "sssp:load_gemm", &path, &sname, &dname, &ilp64))
        return NULL;
    void *handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!handle)
        Py_RETURN_FALSE;
    void *s = dlsym(handle, sname), *d = dlsym(handle, dname);
    if (!s || !d) {
        dlclose(handle);
        Py_RETURN_FALSE;
    }
    /* the handle stays open: the bound functions live in it */
    gemm_lib.s = s;
    gemm_lib.d = d;
    gemm_lib.ilp64 = ilp64;
    Py_RETURN_TRUE;
}

/* A stored operand: exactly rows x cols items, C-contiguous. */
static int check_operand(Py_buffer *b, const char *what, long long rows, long long cols, Py_ssize_t item) {
    long long count;
    if (mul64(rows, cols, &count, what) < 0)
        return -1;
    return check_size(b, what, count, item);
}

/* gemm(a, b, c, dbl, ta, tb, m, n, k, parts): c (m x n, C-contiguous) = op(a) @ op(b), where a is
 * stored m x k (k x m when ta) and b k x n (n x k when tb), both C-contiguous; on up to ``parts``
 * pool threads. */
static PyObject *py_gemm(PyObject *self, PyObject *args) {
    Py_buffer a, b, c;
    int dbl, ta, tb, parts;
    long long m, n, k;
    if (!PyArg_ParseTuple(args, "y*y*w*pppLLLi:gemm", &a, &b, &c, &dbl, &ta, &tb, &m, &n, &k, &parts))
        return NULL;
    PyObject *result = NULL;
    const Py_ssize_t item = dbl ? sizeof(double) : sizeof(float);
    if (!(dbl ? gemm_lib.d : gemm_lib.s)) {
        PyErr_SetString(PyExc_RuntimeError, "_ckernels.gemm: no BLAS library is bound; call load_gemm first");
    } else if (m < 0 || n < 0 || k < 0 ||
               (!gemm_lib.ilp64 && (m > INT_MAX || n > INT_MAX || k > INT_MAX))) {
        PyErr_Format(PyExc_ValueError, "_ckernels.gemm: sizes %lld x %lld x %lld are negative or too large for the "
                     "bound library's 32-bit sizes", m, n, k);
    } else if (check_operand(&a, "a", ta ? k : m, ta ? m : k, item) == 0 &&
               check_operand(&b, "b", tb ? n : k, tb ? k : n, item) == 0 &&
               check_operand(&c, "c", m, n, item) == 0) {
        if (overlap(&c, &a) || overlap(&c, &b)) {
            PyErr_SetString(PyExc_ValueError, "_ckernels.gemm: the result shares memory with an operand; pass a "
                            "fresh result array");
        } else {
            gemm_t g = {(const char *)a.buf, (const char *)b.buf, (char *)c.buf, m, n, k,
                        ta ? (m ? m : 1) : (k ? k : 1), tb ? (k ? k : 1) : (n ? n : 1), ta, tb, dbl, n < m};
            const long long side = g.by_rows ? m : n;
            const long long blocks = (side + GEMM_ALIGN - 1) / GEMM_ALIGN;
            if (m && n && k) {
                Py_BEGIN_ALLOW_THREADS
                if (parts <= 1 || blocks < 2)
                    gemm_range(&g, 0, blocks, 0);
                else
                    parallel_for(gemm_range, &g, blocks, blocks / parts); /* (floor: n / grain >= parts) */
                Py_END_ALLOW_THREADS
            } else if (m && n) { /* an empty inner dim: zeros */
                memset(c.buf, 0, (size_t)c.len);
            }
            result = Py_NewRef(Py_None);
        }
    }
    PyBuffer_Release(&a);
    PyBuffer_Release(&b);
    PyBuffer_Release(&c);
    return result;
}

static PyMethodDef methods[] = {
    {"im2col", py_im2col, METH_VARARGS, "im2col(x, cols, dbl, geometry): fill the 2-d column matrix."},
    {"col2im", py_col2im, METH_VARARGS, "col2im(cols, dx, dbl, geometry): accumulate columns into dx."},
    {"max_pool2d", py_max_pool2d, METH_VARARGS, "max_pool2d(x, out, indices, dbl, geometry)."},
    {"max_pool_backward", py_max_pool_backward, METH_VARARGS,
     "max_pool_backward(grad_output, indices, grad_input, dbl, planes, out_per_plane, in_per_plane)."},
    {"threshold_backward", py_threshold_backward, METH_VARARGS,
     "threshold_backward(x, grad, out, threshold, dbl): out = x <= threshold ? 0 : grad."},
    {"softmax", py_softmax, METH_VARARGS,
     "softmax(x, out, dbl, rows, n, log): (log_)softmax over each row of a (rows, n) array."},
    {"softmax_backward", py_softmax_backward, METH_VARARGS,
     "softmax_backward(grad, output, out, dbl, rows, n, log): the matching backward."},
    {"nll", py_nll, METH_VARARGS, "nll(x, target, dbl, rows, n, ignore_index) -> (total, count)."},
    {"nll_backward", py_nll_backward, METH_VARARGS,
     "nll_backward(target, grad_input, dbl, rows, n, ignore_index, value)."},
    {"set_num_threads", py_set_num_threads, METH_VARARGS,
     "set_num_threads(n): the most threads one large loop below uses."},
    {"get_num_threads", py_get_num_threads, METH_NOARGS, "get_num_threads() -> the count set_num_threads gave."},
    {"binary", py_binary, METH_VARARGS, "binary(op, x, y, out, dbl): out = x op y (0 add, 1 sub, 2 mul, 3 div)."},
    {"binary_scalar", py_binary_scalar, METH_VARARGS,
     "binary_scalar(op, x, scalar, out, dbl, scalar_first): out = x op scalar (or scalar op x)."},
    {"unary", py_unary, METH_VARARGS, "unary(op, x, out, dbl): 0 neg, 1 abs, 2 sqrt, 3 square, 4 relu."},
    {"sum", py_sum, METH_VARARGS, "sum(x, dbl) -> the pairwise sum (double) of a float32/float64 buffer."},
    {"reduce_dim", py_reduce_dim, METH_VARARGS,
     "reduce_dim(op, x, out, dbl, outer, r, inner): out = sum (0), max (1) or min (2) over the middle axis."},
    {"copy", py_copy, METH_VARARGS, "copy(src, dst): dst[:] = src[:] for two disjoint buffers of one length."},
    {"copy_strided", py_copy_strided, METH_VARARGS,
     "copy_strided(src, dst): a strided src into a disjoint C-contiguous dst of its items."},
    {"axpy", py_axpy, METH_VARARGS, "axpy(x, y, alpha, dbl): y += alpha * x in place."},
    {"load_gemm", py_load_gemm, METH_VARARGS,
     "load_gemm(path, sgemm_name, dgemm_name, ilp64) -> bool: bind a library's cblas_sgemm/cblas_dgemm."},
    {"gemm", py_gemm, METH_VARARGS,
     "gemm(a, b, c, dbl, ta, tb, m, n, k, parts): c = op(a) @ op(b) through the bound library on the pool."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "torchplug_cpu._ckernels",
                                    "Sliding-window loops of the cpu backend in C (optional).", -1, methods};

PyMODINIT_FUNC PyInit__ckernels(void) {
    static int registered = 0;
    if (!registered) {
        pthread_atfork(NULL, NULL, pool_after_fork_child);
        registered = 1;
    }
    return PyModule_Create(&module);
}
