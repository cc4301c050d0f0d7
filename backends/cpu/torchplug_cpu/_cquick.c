/* torchplug_cpu._cquick: the fast paths of the hottest small cpu kernels, without Python frames.
 *
 * A ``Binary(ufunc, fallback, alpha)`` kernel is pointwise.py's ``_quick`` in C: two tensors of one dtype (not
 * float8), or a float32/float64 tensor and an exact Python int or float (an int64 tensor and an exact int),
 * small enough for one thread -> ``ufunc(x, y)`` under NumPy's "ignore" error state -> a fresh cpu tensor.
 * ``alpha``: the kernel takes (self, other, alpha) and the fast path needs alpha to be the int 1 (add).
 * A ``Relu(fallback)`` kernel does relu on a small C-contiguous float32/float64 tensor (x < 0 ? 0 : x, so -0.0
 * and NaN pass unchanged, as pointwise.py's ``_relu``).  A ``Sum(reduce, fallback)`` kernel is reduction.py's
 * full-sum fast path for a small float32/float64 tensor: NumPy's pairwise summation in C (bit for bit) for a
 * C-contiguous one, ``reduce(x, axis=None, dtype=x.dtype)`` for others.
 *
 * Every other call -- other types, dtypes or sizes, keyword arguments, a NumPy error -- goes to ``fallback``,
 * the Python kernel, which stays the reference and raises every error (it recomputes from the unchanged
 * inputs).  Both paths make the same result: the same ufunc on the same operands, wrapped by the same steps
 * as ``_common.wrap``.  The objects answer to the fallback's name, module and doc, so registrations and
 * introspection describe the Python kernel.
 *
 * Optional: built when a compiler is present (backends/cpu/setup.py marks it optional); pointwise.py
 * registers the Python kernels where it is missing or ``TORCHPLUG_PURE_PYTHON`` is set.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>

/* configure()'d state: the classes and constants the fast paths compare with */
static PyTypeObject *tensor_type = NULL, *ndarray_type = NULL;
static Py_ssize_t off_data, off_dtype;
static PyObject *common = NULL;      /* torchplug_cpu._common.__dict__: CPU, KEYSET, STATS, new_tensor, wrap */
static PyObject *np_to_dtype = NULL; /* numpy dtype -> torchplug dtype */
static PyObject *errvar = NULL;      /* NumPy's error-state context variable */
static PyObject *quiet_state = NULL; /* its value for errstate(all="ignore") */
static PyObject *empty_like = NULL;  /* numpy.empty_like */
static PyObject *asarray = NULL;     /* numpy.asarray */
static PyObject *empty = NULL;       /* numpy.empty */
static PyObject *float32 = NULL, *float64 = NULL, *int64 = NULL, *float8 = NULL; /* torchplug dtypes; a frozenset */
static long long min_items = 0;      /* operands this large take the threaded Python path */
static PyObject *s_size, *s_dtype, *s_nbytes, *s_cpu, *s_keyset, *s_stats, *s_new_tensor, *s_wrap;
static PyObject *sum_kwnames; /* ("axis", "dtype") */

#define SLOT(obj, off) (*(PyObject **)((char *)(obj) + (off)))

typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    PyObject *fallback; /* the Python kernel */
    PyObject *ufunc;    /* Binary: the NumPy ufunc; Sum: numpy.add.reduce; NULL for Relu */
    int alpha;          /* Binary: takes (self, other, alpha) */
} KernelObject;

static PyObject *call_fallback(KernelObject *k, PyObject *const *args, size_t nargsf, PyObject *kwnames) {
    return PyObject_Vectorcall(k->fallback, args, nargsf, kwnames);
}

/* A common-module global (borrowed), or NULL with an exception set. */
static PyObject *global(PyObject *name) {
    PyObject *v = PyDict_GetItemWithError(common, name);
    if (v == NULL && !PyErr_Occurred())
        PyErr_Format(PyExc_RuntimeError, "torchplug_cpu._common has no %U", name);
    return v;
}

