/* Python values (builtins) to Arrow buffers, for the column types a build converts most.
 *
 * `convert(spec, values, allocate, order=None)` walks a list of values once and fills Arrow's
 * buffers for them, as `pyarrow.array(values, type)` would (with an `order`, a buffer of int64
 * row numbers, the values in that order: `pyarrow.array(values, type).take(order)`), for the
 * types a spec can describe:
 *
 *   ("int64",)  ("bool",)  ("string",)  ("list", item)  ("struct", (name, ...), (child, ...))
 *
 * Buffers are pyarrow ResizableBuffers made by `allocate(size)` and grown by their `resize`,
 * so they live in Arrow's memory pool. It returns a node per array: (length, null_count,
 * validity, buffers, children), where validity is a bitmap or None (no nulls), buffers the
 * type's other buffers (int64: values; bool: bits; string: int32 offsets, data; list: int32
 * offsets; struct: none) and children the child nodes. `traceidx.arrays` makes the Arrow
 * array with `pyarrow.Array.from_buffers`.
 *
 * It follows pyarrow's conversion: None is null; a list is a list or a tuple; a struct takes
 * a dict's members by name (a missing member is null, other members are ignored); a null
 * struct slot gives its children an empty value (0, false, "", []), as Arrow's StructBuilder
 * does. Anything else (a tuple for a struct, a bool or a float for an int64, an int out of
 * range, a string that is not UTF-8, more than 2 GiB in one string column) raises
 * `Unsupported`: the caller then converts with pyarrow itself, which reports such values its
 * own way. So a result is always the array pyarrow would make.
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

static PyObject *Unsupported;

enum { K_INT64, K_BOOL, K_STRING, K_LIST, K_STRUCT };

typedef struct Spec {
    int kind;
    Py_ssize_t nfields;
    PyObject **names; /* struct: borrowed from the spec tuple, which outlives the call */
    struct Spec **children;
} Spec;

/* A buffer in Arrow's memory: a pyarrow ResizableBuffer made by `allocate(size)` (Arrow's
 * memory pool keeps freed memory for reuse, where each fresh malloc of megabytes would fault its
 * pages in again), grown by its `resize`; `data` is its address, refreshed after each resize. */
typedef struct {
    PyObject *allocate; /* borrowed: pyarrow.allocate_buffer with resizable=True */
    PyObject *owner;
    char *data;
    size_t size, capacity;
} Buf;

typedef struct Builder {
    Spec *spec;
    Py_ssize_t length, null_count;
    Buf validity; /* a bit per slot, set when valid */
    Buf values;   /* int64 values, bool bits or string bytes */
    Buf offsets;  /* int32: string and list */
    struct Builder **children;
} Builder;

/* ---- buffers ---------------------------------------------------------------------------- */

static int buf_reserve(Buf *b, size_t more) {
    size_t need = b->size + more;
    if (need <= b->capacity) return 0;
    size_t cap = b->capacity ? b->capacity * 2 : 256;
    while (cap < need) cap *= 2;
    PyObject *done = b->owner == NULL
        ? PyObject_CallFunction(b->allocate, "n", (Py_ssize_t)cap)
        : PyObject_CallMethod(b->owner, "resize", "n", (Py_ssize_t)cap);
    if (done == NULL) return -1;
    if (b->owner == NULL) {
        b->owner = done;
    } else {
        Py_DECREF(done);
    }
    Py_buffer view;
    if (PyObject_GetBuffer(b->owner, &view, PyBUF_WRITABLE) < 0) return -1;
    b->data = view.buf; /* stays valid until the next resize: the owner is kept */
    PyBuffer_Release(&view);
    b->capacity = cap;
    return 0;
}

static int buf_append(Buf *b, const void *src, size_t n) {
    if (buf_reserve(b, n) < 0) return -1;
    if (n) memcpy(b->data + b->size, src, n);
    b->size += n;
    return 0;
}

