/* pidkit._speedups: the Library.Link resource id (seed 002), XarkId.new() (seed 000) and the GEDCOM reader's
 * line scan in C.
 *
 * Optional: setup.py builds it when a C compiler and the Python headers are there; pidkit.llid falls back
 * to its pure-Python code otherwise (and for every input this module does not take itself).
 *
 * resource_id(pairs) -> str, for a list or tuple of [key, value] pairs (each an exact list or tuple of two
 * str, str subclasses included), is byte-identical to
 *
 *     base64url(int64_be(mmh3.hash64(json.dumps(pairs, separators=(",", ":")))[0])) without padding
 *
 * in four steps:
 *   1. the JSON text as CPython's json module writes it with ensure_ascii (Modules/_json.c,
 *      ascii_escape_unichar), into a stack buffer or, for long inputs, an exactly sized heap buffer;
 *   2. MurmurHash3 x64-128, seed 0 (Austin Appleby's public-domain algorithm), keeping h1: the low 64 bits,
 *      which mmh3.hash64 returns first;
 *   3. h1 as 8 big-endian bytes (the bit pattern of the signed int64);
 *   4. base64url of those 8 bytes without padding: 11 characters.
 *
 * Anything else (another type, a list subclass, a pair of the wrong length, a key or value that is not a
 * str) goes to the Python fallback registered with _set_fallback(), which raises pidkit's own LlidError
 * messages (or, for list and tuple subclasses, computes the id the way json.dumps iterates them).
 *
 * ids_from_template(fragments, columns) -> list[str] serves pidkit.bulk.resource_ids_from_columns: the
 * JSON text of row i is fragments[0] + json(columns[0][i]) + fragments[1] + ... + fragments[n], where the
 * fragments are ready ASCII JSON (bytes) and json(s) is a string escaped as in step 1.
 *
 * xarkid_new(cls) -> cls is XarkId.new() (pidkit.xarkid wraps it in a classmethod): a new instance whose
 * compact text (20 base64url characters of the 15 native bytes) is set and whose int is decoded lazily, as
 * the pure-Python XarkId.new does.  The same two sources as the Python code:
 *   - time: the system clock that time.time_ns() reads (CPython's _PyTime_GetSystemClock, PyTime_Time from
 *     3.13: clock_gettime(CLOCK_REALTIME) on Linux), floored to milliseconds; nothing monotonic is added
 *     (the Python code adds nothing either: two ids of one millisecond differ by their random bits only);
 *   - randomness: os.urandom itself (getrandom(2) with flags 0 on Linux, the OS CSPRNG), called for 9 * 512
 *     bytes at a time into a pool held in the module state; each id takes 9 bytes the pool never hands out
 *     again.  The GIL is held from taking the bytes to building the text, so two threads never share them;
 *     a pthread_atfork child handler marks the pool stale in a forked child, so parent and child never do.
 *
 * xarkid_compact_strings(n) -> list is XarkId.new_compact_strings(n): n compact texts, each made exactly as
 * xarkid_new makes its own (a clock reading and 9 fresh bytes of the pool per id).
 *
 * gedcom_scan(gedcom7, eol, data, pos) is the GEDCOM reader's check of a run of well-formed lines
 * (pidkit.gedcom.grammar.record_scanner): the lines grammar.valid_lines_5 / valid_lines_7 match, read in one
 * pass, with the offsets, line counts and tags of the level-0 lines where the reader cuts records.
 *
 * paf_strings(data) makes new GEDCOM 5.x _UID values (PAF form, U2 checksum) of random 16-byte blocks, as
 * pidkit.gedcom_uid._paf_strings does.  tests/test_gedcom_speedups.py compares both with the Python code.
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h> /* T_OBJECT_EX, READONLY: the XarkId slot check */

#include <pthread.h>
#include <stdint.h>
#include <string.h>

/* 8 bytes in base64url without padding (seed 002 "Generating the character string hash"). */
#define LLID_LENGTH 11
/* JSON texts up to this size are built on the stack; longer ones in an exactly sized heap buffer. */
#define STACK_BUFFER 2048

/* --- module state: the Python fallback ------------------------------------------------------------- */

/* XarkId.new(): 9 random bytes per id, this many ids per os.urandom call */
#define XARKID_RANDOM_BYTES 9
#define XARKID_POOL_IDS 512
#define XARKID_POOL_BYTES (XARKID_RANDOM_BYTES * XARKID_POOL_IDS)
#define XARKID_COMPACT_LEN 20
#define XARKID_MAX_MS ((int64_t)0xFFFFFFFFFFFF) /* 48 bits */

typedef struct {
    PyObject *fallback; /* callable(pairs) -> str, or NULL until _set_fallback() */
    /* XarkId.new(), all NULL / empty until _xarkid_setup() */
    PyTypeObject *xarkid_type;   /* pidkit.xarkid.XarkId: cls must be it or a subclass */
    PyObject *compact_slot;      /* XarkId.__dict__["_compact"], the slot's member descriptor */
    Py_ssize_t compact_offset;   /* where that slot is in an instance */
    PyObject *urandom;           /* os.urandom */
    Py_ssize_t pool_pos;         /* next unused byte of pool; XARKID_POOL_BYTES = empty */
    unsigned long pool_forks;    /* fork_count when the pool was filled: another value = a forked child */
    int64_t prefix_ms;           /* the millisecond whose 8 characters are in prefix, or -1 */
    char prefix[8];
    unsigned char pool[XARKID_POOL_BYTES];
} speedups_state;

static inline speedups_state *
get_state(PyObject *module)
{
    return (speedups_state *)PyModule_GetState(module);
}

static PyObject *
call_fallback(PyObject *module, PyObject *pairs)
{
    PyObject *fallback = get_state(module)->fallback;
    if (fallback == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "pidkit._speedups: no fallback registered (_set_fallback)");
        return NULL;
    }
    return PyObject_CallOneArg(fallback, pairs);
}

/* --- step 1: JSON string escaping as json.dumps(ensure_ascii=True) --------------------------------- */

/* Bytes each code point below 256 takes once escaped: 1 (itself), 2 (\" \\ \b \f \n \r \t) or 6 (\u00xx:
 * the other C0 controls, DEL and everything above '~'). Code points 256..0xFFFF take 6 (surrogates too,
 * escaped as themselves), astral ones 12 (a UTF-16 surrogate pair of \uXXXX escapes). */
static unsigned char escaped_len[256];

static void
init_escaped_len(void)
{
    for (int c = 0; c < 256; c++) {
        if (c == '"' || c == '\\' || c == '\b' || c == '\f' || c == '\n' || c == '\r' || c == '\t') {
            escaped_len[c] = 2;
        }
        else if (c >= 0x20 && c <= 0x7e) {
            escaped_len[c] = 1;
        }
        else {
            escaped_len[c] = 6;
        }
    }
}

