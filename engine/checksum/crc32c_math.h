// Arithmetic on polynomials over GF(2) modulo the CRC-32C polynomial, done at
// compile time, and the constants the fast paths derive from it.
//
// Representation: bit-reflected, as the crc32 instruction and the byte table
// use it. Bit i of a 32-bit word is the coefficient of x^(31-i), so x^0 is
// 0x80000000, and the first message bit (bit 0 of the first byte) is the
// highest power. A CRC register that starts at c0 holds, after n message bytes
// M, (c0 * x^(8n) + M * x^32) mod P.
//
// Everything the fast paths need reduces to "multiply by x^k mod P" for a known
// k. The methods are those of two Intel white papers by Gopal et al.: "Fast CRC
// Computation for iSCSI Polynomial Using CRC32 Instruction" (2011: split the
// buffer into three crc32 streams, join them with a carry-less multiply) and
// "Fast CRC Computation for Generic Polynomials Using PCLMULQDQ Instruction"
// (2009: fold 128-bit chunks forward). Both rest on two identities:
//   - combining: crc(A || B) = crc(A) * x^(8|B|) xor crc_from_zero(B);
//   - folding: a 128-bit chunk X followed by D bits is congruent to X * x^D.
// The constants below are those x^k mod P, so they are computed here, not
// copied from a table in some other project.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

namespace lanecast::engine::crc32c_math {

// Castagnoli polynomial P(x) = x^32 + ..., reflected, without its x^32 term.
inline constexpr uint32_t kPoly = 0x82F63B78u;
inline constexpr uint32_t kOne = 0x80000000u;  // x^0

// a * x mod P: the coefficient of x^31 (bit 0) moves to x^32, which is
// congruent to P - x^32.
constexpr uint32_t times_x(uint32_t a) { return (a >> 1) ^ ((a & 1u) != 0 ? kPoly : 0u); }

// a * b mod P, shift-and-add over the coefficients of a from x^0 upwards.
constexpr uint32_t mul_mod(uint32_t a, uint32_t b) {
  uint32_t product = 0;
  for (int bit = 31; bit >= 0; --bit) {  // bit 31 is x^0, bit 30 is x^1, ...
    if (((a >> bit) & 1u) != 0) product ^= b;
    b = times_x(b);
  }
  return product;
}

// x^n mod P by square-and-multiply.
constexpr uint32_t xpow_mod(uint64_t n) {
  uint32_t result = kOne;
  uint32_t square = times_x(kOne);  // x^1
  for (; n != 0; n >>= 1) {
    if ((n & 1u) != 0) result = mul_mod(result, square);
    square = mul_mod(square, square);
  }
  return result;
}

// Shifting a CRC forward over `bytes` zero bytes (crc * x^(8*bytes) mod P) takes
// one carry-less multiply and one crc32 instruction: pclmulqdq of two reflected
// 32-bit values yields their product times x (the product has 63 bits, read as
// a reflected 64-bit word), and crc32 of that 64-bit word from zero multiplies
// by x^32 and reduces. So the constant is x^(8*bytes - 33).
constexpr uint32_t shift_constant(uint64_t bytes) { return xpow_mod(8 * bytes - 33); }

// Folding a 128-bit chunk forward by `bits`. The chunk's first 8 bytes (low
// qword, reflected) are Q0 and carry x^64 relative to the last 8 bytes Q1, so
// the chunk is Q0 * x^64 + Q1 and moves to Q0 * x^(bits+64) + Q1 * x^bits.
// pclmulqdq of a reflected 64-bit qword by a reflected 32-bit constant yields
// their product times x^33 as a reflected 128-bit value, hence the offsets.
struct FoldPair {
  uint64_t first;   // multiplies Q0 (the lower-addressed qword)
  uint64_t second;  // multiplies Q1
};
constexpr FoldPair fold_pair(uint64_t bits) {
  return FoldPair{xpow_mod(bits + 31), xpow_mod(bits - 33)};
}

// Shift constants for whole qwords, indexed by the number of qwords shifted
// over: entry q is shift_constant(8 * q). Streams and regions are sized so
// that every shift they need fits (checked where the sizes are chosen).
inline constexpr size_t kMaxShiftQwords = 256;
inline constexpr std::array<uint32_t, kMaxShiftQwords + 1> kShiftByQwords = [] {
  std::array<uint32_t, kMaxShiftQwords + 1> t{};
  for (size_t q = 1; q <= kMaxShiftQwords; ++q) t[q] = shift_constant(8 * q);
  return t;
}();

}  // namespace lanecast::engine::crc32c_math
