/* torchplug._fastpath: the one step every op ends with -- wrapping a fresh backend buffer in a
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

enum { T_DATA, T_DTYPE, T_DEVICE, T_KEYSET, T_STORAGE, T_BASE, T_RG, T_GRAD, T_GRAD_FN, T_META, N_T };
static const char *tensor_slots[N_T] = {"_data", "_dtype", "_device", "_keyset", "_storage", "_base",
                                       "_requires_grad", "_grad", "_grad_fn", "_autograd_meta"};
enum { S_VERSION, S_NBYTES, S_DEVICE, S_DATA, S_ALLOCATION, N_S };
static const char *storage_slots[N_S] = {"version", "nbytes", "device", "data", "allocation"};
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
        if (m->type != T_OBJECT_EX) {
            Py_DECREF(descr);
            PyErr_Format(PyExc_TypeError, "%s.%s is not an object slot", type->tp_name, names[i]);
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
    if (!PyArg_ParseTuple(args, "O!O!O!", &PyType_Type, &t, &PyType_Type, &s, &PyType_Type, &d))
        return NULL;
    if (read_offsets(t, tensor_slots, t_off, N_T) < 0 || read_offsets(s, storage_slots, s_off, N_S) < 0 ||
        read_offsets(d, stats_slots, d_off, N_D) < 0)
        return NULL;
    Py_INCREF(t); Py_XSETREF(tensor_type, t);
    Py_INCREF(s); Py_XSETREF(storage_type, s);
    Py_INCREF(d); Py_XSETREF(stats_type, d);
    /* a method descriptor, so slot_tp_finalize calls it with the storage as self */
    PyObject *del = PyDescr_NewMethod(s, &storage_del_def);
    if (del == NULL || PyObject_SetAttrString((PyObject *)s, "__del__", del) < 0) {
        Py_XDECREF(del);
        return NULL;
    }
    Py_DECREF(del);
    Py_RETURN_NONE;
}

static inline void set_slot(PyObject *obj, Py_ssize_t off, PyObject *value) {
    Py_INCREF(value);
    Py_XSETREF(SLOT(obj, off), value);
}

/* Add ``delta`` to an int slot of the stats; returns the new value, -1 with an exception set on error. */
static inline long long add_to(PyObject *stats, int slot, long long delta) {
    PyObject *old = SLOT(stats, d_off[slot]);
    long long v = old == NULL ? 0 : PyLong_AsLongLong(old);
    if (v == -1 && PyErr_Occurred())
        return -1;
    v += delta;
    PyObject *nv = PyLong_FromLongLong(v);
    if (nv == NULL)
        return -1;
    Py_XSETREF(SLOT(stats, d_off[slot]), nv);
    return v;
}

static inline int raise_peak(PyObject *stats, int slot, long long value) {
    PyObject *old = SLOT(stats, d_off[slot]);
    long long p = old == NULL ? 0 : PyLong_AsLongLong(old);
    if (p == -1 && PyErr_Occurred())
        return -1;
    if (value > p) {
        PyObject *nv = PyLong_FromLongLong(value);
        if (nv == NULL)
            return -1;
        Py_XSETREF(SLOT(stats, d_off[slot]), nv);
    }
    return 0;
}

static int account(PyObject *stats, long long nbytes) {
    long long c, k;
    if (add_to(stats, D_TOT_N, 1) == -1 && PyErr_Occurred()) return -1;
    if (add_to(stats, D_TOT_B, nbytes) == -1 && PyErr_Occurred()) return -1;
    c = add_to(stats, D_CUR_B, nbytes);
    if (c == -1 && PyErr_Occurred()) return -1;
    if (raise_peak(stats, D_PEAK_B, c) < 0) return -1;
    k = add_to(stats, D_CUR_N, 1);
    if (k == -1 && PyErr_Occurred()) return -1;
    if (raise_peak(stats, D_PEAK_N, k) < 0) return -1;
    if (nbytes > SMALL_SIZE) {
        long long lb, ln;
        if (add_to(stats, D_LTOT_N, 1) == -1 && PyErr_Occurred()) return -1;
        if (add_to(stats, D_LTOT_B, nbytes) == -1 && PyErr_Occurred()) return -1;
        lb = add_to(stats, D_LCUR_B, nbytes);
        if (lb == -1 && PyErr_Occurred()) return -1;
        ln = add_to(stats, D_LCUR_N, 1);
        if (ln == -1 && PyErr_Occurred()) return -1;
        if (raise_peak(stats, D_LPEAK_B, lb) < 0 || raise_peak(stats, D_LPEAK_N, ln) < 0) return -1;
    } else {
        PyObject *lb_o = SLOT(stats, d_off[D_LCUR_B]), *ln_o = SLOT(stats, d_off[D_LCUR_N]);
        long long lb = lb_o == NULL ? 0 : PyLong_AsLongLong(lb_o);
        long long ln = ln_o == NULL ? 0 : PyLong_AsLongLong(ln_o);
        if (PyErr_Occurred()) return -1;
        if (raise_peak(stats, D_SPEAK_B, c - lb) < 0 || raise_peak(stats, D_SPEAK_N, k - ln) < 0) return -1;
    }
    return 0;
}

