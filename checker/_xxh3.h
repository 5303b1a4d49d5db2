/* XXH3-64 with seed 0 and the default secret: the digest of checker/fingerprint.py
 * (xxhash.xxh3_64_intdigest), for the compiled loops of checker/_fpset.c and
 * checker/_engine.c.  Written from the algorithm's specification (Yann Collet's xxHash,
 * doc/xxhash_spec.md and xxhash.h, the scalar path); tests/checker/test_fpset.py checks it
 * against the xxhash package on every length from 0 to 3,000 bytes and beyond.
 *
 * Inputs of up to 240 bytes take the short paths; longer ones the "long" path: 64-byte
 * stripes folded into eight 64-bit lanes, the lanes scrambled after every 1,024-byte
 * block, then merged. */
#ifndef ISRLAB_XXH3_H
#define ISRLAB_XXH3_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

static const unsigned char SECRET[192] = {
    0xb8, 0xfe, 0x6c, 0x39, 0x23, 0xa4, 0x4b, 0xbe, 0x7c, 0x01, 0x81, 0x2c, 0xf7, 0x21, 0xad, 0x1c,
    0xde, 0xd4, 0x6d, 0xe9, 0x83, 0x90, 0x97, 0xdb, 0x72, 0x40, 0xa4, 0xa4, 0xb7, 0xb3, 0x67, 0x1f,
    0xcb, 0x79, 0xe6, 0x4e, 0xcc, 0xc0, 0xe5, 0x78, 0x82, 0x5a, 0xd0, 0x7d, 0xcc, 0xff, 0x72, 0x21,
    0xb8, 0x08, 0x46, 0x74, 0xf7, 0x43, 0x24, 0x8e, 0xe0, 0x35, 0x90, 0xe6, 0x81, 0x3a, 0x26, 0x4c,
    0x3c, 0x28, 0x52, 0xbb, 0x91, 0xc3, 0x00, 0xcb, 0x88, 0xd0, 0x65, 0x8b, 0x1b, 0x53, 0x2e, 0xa3,
    0x71, 0x64, 0x48, 0x97, 0xa2, 0x0d, 0xf9, 0x4e, 0x38, 0x19, 0xef, 0x46, 0xa9, 0xde, 0xac, 0xd8,
    0xa8, 0xfa, 0x76, 0x3f, 0xe3, 0x9c, 0x34, 0x3f, 0xf9, 0xdc, 0xbb, 0xc7, 0xc7, 0x0b, 0x4f, 0x1d,
    0x8a, 0x51, 0xe0, 0x4b, 0xcd, 0xb4, 0x59, 0x31, 0xc8, 0x9f, 0x7e, 0xc9, 0xd9, 0x78, 0x73, 0x64,
    0xea, 0xc5, 0xac, 0x83, 0x34, 0xd3, 0xeb, 0xc3, 0xc5, 0x81, 0xa0, 0xff, 0xfa, 0x13, 0x63, 0xeb,
    0x17, 0x0d, 0xdd, 0x51, 0xb7, 0xf0, 0xda, 0x49, 0xd3, 0x16, 0x55, 0x26, 0x29, 0xd4, 0x68, 0x9e,
    0x2b, 0x16, 0xbe, 0x58, 0x7d, 0x47, 0xa1, 0xfc, 0x8f, 0xf8, 0xb8, 0xd1, 0x7a, 0xd0, 0x31, 0xce,
    0x45, 0xcb, 0x3a, 0x8f, 0x95, 0x16, 0x04, 0x28, 0xaf, 0xd7, 0xfb, 0xca, 0xbb, 0x4b, 0x40, 0x7e,
};

#define P32_1 0x9E3779B1U
#define P32_2 0x85EBCA77U
#define P32_3 0xC2B2AE3DU
#define P64_1 0x9E3779B185EBCA87ULL
#define P64_2 0xC2B2AE3D27D4EB4FULL
#define P64_3 0x165667B19E3779F9ULL
#define P64_4 0x85EBCA77C2B2AE63ULL
#define P64_5 0x27D4EB2F165667C5ULL
#define PMX_1 0x165667919E3779F9ULL
#define PMX_2 0x9FB21C651E98DF25ULL

static inline uint64_t
read64(const unsigned char *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    v = __builtin_bswap64(v);
#endif
    return v;
}

static inline uint32_t
read32(const unsigned char *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    v = __builtin_bswap32(v);
#endif
    return v;
}

static inline uint64_t
rotl64(uint64_t x, int r)
{
    return (x << r) | (x >> (64 - r));
}

static inline uint64_t
fold64(uint64_t a, uint64_t b)
{
    unsigned __int128 product = (unsigned __int128)a * b;
    return (uint64_t)product ^ (uint64_t)(product >> 64);
}

static inline uint64_t
avalanche3(uint64_t h)
{
    h ^= h >> 37;
    h *= PMX_1;
    return h ^ (h >> 32);
}

static inline uint64_t
avalanche64(uint64_t h)
{
    h ^= h >> 33;
    h *= P64_2;
    h ^= h >> 29;
    h *= P64_3;
    return h ^ (h >> 32);
}

static inline uint64_t
mix16(const unsigned char *in, const unsigned char *secret)
{
    return fold64(read64(in) ^ read64(secret), read64(in + 8) ^ read64(secret + 8));
}