static const char hexdigits[] = "0123456789abcdef"; /* json writes lowercase hex */

static inline char *
write_u_escape(char *out, Py_UCS4 c)
{
    out[0] = '\\';
    out[1] = 'u';
    out[2] = hexdigits[(c >> 12) & 0xf];
    out[3] = hexdigits[(c >> 8) & 0xf];
    out[4] = hexdigits[(c >> 4) & 0xf];
    out[5] = hexdigits[c & 0xf];
    return out + 6;
}

/* One code point that is not printable ASCII, or is '"' or '\\' (ascii_escape_unichar). */
static char *
escape_char(char *out, Py_UCS4 c)
{
    switch (c) {
    case '"': *out++ = '\\'; *out++ = '"'; return out;
    case '\\': *out++ = '\\'; *out++ = '\\'; return out;
    case '\b': *out++ = '\\'; *out++ = 'b'; return out;
    case '\f': *out++ = '\\'; *out++ = 'f'; return out;
    case '\n': *out++ = '\\'; *out++ = 'n'; return out;
    case '\r': *out++ = '\\'; *out++ = 'r'; return out;
    case '\t': *out++ = '\\'; *out++ = 't'; return out;
    default: break;
    }
    if (c >= 0x10000) {
        c -= 0x10000;
        out = write_u_escape(out, 0xd800 | (c >> 10));
        c = 0xdc00 | (c & 0x3ff);
    }
    return write_u_escape(out, c);
}

/* Make sure a str's canonical representation is there (only legacy strings of Python 3.11 lack it). */
static inline int
ensure_ready(PyObject *s)
{
#if PY_VERSION_HEX < 0x030C0000
    return PyUnicode_READY(s);
#else
    (void)s;
    return 0;
#endif
}

/* Exact size of json(s), quotes included; -1 with an exception set on overflow. */
static Py_ssize_t
escaped_size(PyObject *s)
{
    Py_ssize_t n = PyUnicode_GET_LENGTH(s);
    int kind = PyUnicode_KIND(s);
    const void *data = PyUnicode_DATA(s);
    size_t size = 2;
    if (kind == PyUnicode_1BYTE_KIND) {
        const Py_UCS1 *p = (const Py_UCS1 *)data;
        for (Py_ssize_t i = 0; i < n; i++) {
            size += escaped_len[p[i]];
        }
    }
    else if (kind == PyUnicode_2BYTE_KIND) {
        const Py_UCS2 *p = (const Py_UCS2 *)data;
        for (Py_ssize_t i = 0; i < n; i++) {
            size += p[i] < 256 ? escaped_len[p[i]] : 6;
        }
    }
    else {
        const Py_UCS4 *p = (const Py_UCS4 *)data;
        for (Py_ssize_t i = 0; i < n; i++) {
            size += p[i] < 256 ? escaped_len[p[i]] : (p[i] < 0x10000 ? 6 : 12);
        }
    }
    /* n <= PY_SSIZE_T_MAX / 4 (a str's data must fit in memory), so size <= 12 * n + 2 fits a size_t */
    if (size > (size_t)PY_SSIZE_T_MAX) {
        PyErr_SetString(PyExc_OverflowError, "resource_id: JSON text too long");
        return -1;
    }
    return (Py_ssize_t)size;
}

/* Upper bound of json(s) without reading the characters; saturates at PY_SSIZE_T_MAX. */
static inline size_t
escaped_bound(PyObject *s)
{
    size_t n = (size_t)PyUnicode_GET_LENGTH(s);
    size_t per = PyUnicode_KIND(s) == PyUnicode_4BYTE_KIND ? 12 : 6;
    if (n > ((size_t)PY_SSIZE_T_MAX - 2) / per) {
        return (size_t)PY_SSIZE_T_MAX;
    }
    return n * per + 2;
}

/* Whether any of 8 bytes (Latin-1 code points) needs escaping: below 0x20, '"', '\\', 0x7f or above.
 * The "has a zero byte" / "has a byte less than n" bit tricks: exact for the question "any byte?". */
static inline int
needs_escape8(uint64_t v)
{
    const uint64_t ones = 0x0101010101010101ULL;
    const uint64_t highs = 0x8080808080808080ULL;
    uint64_t quote = v ^ (ones * '"');
    uint64_t backslash = v ^ (ones * '\\');
    uint64_t below_space = (v - ones * 0x20) & ~v;         /* a byte < 0x20 (or >= 0x80, caught below) */
    uint64_t del_or_high = v | ((v & ~highs) + ones);      /* per byte, no carry: >= 0x80, or == 0x7f */
    uint64_t zero_quote = (quote - ones) & ~quote;
    uint64_t zero_backslash = (backslash - ones) & ~backslash;
    return ((below_space | del_or_high | zero_quote | zero_backslash) & highs) != 0;
}

/* Write json(s) at out (room checked by the caller); returns the end. */
static char *
write_escaped(char *out, PyObject *s)
{
    Py_ssize_t n = PyUnicode_GET_LENGTH(s);
    int kind = PyUnicode_KIND(s);
    const void *data = PyUnicode_DATA(s);
    *out++ = '"';
    if (kind == PyUnicode_1BYTE_KIND) {
        const Py_UCS1 *p = (const Py_UCS1 *)data;
        Py_ssize_t i = 0;
        while (i < n) {
            /* 8 characters at a time while none needs escaping */
            while (n - i >= 8) {
                uint64_t word;
                memcpy(&word, p + i, 8);
                if (needs_escape8(word)) {
                    break;
                }
                memcpy(out, &word, 8);
                out += 8;
                i += 8;
            }
            /* the word that needs escaping, or the last few characters */
            Py_ssize_t stop = n - i < 8 ? n : i + 8;
            for (; i < stop; i++) {
                Py_UCS1 c = p[i];
                if (escaped_len[c] == 1) {
                    *out++ = (char)c;
                }
                else {
                    out = escape_char(out, c);
                }
            }
        }
    }
    else if (kind == PyUnicode_2BYTE_KIND) {
        const Py_UCS2 *p = (const Py_UCS2 *)data;
        for (Py_ssize_t i = 0; i < n; i++) {
            Py_UCS2 c = p[i];
            if (c < 256 && escaped_len[c] == 1) {
                *out++ = (char)c;
            }
            else {
                out = escape_char(out, c);
            }
        }
    }
    else {
        const Py_UCS4 *p = (const Py_UCS4 *)data;
        for (Py_ssize_t i = 0; i < n; i++) {
            Py_UCS4 c = p[i];
            if (c < 256 && escaped_len[c] == 1) {
                *out++ = (char)c;
            }
            else {
                out = escape_char(out, c);
            }
        }
    }
    *out++ = '"';
    return out;
}