/* sets bits [at, at + n) to `on`, the bitmap grown to hold them */
static int bits_append(Buf *b, Py_ssize_t at, Py_ssize_t n, int on) {
    size_t need = (size_t)((at + n + 7) >> 3);
    if (need > b->size) {
        if (buf_reserve(b, need - b->size) < 0) return -1;
        memset(b->data + b->size, 0, need - b->size);
        b->size = need;
    }
    if (on) {
        Py_ssize_t i = at, end = at + n;
        for (; i < end && (i & 7); i++) b->data[i >> 3] |= (char)(1 << (i & 7));
        Py_ssize_t bytes = (end - i) >> 3;
        memset(b->data + (i >> 3), 0xff, (size_t)bytes);
        for (i += bytes << 3; i < end; i++) b->data[i >> 3] |= (char)(1 << (i & 7));
    }
    return 0;
}

static int offset_append(Buf *offsets, size_t end) {
    if (end > INT32_MAX) {
        PyErr_SetString(Unsupported, "more than 2 GiB of data in one column");
        return -1;
    }
    int32_t value = (int32_t)end;
    return buf_append(offsets, &value, sizeof value);
}

/* ---- specs ------------------------------------------------------------------------------ */

static void spec_free(Spec *spec) {
    if (spec == NULL) return;
    for (Py_ssize_t i = 0; i < spec->nfields; i++) spec_free(spec->children[i]);
    PyMem_Free(spec->children);
    PyMem_Free(spec->names);
    PyMem_Free(spec);
}

static Spec *spec_parse(PyObject *obj) {
    if (!PyTuple_Check(obj) || PyTuple_GET_SIZE(obj) < 1 ||
        !PyUnicode_Check(PyTuple_GET_ITEM(obj, 0))) {
        PyErr_SetString(PyExc_TypeError, "a spec is a tuple that starts with its kind");
        return NULL;
    }
    Spec *spec = PyMem_Calloc(1, sizeof(Spec));
    if (spec == NULL) return (Spec *)PyErr_NoMemory();
    PyObject *kind = PyTuple_GET_ITEM(obj, 0);
    Py_ssize_t size = PyTuple_GET_SIZE(obj);
    if (PyUnicode_CompareWithASCIIString(kind, "int64") == 0 && size == 1) {
        spec->kind = K_INT64;
    } else if (PyUnicode_CompareWithASCIIString(kind, "bool") == 0 && size == 1) {
        spec->kind = K_BOOL;
    } else if (PyUnicode_CompareWithASCIIString(kind, "string") == 0 && size == 1) {
        spec->kind = K_STRING;
    } else if (PyUnicode_CompareWithASCIIString(kind, "list") == 0 && size == 2) {
        spec->kind = K_LIST;
        spec->children = PyMem_Calloc(1, sizeof(Spec *));
        if (spec->children == NULL) goto no_memory;
        spec->nfields = 1;
        spec->children[0] = spec_parse(PyTuple_GET_ITEM(obj, 1));
        if (spec->children[0] == NULL) goto fail;
    } else if (PyUnicode_CompareWithASCIIString(kind, "struct") == 0 && size == 3) {
        PyObject *names = PyTuple_GET_ITEM(obj, 1), *children = PyTuple_GET_ITEM(obj, 2);
        if (!PyTuple_Check(names) || !PyTuple_Check(children) ||
            PyTuple_GET_SIZE(names) != PyTuple_GET_SIZE(children)) {
            PyErr_SetString(PyExc_TypeError, "a struct spec has as many names as children");
            goto fail;
        }
        spec->kind = K_STRUCT;
        Py_ssize_t n = PyTuple_GET_SIZE(names);
        spec->names = PyMem_Calloc(n ? n : 1, sizeof(PyObject *));
        spec->children = PyMem_Calloc(n ? n : 1, sizeof(Spec *));
        if (spec->names == NULL || spec->children == NULL) goto no_memory;
        spec->nfields = n;
        for (Py_ssize_t i = 0; i < n; i++) {
            spec->names[i] = PyTuple_GET_ITEM(names, i);
            if (!PyUnicode_Check(spec->names[i])) {
                PyErr_SetString(PyExc_TypeError, "a struct's member names are strings");
                goto fail;
            }
            spec->children[i] = spec_parse(PyTuple_GET_ITEM(children, i));
            if (spec->children[i] == NULL) goto fail;
        }
    } else {
        PyErr_Format(PyExc_TypeError, "unknown spec %R", obj);
        goto fail;
    }
    return spec;
no_memory:
    PyErr_NoMemory();
fail:
    spec_free(spec);
    return NULL;
}

