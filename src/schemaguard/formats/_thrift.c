/* The compact-protocol decoder of formats/thrift.py, compiled: the same input gives the same dicts,
 * lists, integers, bytes, floats and booleans, and every malformed input the same ThriftError (the
 * message may word the offset differently). formats/thrift.py holds the specification in its
 * docstring and is the fallback where this extension was not built; tests/test_thrift_c.py runs
 * both decoders on the same footers, real and mutated, and compares every value.
 *
 * Every read is bounds-checked against the buffer: a footer is untrusted input. Nesting is capped
 * (MAX_DEPTH) where Python has its recursion limit. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

enum { T_TRUE = 1, T_FALSE, T_BYTE, T_I16, T_I32, T_I64, T_DOUBLE, T_BINARY, T_LIST, T_SET, T_MAP, T_STRUCT };
#define MAX_DEPTH 500

static PyObject *thrift_error; /* formats.thrift.ThriftError, handed over by use_error() */

typedef struct {
    const unsigned char *d;
    Py_ssize_t n;
    Py_ssize_t pos;
} Buf;

static int fail(const char *fmt, Py_ssize_t value) {
    PyErr_Format(thrift_error ? thrift_error : PyExc_ValueError, fmt, value);
    return -1;
}

static int fail_end(Buf *b) { return fail("the footer ends inside a structure (%zd bytes)", b->n); }

static int byte_at(Buf *b, unsigned *out) {
    if (b->pos >= b->n) return fail_end(b);
    *out = b->d[b->pos++];
    return 0;
}

static int varint(Buf *b, uint64_t *out) {
    uint64_t result = 0;
    for (int shift = 0;; shift += 7) {
        unsigned c;
        if (byte_at(b, &c)) return -1;
        if (shift == 63 && c > 1) return fail("a varint larger than 64 bits at byte %zd", b->pos);
        result |= (uint64_t)(c & 0x7F) << shift;
        if (c < 0x80) break;
        if (shift == 63) return fail("a varint longer than 10 bytes at byte %zd", b->pos);
    }
    *out = result;
    return 0;
}

static int zigzag(Buf *b, int64_t *out) {
    uint64_t n;
    if (varint(b, &n)) return -1;
    *out = (int64_t)(n >> 1) ^ -(int64_t)(n & 1);
    return 0;
}

/* Steps over a varint's bytes without reading its value, as the Python decoder does. */
static int step_varint(Buf *b) {
    unsigned c;
    do {
        if (byte_at(b, &c)) return -1;
    } while (c > 0x7F);
    return 0;
}

/* A field header: the field id after `*last` and the type. */
static int header(Buf *b, unsigned h, int64_t *last) {
    if (h > 0x0F) {
        *last += h >> 4;
        return 0;
    }
    int64_t id;
    if (zigzag(b, &id)) return -1;
    if (id < -32768 || id > 32767) return fail("a field id outside i16 at byte %zd", b->pos);
    *last = id;
    return 0;
}

static int list_header(Buf *b, uint64_t *n, unsigned *kind) {
    unsigned h;
    if (byte_at(b, &h)) return -1;
    *n = h >> 4;
    *kind = h & 0x0F;
    if (*n == 15 && varint(b, n)) return -1;
    if (*n > (uint64_t)(b->n - b->pos)) /* every element takes at least one byte */
        return fail("a list of many items at byte %zd runs past the footer", b->pos);
    return 0;
}

static int skip(Buf *b, unsigned kind, int depth);

static int too_deep(int depth) {
    return depth > MAX_DEPTH ? fail("structures nested deeper than any footer holds (%zd)", MAX_DEPTH) : 0;
}

static int skip_struct(Buf *b, int depth) {
    for (;;) {
        unsigned h;
        if (byte_at(b, &h)) return -1;
        if (h == 0) return 0;
        if (h <= 0x0F && step_varint(b)) return -1;
        unsigned inner = h & 0x0F;
        if (inner == T_TRUE || inner == T_FALSE) continue;
        if (skip(b, inner, depth)) return -1;
    }
}

