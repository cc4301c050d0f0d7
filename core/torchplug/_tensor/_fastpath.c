/* torchplug._tensor._fastpath: the one step every op ends with -- wrapping a fresh backend buffer in a
 * Tensor whose Storage is accounted to the device's allocator -- done in C.
 *
 * Optional: built when a compiler is present (setup.py marks it optional) and used by backends
 * through torchplug._fast_wrap, which falls back to the same steps in Python.  The objects it
 * makes are ordinary instances of the Python classes Tensor and TrackedStorage: their __slots__
 * are filled through the slot offsets read from the classes' member descriptors in configure(),
 * and the allocator counters (DeviceStats slots) get the same updates as
 * TrackedStorage.__init__'s fast path.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>
#include <limits.h>
#include <string.h>

enum { T_DATA, T_DTYPE, T_DEVICE, T_KEYSET, T_STORAGE, T_BASE, T_RG, T_GRAD, T_GRAD_FN, T_META, N_T };
static const char *tensor_slots[N_T] = {"_data", "_dtype", "_device", "_keyset", "_storage", "_base",
                                       "_requires_grad", "_grad", "_grad_fn", "_autograd_meta"};
enum { S_VERSION, S_NBYTES, S_DEVICE, S_DATA, S_ALLOCATION, N_S };
static const char *storage_slots[N_S] = {"version", "_nbytes", "device", "data", "allocation"};
enum { D_SLOW, D_CUR_B, D_CUR_N, D_PEAK_B, D_PEAK_N, D_TOT_B, D_TOT_N, D_LCUR_B, D_LCUR_N, D_LPEAK_B,
       D_LPEAK_N, D_LTOT_B, D_LTOT_N, D_SPEAK_B, D_SPEAK_N, N_D };
static const char *stats_slots[N_D] = {"slow", "cur_b", "cur_n", "peak_b", "peak_n", "tot_b", "tot_n",
                                      "lcur_b", "lcur_n", "lpeak_b", "lpeak_n", "ltot_b", "ltot_n",
                                      "speak_b", "speak_n"};

static Py_ssize_t t_off[N_T], s_off[N_S], d_off[N_D];
static PyTypeObject *tensor_type = NULL, *storage_type = NULL, *stats_type = NULL;
static PyObject *zero = NULL;  /* the int 0 (a storage's first version) */
static PyMethodDef storage_del_def;  /* TrackedStorage.__del__, defined below */

#define SMALL_SIZE 1048576

#define SLOT(obj, off) (*(PyObject **)((char *)(obj) + (off)))

/* Reads the slot offsets of ``names`` on ``type`` into ``out``.  Each must be an object slot
 * (__slots__ member) defined by ``type`` or one of its bases and lie inside the instance, so
 * the SLOT() reads and writes below stay within objects of that type. */
static int read_offsets(PyTypeObject *type, const char **names, Py_ssize_t *out, int n) {
    for (int i = 0; i < n; i++) {
        PyObject *descr = PyObject_GetAttrString((PyObject *)type, names[i]);
        if (descr == NULL)
            return -1;
        if (Py_TYPE(descr) != &PyMemberDescr_Type) {
            Py_DECREF(descr);
            PyErr_Format(PyExc_TypeError, "%s.%s is not a __slots__ member", type->tp_name, names[i]);
            return -1;
        }
        PyMemberDef *m = ((PyMemberDescrObject *)descr)->d_member;
        PyTypeObject *owner = ((PyMemberDescrObject *)descr)->d_common.d_type;
        if (m->type != T_OBJECT_EX) {
            Py_DECREF(descr);
            PyErr_Format(PyExc_TypeError, "%s.%s is not an object slot", type->tp_name, names[i]);
            return -1;
        }
        if (owner == NULL || !PyType_IsSubtype(type, owner) || m->offset < (Py_ssize_t)sizeof(PyObject) ||
            m->offset > owner->tp_basicsize - (Py_ssize_t)sizeof(PyObject *)) {
            Py_DECREF(descr);
            PyErr_Format(PyExc_TypeError, "%s.%s is not a slot of %s's instances (offset %zd)", type->tp_name,
                         names[i], type->tp_name, m->offset);
            return -1;
        }
        out[i] = m->offset;
        Py_DECREF(descr);
    }
    return 0;
}