/* ---- builders --------------------------------------------------------------------------- */

static void builder_free(Builder *b) {
    if (b == NULL) return;
    if (b->children != NULL)
        for (Py_ssize_t i = 0; i < b->spec->nfields; i++) builder_free(b->children[i]);
    PyMem_Free(b->children);
    Py_XDECREF(b->validity.owner);
    Py_XDECREF(b->values.owner);
    Py_XDECREF(b->offsets.owner);
    PyMem_Free(b);
}

static Builder *builder_new(Spec *spec, PyObject *allocate) {
    Builder *b = PyMem_Calloc(1, sizeof(Builder));
    if (b == NULL) return (Builder *)PyErr_NoMemory();
    b->spec = spec;
    b->validity.allocate = b->values.allocate = b->offsets.allocate = allocate;
    if (spec->nfields) {
        b->children = PyMem_Calloc(spec->nfields, sizeof(Builder *));
        if (b->children == NULL) {
            PyMem_Free(b);
            return (Builder *)PyErr_NoMemory();
        }
        for (Py_ssize_t i = 0; i < spec->nfields; i++) {
            b->children[i] = builder_new(spec->children[i], allocate);
            if (b->children[i] == NULL) {
                builder_free(b);
                return NULL;
            }
        }
    }
    if ((spec->kind == K_STRING || spec->kind == K_LIST) && offset_append(&b->offsets, 0) < 0) {
        builder_free(b);
        return NULL;
    }
    return b;
}

static size_t child_length(Builder *b) { return (size_t)b->children[0]->length; }

static int offsets_repeat(Buf *offsets, size_t end, Py_ssize_t n) {
    for (Py_ssize_t i = 0; i < n; i++)
        if (offset_append(offsets, end) < 0) return -1;
    return 0;
}

/* `n` slots, valid or null, with the type's empty value in their data */
static int append_slots(Builder *b, Py_ssize_t n, int valid) {
    switch (b->spec->kind) {
    case K_INT64: {
        size_t bytes = (size_t)n * sizeof(int64_t);
        if (buf_reserve(&b->values, bytes) < 0) return -1;
        memset(b->values.data + b->values.size, 0, bytes);
        b->values.size += bytes;
        break;
    }
    case K_BOOL:
        if (bits_append(&b->values, b->length, n, 0) < 0) return -1;
        break;
    case K_STRING:
        if (offsets_repeat(&b->offsets, b->values.size, n) < 0) return -1;
        break;
    case K_LIST:
        if (offsets_repeat(&b->offsets, child_length(b), n) < 0) return -1;
        break;
    case K_STRUCT:
        for (Py_ssize_t i = 0; i < b->spec->nfields; i++)
            if (append_slots(b->children[i], n, 1) < 0) return -1;
        break;
    }
    if (bits_append(&b->validity, b->length, n, valid) < 0) return -1;
    if (!valid) b->null_count += n;
    b->length += n;
    return 0;
}

static int unsupported(PyObject *value, const char *what) {
    PyErr_Format(Unsupported, "%s: %.80R", what, value);
    return -1;
}

static int append(Builder *b, PyObject *value);