/* --- step 2: MurmurHash3 x64-128, seed 0, h1 only ------------------------------------------------- */

static inline uint64_t
rotl64(uint64_t x, int r)
{
    return (x << r) | (x >> (64 - r));
}

static inline uint64_t
fmix64(uint64_t k)
{
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdULL;
    k ^= k >> 33;
    k *= 0xc4ceb9fe1a85ec53ULL;
    k ^= k >> 33;
    return k;
}

/* 8 bytes as a little-endian integer, on any host and at any alignment. */
static inline uint64_t
load_le64(const unsigned char *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
#if PY_BIG_ENDIAN
    v = ((v & 0x00000000000000ffULL) << 56) | ((v & 0x000000000000ff00ULL) << 40) |
        ((v & 0x0000000000ff0000ULL) << 24) | ((v & 0x00000000ff000000ULL) << 8) |
        ((v & 0x000000ff00000000ULL) >> 8) | ((v & 0x0000ff0000000000ULL) >> 24) |
        ((v & 0x00ff000000000000ULL) >> 40) | ((v & 0xff00000000000000ULL) >> 56);
#endif
    return v;
}

/* MurmurHash3_x64_128(data, len, seed=0) and return out[0] (h1), as mmh3.hash64(data)[0] unsigned. */
static uint64_t
murmur3_x64_128_h1(const unsigned char *data, size_t len)
{
    const uint64_t c1 = 0x87c37b91114253d5ULL;
    const uint64_t c2 = 0x4cf5ad432745937fULL;
    uint64_t h1 = 0, h2 = 0;
    size_t nblocks = len / 16;

    for (size_t i = 0; i < nblocks; i++) {
        uint64_t k1 = load_le64(data + 16 * i);
        uint64_t k2 = load_le64(data + 16 * i + 8);

        k1 *= c1;
        k1 = rotl64(k1, 31);
        k1 *= c2;
        h1 ^= k1;
        h1 = rotl64(h1, 27);
        h1 += h2;
        h1 = h1 * 5 + 0x52dce729;

        k2 *= c2;
        k2 = rotl64(k2, 33);
        k2 *= c1;
        h2 ^= k2;
        h2 = rotl64(h2, 31);
        h2 += h1;
        h2 = h2 * 5 + 0x38495ab5;
    }

    /* the tail: the last len % 16 bytes, zero-padded, read as the two little-endian words k1 and k2
     * (the reference's fall-through switch builds the same words byte by byte) */
    size_t rest = len & 15;
    if (rest) {
        unsigned char tail[16] = {0};
        memcpy(tail, data + 16 * nblocks, rest);
        if (rest > 8) {
            uint64_t k2 = load_le64(tail + 8);
            k2 *= c2;
            k2 = rotl64(k2, 33);
            k2 *= c1;
            h2 ^= k2;
        }
        uint64_t k1 = load_le64(tail);
        k1 *= c1;
        k1 = rotl64(k1, 31);
        k1 *= c2;
        h1 ^= k1;
    }

    h1 ^= (uint64_t)len;
    h2 ^= (uint64_t)len;
    h1 += h2;
    h2 += h1;
    h1 = fmix64(h1);
    h2 = fmix64(h2);
    h1 += h2;
    return h1;
}

/* --- steps 3 and 4: 8 big-endian bytes in base64url, unpadded ------------------------------------ */

static const char b64url[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/* The 64 bits most significant first, 6 at a time: 10 characters of 6 bits, then the last 4 bits
 * followed by two zero bits (what base64 writes before its '=' padding). */
static PyObject *
id_of_json(const char *json, size_t len)
{
    uint64_t h = murmur3_x64_128_h1((const unsigned char *)json, len);
    PyObject *result = PyUnicode_New(LLID_LENGTH, 127);
    if (result == NULL) {
        return NULL;
    }
    Py_UCS1 *out = PyUnicode_1BYTE_DATA(result);
    for (int i = 0; i < 10; i++) {
        out[i] = (Py_UCS1)b64url[(h >> (58 - 6 * i)) & 63];
    }
    out[10] = (Py_UCS1)b64url[(h & 0xf) << 2];
    return result;
}

/* --- resource_id ------------------------------------------------------------------------------------ */

/* 1: pairs is ours (exact list or tuple of exact 2-lists/2-tuples of str, made ready) and *bound is an
 * upper bound of its JSON size (saturating); 0: not ours, the fallback decides; -1: an error is set. */
static int
check_pairs(PyObject *pairs, size_t *bound)
{
    if (!PyList_CheckExact(pairs) && !PyTuple_CheckExact(pairs)) {
        return 0;
    }
    PyObject **items = PySequence_Fast_ITEMS(pairs);
    Py_ssize_t n = PySequence_Fast_GET_SIZE(pairs);
    size_t total = 2; /* [ ] */
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *pair = items[i];
        if ((!PyList_CheckExact(pair) && !PyTuple_CheckExact(pair)) || PySequence_Fast_GET_SIZE(pair) != 2) {
            return 0;
        }
        PyObject *key = PySequence_Fast_ITEMS(pair)[0];
        PyObject *value = PySequence_Fast_ITEMS(pair)[1];
        if (!PyUnicode_Check(key) || !PyUnicode_Check(value)) {
            return 0;
        }
        if (ensure_ready(key) < 0 || ensure_ready(value) < 0) {
            return -1;
        }
        /* [ , ] and the comma before the next pair; saturate instead of wrapping */
        size_t add = escaped_bound(key) + escaped_bound(value) + 4;
        total = add > (size_t)PY_SSIZE_T_MAX - total ? (size_t)PY_SSIZE_T_MAX : total + add;
    }
    *bound = total;
    return 1;
}

/* Write the JSON of checked pairs at out; returns the end. */
static char *
write_pairs(char *out, PyObject *pairs)
{
    PyObject **items = PySequence_Fast_ITEMS(pairs);
    Py_ssize_t n = PySequence_Fast_GET_SIZE(pairs);
    *out++ = '[';
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject **kv = PySequence_Fast_ITEMS(items[i]);
        if (i) {
            *out++ = ',';
        }
        *out++ = '[';
        out = write_escaped(out, kv[0]);
        *out++ = ',';
        out = write_escaped(out, kv[1]);
        *out++ = ']';
    }
    *out++ = ']';
    return out;
}

