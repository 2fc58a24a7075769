// SHA-256's block function (FIPS 180-4), with the processor's SHA instructions where it has them.
#pragma once

#include <QtGlobal>

namespace OpsDeck::Sha256Blocks {

constexpr int BlockBytes = 64;
constexpr int DigestBytes = 32;
extern const quint32 InitialState[8];

// Hashes `count` blocks of 64 bytes at `blocks` into `state`: with the x86 SHA extensions when
// this processor has them (checked once), else portable C++. Every callback a server sends is
// signed with HMAC-SHA256, which is a good part of the sending thread's time per attempt.
void compress(quint32 state[8], const unsigned char *blocks, qsizetype count);

// The same in portable C++ on any processor, and whether compress() uses the SHA instructions:
// for tests that hold the two against each other.
void compressPortable(quint32 state[8], const unsigned char *blocks, qsizetype count);
bool accelerated();

} // namespace OpsDeck::Sha256Blocks