/* _common.wrap(arr), stolen reference to ``arr``: a fresh cpu tensor owning it. */
static PyObject *wrap(PyObject *arr) {
    PyObject *result = NULL;
    if (Py_TYPE(arr) != ndarray_type) { /* a NumPy scalar: a 0-dim array, as wrap makes it */
        PyObject *a = PyObject_Vectorcall(asarray, &arr, 1, NULL);
        Py_DECREF(arr);
        if (a == NULL)
            return NULL;
        if (Py_TYPE(a) != ndarray_type) { /* not NumPy's: _common.wrap says what it makes of it */
            PyObject *fn = global(s_wrap);
            result = fn ? PyObject_Vectorcall(fn, &a, 1, NULL) : NULL;
            Py_DECREF(a);
            return result;
        }
        arr = a;
    }
    PyObject *npdt = PyObject_GetAttr(arr, s_dtype), *nbytes = PyObject_GetAttr(arr, s_nbytes);
    PyObject *dt = npdt ? PyDict_GetItemWithError(np_to_dtype, npdt) : NULL;
    if (dt == NULL && npdt != NULL && !PyErr_Occurred())
        PyErr_Format(PyExc_KeyError, "no torchplug dtype for NumPy's %R", npdt);
    if (dt != NULL && nbytes != NULL) {
        PyObject *fn = global(s_new_tensor), *cpu = global(s_cpu), *ks = global(s_keyset), *st = global(s_stats);
        if (fn && cpu && ks && st) {
            PyObject *args[6] = {arr, dt, cpu, ks, st, nbytes};
            result = PyObject_Vectorcall(fn, args, 6, NULL);
        }
    }
    Py_XDECREF(npdt);
    Py_XDECREF(nbytes);
    Py_DECREF(arr);
    return result;
}

/* 1 when ``obj`` is an ndarray of at least min_items items (the threaded path), 0 when not, -1 on error. */
static int large(PyObject *obj) {
    if (Py_TYPE(obj) != ndarray_type)
        return 0;
    PyObject *size = PyObject_GetAttr(obj, s_size);
    if (size == NULL)
        return -1;
    int overflow;
    long long n = PyLong_AsLongLongAndOverflow(size, &overflow);
    Py_DECREF(size);
    if (n == -1 && PyErr_Occurred())
        return -1;
    return overflow || n >= min_items;
}

static PyObject *binary_vectorcall(PyObject *self, PyObject *const *args, size_t nargsf, PyObject *kwnames) {
    KernelObject *k = (KernelObject *)self;
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    if (tensor_type == NULL || kwnames != NULL || nargs != 2 + k->alpha)
        return call_fallback(k, args, nargsf, kwnames);
    if (k->alpha) { /* alpha.__class__ is int and alpha == 1 */
        int overflow;
        if (!PyLong_CheckExact(args[2]) || PyLong_AsLongAndOverflow(args[2], &overflow) != 1 || overflow)
            return call_fallback(k, args, nargsf, kwnames);
    }
    PyObject *a = args[0], *b = args[1], *x, *y;
    if (Py_TYPE(a) != tensor_type)
        return call_fallback(k, args, nargsf, kwnames); /* a number first: rare, the Python kernel */
    PyObject *dt = SLOT(a, off_dtype);
    x = SLOT(a, off_data);
    if (dt == NULL || x == NULL)
        return call_fallback(k, args, nargsf, kwnames);
    if (Py_TYPE(b) == tensor_type) {
        int f8 = PySet_Contains(float8, dt);
        if (f8 < 0)
            return NULL;
        if (SLOT(b, off_dtype) != dt || f8 || (y = SLOT(b, off_data)) == NULL)
            return call_fallback(k, args, nargsf, kwnames);
    } else if (((PyFloat_CheckExact(b) || PyLong_CheckExact(b)) && (dt == float32 || dt == float64)) ||
               (PyLong_CheckExact(b) && dt == int64)) {
        y = b;
    } else {
        return call_fallback(k, args, nargsf, kwnames);
    }
    int lx = large(x), ly = lx == 0 ? large(y) : 0;
    if (lx < 0 || ly < 0)
        return NULL;
    if (lx || ly)
        return call_fallback(k, args, nargsf, kwnames);
    PyObject *token = PyContextVar_Set(errvar, quiet_state);
    if (token == NULL)
        return NULL;
    PyObject *operands[2] = {x, y};
    PyObject *r = PyObject_Vectorcall(k->ufunc, operands, 2, NULL);
    if (PyContextVar_Reset(errvar, token) < 0) {
        Py_DECREF(token);
        Py_XDECREF(r);
        return NULL;
    }
    Py_DECREF(token);
    if (r == NULL) { /* NumPy's error (a broadcast mismatch): the Python kernel raises PyTorch's */
        PyErr_Clear();
        return call_fallback(k, args, nargsf, kwnames);
    }
    return wrap(r);
}