/* The offset after one value of `kind` (a boolean outside a field header is one byte). */
static int skip(Buf *b, unsigned kind, int depth) {
    if (too_deep(depth)) return -1;
    uint64_t n;
    unsigned inner;
    switch (kind) {
    case T_I16: case T_I32: case T_I64:
        return step_varint(b);
    case T_BINARY:
        if (varint(b, &n)) return -1;
        if (n > (uint64_t)(b->n - b->pos)) return fail("a string runs past the end of the footer (%zd bytes)", b->n);
        b->pos += (Py_ssize_t)n;
        return 0;
    case T_STRUCT:
        return skip_struct(b, depth + 1);
    case T_LIST: case T_SET:
        if (list_header(b, &n, &inner)) return -1;
        for (uint64_t i = 0; i < n; i++)
            if (skip(b, inner, depth + 1)) return -1;
        return 0;
    case T_TRUE: case T_FALSE: case T_BYTE:
        if (b->pos >= b->n) return fail_end(b);
        b->pos++;
        return 0;
    case T_DOUBLE:
        if (b->n - b->pos < 8) return fail_end(b);
        b->pos += 8;
        return 0;
    case T_MAP:
        if (varint(b, &n)) return -1;
        if (n > (uint64_t)(b->n - b->pos)) return fail("a map of many entries at byte %zd runs past the footer", b->pos);
        if (n) {
            unsigned kinds;
            if (byte_at(b, &kinds)) return -1;
            for (uint64_t i = 0; i < n; i++)
                if (skip(b, kinds >> 4, depth + 1) || skip(b, kinds & 0x0F, depth + 1)) return -1;
        }
        return 0;
    default:
        return fail("unknown compact type at byte %zd", b->pos);
    }
}

static PyObject *value(Buf *b, unsigned kind, int depth);

static PyObject *int_value(Buf *b) {
    int64_t v;
    if (zigzag(b, &v)) return NULL;
    return PyLong_FromLongLong(v);
}

static PyObject *binary_value(Buf *b) {
    uint64_t n;
    if (varint(b, &n)) return NULL;
    if (n > (uint64_t)(b->n - b->pos)) {
        fail("a string runs past the end of the footer (%zd bytes)", b->n);
        return NULL;
    }
    PyObject *out = PyBytes_FromStringAndSize((const char *)b->d + b->pos, (Py_ssize_t)n);
    b->pos += (Py_ssize_t)n;
    return out;
}

/* Stores `v` (a new reference) under `id` in `out`; -1 on error. */
static int put(PyObject *out, int64_t id, PyObject *v) {
    if (v == NULL) return -1;
    PyObject *key = PyLong_FromLongLong(id);
    if (key == NULL) {
        Py_DECREF(v);
        return -1;
    }
    int rc = PyDict_SetItem(out, key, v);
    Py_DECREF(key);
    Py_DECREF(v);
    return rc;
}

static PyObject *project(Buf *b, int64_t last, PyObject *keep, int depth);

/* Every field of a struct, each built (a projection that keeps everything). */
static PyObject *struct_value(Buf *b, int depth) { return project(b, 0, NULL, depth); }

static PyObject *list_value(Buf *b, int depth) {
    uint64_t n;
    unsigned kind;
    if (list_header(b, &n, &kind)) return NULL;
    PyObject *out = PyList_New((Py_ssize_t)n);
    if (out == NULL) return NULL;
    for (uint64_t i = 0; i < n; i++) {
        PyObject *v = value(b, kind, depth + 1);
        if (v == NULL) {
            Py_DECREF(out);
            return NULL;
        }
        PyList_SET_ITEM(out, (Py_ssize_t)i, v);
    }
    return out;
}