/* configure(Tensor, TrackedStorage, DeviceStats) */
static PyObject *configure(PyObject *self, PyObject *args) {
    PyTypeObject *t, *s, *d;
    Py_ssize_t new_t[N_T], new_s[N_S], new_d[N_D];
    if (!PyArg_ParseTuple(args, "O!O!O!", &PyType_Type, &t, &PyType_Type, &s, &PyType_Type, &d))
        return NULL;
    /* read everything first: a failure leaves the previous configuration whole */
    if (read_offsets(t, tensor_slots, new_t, N_T) < 0 || read_offsets(s, storage_slots, new_s, N_S) < 0 ||
        read_offsets(d, stats_slots, new_d, N_D) < 0)
        return NULL;
    /* a method descriptor, so slot_tp_finalize calls it with the storage as self */
    PyObject *del = PyDescr_NewMethod(s, &storage_del_def);
    if (del == NULL)
        return NULL;
    memcpy(t_off, new_t, sizeof t_off);
    memcpy(s_off, new_s, sizeof s_off);
    memcpy(d_off, new_d, sizeof d_off);
    Py_INCREF(t); Py_XSETREF(tensor_type, t);
    Py_INCREF(s); Py_XSETREF(storage_type, s);
    Py_INCREF(d); Py_XSETREF(stats_type, d);
    if (PyObject_SetAttrString((PyObject *)s, "__del__", del) < 0) {
        Py_DECREF(del);
        return NULL;
    }
    Py_DECREF(del);
    Py_RETURN_NONE;
}

static inline void set_slot(PyObject *obj, Py_ssize_t off, PyObject *value) {
    Py_INCREF(value);
    Py_XSETREF(SLOT(obj, off), value);
}

#define ALL_COUNTERS (((1u << N_D) - 1) & ~1u) /* D_CUR_B..N_D */
#define COUNTER(i) (1u << (i))

/* The allocator counters of ``stats`` named by ``which`` (COUNTER bits) as 64-bit ints in v.  Returns 0,
 * or 1 when one is unset, not an exact int, or out of range (the caller then takes the Python steps,
 * which handle any number), or -1 with an exception set.  The others in v are left as they are. */
static int read_counters(PyObject *stats, long long *v, unsigned which) {
    for (int i = D_CUR_B; i < N_D; i++) {
        if (!(which & COUNTER(i)))
            continue;
        PyObject *o = SLOT(stats, d_off[i]);
        int overflow;
        if (o == NULL || !PyLong_CheckExact(o))
            return 1;
        v[i] = PyLong_AsLongLongAndOverflow(o, &overflow);
        if (overflow)
            return 1;
        if (v[i] == -1 && PyErr_Occurred())
            return -1;
    }
    return 0;
}

/* Stores the counters named by ``which`` whose value in ``w`` differs from ``v``. */
static int write_counters(PyObject *stats, const long long *v, const long long *w, unsigned which) {
    for (int i = D_CUR_B; i < N_D; i++) {
        if (!(which & COUNTER(i)) || w[i] == v[i])
            continue;
        PyObject *nv = PyLong_FromLongLong(w[i]);
        if (nv == NULL)
            return -1;
        Py_XSETREF(SLOT(stats, d_off[i]), nv);
    }
    return 0;
}

#define ADD_OR_SLOW(dst, a, b) \
    if (__builtin_add_overflow((a), (b), &(dst))) return 1
#define RAISE_PEAK(peak, value) \
    if ((value) > w[peak]) w[peak] = (value)

/* TrackedStorage.__init__'s counter updates for ``nbytes`` (>= 0) fresh bytes.  Computed in full
 * before anything is stored: 1 (nothing stored) when a counter is not a 64-bit int or a sum would
 * overflow, so the caller can take the Python class instead; -1 with an exception set. */
static int account(PyObject *stats, long long nbytes) {
    long long v[N_D], w[N_D];
    int r = read_counters(stats, v, ALL_COUNTERS);
    if (r != 0)
        return r;
    memcpy(w, v, sizeof w);
    ADD_OR_SLOW(w[D_TOT_N], v[D_TOT_N], 1);
    ADD_OR_SLOW(w[D_TOT_B], v[D_TOT_B], nbytes);
    ADD_OR_SLOW(w[D_CUR_B], v[D_CUR_B], nbytes);
    RAISE_PEAK(D_PEAK_B, w[D_CUR_B]);
    ADD_OR_SLOW(w[D_CUR_N], v[D_CUR_N], 1);
    RAISE_PEAK(D_PEAK_N, w[D_CUR_N]);
    if (nbytes > SMALL_SIZE) {
        ADD_OR_SLOW(w[D_LTOT_N], v[D_LTOT_N], 1);
        ADD_OR_SLOW(w[D_LTOT_B], v[D_LTOT_B], nbytes);
        ADD_OR_SLOW(w[D_LCUR_B], v[D_LCUR_B], nbytes);
        ADD_OR_SLOW(w[D_LCUR_N], v[D_LCUR_N], 1);
        RAISE_PEAK(D_LPEAK_B, w[D_LCUR_B]);
        RAISE_PEAK(D_LPEAK_N, w[D_LCUR_N]);
    } else {
        long long small_b, small_n;
        if (__builtin_sub_overflow(w[D_CUR_B], v[D_LCUR_B], &small_b) ||
            __builtin_sub_overflow(w[D_CUR_N], v[D_LCUR_N], &small_n))
            return 1;
        RAISE_PEAK(D_SPEAK_B, small_b);
        RAISE_PEAK(D_SPEAK_N, small_n);
    }
    return write_counters(stats, v, w, ALL_COUNTERS);
}