/* XXH3_64bits(data, len) for len <= 240 (the caller checks). */
static uint64_t
xxh3_short(const unsigned char *in, size_t len)
{
    const unsigned char *s = SECRET;
    if (len <= 16) {
        if (len > 8) {
            uint64_t lo = read64(in) ^ (read64(s + 24) ^ read64(s + 32));
            uint64_t hi = read64(in + len - 8) ^ (read64(s + 40) ^ read64(s + 48));
            uint64_t acc = len + __builtin_bswap64(lo) + hi + fold64(lo, hi);
            return avalanche3(acc);
        }
        if (len >= 4) {
            uint64_t input = read32(in + len - 4) + ((uint64_t)read32(in) << 32);
            uint64_t h = input ^ (read64(s + 8) ^ read64(s + 16));
            h ^= rotl64(h, 49) ^ rotl64(h, 24);
            h *= PMX_2;
            h ^= (h >> 35) + len;
            h *= PMX_2;
            return h ^ (h >> 28);
        }
        if (len > 0) {
            uint32_t combined = ((uint32_t)in[0] << 16) | ((uint32_t)in[len >> 1] << 24)
                                | (uint32_t)in[len - 1] | ((uint32_t)len << 8);
            uint64_t flip = (uint64_t)(read32(s) ^ read32(s + 4));
            return avalanche64((uint64_t)combined ^ flip);
        }
        return avalanche64(read64(s + 56) ^ read64(s + 64));
    }
    uint64_t acc = len * P64_1;
    if (len <= 128) {
        if (len > 32) {
            if (len > 64) {
                if (len > 96) {
                    acc += mix16(in + 48, s + 96);
                    acc += mix16(in + len - 64, s + 112);
                }
                acc += mix16(in + 32, s + 64);
                acc += mix16(in + len - 48, s + 80);
            }
            acc += mix16(in + 16, s + 32);
            acc += mix16(in + len - 32, s + 48);
        }
        acc += mix16(in, s);
        acc += mix16(in + len - 16, s + 16);
        return avalanche3(acc);
    }
    size_t rounds = len / 16;
    for (size_t i = 0; i < 8; i++)
        acc += mix16(in + 16 * i, s + 16 * i);
    acc = avalanche3(acc);
    for (size_t i = 8; i < rounds; i++)
        acc += mix16(in + 16 * i, s + 16 * (i - 8) + 3);
    acc += mix16(in + len - 16, s + 136 - 17);
    return avalanche3(acc);
}

/* One 64-byte stripe folded into the eight lanes. */
static inline void
accumulate512(uint64_t *acc, const unsigned char *in, const unsigned char *secret)
{
    for (size_t i = 0; i < 8; i++) {
        uint64_t value = read64(in + 8 * i);
        uint64_t key = value ^ read64(secret + 8 * i);
        acc[i ^ 1] += value;
        acc[i] += (uint64_t)(uint32_t)key * (key >> 32);
    }
}

/* The lanes scrambled at the end of a block. */
static inline void
scramble(uint64_t *acc, const unsigned char *secret)
{
    for (size_t i = 0; i < 8; i++) {
        uint64_t a = acc[i];
        a ^= a >> 47;
        a ^= read64(secret + 8 * i);
        acc[i] = a * P32_1;
    }
}

/* XXH3_64bits(data, len) for len > 240. */
static uint64_t
xxh3_long(const unsigned char *in, size_t len)
{
    uint64_t acc[8] = {P32_3, P64_1, P64_2, P64_3, P64_4, P32_2, P64_5, P32_1};
    const size_t per_block = (sizeof SECRET - 64) / 8, block = 64 * per_block;
    size_t blocks = (len - 1) / block;
    for (size_t n = 0; n < blocks; n++) {
        for (size_t s = 0; s < per_block; s++)
            accumulate512(acc, in + n * block + 64 * s, SECRET + 8 * s);
        scramble(acc, SECRET + sizeof SECRET - 64);
    }
    size_t stripes = ((len - 1) - block * blocks) / 64;
    for (size_t s = 0; s < stripes; s++)
        accumulate512(acc, in + blocks * block + 64 * s, SECRET + 8 * s);
    accumulate512(acc, in + len - 64, SECRET + sizeof SECRET - 64 - 7);
    uint64_t result = len * P64_1;
    for (size_t i = 0; i < 4; i++)
        result += fold64(acc[2 * i] ^ read64(SECRET + 11 + 16 * i),
                         acc[2 * i + 1] ^ read64(SECRET + 11 + 16 * i + 8));
    return avalanche3(result);
}

/* XXH3_64bits(data, len), any length. */
static inline uint64_t
xxh3(const unsigned char *in, size_t len)
{
    return len <= 240 ? xxh3_short(in, len) : xxh3_long(in, len);
}

#ifdef Py_PYTHON_H
/* xxh3_64(data) -> int: xxh3 of a bytes object, the function both extensions export for
 * tests (equal to xxhash.xxh3_64_intdigest); needs Python.h included first. */
static PyObject *
py_xxh3(PyObject *module, PyObject *data)
{
    if (!PyBytes_Check(data)) {
        PyErr_SetString(PyExc_TypeError, "xxh3_64(): bytes");
        return NULL;
    }
    return PyLong_FromUnsignedLongLong(
        xxh3((const unsigned char *)PyBytes_AS_STRING(data), (size_t)PyBytes_GET_SIZE(data)));
}
#endif

#endif