static PyObject *relu_vectorcall(PyObject *self, PyObject *const *args, size_t nargsf, PyObject *kwnames) {
    KernelObject *k = (KernelObject *)self;
    if (tensor_type == NULL || kwnames != NULL || PyVectorcall_NARGS(nargsf) != 1 || Py_TYPE(args[0]) != tensor_type)
        return call_fallback(k, args, nargsf, kwnames);
    PyObject *dt = SLOT(args[0], off_dtype), *x = SLOT(args[0], off_data);
    if (x == NULL || (dt != float32 && dt != float64) || Py_TYPE(x) != ndarray_type)
        return call_fallback(k, args, nargsf, kwnames);
    Py_buffer in;
    if (PyObject_GetBuffer(x, &in, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0) {
        PyErr_Clear(); /* not C-contiguous: the Python kernel */
        return call_fallback(k, args, nargsf, kwnames);
    }
    const int dbl = in.format != NULL && strcmp(in.format, "d") == 0;
    const int flt = in.format != NULL && strcmp(in.format, "f") == 0;
    const Py_ssize_t item = dbl ? (Py_ssize_t)sizeof(double) : (Py_ssize_t)sizeof(float);
    if ((!dbl && !flt) || in.itemsize != item || in.len % item != 0 || in.len / item >= min_items ||
        (dt == float64) != dbl) {
        PyBuffer_Release(&in);
        return call_fallback(k, args, nargsf, kwnames);
    }
    PyObject *out = PyObject_Vectorcall(empty_like, &x, 1, NULL);
    if (out == NULL) {
        PyBuffer_Release(&in);
        return NULL;
    }
    Py_buffer o;
    if (PyObject_GetBuffer(out, &o, PyBUF_C_CONTIGUOUS | PyBUF_WRITABLE) < 0 || o.len != in.len) {
        if (!PyErr_Occurred())
            PyBuffer_Release(&o);
        PyErr_Clear();
        Py_DECREF(out);
        PyBuffer_Release(&in);
        return call_fallback(k, args, nargsf, kwnames);
    }
    const Py_ssize_t n = in.len / item;
    if (dbl) {
        const double *src = in.buf;
        double *dst = o.buf;
        for (Py_ssize_t i = 0; i < n; i++)
            dst[i] = src[i] < 0 ? 0.0 : src[i];
    } else {
        const float *src = in.buf;
        float *dst = o.buf;
        for (Py_ssize_t i = 0; i < n; i++)
            dst[i] = src[i] < 0 ? 0.0f : src[i];
    }
    PyBuffer_Release(&o);
    PyBuffer_Release(&in);
    return wrap(out);
}

/* NumPy's pairwise summation (numpy/_core/src/umath/loops_utils.h.src), in the same order with the same
 * accumulator type, so a C-contiguous array sums to the bits ``numpy.add.reduce`` gives: under 8 items one
 * running sum, up to 128 eight partial sums combined pairwise plus the rest, above that two halves split at a
 * multiple of 8.  The reduction starts from add's identity: ``0 + pairwise_sum(x)``. */
#define PAIRWISE_SUM(NAME, T)                                                                                   \
    static T NAME(const T *a, Py_ssize_t n) {                                                                   \
        if (n < 8) {                                                                                            \
            T res = 0;                                                                                          \
            for (Py_ssize_t i = 0; i < n; i++)                                                                  \
                res += a[i];                                                                                    \
            return res;                                                                                         \
        }                                                                                                       \
        if (n <= 128) {                                                                                         \
            T r[8];                                                                                             \
            Py_ssize_t i;                                                                                       \
            for (int j = 0; j < 8; j++)                                                                         \
                r[j] = a[j];                                                                                    \
            for (i = 8; i < n - (n % 8); i += 8)                                                                \
                for (int j = 0; j < 8; j++)                                                                     \
                    r[j] += a[i + j];                                                                           \
            T res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));                          \
            for (; i < n; i++)                                                                                  \
                res += a[i];                                                                                    \
            return res;                                                                                         \
        }                                                                                                       \
        Py_ssize_t n2 = n / 2;                                                                                  \
        n2 -= n2 % 8;                                                                                           \
        return NAME(a, n2) + NAME(a + n2, n - n2);                                                              \
    }

