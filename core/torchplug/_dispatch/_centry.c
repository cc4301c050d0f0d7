/* torchplug._dispatch._centry: the dispatch step of an operator call -- key-set computation, the thread-local
 * include set and exclude mask, the cache lookup and the kernel call -- done in C for the common signatures.
 *
 * Optional: built when a compiler is present (setup.py marks it optional).  torchplug._dispatch.codegen wraps
 * an op's generated Python entry point in an ``Entry`` when the op's signature fits (a few leading Tensor
 * arguments, every other argument defaulted) and arms it once the Python entry is compiled.  An armed Entry
 * takes calls that pass exactly those tensors positionally (exact ints, floats and bools too where the op takes
 * a number there); anything else -- keyword arguments, other types, key sets past 63 bits, a cache miss, no
 * tensor at all -- goes to the Python entry, which stays the reference implementation and raises every error.
 * So both paths call the same kernel with the same arguments, or the C path calls the Python one.
 *
 * An Entry behaves as the function it wraps: it binds as a method (``Tensor.__add__``), and its name, doc,
 * module, signature attributes and __dict__ are the wrapped function's.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>

#define MAX_CALL_ARGS 8 /* the tensors plus the defaulted arguments passed after them */
#define MAX_TENSORS 2   /* leading Tensor arguments the C path checks */

static PyTypeObject *tensor_type = NULL; /* set by configure() */
static Py_ssize_t keyset_offset = 0;     /* Tensor._keyset's slot */
static PyObject *str_include, *str_mask, *str_keyset;
static int enabled = 1; /* set_enabled(False): every call runs the Python entry (its frame is observed) */

typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    PyObject *func;     /* the generated Python entry point: reference implementation and fallback */
    PyObject *cache;    /* OperatorEntry.cache (key set -> kernel), NULL until armed */
    PyObject *tls;      /* the dispatcher's thread-local state (include, mask) */
    PyObject *defaults; /* tuple: the values the Python entry passes after the tensors */
    int ntensors;       /* positional arguments the C path takes */
    unsigned numbers;   /* bit i: argument i may be a Python number (no key) */
} EntryObject;

static PyObject *fallback(EntryObject *e, PyObject *const *args, size_t nargsf, PyObject *kwnames) {
    return PyObject_Vectorcall(e->func, args, nargsf, kwnames);
}

/* The key-set bits of ``obj`` (argument ``i``): 0 and *ok = 1 for a number the argument takes; *ok = 0 when
 * the C path does not handle this argument (the Python entry will). */
static long long arg_keyset(EntryObject *e, int i, PyObject *obj, int *ok) {
    PyObject *ks;
    PyTypeObject *type = Py_TYPE(obj);
    *ok = 0;
    if (type == tensor_type) {
        ks = *(PyObject **)((char *)obj + keyset_offset);
        if (ks == NULL)
            return 0;
        Py_INCREF(ks);
    } else if (PyType_IsSubtype(type, tensor_type)) {
        /* a subclass may redefine _keyset: read it the way the Python entry does */
        ks = PyObject_GetAttr(obj, str_keyset);
        if (ks == NULL) {
            PyErr_Clear(); /* the Python entry reads it again and raises what it raises */
            return 0;
        }
    } else {
        if ((e->numbers >> i & 1) && (PyFloat_CheckExact(obj) || PyLong_CheckExact(obj) || PyBool_Check(obj)))
            *ok = 1;
        return 0;
    }
    long long v = -1;
    if (PyLong_CheckExact(ks)) {
        int overflow;
        v = PyLong_AsLongLongAndOverflow(ks, &overflow);
        if (overflow)
            v = -1;
        if (PyErr_Occurred()) {
            PyErr_Clear();
            v = -1;
        }
    }
    Py_DECREF(ks);
    if (v < 0)
        return 0; /* past 63 bits or not an int: Python's arbitrary-precision arithmetic */
    *ok = 1;
    return v;
}

/* tls.<name> as a non-negative 63-bit int (include) or its low 64 bits (mask); -1 when it is neither. */
static int tls_bits(PyObject *tls, PyObject *name, int low_bits, unsigned long long *out) {
    PyObject *v = PyObject_GetAttr(tls, name);
    if (v == NULL) {
        PyErr_Clear();
        return -1;
    }
    int r = -1;
    if (PyLong_CheckExact(v)) {
        if (low_bits) {
            /* two's complement modulo 2**64: ``ks & mask`` for a 63-bit ks needs no more of the mask */
            *out = PyLong_AsUnsignedLongLongMask(v);
            r = 0;
        } else {
            int overflow;
            long long x = PyLong_AsLongLongAndOverflow(v, &overflow);
            if (!overflow && x >= 0) {
                *out = (unsigned long long)x;
                r = 0;
            }
        }
        if (PyErr_Occurred()) {
            PyErr_Clear();
            r = -1;
        }
    }
    Py_DECREF(v);
    return r;
}