static PyObject *map_value(Buf *b, int depth) {
    uint64_t n;
    if (varint(b, &n)) return NULL;
    if (n > (uint64_t)(b->n - b->pos)) {
        fail("a map of many entries at byte %zd runs past the footer", b->pos);
        return NULL;
    }
    PyObject *out = PyList_New((Py_ssize_t)n); /* pairs: a key may be a struct, which is not hashable */
    if (out == NULL) return NULL;
    if (n) {
        unsigned kinds;
        if (byte_at(b, &kinds)) goto error;
        for (uint64_t i = 0; i < n; i++) {
            PyObject *k = value(b, kinds >> 4, depth + 1);
            if (k == NULL) goto error;
            PyObject *v = value(b, kinds & 0x0F, depth + 1);
            if (v == NULL) {
                Py_DECREF(k);
                goto error;
            }
            PyObject *pair = PyTuple_Pack(2, k, v);
            Py_DECREF(k);
            Py_DECREF(v);
            if (pair == NULL) goto error;
            PyList_SET_ITEM(out, (Py_ssize_t)i, pair);
        }
    }
    return out;
error:
    Py_DECREF(out);
    return NULL;
}

/* One value outside a field header: a boolean here is one byte (1 is true). */
static PyObject *value(Buf *b, unsigned kind, int depth) {
    unsigned c;
    switch (kind) {
    case T_I16: case T_I32: case T_I64:
        return int_value(b);
    case T_BINARY:
        return binary_value(b);
    case T_STRUCT:
        return struct_value(b, depth);
    case T_LIST: case T_SET:
        return too_deep(depth) ? NULL : list_value(b, depth);
    case T_TRUE: case T_FALSE:
        if (byte_at(b, &c)) return NULL;
        return PyBool_FromLong(c == T_TRUE);
    case T_BYTE:
        if (byte_at(b, &c)) return NULL;
        return PyLong_FromLong((long)(signed char)c);
    case T_DOUBLE: {
        if (b->n - b->pos < 8) {
            fail_end(b);
            return NULL;
        }
        double x = PyFloat_Unpack8((const char *)b->d + b->pos, 1);
        b->pos += 8;
        if (x == -1.0 && PyErr_Occurred()) return NULL;
        return PyFloat_FromDouble(x);
    }
    case T_MAP:
        return too_deep(depth) ? NULL : map_value(b, depth);
    default:
        fail("unknown compact type at byte %zd", b->pos);
        return NULL;
    }
}

/* A struct of which only the fields `keep` names are built (see Keep in formats/thrift.py);
 * with `keep` NULL, every field is built. */
static PyObject *project(Buf *b, int64_t last, PyObject *keep, int depth) {
    if (too_deep(depth)) return NULL;
    PyObject *out = PyDict_New();
    if (out == NULL) return NULL;
    for (;;) {
        unsigned h;
        if (byte_at(b, &h)) goto error;
        if (h == 0) return out;
        unsigned kind = h & 0x0F;
        if (header(b, h, &last)) goto error;
        PyObject *inner = Py_None; /* borrowed */
        if (keep != NULL) {
            PyObject *key = PyLong_FromLongLong(last);
            if (key == NULL) goto error;
            inner = PyDict_GetItemWithError(keep, key);
            Py_DECREF(key);
        }
        if (inner == NULL) {
            if (PyErr_Occurred()) goto error;
            if (kind != T_TRUE && kind != T_FALSE && skip(b, kind, depth + 1)) goto error;
            continue;
        }
        PyObject *v;
        if (kind == T_TRUE || kind == T_FALSE) {
            v = PyBool_FromLong(kind == T_TRUE);
        } else if (inner == Py_None || !PyDict_Check(inner)) {
            v = value(b, kind, depth + 1);
        } else if (kind == T_STRUCT) {
            v = project(b, 0, inner, depth + 1);
        } else if (kind == T_LIST && b->pos < b->n && (b->d[b->pos] & 0x0F) == T_STRUCT) {
            uint64_t n;
            unsigned ek;
            if (list_header(b, &n, &ek)) goto error;
            v = PyList_New((Py_ssize_t)n);
            for (uint64_t i = 0; v != NULL && i < n; i++) {
                PyObject *item = project(b, 0, inner, depth + 2);
                if (item == NULL) Py_CLEAR(v);
                else PyList_SET_ITEM(v, (Py_ssize_t)i, item);
            }
        } else { /* not the type parquet.thrift gives this field: kept as written */
            v = value(b, kind, depth + 1);
        }
        if (put(out, last, v)) goto error;
    }
error:
    Py_DECREF(out);
    return NULL;
}