/* Exact JSON size of checked pairs (strings made ready first); -1 with an exception set on failure. */
static Py_ssize_t
pairs_size(PyObject *pairs)
{
    PyObject **items = PySequence_Fast_ITEMS(pairs);
    Py_ssize_t n = PySequence_Fast_GET_SIZE(pairs);
    Py_ssize_t total = n ? 1 + n * 4 : 2; /* [ ] plus per pair [ , ] and the commas between pairs */
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject **kv = PySequence_Fast_ITEMS(items[i]);
        for (int j = 0; j < 2; j++) {
            Py_ssize_t size = escaped_size(kv[j]);
            if (size < 0) {
                return -1;
            }
            if (size > PY_SSIZE_T_MAX - total) {
                PyErr_SetString(PyExc_OverflowError, "resource_id: JSON text too long");
                return -1;
            }
            total += size;
        }
    }
    return total;
}

/* The id of pairs, or the fallback's answer for anything not ours. */
static PyObject *
resource_id_impl(PyObject *module, PyObject *pairs)
{
    size_t bound = 0;
    int ours = check_pairs(pairs, &bound);
    if (ours < 0) {
        return NULL;
    }
    if (!ours) {
        return call_fallback(module, pairs);
    }
    /* From here on no Python code runs: the checked containers cannot change under us. */
    if (bound <= STACK_BUFFER) {
        char buffer[STACK_BUFFER];
        char *end = write_pairs(buffer, pairs);
        return id_of_json(buffer, (size_t)(end - buffer));
    }
    Py_ssize_t size = pairs_size(pairs);
    if (size < 0) {
        return NULL;
    }
    char *heap = (char *)PyMem_Malloc((size_t)size);
    if (heap == NULL) {
        return PyErr_NoMemory();
    }
    char *end = write_pairs(heap, pairs);
    PyObject *result = id_of_json(heap, (size_t)(end - heap));
    PyMem_Free(heap);
    return result;
}

PyDoc_STRVAR(resource_id_doc,
"resource_id(pairs, /)\n--\n\n"
"The Library.Link resource id of a list of [key, value] str pairs (pidkit.llid.resource_id).");

static PyObject *
speedups_resource_id(PyObject *module, PyObject *pairs)
{
    return resource_id_impl(module, pairs);
}

PyDoc_STRVAR(resource_ids_doc,
"resource_ids(many, /)\n--\n\n"
"resource_id() of each list of pairs of an iterable, as a list (pidkit.llid.resource_ids).");

static PyObject *
speedups_resource_ids(PyObject *module, PyObject *many)
{
    PyObject *iterator = PyObject_GetIter(many);
    if (iterator == NULL) {
        return NULL;
    }
    PyObject *result = PyList_New(0);
    if (result == NULL) {
        Py_DECREF(iterator);
        return NULL;
    }
    PyObject *pairs;
    while ((pairs = PyIter_Next(iterator)) != NULL) {
        PyObject *rid = resource_id_impl(module, pairs);
        Py_DECREF(pairs);
        if (rid == NULL || PyList_Append(result, rid) < 0) {
            Py_XDECREF(rid);
            Py_DECREF(iterator);
            Py_DECREF(result);
            return NULL;
        }
        Py_DECREF(rid);
    }
    Py_DECREF(iterator);
    if (PyErr_Occurred()) {
        Py_DECREF(result);
        return NULL;
    }
    return result;
}

/* --- ids_from_template ------------------------------------------------------------------------------ */

PyDoc_STRVAR(ids_from_template_doc,
"ids_from_template(fragments, columns, /)\n--\n\n"
"Ids of rows whose JSON is fragments[0] + json(columns[0][i]) + fragments[1] + ... + fragments[-1].\n\n"
"fragments: a tuple of n + 1 bytes (ready ASCII JSON); columns: a tuple of n lists of equal length.\n"
"TypeError if a value is not a str (pidkit.bulk then takes its careful path).");

static PyObject *
speedups_ids_from_template(PyObject *Py_UNUSED(module), PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "ids_from_template() takes exactly 2 arguments");
        return NULL;
    }
    PyObject *fragments = args[0], *columns = args[1];
    if (!PyTuple_CheckExact(fragments) || !PyTuple_CheckExact(columns)) {
        PyErr_SetString(PyExc_TypeError, "ids_from_template(): fragments and columns must be tuples");
        return NULL;
    }
    Py_ssize_t ncols = PyTuple_GET_SIZE(columns);
    if (PyTuple_GET_SIZE(fragments) != ncols + 1) {
        PyErr_SetString(PyExc_ValueError, "ids_from_template(): need one more fragment than columns");
        return NULL;
    }
    size_t fixed = 0;
    for (Py_ssize_t j = 0; j <= ncols; j++) {
        PyObject *fragment = PyTuple_GET_ITEM(fragments, j);
        if (!PyBytes_CheckExact(fragment)) {
            PyErr_SetString(PyExc_TypeError, "ids_from_template(): fragments must be bytes");
            return NULL;
        }
        size_t size = (size_t)PyBytes_GET_SIZE(fragment);
        if (size > (size_t)PY_SSIZE_T_MAX - fixed) {
            PyErr_SetString(PyExc_OverflowError, "ids_from_template(): fragments too long");
            return NULL;
        }
        fixed += size;
    }
    Py_ssize_t nrows = 0;
    for (Py_ssize_t j = 0; j < ncols; j++) {
        PyObject *column = PyTuple_GET_ITEM(columns, j);
        if (!PyList_CheckExact(column)) {
            PyErr_SetString(PyExc_TypeError, "ids_from_template(): columns must be lists");
            return NULL;
        }
        if (j == 0) {
            nrows = PyList_GET_SIZE(column);
        }
        else if (PyList_GET_SIZE(column) != nrows) {
            PyErr_SetString(PyExc_ValueError, "ids_from_template(): columns differ in length");
            return NULL;
        }
    }
    /* Every value is checked before anything is computed, so that a bad value anywhere costs nothing. */
    for (Py_ssize_t j = 0; j < ncols; j++) {
        PyObject *column = PyTuple_GET_ITEM(columns, j);
        for (Py_ssize_t i = 0; i < nrows; i++) {
            PyObject *value = PyList_GET_ITEM(column, i);
            if (!PyUnicode_Check(value)) {
                PyErr_Format(PyExc_TypeError, "ids_from_template(): row %zd, column %zd is not a str", i, j);
                return NULL;
            }
            if (ensure_ready(value) < 0) {
                return NULL;
            }
        }
    }
    PyObject *result = PyList_New(nrows);
    if (result == NULL) {
        return NULL;
    }
    char stack[STACK_BUFFER];
    char *heap = NULL;
    size_t heap_size = 0;
    for (Py_ssize_t i = 0; i < nrows; i++) {
        size_t bound = fixed;
        for (Py_ssize_t j = 0; j < ncols; j++) {
            size_t add = escaped_bound(PyList_GET_ITEM(PyTuple_GET_ITEM(columns, j), i));
            bound = add > (size_t)PY_SSIZE_T_MAX - bound ? (size_t)PY_SSIZE_T_MAX : bound + add;
        }
        char *buffer = stack;
        if (bound > STACK_BUFFER) {
            /* exact size of this row, then a heap buffer kept for the next long rows */
            size_t exact = fixed;
            for (Py_ssize_t j = 0; j < ncols; j++) {
                Py_ssize_t size = escaped_size(PyList_GET_ITEM(PyTuple_GET_ITEM(columns, j), i));
                if (size < 0 || (size_t)size > (size_t)PY_SSIZE_T_MAX - exact) {
                    if (size >= 0) {
                        PyErr_SetString(PyExc_OverflowError, "ids_from_template(): JSON text too long");
                    }
                    goto error;
                }
                exact += (size_t)size;
            }
            if (exact > STACK_BUFFER) {
                if (exact > heap_size) {
                    char *grown = (char *)PyMem_Realloc(heap, exact);
                    if (grown == NULL) {
                        PyErr_NoMemory();
                        goto error;
                    }
                    heap = grown;
                    heap_size = exact;
                }
                buffer = heap;
            }
        }
        char *out = buffer;
        for (Py_ssize_t j = 0; j <= ncols; j++) {
            PyObject *fragment = PyTuple_GET_ITEM(fragments, j);
            memcpy(out, PyBytes_AS_STRING(fragment), (size_t)PyBytes_GET_SIZE(fragment));
            out += PyBytes_GET_SIZE(fragment);
            if (j < ncols) {
                out = write_escaped(out, PyList_GET_ITEM(PyTuple_GET_ITEM(columns, j), i));
            }
        }
        PyObject *rid = id_of_json(buffer, (size_t)(out - buffer));
        if (rid == NULL) {
            goto error;
        }
        PyList_SET_ITEM(result, i, rid);
    }
    PyMem_Free(heap);
    return result;