PAIRWISE_SUM(pairwise_float, float)
PAIRWISE_SUM(pairwise_double, double)

/* reduce_sum's fast path: a full sum of a small float32/float64 tensor (dim, keepdim, dtype at their defaults),
 * what ``numpy.add.reduce(x, axis=None, dtype=x.dtype)`` gives: summed here for a C-contiguous array (into a
 * fresh 0-dim array), through ``reduce`` (under the "ignore" error state) for any other layout. */
static PyObject *sum_vectorcall(PyObject *self, PyObject *const *args, size_t nargsf, PyObject *kwnames) {
    KernelObject *k = (KernelObject *)self;
    if (tensor_type == NULL || kwnames != NULL || PyVectorcall_NARGS(nargsf) != 4 || Py_TYPE(args[0]) != tensor_type ||
        args[1] != Py_None || args[2] != Py_False || args[3] != Py_None)
        return call_fallback(k, args, nargsf, kwnames);
    PyObject *dt = SLOT(args[0], off_dtype), *x = SLOT(args[0], off_data);
    if (x == NULL || (dt != float32 && dt != float64) || Py_TYPE(x) != ndarray_type)
        return call_fallback(k, args, nargsf, kwnames);
    int big = large(x);
    if (big < 0)
        return NULL;
    if (big)
        return call_fallback(k, args, nargsf, kwnames); /* the pairwise sum on the thread pool */
    PyObject *npdt = PyObject_GetAttr(x, s_dtype);
    if (npdt == NULL)
        return NULL;
    Py_buffer in;
    if (PyObject_GetBuffer(x, &in, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) == 0) {
        const int dbl = in.format != NULL && strcmp(in.format, "d") == 0;
        const int flt = in.format != NULL && strcmp(in.format, "f") == 0;
        const Py_ssize_t item = dbl ? (Py_ssize_t)sizeof(double) : (Py_ssize_t)sizeof(float);
        if ((dbl || flt) && (dt == float64) == dbl && in.itemsize == item && in.len % item == 0) {
            PyObject *shape = PyTuple_New(0);
            PyObject *call[2] = {shape, npdt};
            PyObject *out = shape ? PyObject_Vectorcall(empty, call, 2, NULL) : NULL;
            Py_XDECREF(shape);
            Py_buffer o;
            if (out == NULL || PyObject_GetBuffer(out, &o, PyBUF_C_CONTIGUOUS | PyBUF_WRITABLE) < 0) {
                PyBuffer_Release(&in);
                Py_DECREF(npdt);
                Py_XDECREF(out);
                return NULL;
            }
            if (o.len != item) {
                PyBuffer_Release(&o);
                PyBuffer_Release(&in);
                Py_DECREF(npdt);
                Py_DECREF(out);
                PyErr_SetString(PyExc_RuntimeError, "numpy.empty((), dtype) did not make one item");
                return NULL;
            }
            if (dbl)
                *(double *)o.buf = 0.0 + pairwise_double(in.buf, in.len / item);
            else
                *(float *)o.buf = 0.0f + pairwise_float(in.buf, in.len / item);
            PyBuffer_Release(&o);
            PyBuffer_Release(&in);
            Py_DECREF(npdt);
            return wrap(out);
        }
        PyBuffer_Release(&in);
    } else {
        PyErr_Clear(); /* not C-contiguous: NumPy's reduction */
    }
    PyObject *token = PyContextVar_Set(errvar, quiet_state);
    if (token == NULL) {
        Py_DECREF(npdt);
        return NULL;
    }
    PyObject *call[3] = {x, Py_None, npdt};
    PyObject *r = PyObject_Vectorcall(k->ufunc, call, 1, sum_kwnames);
    Py_DECREF(npdt);
    if (PyContextVar_Reset(errvar, token) < 0) {
        Py_DECREF(token);
        Py_XDECREF(r);
        return NULL;
    }
    Py_DECREF(token);
    if (r == NULL) {
        PyErr_Clear(); /* the Python kernel raises what it raises */
        return call_fallback(k, args, nargsf, kwnames);
    }
    return wrap(r);
}