static PyObject *entry_vectorcall(PyObject *self, PyObject *const *args, size_t nargsf, PyObject *kwnames) {
    EntryObject *e = (EntryObject *)self;
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    if (!enabled || e->cache == NULL || tensor_type == NULL || kwnames != NULL || nargs != e->ntensors)
        return fallback(e, args, nargsf, kwnames);
    unsigned long long ks = 0, include, mask;
    for (int i = 0; i < nargs; i++) {
        int ok;
        long long k = arg_keyset(e, i, args[i], &ok);
        if (!ok)
            return fallback(e, args, nargsf, kwnames);
        ks |= (unsigned long long)k;
    }
    if (ks == 0 || tls_bits(e->tls, str_include, 0, &include) < 0 || tls_bits(e->tls, str_mask, 1, &mask) < 0)
        return fallback(e, args, nargsf, kwnames); /* no tensor (the Python entry raises), or unusual TLS */
    ks = (ks | include) & mask;
    PyObject *key = PyLong_FromUnsignedLongLong(ks);
    if (key == NULL)
        return NULL;
    PyObject *kernel = PyDict_GetItemWithError(e->cache, key);
    Py_DECREF(key);
    if (kernel == NULL) {
        if (PyErr_Occurred())
            return NULL;
        return fallback(e, args, nargsf, kwnames); /* a cache miss: the Python entry resolves and caches it */
    }
    /* the stack: one free slot in front (PY_VECTORCALL_ARGUMENTS_OFFSET), the tensors, then the defaults */
    PyObject *stack[MAX_CALL_ARGS + 1];
    /* held for the call: a re-arm during it (a registration) replaces e->defaults, whose items the stack borrows */
    PyObject *defaults = e->defaults;
    Py_ssize_t ndef = PyTuple_GET_SIZE(defaults), total = nargs + ndef;
    if (total > MAX_CALL_ARGS) /* arm() refuses this; checked here too, next to the writes */
        return fallback(e, args, nargsf, kwnames);
    for (Py_ssize_t i = 0; i < nargs; i++)
        stack[1 + i] = args[i];
    for (Py_ssize_t i = 0; i < ndef; i++)
        stack[1 + nargs + i] = PyTuple_GET_ITEM(defaults, i);
    Py_INCREF(defaults);
    Py_INCREF(kernel); /* a registration during the call may clear the cache */
    PyObject *result = PyObject_Vectorcall(kernel, stack + 1, (size_t)total | PY_VECTORCALL_ARGUMENTS_OFFSET, NULL);
    Py_DECREF(kernel);
    Py_DECREF(defaults);
    return result;
}

static PyObject *entry_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
    PyObject *func;
    if (kwargs != NULL && PyDict_GET_SIZE(kwargs) != 0) {
        PyErr_SetString(PyExc_TypeError, "Entry(func) takes no keyword arguments");
        return NULL;
    }
    if (!PyArg_ParseTuple(args, "O:Entry", &func))
        return NULL;
    if (!PyCallable_Check(func)) {
        PyErr_Format(PyExc_TypeError, "Entry(func): func must be callable, not %.100s", Py_TYPE(func)->tp_name);
        return NULL;
    }
    EntryObject *e = (EntryObject *)type->tp_alloc(type, 0);
    if (e == NULL)
        return NULL;
    e->vectorcall = entry_vectorcall;
    Py_INCREF(func);
    e->func = func;
    return (PyObject *)e;
}

static int entry_traverse(EntryObject *e, visitproc visit, void *arg) {
    Py_VISIT(e->func);
    Py_VISIT(e->cache);
    Py_VISIT(e->tls);
    Py_VISIT(e->defaults);
    return 0;
}

static int entry_clear(EntryObject *e) {
    Py_CLEAR(e->func);
    Py_CLEAR(e->cache);
    Py_CLEAR(e->tls);
    Py_CLEAR(e->defaults);
    return 0;
}

static void entry_dealloc(EntryObject *e) {
    PyObject_GC_UnTrack(e);
    entry_clear(e);
    Py_TYPE(e)->tp_free((PyObject *)e);
}