error:
    PyMem_Free(heap);
    Py_DECREF(result);
    return NULL;
}

/* --- XarkId.new() ---------------------------------------------------------------------------------- */

static const char B64URL[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/* base64url (RFC 4648 section 5) of 3 * n bytes: exactly 4 * n characters, no padding */
static void
b64url_triples(const unsigned char *in, Py_ssize_t n, char *out)
{
    for (Py_ssize_t i = 0; i < n; i++, in += 3, out += 4) {
        uint32_t v = ((uint32_t)in[0] << 16) | ((uint32_t)in[1] << 8) | in[2];
        out[0] = B64URL[(v >> 18) & 63];
        out[1] = B64URL[(v >> 12) & 63];
        out[2] = B64URL[(v >> 6) & 63];
        out[3] = B64URL[v & 63];
    }
}

/* forks seen by this process (pthread_atfork child handler): a child never uses its parent's pool */
static volatile unsigned long fork_count = 0;

static void
count_fork_in_child(void)
{
    fork_count++;
}

/* the system clock in Unix milliseconds, as time.time_ns() // 1_000_000; -1 with an exception set */
static int64_t
system_clock_ms(void)
{
    int64_t ns;
#if PY_VERSION_HEX >= 0x030D0000
    PyTime_t t;
    if (PyTime_Time(&t) < 0) {
        return -1;
    }
    ns = (int64_t)t;
#else
    ns = (int64_t)_PyTime_GetSystemClock();
#endif
    int64_t ms = ns / 1000000;
    if (ns % 1000000 < 0) {
        ms -= 1; /* floor, as Python's // */
    }
    if (ms < 0 || ms > XARKID_MAX_MS) {
        PyErr_Format(PyExc_OverflowError, "the system clock (%lld ms) does not fit a XarkId's 48 bits",
                     (long long)ms);
        return -1;
    }
    return ms;
}

/* copy the next 9 unused pool bytes to out, refilling the pool from os.urandom when it is empty */
static int
take_random(speedups_state *state, unsigned char *out)
{
    if (state->pool_pos + XARKID_RANDOM_BYTES > XARKID_POOL_BYTES || state->pool_forks != fork_count) {
        /* os.urandom may release the GIL: another thread may refill meanwhile; either way the bytes
           copied below are fresh and pool_pos only moves forward under the GIL */
        PyObject *fresh = PyObject_CallFunction(state->urandom, "n", (Py_ssize_t)XARKID_POOL_BYTES);
        if (fresh == NULL) {
            return -1;
        }
        if (!PyBytes_Check(fresh) || PyBytes_GET_SIZE(fresh) != XARKID_POOL_BYTES) {
            Py_DECREF(fresh);
            PyErr_SetString(PyExc_RuntimeError, "pidkit._speedups: os.urandom returned the wrong size");
            return -1;
        }
        memcpy(state->pool, PyBytes_AS_STRING(fresh), XARKID_POOL_BYTES);
        Py_DECREF(fresh);
        state->pool_pos = 0;
        state->pool_forks = fork_count;
    }
    memcpy(out, state->pool + state->pool_pos, XARKID_RANDOM_BYTES);
    memset(state->pool + state->pool_pos, 0, XARKID_RANDOM_BYTES);
    state->pool_pos += XARKID_RANDOM_BYTES;
    return 0;
}

/* The compact text of a new XarkId (20 characters): the current millisecond and 9 unused random bytes. */
static PyObject *
xarkid_compact_text(speedups_state *state)
{
    int64_t ms = system_clock_ms();
    if (ms < 0) {
        return NULL;
    }
    if (ms != state->prefix_ms) {
        unsigned char be[6];
        for (int i = 0; i < 6; i++) {
            be[i] = (unsigned char)(ms >> (8 * (5 - i)));
        }
        b64url_triples(be, 2, state->prefix);
        state->prefix_ms = ms;
    }
    unsigned char random[XARKID_RANDOM_BYTES];
    if (take_random(state, random) < 0) {
        return NULL;
    }
    PyObject *text = PyUnicode_New(XARKID_COMPACT_LEN, 127);
    if (text == NULL) {
        return NULL;
    }
    char *chars = (char *)PyUnicode_1BYTE_DATA(text);
    memcpy(chars, state->prefix, 8);
    b64url_triples(random, XARKID_RANDOM_BYTES / 3, chars + 8);
    return text;
}

PyDoc_STRVAR(xarkid_new_doc,
"xarkid_new(cls, /)\n--\n\n"
"A new cls (XarkId or a subclass): the system time (time.time_ns()) in ms and 72 bits from os.urandom.\n"
"pidkit.xarkid installs it as XarkId.new; see pidkit.xarkid._new_python for the same in Python.");

static PyObject *
speedups_xarkid_new(PyObject *module, PyObject *cls)
{
    speedups_state *state = get_state(module);
    if (state->xarkid_type == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "pidkit._speedups: _xarkid_setup() was not called");
        return NULL;
    }
    if ((PyTypeObject *)cls != state->xarkid_type &&
        (!PyType_Check(cls) || !PyType_IsSubtype((PyTypeObject *)cls, state->xarkid_type))) {
        PyErr_Format(PyExc_TypeError, "xarkid_new() needs XarkId or a subclass, not %R", cls);
        return NULL;
    }
    PyObject *text = xarkid_compact_text(state);
    if (text == NULL) {
        return NULL;
    }
    PyTypeObject *type = (PyTypeObject *)cls;
    PyObject *obj = type->tp_alloc(type, 0);
    if (obj == NULL) {
        Py_DECREF(text);
        return NULL;
    }
    /* the slot of a new instance is empty (NULL): it takes the reference, as the descriptor's __set__ would */
    *(PyObject **)((char *)obj + state->compact_offset) = text;
    return obj;
}