static KernelObject *new_kernel(PyTypeObject *type, PyObject *fallback, PyObject *ufunc, int alpha, vectorcallfunc vc) {
    if (!PyCallable_Check(fallback) || (ufunc != NULL && !PyCallable_Check(ufunc))) {
        PyErr_SetString(PyExc_TypeError, "the fallback kernel and the ufunc must be callable");
        return NULL;
    }
    KernelObject *k = (KernelObject *)type->tp_alloc(type, 0);
    if (k == NULL)
        return NULL;
    k->vectorcall = vc;
    Py_INCREF(fallback);
    k->fallback = fallback;
    Py_XINCREF(ufunc);
    k->ufunc = ufunc;
    k->alpha = alpha;
    return k;
}

static PyTypeObject BinaryType, ReluType, SumType;

static PyObject *binary_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
    PyObject *ufunc, *fallback;
    int alpha = 0;
    static char *kwlist[] = {"ufunc", "fallback", "alpha", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OO|p:Binary", kwlist, &ufunc, &fallback, &alpha))
        return NULL;
    return (PyObject *)new_kernel(type, fallback, ufunc, alpha, binary_vectorcall);
}

static PyObject *sum_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
    PyObject *reduce, *fallback;
    static char *kwlist[] = {"reduce", "fallback", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OO:Sum", kwlist, &reduce, &fallback))
        return NULL;
    return (PyObject *)new_kernel(type, fallback, reduce, 0, sum_vectorcall);
}

static PyObject *relu_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
    PyObject *fallback;
    static char *kwlist[] = {"fallback", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O:Relu", kwlist, &fallback))
        return NULL;
    return (PyObject *)new_kernel(type, fallback, NULL, 0, relu_vectorcall);
}

static int kernel_traverse(KernelObject *k, visitproc visit, void *arg) {
    Py_VISIT(k->fallback);
    Py_VISIT(k->ufunc);
    return 0;
}

static int kernel_clear(KernelObject *k) {
    Py_CLEAR(k->fallback);
    Py_CLEAR(k->ufunc);
    return 0;
}

static void kernel_dealloc(KernelObject *k) {
    PyObject_GC_UnTrack(k);
    kernel_clear(k);
    Py_TYPE(k)->tp_free((PyObject *)k);
}

static PyObject *kernel_call(PyObject *self, PyObject *args, PyObject *kwargs) {
    if (((KernelObject *)self)->fallback == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "kernel was cleared");
        return NULL;
    }
    return PyVectorcall_Call(self, args, kwargs);
}

/* The fallback's name, module and doc (its type would answer its own), and whatever else it has. */
static PyObject *kernel_getattro(PyObject *self, PyObject *name) {
    PyObject *fb = ((KernelObject *)self)->fallback;
    if (fb == NULL || !PyUnicode_Check(name))
        return PyObject_GenericGetAttr(self, name);
    if (PyUnicode_CompareWithASCIIString(name, "__doc__") == 0 || PyUnicode_CompareWithASCIIString(name, "__module__") == 0 ||
        PyUnicode_CompareWithASCIIString(name, "__name__") == 0 || PyUnicode_CompareWithASCIIString(name, "__qualname__") == 0 ||
        PyUnicode_CompareWithASCIIString(name, "__dict__") == 0)
        return PyObject_GetAttr(fb, name);
    PyObject *r = PyObject_GenericGetAttr(self, name);
    if (r != NULL || !PyErr_ExceptionMatches(PyExc_AttributeError))
        return r;
    PyErr_Clear();
    return PyObject_GetAttr(fb, name);
}