static PyObject *entry_call(PyObject *self, PyObject *args, PyObject *kwargs) {
    EntryObject *e = (EntryObject *)self;
    if (e->func == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "Entry was cleared");
        return NULL;
    }
    return PyVectorcall_Call(self, args, kwargs);
}

/* Functions bind as methods; so does an Entry (it is a class attribute of Tensor for the methods). */
static PyObject *entry_descr_get(PyObject *self, PyObject *obj, PyObject *type) {
    if (obj == NULL || obj == Py_None) {
        Py_INCREF(self);
        return self;
    }
    return PyMethod_New(self, obj);
}

/* Attributes a function has that the Entry's type would otherwise answer with its own. */
static int forwarded(PyObject *name) {
    static const char *names[] = {"__doc__", "__module__", "__name__", "__qualname__", "__dict__",
                                  "__annotations__", NULL};
    for (int i = 0; names[i] != NULL; i++)
        if (PyUnicode_CompareWithASCIIString(name, names[i]) == 0)
            return 1;
    return 0;
}

static PyObject *entry_getattro(PyObject *self, PyObject *name) {
    EntryObject *e = (EntryObject *)self;
    if (e->func == NULL || !PyUnicode_Check(name))
        return PyObject_GenericGetAttr(self, name);
    if (forwarded(name))
        return PyObject_GetAttr(e->func, name);
    PyObject *r = PyObject_GenericGetAttr(self, name);
    if (r != NULL || !PyErr_ExceptionMatches(PyExc_AttributeError))
        return r;
    PyErr_Clear();
    return PyObject_GetAttr(e->func, name);
}

static int entry_setattro(PyObject *self, PyObject *name, PyObject *value) {
    EntryObject *e = (EntryObject *)self;
    if (e->func == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "Entry was cleared");
        return -1;
    }
    return PyObject_SetAttr(e->func, name, value);
}

static PyObject *entry_repr(PyObject *self) {
    EntryObject *e = (EntryObject *)self;
    return e->func != NULL ? PyObject_Repr(e->func) : PyUnicode_FromString("<cleared torchplug entry>");
}

/* arm(cache, tls, ntensors, numbers, defaults): take calls of ``ntensors`` positional arguments in C. */
static PyObject *entry_arm(PyObject *self, PyObject *args) {
    EntryObject *e = (EntryObject *)self;
    PyObject *cache, *tls, *defaults;
    int ntensors;
    unsigned int numbers;
    if (!PyArg_ParseTuple(args, "O!OiIO!:arm", &PyDict_Type, &cache, &tls, &ntensors, &numbers, &PyTuple_Type,
                          &defaults))
        return NULL;
    if (ntensors < 1 || ntensors > MAX_TENSORS) {
        PyErr_Format(PyExc_ValueError, "arm(): ntensors must be 1 to %d, not %d", MAX_TENSORS, ntensors);
        return NULL;
    }
    if (PyTuple_GET_SIZE(defaults) > MAX_CALL_ARGS - ntensors) {
        PyErr_Format(PyExc_ValueError, "arm(): at most %d arguments in all, not %zd", MAX_CALL_ARGS,
                     ntensors + PyTuple_GET_SIZE(defaults));
        return NULL;
    }
    if (numbers >> ntensors) {
        PyErr_SetString(PyExc_ValueError, "arm(): numbers names an argument past the tensors");
        return NULL;
    }
    Py_INCREF(cache);
    Py_INCREF(tls);
    Py_INCREF(defaults);
    /* set the fields before the cache: a half-armed Entry falls back */
    Py_XSETREF(e->tls, tls);
    Py_XSETREF(e->defaults, defaults);
    e->ntensors = ntensors;
    e->numbers = numbers;
    Py_XSETREF(e->cache, cache);
    Py_RETURN_NONE;
}

static PyObject *entry_disarm(PyObject *self, PyObject *unused) {
    Py_CLEAR(((EntryObject *)self)->cache);
    Py_RETURN_NONE;
}

static PyObject *entry_armed(PyObject *self, void *closure) {
    return PyBool_FromLong(((EntryObject *)self)->cache != NULL);
}

static PyObject *entry_wrapped(PyObject *self, void *closure) {
    EntryObject *e = (EntryObject *)self;
    if (e->func == NULL)
        Py_RETURN_NONE;
    Py_INCREF(e->func);
    return e->func;
}

/* Functions are immutable to copy (copy.copy/deepcopy return them) and pickle by qualified name: an Entry too. */
static PyObject *entry_copy(PyObject *self, PyObject *unused) {
    Py_INCREF(self);
    return self;
}