static PyObject *py_use_error(PyObject *self, PyObject *cls) {
    Py_XSETREF(thrift_error, Py_NewRef(cls));
    Py_RETURN_NONE;
}

static PyObject *py_decode_struct(PyObject *self, PyObject *args) {
    Py_buffer view;
    Py_ssize_t pos = 0;
    if (!PyArg_ParseTuple(args, "y*|n", &view, &pos)) return NULL;
    PyObject *result = NULL;
    Buf b = {view.buf, view.len, pos};
    if (pos < 0 || pos > view.len) {
        fail_end(&b);
    } else {
        PyObject *out = struct_value(&b, 0);
        if (out != NULL) {
            result = Py_BuildValue("(Nn)", out, b.pos);
        }
    }
    PyBuffer_Release(&view);
    return result;
}

/* The `FileMetaData` as formats/thrift.py's decode_file_metadata gives it, but the schema check
 * (no schema list: an error) stays in Python. */
static PyObject *py_file_metadata(PyObject *self, PyObject *args) {
    Py_buffer view;
    PyObject *known, *keep;
    if (!PyArg_ParseTuple(args, "y*O!O!", &view, &PyList_Type, &known, &PyDict_Type, &keep)) return NULL;
    Buf b = {view.buf, view.len, 0};
    PyObject *meta = PyDict_New();
    PyObject *schema = NULL;
    if (meta == NULL) goto done;
    int64_t last = 0;
    for (;;) {
        unsigned h;
        if (byte_at(&b, &h)) goto error;
        if (h == 0) {
            schema = PyBytes_FromStringAndSize("", 0);
            goto done;
        }
        unsigned kind = h & 0x0F;
        if (header(&b, h, &last)) goto error;
        if (last == 2 && kind == T_LIST) {
            Py_ssize_t start = b.pos;
            PyObject *elements = NULL;
            for (Py_ssize_t i = 0; i < PyList_GET_SIZE(known); i++) {
                PyObject *raw = PyList_GET_ITEM(known, i);
                if (!PyBytes_Check(raw)) continue;
                Py_ssize_t len = PyBytes_GET_SIZE(raw);
                if (len <= b.n - b.pos && memcmp(b.d + b.pos, PyBytes_AS_STRING(raw), (size_t)len) == 0) {
                    elements = Py_NewRef(Py_None);
                    b.pos += len;
                    break;
                }
            }
            if (elements == NULL) elements = list_value(&b, 1);
            if (put(meta, 2, elements)) goto error;
            schema = PyBytes_FromStringAndSize((const char *)b.d + start, b.pos - start);
            if (schema == NULL) goto error;
            PyObject *rest = project(&b, 2, keep, 0);
            if (rest == NULL || PyDict_Update(meta, rest)) {
                Py_XDECREF(rest);
                goto error;
            }
            Py_DECREF(rest);
            goto done;
        }
        PyObject *v = (kind == T_TRUE || kind == T_FALSE) ? PyBool_FromLong(kind == T_TRUE) : value(&b, kind, 1);
        if (put(meta, last, v)) goto error;
    }
error:
    Py_CLEAR(meta);
    Py_CLEAR(schema);
done:
    PyBuffer_Release(&view);
    if (meta == NULL) return NULL;
    return Py_BuildValue("(NN)", meta, schema);
}

static PyMethodDef methods[] = {
    {"use_error", py_use_error, METH_O, "Raise this exception class for malformed input."},
    {"decode_struct", py_decode_struct, METH_VARARGS, "One struct at pos: (fields by id, offset after it)."},
    {"file_metadata", py_file_metadata, METH_VARARGS, "(FileMetaData fields, schema list bytes)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_thrift", NULL, -1, methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__thrift(void) { return PyModule_Create(&module); }