static PyObject *kernel_repr(PyObject *self) {
    KernelObject *k = (KernelObject *)self;
    return PyUnicode_FromFormat("<%s kernel, C fast path of %R>", Py_TYPE(self)->tp_name, k->fallback);
}

static PyObject *kernel_fallback(PyObject *self, void *closure) {
    PyObject *fb = ((KernelObject *)self)->fallback;
    if (fb == NULL)
        Py_RETURN_NONE;
    Py_INCREF(fb);
    return fb;
}

static PyGetSetDef kernel_getset[] = {
    {"fallback", kernel_fallback, NULL, "The Python kernel: the reference, and every call the C path declines.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

#define KERNEL_TYPE(NAME, CNAME, NEW, DOC)                                                                      \
    static PyTypeObject CNAME = {                                                                               \
        PyVarObject_HEAD_INIT(NULL, 0).tp_name = "torchplug_cpu._cquick." NAME,                                 \
        .tp_basicsize = sizeof(KernelObject),                                                                   \
        .tp_dealloc = (destructor)kernel_dealloc,                                                               \
        .tp_vectorcall_offset = offsetof(KernelObject, vectorcall),                                             \
        .tp_repr = kernel_repr,                                                                                 \
        .tp_call = kernel_call,                                                                                 \
        .tp_getattro = kernel_getattro,                                                                         \
        .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL,                       \
        .tp_doc = DOC,                                                                                          \
        .tp_traverse = (traverseproc)kernel_traverse,                                                           \
        .tp_clear = (inquiry)kernel_clear,                                                                      \
        .tp_getset = kernel_getset,                                                                             \
        .tp_new = NEW,                                                                                          \
    };

KERNEL_TYPE("Binary", BinaryType, binary_new, "Binary(ufunc, fallback, alpha=False): _quick's fast path in C.")
KERNEL_TYPE("Relu", ReluType, relu_new, "Relu(fallback): relu of a small contiguous float tensor in C.")
KERNEL_TYPE("Sum", SumType, sum_new, "Sum(reduce, fallback): the full sum of a small float tensor without frames.")

/* The slot offset of ``type``'s member ``name`` (an object slot inside its instances), or -1. */
static Py_ssize_t slot_offset(PyTypeObject *type, const char *name) {
    PyObject *descr = PyObject_GetAttrString((PyObject *)type, name);
    if (descr == NULL)
        return -1;
    Py_ssize_t offset = -1;
    if (Py_TYPE(descr) == &PyMemberDescr_Type) {
        PyMemberDef *m = ((PyMemberDescrObject *)descr)->d_member;
        PyTypeObject *owner = ((PyMemberDescrObject *)descr)->d_common.d_type;
        if (m->type == T_OBJECT_EX && owner != NULL && PyType_IsSubtype(type, owner) &&
            m->offset >= (Py_ssize_t)sizeof(PyObject) && m->offset <= owner->tp_basicsize - (Py_ssize_t)sizeof(PyObject *))
            offset = m->offset;
    }
    Py_DECREF(descr);
    if (offset < 0)
        PyErr_Format(PyExc_TypeError, "%s.%s is not an object slot of its instances", type->tp_name, name);
    return offset;
}

/* configure(Tensor, ndarray, common_dict, np_to_dtype, errvar, quiet_state, empty_like, asarray, empty, float32,
 *           float64, int64, float8_set, min_items) */
static PyObject *configure(PyObject *self, PyObject *args) {
    PyTypeObject *t, *nd;
    PyObject *cd, *n2d, *ev, *qs, *el, *aa, *em, *f32, *f64, *i64, *f8;
    long long mi;
    if (!PyArg_ParseTuple(args, "O!O!O!O!OOOOOOOOO!L:configure", &PyType_Type, &t, &PyType_Type, &nd, &PyDict_Type, &cd,
                          &PyDict_Type, &n2d, &ev, &qs, &el, &aa, &em, &f32, &f64, &i64, &PyFrozenSet_Type, &f8, &mi))
        return NULL;
    if (!PyContextVar_CheckExact(ev)) {
        PyErr_SetString(PyExc_TypeError, "configure(): errvar must be a contextvars.ContextVar");
        return NULL;
    }
    if (mi < 1) {
        PyErr_SetString(PyExc_ValueError, "configure(): min_items must be positive");
        return NULL;
    }
    Py_ssize_t od = slot_offset(t, "_data"), ot = slot_offset(t, "_dtype");
    if (od < 0 || ot < 0)
        return NULL;
    off_data = od;
    off_dtype = ot;
    min_items = mi;
    PyObject *objs[] = {(PyObject *)t, (PyObject *)nd, cd, n2d, ev, qs, el, aa, em, f32, f64, i64, f8};
    for (size_t i = 0; i < sizeof objs / sizeof objs[0]; i++)
        Py_INCREF(objs[i]);
    Py_XSETREF(ndarray_type, nd);
    Py_XSETREF(common, cd);
    Py_XSETREF(np_to_dtype, n2d);
    Py_XSETREF(errvar, ev);
    Py_XSETREF(quiet_state, qs);
    Py_XSETREF(empty_like, el);
    Py_XSETREF(asarray, aa);
    Py_XSETREF(empty, em);
    Py_XSETREF(float32, f32);
    Py_XSETREF(float64, f64);
    Py_XSETREF(int64, i64);
    Py_XSETREF(float8, f8);
    Py_XSETREF(tensor_type, t); /* last: a non-NULL tensor_type switches the fast paths on */
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"configure", configure, METH_VARARGS,
     "configure(Tensor, ndarray, common_dict, np_to_dtype, errvar, quiet_state, empty_like, asarray, empty, "
     "float32, float64, int64, float8_set, min_items): what the fast paths compare with."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "torchplug_cpu._cquick",
                                    "The hottest small cpu kernels in C (optional; see pointwise.py).", -1, methods};

PyMODINIT_FUNC PyInit__cquick(void) {
    const char *names[] = {"size", "dtype", "nbytes", "CPU", "KEYSET", "STATS", "new_tensor", "wrap"};
    PyObject **slots[] = {&s_size, &s_dtype, &s_nbytes, &s_cpu, &s_keyset, &s_stats, &s_new_tensor, &s_wrap};
    for (int i = 0; i < 8; i++)
        if ((*slots[i] = PyUnicode_InternFromString(names[i])) == NULL)
            return NULL;
    /* interned, as the compiler makes keyword names: NumPy's argument parser matches those by identity first */
    PyObject *axis = PyUnicode_InternFromString("axis"), *dtype = PyUnicode_InternFromString("dtype");
    sum_kwnames = axis && dtype ? PyTuple_Pack(2, axis, dtype) : NULL;
    Py_XDECREF(axis);
    Py_XDECREF(dtype);
    if (sum_kwnames == NULL)
        return NULL;
    if (PyType_Ready(&BinaryType) < 0 || PyType_Ready(&ReluType) < 0 || PyType_Ready(&SumType) < 0)
        return NULL;
    PyObject *m = PyModule_Create(&module);
    if (m == NULL)
        return NULL;
    Py_INCREF(&BinaryType);
    if (PyModule_AddObject(m, "Binary", (PyObject *)&BinaryType) < 0) {
        Py_DECREF(&BinaryType);
        Py_DECREF(m);
        return NULL;
    }
    Py_INCREF(&ReluType);
    if (PyModule_AddObject(m, "Relu", (PyObject *)&ReluType) < 0) {
        Py_DECREF(&ReluType);
        Py_DECREF(m);
        return NULL;
    }
    Py_INCREF(&SumType);
    if (PyModule_AddObject(m, "Sum", (PyObject *)&SumType) < 0) {
        Py_DECREF(&SumType);
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