static int append_struct(Builder *b, PyObject *value) {
    if (!PyDict_CheckExact(value)) return unsupported(value, "a struct from a value not a dict");
    for (Py_ssize_t i = 0; i < b->spec->nfields; i++) {
        PyObject *member = PyDict_GetItemWithError(value, b->spec->names[i]);
        if (member == NULL && PyErr_Occurred()) return -1;
        if (append(b->children[i], member == NULL ? Py_None : member) < 0) return -1;
    }
    if (bits_append(&b->validity, b->length, 1, 1) < 0) return -1;
    b->length++;
    return 0;
}

static int append(Builder *b, PyObject *value) {
    if (value == Py_None) return append_slots(b, 1, 0); /* a struct's children: empty values */
    switch (b->spec->kind) {
    case K_INT64: {
        if (!PyLong_CheckExact(value)) return unsupported(value, "an int64 from a value not an int");
        int overflow = 0;
        long long v = PyLong_AsLongLongAndOverflow(value, &overflow);
        if (overflow) return unsupported(value, "an int64 out of range");
        if (v == -1 && PyErr_Occurred()) return -1;
        int64_t out = (int64_t)v;
        if (buf_append(&b->values, &out, sizeof out) < 0) return -1;
        break;
    }
    case K_BOOL:
        if (value != Py_True && value != Py_False)
            return unsupported(value, "a bool from a value not a bool");
        if (bits_append(&b->values, b->length, 1, value == Py_True) < 0) return -1;
        break;
    case K_STRING: {
        if (!PyUnicode_CheckExact(value)) return unsupported(value, "a string from a value not a str");
        Py_ssize_t size;
        const char *utf8 = PyUnicode_AsUTF8AndSize(value, &size);
        if (utf8 == NULL) {
            PyErr_Clear();
            return unsupported(value, "a string that is not UTF-8");
        }
        if (buf_append(&b->values, utf8, (size_t)size) < 0) return -1;
        if (offset_append(&b->offsets, b->values.size) < 0) return -1;
        break;
    }
    case K_LIST: {
        if (!PyList_CheckExact(value) && !PyTuple_CheckExact(value))
            return unsupported(value, "a list from a value neither a list nor a tuple");
        PyObject **items = PySequence_Fast_ITEMS(value);
        for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(value); i++)
            if (append(b->children[0], items[i]) < 0) return -1;
        if (offset_append(&b->offsets, child_length(b)) < 0) return -1;
        break;
    }
    case K_STRUCT:
        return append_struct(b, value);
    }
    if (bits_append(&b->validity, b->length, 1, 1) < 0) return -1;
    b->length++;
    return 0;
}

/* ---- results ---------------------------------------------------------------------------- */

/* the buffer, cut to its size (its capacity stays reserved), given to the caller; an Arrow
 * buffer even when nothing was written to it */
static PyObject *buffer_of(Buf *b) {
    if (b->owner == NULL) return PyObject_CallFunction(b->allocate, "n", (Py_ssize_t)0);
    PyObject *done = PyObject_CallMethod(b->owner, "resize", "n", (Py_ssize_t)b->size);
    if (done == NULL) return NULL;
    Py_DECREF(done);
    return Py_NewRef(b->owner);
}

static PyObject *finish(Builder *b) {
    PyObject *validity = NULL, *buffers = NULL, *children = NULL;
    if (b->null_count) {
        validity = buffer_of(&b->validity);
    } else {
        validity = Py_NewRef(Py_None);
    }
    if (validity == NULL) goto fail;
    switch (b->spec->kind) {
    case K_INT64:
    case K_BOOL:
        buffers = Py_BuildValue("(N)", buffer_of(&b->values));
        break;
    case K_STRING:
        buffers = Py_BuildValue("(NN)", buffer_of(&b->offsets), buffer_of(&b->values));
        break;
    case K_LIST:
        buffers = Py_BuildValue("(N)", buffer_of(&b->offsets));
        break;
    default:
        buffers = PyTuple_New(0);
    }
    if (buffers == NULL) goto fail;
    children = PyTuple_New(b->spec->nfields);
    if (children == NULL) goto fail;
    for (Py_ssize_t i = 0; i < b->spec->nfields; i++) {
        PyObject *child = finish(b->children[i]);
        if (child == NULL) goto fail;
        PyTuple_SET_ITEM(children, i, child);
    }
    return Py_BuildValue("(nnNNN)", b->length, b->null_count, validity, buffers, children);
fail:
    Py_XDECREF(validity);
    Py_XDECREF(buffers);
    Py_XDECREF(children);
    return NULL;
}

