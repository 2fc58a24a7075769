// SHA-256's block function (FIPS 180-4), with the processor's SHA instructions where it has them.
#include "sha256blocks.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define OPSDECK_SHA256_X86 1
#include <cpuid.h>
#include <immintrin.h>
#endif

namespace OpsDeck::Sha256Blocks {

const quint32 InitialState[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};

namespace {

alignas(16) constexpr quint32 RoundConstants[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

inline quint32 rotateRight(quint32 value, int bits)
{
    return (value >> bits) | (value << (32 - bits));
}

void compressOne(quint32 state[8], const unsigned char *block)
{
    quint32 w[64];
    for (int i = 0; i < 16; ++i)
        w[i] = quint32(block[4 * i]) << 24 | quint32(block[4 * i + 1]) << 16 | quint32(block[4 * i + 2]) << 8
               | quint32(block[4 * i + 3]);
    for (int i = 16; i < 64; ++i) {
        const quint32 s0 = rotateRight(w[i - 15], 7) ^ rotateRight(w[i - 15], 18) ^ (w[i - 15] >> 3);
        const quint32 s1 = rotateRight(w[i - 2], 17) ^ rotateRight(w[i - 2], 19) ^ (w[i - 2] >> 10);
        w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    quint32 a = state[0], b = state[1], c = state[2], d = state[3];
    quint32 e = state[4], f = state[5], g = state[6], h = state[7];
    for (int i = 0; i < 64; ++i) {
        const quint32 t1 = h + (rotateRight(e, 6) ^ rotateRight(e, 11) ^ rotateRight(e, 25)) + ((e & f) ^ (~e & g))
                           + RoundConstants[i] + w[i];
        const quint32 t2 = (rotateRight(a, 2) ^ rotateRight(a, 13) ^ rotateRight(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
        h = g;
        g = f;
        f = e;
        e = d + t1;
        d = c;
        c = b;
        b = a;
        a = t1 + t2;
    }
    state[0] += a;
    state[1] += b;
    state[2] += c;
    state[3] += d;
    state[4] += e;
    state[5] += f;
    state[6] += g;
    state[7] += h;
}

#ifdef OPSDECK_SHA256_X86
// The x86 SHA extensions keep the working variables in two registers, lanes from high to low:
// A B E F and C D G H. Each SHA256RNDS2 does two rounds; SHA256MSG1 and SHA256MSG2 extend the
// message schedule four words at a time (W[t-16] + σ0(W[t-15]), then + σ1(W[t-2]), with
// W[t-7] added in between).
__attribute__((target("sha,ssse3,sse4.1"))) void compressShaExtensions(quint32 state[8], const unsigned char *blocks,
                                                                        qsizetype count)
{
    // Each 32-bit word of a block is big-endian.
    const __m128i wordBytesSwapped = _mm_set_epi64x(0x0c0d0e0f08090a0bLL, 0x0405060700010203LL);
    const __m128i abcd = _mm_loadu_si128(reinterpret_cast<const __m128i *>(state));     // lanes low to high: a b c d
    const __m128i efgh = _mm_loadu_si128(reinterpret_cast<const __m128i *>(state + 4)); // e f g h
    const __m128i badc = _mm_shuffle_epi32(abcd, 0xB1);
    const __m128i hgfe = _mm_shuffle_epi32(efgh, 0x1B);
    __m128i abef = _mm_alignr_epi8(badc, hgfe, 8);     // f e b a
    __m128i cdgh = _mm_blend_epi16(hgfe, badc, 0xF0);  // h g d c
    for (; count > 0; --count, blocks += BlockBytes) {
        const __m128i abefBefore = abef;
        const __m128i cdghBefore = cdgh;
        __m128i words[4]; // the schedule's last sixteen words, four a register
        for (int i = 0; i < 4; ++i)
            words[i] = _mm_shuffle_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i *>(blocks + 16 * i)),
                                        wordBytesSwapped);
        for (int group = 0; group < 16; ++group) {
            __m128i &w = words[group & 3]; // holds words 4·(group-4) on, until replaced here
            if (group >= 4) {
                const __m128i last = words[(group + 3) & 3];
                const __m128i beforeLast = words[(group + 2) & 3];
                w = _mm_sha256msg1_epu32(w, words[(group + 1) & 3]);
                w = _mm_add_epi32(w, _mm_alignr_epi8(last, beforeLast, 4));
                w = _mm_sha256msg2_epu32(w, last);
            }
            __m128i k = _mm_add_epi32(w, _mm_load_si128(reinterpret_cast<const __m128i *>(RoundConstants + 4 * group)));
            cdgh = _mm_sha256rnds2_epu32(cdgh, abef, k); // two rounds: now A B E F
            k = _mm_shuffle_epi32(k, 0x0E);
            abef = _mm_sha256rnds2_epu32(abef, cdgh, k); // two more; the other register is C D G H
        }
        abef = _mm_add_epi32(abef, abefBefore);
        cdgh = _mm_add_epi32(cdgh, cdghBefore);
    }
    const __m128i feba = _mm_shuffle_epi32(abef, 0x1B); // a b e f
    const __m128i ghcd = _mm_shuffle_epi32(cdgh, 0xB1); // g h c d
    _mm_storeu_si128(reinterpret_cast<__m128i *>(state), _mm_blend_epi16(feba, ghcd, 0xF0));
    _mm_storeu_si128(reinterpret_cast<__m128i *>(state + 4), _mm_alignr_epi8(ghcd, feba, 8));
}

bool hasShaExtensions()
{
    unsigned int eax = 0, ebx = 0, ecx = 0, edx = 0;
    if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx))
        return false;
    const bool ssse3 = ecx & (1u << 9);
    const bool sse41 = ecx & (1u << 19);
    if (!__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx))
        return false;
    return ssse3 && sse41 && (ebx & (1u << 29));
}
#endif

using CompressFunction = void (*)(quint32 *, const unsigned char *, qsizetype);

CompressFunction chosen()
{
#ifdef OPSDECK_SHA256_X86
    static const CompressFunction function = hasShaExtensions() ? compressShaExtensions : compressPortable;
    return function;
#else
    return compressPortable;
#endif
}

} // namespace

void compressPortable(quint32 state[8], const unsigned char *blocks, qsizetype count)
{
    for (; count > 0; --count, blocks += BlockBytes)
        compressOne(state, blocks);
}

void compress(quint32 state[8], const unsigned char *blocks, qsizetype count)
{
    chosen()(state, blocks, count);
}

bool accelerated()
{
    return chosen() != compressPortable;
}

} // namespace OpsDeck::Sha256Blocks