static PyObject *entry_reduce(PyObject *self, PyObject *unused) {
    EntryObject *e = (EntryObject *)self;
    if (e->func == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "Entry was cleared");
        return NULL;
    }
    return PyObject_GetAttrString(e->func, "__qualname__");
}

static PyMethodDef entry_methods[] = {
    {"__copy__", entry_copy, METH_NOARGS, "The entry itself, as for functions."},
    {"__deepcopy__", entry_copy, METH_O, "The entry itself, as for functions."},
    {"__reduce__", entry_reduce, METH_NOARGS, "Pickled by qualified name, as functions are."},
    {"arm", entry_arm, METH_VARARGS,
     "arm(cache, tls, ntensors, numbers, defaults): take calls of ntensors positional arguments in C."},
    {"disarm", entry_disarm, METH_NOARGS, "Send every call to the Python entry point."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef entry_getset[] = {
    {"armed", entry_armed, NULL, "Whether calls can take the C path.", NULL},
    {"__torchplug_python_entry__", entry_wrapped, NULL, "The Python entry point this Entry wraps.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject EntryType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "torchplug._dispatch._centry.Entry",
    .tp_basicsize = sizeof(EntryObject),
    .tp_dealloc = (destructor)entry_dealloc,
    .tp_vectorcall_offset = offsetof(EntryObject, vectorcall),
    .tp_repr = entry_repr,
    .tp_call = entry_call,
    .tp_getattro = entry_getattro,
    .tp_setattro = entry_setattro,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL | Py_TPFLAGS_METHOD_DESCRIPTOR,
    .tp_doc = "An operator entry point whose common calls dispatch in C (see torchplug._dispatch.codegen).",
    .tp_traverse = (traverseproc)entry_traverse,
    .tp_clear = (inquiry)entry_clear,
    .tp_methods = entry_methods,
    .tp_getset = entry_getset,
    .tp_descr_get = entry_descr_get,
    .tp_new = entry_new,
};

/* configure(Tensor): read the offset of Tensor._keyset, an object slot of Tensor's instances. */
static PyObject *configure(PyObject *self, PyObject *arg) {
    if (!PyType_Check(arg)) {
        PyErr_Format(PyExc_TypeError, "configure() expects the Tensor class, not %.100s", Py_TYPE(arg)->tp_name);
        return NULL;
    }
    PyTypeObject *type = (PyTypeObject *)arg;
    PyObject *descr = PyObject_GetAttr(arg, str_keyset);
    if (descr == NULL)
        return NULL;
    int ok = Py_TYPE(descr) == &PyMemberDescr_Type;
    Py_ssize_t offset = 0;
    if (ok) {
        PyMemberDef *m = ((PyMemberDescrObject *)descr)->d_member;
        PyTypeObject *owner = ((PyMemberDescrObject *)descr)->d_common.d_type;
        offset = m->offset;
        ok = m->type == T_OBJECT_EX && owner != NULL && PyType_IsSubtype(type, owner) &&
             offset >= (Py_ssize_t)sizeof(PyObject) && offset <= owner->tp_basicsize - (Py_ssize_t)sizeof(PyObject *);
    }
    Py_DECREF(descr);
    if (!ok) {
        PyErr_Format(PyExc_TypeError, "%s._keyset is not an object slot of its instances", type->tp_name);
        return NULL;
    }
    keyset_offset = offset;
    Py_INCREF(type);
    Py_XSETREF(tensor_type, type);
    Py_RETURN_NONE;
}

static PyObject *set_enabled(PyObject *self, PyObject *arg) {
    int flag = PyObject_IsTrue(arg);
    if (flag < 0)
        return NULL;
    enabled = flag;
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"configure", configure, METH_O, "configure(Tensor): the class whose instances carry _keyset."},
    {"set_enabled", set_enabled, METH_O, "set_enabled(flag): whether armed entries take calls in C (all entries)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "torchplug._dispatch._centry",
                                    "Operator entry points that dispatch in C (optional; see codegen).", -1, methods};

PyMODINIT_FUNC PyInit__centry(void) {
    str_include = PyUnicode_InternFromString("include");
    str_mask = PyUnicode_InternFromString("mask");
    str_keyset = PyUnicode_InternFromString("_keyset");
    if (str_include == NULL || str_mask == NULL || str_keyset == NULL)
        return NULL;
    if (PyType_Ready(&EntryType) < 0)
        return NULL;
    PyObject *m = PyModule_Create(&module);
    if (m == NULL)
        return NULL;
    Py_INCREF(&EntryType);
    if (PyModule_AddObject(m, "Entry", (PyObject *)&EntryType) < 0) {
        Py_DECREF(&EntryType);
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