PyDoc_STRVAR(xarkid_compact_strings_doc,
"xarkid_compact_strings(n, /)\n--\n\n"
"A list of n new XarkIds' compact texts, each made as xarkid_new makes one (its own clock reading and\n"
"9 random bytes of the pool). pidkit.xarkid installs it as XarkId.new_compact_strings.");

static PyObject *
speedups_xarkid_compact_strings(PyObject *module, PyObject *arg)
{
    speedups_state *state = get_state(module);
    if (state->xarkid_type == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "pidkit._speedups: _xarkid_setup() was not called");
        return NULL;
    }
    Py_ssize_t n = PyLong_AsSsize_t(arg);
    if (n == -1 && PyErr_Occurred()) {
        return NULL;
    }
    if (n < 0) {
        PyErr_Format(PyExc_ValueError, "n must be >= 0, got %zd", n);
        return NULL;
    }
    PyObject *out = PyList_New(n);
    if (out == NULL) {
        return NULL;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *text = xarkid_compact_text(state);
        if (text == NULL) {
            Py_DECREF(out);
            return NULL;
        }
        PyList_SET_ITEM(out, i, text);
    }
    return out;
}

PyDoc_STRVAR(xarkid_setup_doc,
"_xarkid_setup(xarkid_type, compact_slot, urandom, /)\n--\n\n"
"Register XarkId, its '_compact' slot descriptor and os.urandom for xarkid_new().");

static PyObject *
speedups_xarkid_setup(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 3 || !PyType_Check(args[0]) || !PyObject_TypeCheck(args[1], &PyMemberDescr_Type) ||
        !PyCallable_Check(args[2])) {
        PyErr_SetString(PyExc_TypeError,
                        "_xarkid_setup(xarkid_type, compact_slot, urandom): a type, a slot, a callable");
        return NULL;
    }
    PyMemberDef *member = ((PyMemberDescrObject *)args[1])->d_member;
    if (member->type != T_OBJECT_EX || (member->flags & READONLY) ||
        ((PyDescrObject *)args[1])->d_type != (PyTypeObject *)args[0]) {
        PyErr_SetString(PyExc_TypeError, "_xarkid_setup(): compact_slot is not a writable slot of xarkid_type");
        return NULL;
    }
    get_state(module)->compact_offset = member->offset;
    speedups_state *state = get_state(module);
    Py_INCREF(args[0]);
    Py_XSETREF(state->xarkid_type, (PyTypeObject *)args[0]);
    Py_INCREF(args[1]);
    Py_XSETREF(state->compact_slot, args[1]);
    Py_INCREF(args[2]);
    Py_XSETREF(state->urandom, args[2]);
    state->pool_pos = XARKID_POOL_BYTES;
    state->prefix_ms = -1;
    Py_RETURN_NONE;
}

/* --- GEDCOM: the fast line check and PAF _UID values ---------------------------------------------- */

/* The line terminators of gedcom_scan: LF, CR-LF, and CR not followed by LF. */
enum { EOL_LF = 0, EOL_CRLF = 1, EOL_CR = 2 };

static inline int
is_digit(unsigned char c)
{
    return c >= '0' && c <= '9';
}

static inline int
is_tagchar_7(unsigned char c) /* gedcom-1 tagchar = ucletter / DIGIT / underscore */
{
    return (c >= 'A' && c <= 'Z') || is_digit(c) || c == '_';
}

static inline int
is_tagchar_5(unsigned char c) /* 5.5.1 tag characters: letters of either case, digits, underscore */
{
    return is_tagchar_7(c) || (c >= 'a' && c <= 'z');
}

/* The end of the terminator at s[i] (eol kind), or -1 if none is there. */
static inline Py_ssize_t
eol_end(const unsigned char *s, Py_ssize_t i, Py_ssize_t n, int eol)
{
    if (i >= n) {
        return -1;
    }
    switch (eol) {
    case EOL_LF:
        return s[i] == '\n' ? i + 1 : -1;
    case EOL_CRLF:
        return (s[i] == '\r' && i + 1 < n && s[i + 1] == '\n') ? i + 2 : -1;
    default:
        return (s[i] == '\r' && !(i + 1 < n && s[i + 1] == '\n')) ? i + 1 : -1;
    }
}

/* The first CR or LF at or after i (n if none). */
static inline Py_ssize_t
line_break(const unsigned char *s, Py_ssize_t i, Py_ssize_t n)
{
    while (i < n && s[i] != '\r' && s[i] != '\n') {
        i++;
    }
    return i;
}

/* Level D: the index after the delimiter, or -1. */
static inline Py_ssize_t
level_and_delimiter(const unsigned char *s, Py_ssize_t i, Py_ssize_t n)
{
    if (i >= n) {
        return -1;
    }
    if (s[i] == '0') {
        i++;
    }
    else if (s[i] >= '1' && s[i] <= '9') {
        i++;
        while (i < n && is_digit(s[i])) {
            i++;
        }
    }
    else {
        return -1;
    }
    return (i < n && s[i] == ' ') ? i + 1 : -1;
}

/* One line of grammar.valid_lines_5 at s[i]: the index after its terminator, or -1; its tag is
 * s[*tag_at:*tag_end]. */
static Py_ssize_t
line_end_5(const unsigned char *s, Py_ssize_t i, Py_ssize_t n, int eol, Py_ssize_t *tag_at, Py_ssize_t *tag_end)
{
    i = level_and_delimiter(s, i, n);
    if (i < 0) {
        return -1;
    }
    if (i < n && s[i] == '@') { /* xref_ID D: "@", any bytes but "@" CR LF, "@", " " */
        Py_ssize_t j = i + 1;
        while (j < n && s[j] != '@' && s[j] != '\r' && s[j] != '\n') {
            j++;
        }
        if (j == i + 1 || j + 1 >= n || s[j] != '@' || s[j + 1] != ' ') {
            return -1; /* and a tag cannot start with "@" */
        }
        i = j + 2;
    }
    Py_ssize_t tag = i;
    while (i < n && is_tagchar_5(s[i])) {
        i++;
    }
    unsigned char stop = eol == EOL_LF ? '\n' : '\r';
    if (i == tag || (i < n && s[i] != ' ' && s[i] != stop)) {
        return -1;
    }
    *tag_at = tag;
    *tag_end = i;
    Py_ssize_t brk = line_break(s, i, n);
    return brk - i > 240 ? -1 : eol_end(s, brk, n, eol);
}