/* new_tensor(data, dtype, device, keyset, stats, nbytes) -> Tensor owning ``data`` in a fresh
 * TrackedStorage.  Same as TrackedStorage(nbytes, device, data, stats) wrapped by make_tensor. */
static PyObject *new_tensor(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 6) {
        PyErr_SetString(PyExc_TypeError, "new_tensor(data, dtype, device, keyset, stats, nbytes)");
        return NULL;
    }
    if (tensor_type == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "torchplug._fastpath.configure() was not called");
        return NULL;
    }
    PyObject *data = args[0], *dtype = args[1], *device = args[2], *keyset = args[3], *stats = args[4];
    PyObject *nbytes = args[5];
    PyObject *storage;
    if (Py_TYPE(stats) != stats_type || SLOT(stats, d_off[D_SLOW]) != Py_False) {
        /* the replacement allocator's slow path (or an unexpected stats object): the Python class */
        PyObject *cargs[4] = {nbytes, device, data, stats};
        storage = PyObject_Vectorcall((PyObject *)storage_type, cargs, 4, NULL);
        if (storage == NULL)
            return NULL;
    } else {
        long long n = PyLong_AsLongLong(nbytes);
        if (n == -1 && PyErr_Occurred())
            return NULL;
        storage = storage_type->tp_alloc(storage_type, 0);
        if (storage == NULL)
            return NULL;
        set_slot(storage, s_off[S_VERSION], zero);
        set_slot(storage, s_off[S_NBYTES], nbytes);
        set_slot(storage, s_off[S_DEVICE], device);
        set_slot(storage, s_off[S_DATA], data);
        if (account(stats, n) < 0) {
            /* no allocation slot yet: __del__ leaves the counters alone */
            Py_DECREF(storage);
            return NULL;
        }
        set_slot(storage, s_off[S_ALLOCATION], stats);
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

/* TrackedStorage.__del__: give the bytes back to the device's counters (fast path), or let the
 * allocation object release itself (slow-path blocks, a freed storage, the slow path switched on). */
static PyObject *storage_del(PyObject *self, PyObject *unused) {
    PyObject *a = SLOT(self, s_off[S_ALLOCATION]);
    if (a == NULL)
        Py_RETURN_NONE;
    if (Py_TYPE(a) != stats_type || SLOT(a, d_off[D_SLOW]) != Py_False)
        return PyObject_CallMethod(a, "release", "O", self);
    PyObject *nb = SLOT(self, s_off[S_NBYTES]);
    long long n = nb == NULL ? 0 : PyLong_AsLongLong(nb);
    if (n == -1 && PyErr_Occurred())
        return NULL;
    if (add_to(a, D_CUR_B, -n) == -1 && PyErr_Occurred()) return NULL;
    if (add_to(a, D_CUR_N, -1) == -1 && PyErr_Occurred()) return NULL;
    if (n > SMALL_SIZE) {
        if (add_to(a, D_LCUR_B, -n) == -1 && PyErr_Occurred()) return NULL;
        if (add_to(a, D_LCUR_N, -1) == -1 && PyErr_Occurred()) return NULL;
    }
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
        PyErr_SetString(PyExc_RuntimeError, "torchplug._fastpath.configure() was not called");
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

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "torchplug._fastpath",
                                    "Tensor creation in C (optional; see torchplug._fast_wrap).", -1, methods};

PyMODINIT_FUNC PyInit__fastpath(void) {
    zero = PyLong_FromLong(0);
    if (zero == NULL)
        return NULL;
    return PyModule_Create(&module);
}