/* new_tensor(data, dtype, device, keyset, stats, nbytes) -> Tensor owning ``data`` in a fresh
 * TrackedStorage.  Same as TrackedStorage(nbytes, device, data, stats) wrapped by make_tensor. */
static PyObject *new_tensor(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 6) {
        PyErr_SetString(PyExc_TypeError, "new_tensor(data, dtype, device, keyset, stats, nbytes)");
        return NULL;
    }
    if (tensor_type == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "torchplug._tensor._fastpath.configure() was not called");
        return NULL;
    }
    PyObject *data = args[0], *dtype = args[1], *device = args[2], *keyset = args[3], *stats = args[4];
    PyObject *nbytes = args[5];
    PyObject *storage = NULL;
    long long n = -1;
    if (PyLong_CheckExact(nbytes)) {
        int overflow;
        n = PyLong_AsLongLongAndOverflow(nbytes, &overflow);
        if (n == -1 && PyErr_Occurred())
            return NULL;
        if (overflow)
            n = -1;
    }
    if (n >= 0 && Py_TYPE(stats) == stats_type && SLOT(stats, d_off[D_SLOW]) == Py_False) {
        const int r = account(stats, n);
        if (r < 0)
            return NULL;
        if (r == 0) {
            storage = storage_type->tp_alloc(storage_type, 0);
            if (storage == NULL) /* counted but never made: what the Python class does on MemoryError too */
                return NULL;
            set_slot(storage, s_off[S_VERSION], zero);
            set_slot(storage, s_off[S_NBYTES], nbytes);
            set_slot(storage, s_off[S_DEVICE], device);
            set_slot(storage, s_off[S_DATA], data);
            set_slot(storage, s_off[S_ALLOCATION], stats);
        }
    }
    if (storage == NULL) {
        /* the replacement allocator's slow path, an unexpected stats object, a byte count that is not
         * a non-negative 64-bit int, or counters past 64 bits: the Python class, whatever it makes of them */
        PyObject *cargs[4] = {nbytes, device, data, stats};
        storage = PyObject_Vectorcall((PyObject *)storage_type, cargs, 4, NULL);
        if (storage == NULL)
            return NULL;
    }
    PyObject *t = tensor_type->tp_alloc(tensor_type, 0);
    if (t == NULL) {
        Py_DECREF(storage);
        return NULL;
    }
    set_slot(t, t_off[T_DATA], data);
    set_slot(t, t_off[T_DTYPE], dtype);
    set_slot(t, t_off[T_DEVICE], device);
    set_slot(t, t_off[T_KEYSET], keyset);
    SLOT(t, t_off[T_STORAGE]) = storage;  /* the reference made above */
    set_slot(t, t_off[T_BASE], Py_None);
    set_slot(t, t_off[T_RG], Py_False);
    set_slot(t, t_off[T_GRAD], Py_None);
    set_slot(t, t_off[T_GRAD_FN], Py_None);
    set_slot(t, t_off[T_META], Py_None);
    return t;
}

/* ``stats.<slot> -= delta`` on Python numbers (TrackedStorage.__del__'s own arithmetic). */
static int sub_slot(PyObject *stats, int slot, PyObject *delta) {
    PyObject *old = SLOT(stats, d_off[slot]);
    if (old == NULL) {
        PyErr_Format(PyExc_AttributeError, "'%s' object has no attribute '%s'", Py_TYPE(stats)->tp_name,
                     stats_slots[slot]);
        return -1;
    }
    PyObject *nv = PyNumber_Subtract(old, delta);
    if (nv == NULL)
        return -1;
    Py_XSETREF(SLOT(stats, d_off[slot]), nv);
    return 0;
}

/* TrackedStorage.__del__: give the bytes back to the device's counters (fast path), or let the
 * allocation object release itself (slow-path blocks, a freed storage, the slow path switched on). */