/* One line of grammar.valid_lines_7 at s[i]: the index after its terminator, or -1; its tag is
 * s[*tag_at:*tag_end]. */
static Py_ssize_t
line_end_7(const unsigned char *s, Py_ssize_t i, Py_ssize_t n, int eol, Py_ssize_t *tag_at, Py_ssize_t *tag_end)
{
    i = level_and_delimiter(s, i, n);
    if (i < 0) {
        return -1;
    }
    if (i < n && s[i] == '@') { /* Xref D */
        Py_ssize_t j = i + 1;
        while (j < n && is_tagchar_7(s[j])) {
            j++;
        }
        if (j == i + 1 || j + 1 >= n || s[j] != '@' || s[j + 1] != ' ') {
            return -1;
        }
        i = j + 2;
    }
    if (i + 4 <= n && memcmp(s + i, "CONC", 4) == 0 && !(i + 4 < n && is_tagchar_5(s[i + 4]))) {
        return -1; /* CONC is not a 7.0 tag */
    }
    Py_ssize_t tag = i;
    if (i < n && ((s[i] >= 'A' && s[i] <= 'Z') || s[i] == '_')) { /* stdTag / extTag */
        i++;
        while (i < n && is_tagchar_7(s[i])) {
            i++;
        }
    }
    if (i == tag || (s[tag] == '_' && i == tag + 1)) {
        return -1;
    }
    *tag_at = tag;
    *tag_end = i;
    if (i < n && s[i] == ' ') { /* D [LineVal] */
        i++;
        if (i < n && s[i] == '@') {
            if (i + 1 < n && s[i + 1] == '@') { /* lineStr with a leading @@ */
                i = line_break(s, i, n);
            }
            else { /* pointer (voidPtr is an Xref in form) */
                Py_ssize_t j = i + 1;
                while (j < n && is_tagchar_7(s[j])) {
                    j++;
                }
                if (j == i + 1 || j >= n || s[j] != '@') {
                    return -1;
                }
                i = j + 1;
            }
        }
        else {
            i = line_break(s, i, n); /* lineStr, or nothing */
        }
    }
    return eol_end(s, i, n, eol);
}

PyDoc_STRVAR(gedcom_scan_doc,
"gedcom_scan(gedcom7, eol, data, pos, /)\n--\n\n"
"The run of well-formed lines of data from pos, as pidkit.gedcom.grammar.record_scanner describes it:\n"
"(end, lines, starts, numbers, tags): the run ends at end and has lines lines; starts are the offsets of\n"
"its level-0 lines after pos, numbers how many of the run's lines come before each, tags their tags.\n"
"A line is well-formed as grammar.valid_lines_7(eol) (gedcom7 true) or grammar.valid_lines_5(eol, stop)\n"
"match it, for eol b'\\n', b'\\r\\n' or b'\\r' (a CR not followed by LF).");

static int
append_size(PyObject *list, Py_ssize_t value)
{
    PyObject *item = PyLong_FromSsize_t(value);
    if (item == NULL) {
        return -1;
    }
    int rc = PyList_Append(list, item);
    Py_DECREF(item);
    return rc;
}

static PyObject *
speedups_gedcom_scan(PyObject *Py_UNUSED(module), PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 4 || !PyBytes_Check(args[1]) || !PyBytes_Check(args[2]) || !PyLong_Check(args[3])) {
        PyErr_SetString(PyExc_TypeError, "gedcom_scan(gedcom7, eol, data, pos): bool, bytes, bytes, int");
        return NULL;
    }
    int gedcom7 = PyObject_IsTrue(args[0]);
    if (gedcom7 < 0) {
        return NULL;
    }
    const char *eol_s = PyBytes_AS_STRING(args[1]);
    Py_ssize_t eol_n = PyBytes_GET_SIZE(args[1]);
    int eol;
    if (eol_n == 1 && eol_s[0] == '\n') {
        eol = EOL_LF;
    }
    else if (eol_n == 2 && eol_s[0] == '\r' && eol_s[1] == '\n') {
        eol = EOL_CRLF;
    }
    else if (eol_n == 1 && eol_s[0] == '\r') {
        eol = EOL_CR;
    }
    else {
        PyErr_SetString(PyExc_ValueError, "gedcom_scan: eol must be b'\\n', b'\\r\\n' or b'\\r'");
        return NULL;
    }
    const unsigned char *s = (const unsigned char *)PyBytes_AS_STRING(args[2]);
    Py_ssize_t n = PyBytes_GET_SIZE(args[2]);
    Py_ssize_t pos = PyLong_AsSsize_t(args[3]);
    if (pos == -1 && PyErr_Occurred()) {
        return NULL;
    }
    if (pos < 0 || pos > n) {
        PyErr_Format(PyExc_ValueError, "gedcom_scan: pos %zd is outside the data (%zd bytes)", pos, n);
        return NULL;
    }
    PyObject *starts = PyList_New(0);
    PyObject *numbers = PyList_New(0);
    PyObject *tags = PyList_New(0);
    PyObject *tag = NULL;
    if (starts == NULL || numbers == NULL || tags == NULL) {
        goto error;
    }
    Py_ssize_t lines = 0;
    Py_ssize_t at = pos;
    for (;;) {
        Py_ssize_t tag_at = 0, tag_end = 0;
        Py_ssize_t next = gedcom7 ? line_end_7(s, at, n, eol, &tag_at, &tag_end)
                                  : line_end_5(s, at, n, eol, &tag_at, &tag_end);
        if (next < 0) {
            break;
        }
        /* a well-formed line is level 0 exactly when it starts with "0" (then a space) */
        if (at > pos && s[at] == '0') {
            /* the tag's characters are ASCII letters, digits and underscores */
            tag = PyUnicode_DecodeASCII((const char *)s + tag_at, tag_end - tag_at, NULL);
            if (tag == NULL) {
                goto error;
            }
            PyUnicode_InternInPlace(&tag); /* one object per tag name, however many records */
            if (append_size(starts, at) < 0 || append_size(numbers, lines) < 0 || PyList_Append(tags, tag) < 0) {
                goto error;
            }
            Py_CLEAR(tag);
        }
        lines++;
        at = next;
    }
    return Py_BuildValue("(nnNNN)", at, lines, starts, numbers, tags);