/* the value at row `at` of the output: values[order[at]] (values[at] without an order) */
static int value_at(PyObject *values, const int64_t *order, Py_ssize_t at, PyObject **out) {
    Py_ssize_t index = order == NULL ? at : (Py_ssize_t)order[at];
    if (index < 0 || index >= PyList_GET_SIZE(values)) {
        PyErr_Format(PyExc_IndexError, "order names row %zd of %zd", index,
                     PyList_GET_SIZE(values));
        return -1;
    }
    *out = PyList_GET_ITEM(values, index);
    return 0;
}

static PyObject *convert(PyObject *Py_UNUSED(module), PyObject *args) {
    PyObject *spec_obj, *values, *allocate, *order_obj = Py_None;
    if (!PyArg_ParseTuple(args, "OO!O|O:convert", &spec_obj, &PyList_Type, &values, &allocate,
                          &order_obj))
        return NULL;
    Py_buffer order = {0};
    Py_ssize_t count = PyList_GET_SIZE(values);
    if (order_obj != Py_None) {
        if (PyObject_GetBuffer(order_obj, &order, PyBUF_FORMAT | PyBUF_C_CONTIGUOUS) < 0)
            return NULL;
        if (order.itemsize != 8 || order.format == NULL || strchr("qlQL", order.format[0]) == NULL) {
            PyBuffer_Release(&order);
            PyErr_SetString(PyExc_TypeError, "an order is a buffer of int64 row numbers");
            return NULL;
        }
        count = order.len / 8;
    }
    const int64_t *rows = order.buf;
    PyObject *result = NULL, *value;
    Builder *b = NULL;
    Spec *spec = spec_parse(spec_obj);
    if (spec == NULL) goto done;
    b = builder_new(spec, allocate);
    if (b == NULL) goto done;
    Py_ssize_t at = 0;
    while (at < count) {
        if (value_at(values, rows, at, &value) < 0) goto done;
        if (value != Py_None) {
            if (append(b, value) < 0) goto done;
            at++;
            continue;
        }
        /* a run of nulls at once (a shape's column is null wherever rows are of another) */
        Py_ssize_t end = at + 1;
        for (; end < count; end++) {
            if (value_at(values, rows, end, &value) < 0) goto done;
            if (value != Py_None) break;
        }
        if (append_slots(b, end - at, 0) < 0) goto done;
        at = end;
    }
    result = finish(b);
done:
    builder_free(b);
    spec_free(spec);
    if (order.obj != NULL) PyBuffer_Release(&order);
    return result;
}

static PyMethodDef methods[] = {
    {"convert", convert, METH_VARARGS,
     "convert(spec, values, allocate, order=None) -> (length, null_count, validity, buffers, "
     "children)"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT,
    .m_name = "traceidx._columns",
    .m_doc = "Python values to Arrow buffers, for the column types a build converts most.",
    .m_size = -1,
    .m_methods = methods,
};

PyMODINIT_FUNC PyInit__columns(void) {
    PyObject *module = PyModule_Create(&module_def);
    if (module == NULL) return NULL;
    Unsupported = PyErr_NewException("traceidx._columns.Unsupported", PyExc_ValueError, NULL);
    if (Unsupported == NULL || PyModule_AddObjectRef(module, "Unsupported", Unsupported) < 0) {
        Py_DECREF(module);
        return NULL;
    }
    return module;
}