static PyObject *storage_del(PyObject *self, PyObject *unused) {
    if (storage_type == NULL || !PyObject_TypeCheck(self, storage_type)) {
        /* a storage of classes configure() has since replaced: its slots may lie elsewhere */
        PyErr_Format(PyExc_TypeError, "TrackedStorage.__del__ (C) called on %s, not the configured storage class",
                     Py_TYPE(self)->tp_name);
        return NULL;
    }
    PyObject *a = SLOT(self, s_off[S_ALLOCATION]);
    if (a == NULL)
        Py_RETURN_NONE;
    if (Py_TYPE(a) != stats_type || SLOT(a, d_off[D_SLOW]) != Py_False)
        return PyObject_CallMethod(a, "release", "O", self);
    PyObject *nb = SLOT(self, s_off[S_NBYTES]);
    if (nb == NULL) {
        PyErr_SetString(PyExc_AttributeError, "'TrackedStorage' object has no attribute '_nbytes'");
        return NULL;
    }
    long long v[N_D] = {0}, w[N_D], n = 0;
    int overflow = 1, r = 0;
    if (PyLong_CheckExact(nb)) {
        n = PyLong_AsLongLongAndOverflow(nb, &overflow);
        if (n == -1 && PyErr_Occurred())
            return NULL;
    }
    /* a free changes the current counters only (and the large-block ones for a large block): read just those */
    const unsigned which =
        COUNTER(D_CUR_B) | COUNTER(D_CUR_N) | (n > SMALL_SIZE ? COUNTER(D_LCUR_B) | COUNTER(D_LCUR_N) : 0);
    if (!overflow && n != LLONG_MIN && (r = read_counters(a, v, which)) == 0) {
        memcpy(w, v, sizeof w);
        if (!__builtin_sub_overflow(v[D_CUR_B], n, &w[D_CUR_B]) && !__builtin_sub_overflow(v[D_CUR_N], 1, &w[D_CUR_N]) &&
            (n <= SMALL_SIZE || (!__builtin_sub_overflow(v[D_LCUR_B], n, &w[D_LCUR_B]) &&
                                 !__builtin_sub_overflow(v[D_LCUR_N], 1, &w[D_LCUR_N])))) {
            if (write_counters(a, v, w, which) < 0)
                return NULL;
            Py_RETURN_NONE;
        }
    }
    if (r < 0)
        return NULL;
    /* not 64-bit ints, or past 64 bits: the same steps on Python numbers */
    PyObject *one = PyLong_FromLong(1), *limit = PyLong_FromLong(SMALL_SIZE);
    int large = one && limit ? PyObject_RichCompareBool(nb, limit, Py_GT) : -1;
    int failed = large < 0 || sub_slot(a, D_CUR_B, nb) < 0 || sub_slot(a, D_CUR_N, one) < 0 ||
                 (large && (sub_slot(a, D_LCUR_B, nb) < 0 || sub_slot(a, D_LCUR_N, one) < 0));
    Py_XDECREF(one);
    Py_XDECREF(limit);
    if (failed)
        return NULL;
    Py_RETURN_NONE;
}

static PyMethodDef storage_del_def = {"__del__", storage_del, METH_NOARGS,
                                      "Give this storage's bytes back to its device's allocator counters."};

/* new_view(data, dtype, device, keyset, storage, base) -> Tensor sharing ``storage`` (make_tensor +
 * _base), for views and aliases. */
static PyObject *new_view(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 6) {
        PyErr_SetString(PyExc_TypeError, "new_view(data, dtype, device, keyset, storage, base)");
        return NULL;
    }
    if (tensor_type == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "torchplug._tensor._fastpath.configure() was not called");
        return NULL;
    }
    PyObject *t = tensor_type->tp_alloc(tensor_type, 0);
    if (t == NULL)
        return NULL;
    set_slot(t, t_off[T_DATA], args[0]);
    set_slot(t, t_off[T_DTYPE], args[1]);
    set_slot(t, t_off[T_DEVICE], args[2]);
    set_slot(t, t_off[T_KEYSET], args[3]);
    set_slot(t, t_off[T_STORAGE], args[4]);
    set_slot(t, t_off[T_BASE], args[5]);
    set_slot(t, t_off[T_RG], Py_False);
    set_slot(t, t_off[T_GRAD], Py_None);
    set_slot(t, t_off[T_GRAD_FN], Py_None);
    set_slot(t, t_off[T_META], Py_None);
    return t;
}

static PyMethodDef methods[] = {
    {"new_view", (PyCFunction)(void (*)(void))new_view, METH_FASTCALL,
     "new_view(data, dtype, device, keyset, storage, base) -> Tensor sharing storage."},
    {"configure", configure, METH_VARARGS,
     "configure(Tensor, TrackedStorage, DeviceStats): read their slot offsets; install the C __del__."},
    {"new_tensor", (PyCFunction)(void (*)(void))new_tensor, METH_FASTCALL,
     "new_tensor(data, dtype, device, keyset, stats, nbytes) -> Tensor with a fresh accounted storage."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "torchplug._tensor._fastpath",
                                    "Tensor creation in C (optional; see torchplug._fast_wrap).", -1, methods};

PyMODINIT_FUNC PyInit__fastpath(void) {
    zero = PyLong_FromLong(0);
    if (zero == NULL)
        return NULL;
    return PyModule_Create(&module);
}