error:
    Py_XDECREF(tag);
    Py_XDECREF(starts);
    Py_XDECREF(numbers);
    Py_XDECREF(tags);
    return NULL;
}

PyDoc_STRVAR(paf_strings_doc,
"paf_strings(data, /)\n--\n\n"
"The PAF-form _UID texts (GEDCOM 5.x, U2) of len(data) // 16 UUIDs v4 made of data's 16-byte blocks:\n"
"the version and variant bits set as uuid.uuid4 sets them, 32 uppercase hex digits, then the U2\n"
"checksum (Fletcher-16 with modulus 256) as 4 more. Exactly gedcom_uid._paf_strings, the Python code.");

static PyObject *
speedups_paf_strings(PyObject *Py_UNUSED(module), PyObject *arg)
{
    if (!PyBytes_Check(arg) || PyBytes_GET_SIZE(arg) % 16 != 0) {
        PyErr_SetString(PyExc_ValueError, "paf_strings(data): bytes, a multiple of 16 long");
        return NULL;
    }
    static const char hex[] = "0123456789ABCDEF";
    const unsigned char *data = (const unsigned char *)PyBytes_AS_STRING(arg);
    Py_ssize_t count = PyBytes_GET_SIZE(arg) / 16;
    PyObject *out = PyList_New(count);
    if (out == NULL) {
        return NULL;
    }
    for (Py_ssize_t k = 0; k < count; k++) {
        unsigned char b[16];
        memcpy(b, data + 16 * k, 16);
        b[6] = (unsigned char)((b[6] & 0x0F) | 0x40); /* version 4 */
        b[8] = (unsigned char)((b[8] & 0x3F) | 0x80); /* variant 10 */
        unsigned int check1 = 0, check2 = 0;
        PyObject *text = PyUnicode_New(36, 127);
        if (text == NULL) {
            Py_DECREF(out);
            return NULL;
        }
        Py_UCS1 *p = PyUnicode_1BYTE_DATA(text);
        for (int i = 0; i < 16; i++) {
            check1 += b[i];
            check2 += (unsigned int)(16 - i) * b[i]; /* weight 17 - n for n = i + 1 */
            p[2 * i] = (Py_UCS1)hex[b[i] >> 4];
            p[2 * i + 1] = (Py_UCS1)hex[b[i] & 0x0F];
        }
        check1 &= 0xFF;
        check2 &= 0xFF;
        p[32] = (Py_UCS1)hex[check1 >> 4];
        p[33] = (Py_UCS1)hex[check1 & 0x0F];
        p[34] = (Py_UCS1)hex[check2 >> 4];
        p[35] = (Py_UCS1)hex[check2 & 0x0F];
        PyList_SET_ITEM(out, k, text);
    }
    return out;
}

/* --- the fallback, the module ----------------------------------------------------------------------- */

PyDoc_STRVAR(set_fallback_doc,
"_set_fallback(func, /)\n--\n\n"
"Register func(pairs) -> str, called for every input resource_id() does not take itself.");

static PyObject *
speedups_set_fallback(PyObject *module, PyObject *func)
{
    if (!PyCallable_Check(func)) {
        PyErr_SetString(PyExc_TypeError, "_set_fallback() needs a callable");
        return NULL;
    }
    speedups_state *state = get_state(module);
    Py_INCREF(func);
    Py_XSETREF(state->fallback, func);
    Py_RETURN_NONE;
}

static PyMethodDef speedups_methods[] = {
    {"resource_id", (PyCFunction)speedups_resource_id, METH_O, resource_id_doc},
    {"resource_ids", (PyCFunction)speedups_resource_ids, METH_O, resource_ids_doc},
    {"ids_from_template", (PyCFunction)(void (*)(void))speedups_ids_from_template, METH_FASTCALL,
     ids_from_template_doc},
    {"_set_fallback", (PyCFunction)speedups_set_fallback, METH_O, set_fallback_doc},
    {"xarkid_new", (PyCFunction)speedups_xarkid_new, METH_O, xarkid_new_doc},
    {"xarkid_compact_strings", (PyCFunction)speedups_xarkid_compact_strings, METH_O,
     xarkid_compact_strings_doc},
    {"_xarkid_setup", (PyCFunction)(void (*)(void))speedups_xarkid_setup, METH_FASTCALL, xarkid_setup_doc},
    {"gedcom_scan", (PyCFunction)(void (*)(void))speedups_gedcom_scan, METH_FASTCALL, gedcom_scan_doc},
    {"paf_strings", (PyCFunction)speedups_paf_strings, METH_O, paf_strings_doc},
    {NULL, NULL, 0, NULL},
};

static int
speedups_traverse(PyObject *module, visitproc visit, void *arg)
{
    speedups_state *state = get_state(module);
    Py_VISIT(state->fallback);
    Py_VISIT(state->xarkid_type);
    Py_VISIT(state->compact_slot);
    Py_VISIT(state->urandom);
    return 0;
}

static int
speedups_clear(PyObject *module)
{
    speedups_state *state = get_state(module);
    Py_CLEAR(state->fallback);
    Py_CLEAR(state->xarkid_type);
    Py_CLEAR(state->compact_slot);
    Py_CLEAR(state->urandom);
    return 0;
}

static void
speedups_free(void *module)
{
    speedups_clear((PyObject *)module);
}

static int
speedups_exec(PyObject *module)
{
    speedups_state *state = get_state(module);
    state->pool_pos = XARKID_POOL_BYTES;
    state->prefix_ms = -1;
    static int atfork_registered = 0;
    if (!atfork_registered) {
        if (pthread_atfork(NULL, NULL, count_fork_in_child) != 0) {
            PyErr_SetString(PyExc_RuntimeError, "pidkit._speedups: pthread_atfork failed");
            return -1;
        }
        atfork_registered = 1;
    }
    init_escaped_len();
    return 0;
}

static PyModuleDef_Slot speedups_slots[] = {
    {Py_mod_exec, (void *)speedups_exec},
    {0, NULL},
};

static struct PyModuleDef speedups_module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "pidkit._speedups",
    .m_doc = "Library.Link resource ids, XarkId.new() and GEDCOM line scans in C (optional; pidkit falls back "
             "to pure Python).",
    .m_size = sizeof(speedups_state),
    .m_methods = speedups_methods,
    .m_slots = speedups_slots,
    .m_traverse = speedups_traverse,
    .m_clear = speedups_clear,
    .m_free = speedups_free,
};

PyMODINIT_FUNC
PyInit__speedups(void)
{
    return PyModuleDef_Init(&speedups_module);
}
