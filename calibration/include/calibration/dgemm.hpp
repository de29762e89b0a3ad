/* Dense matrix multiply kernels for calibration: C += A B, row-major, double precision.
 * A plain reference, and a blocked kernel with an AVX-512 micro-kernel chosen at run time
 * where the CPU has AVX-512F (identical results up to rounding; a portable blocked kernel
 * otherwise, or where dgemm_set_simd(false) asks for it, so that both paths can be compared on
 * one CPU). */
#pragma once

#include <cstddef>

namespace calibration {

/** C (m x n) += A (m x k) B (k x n); leading dimensions are the row lengths. */
void dgemm_reference(std::size_t m, std::size_t n, std::size_t k, const double* a, const double* b, double* c);

/** The same product, blocked for the caches, AVX-512 where available. */
void dgemm_fast(std::size_t m, std::size_t n, std::size_t k, const double* a, const double* b, double* c);

/** The period of dgemm_fast's blocking (768: the least common multiple of its tiles, 6 x 16,
 *  and of its cache blocks, 96 rows and 256 of k): square orders congruent modulo it leave the
 *  same remainders at every level of the blocking, so a product of order period + n % period
 *  takes every edge path of one of order n. */
std::size_t dgemm_fast_period();

/** "avx512" or "portable": what dgemm_fast runs now, on this CPU and after dgemm_set_simd. */
const char* dgemm_fast_path();

/** Whether this CPU has AVX-512F, which the AVX-512 micro-kernel needs. */
bool dgemm_avx512_available();

/** Force the portable micro-kernel (false), or let dgemm_fast take AVX-512 again (true, the
 *  default) where the CPU has it; a CPU without it stays on the portable one, as with
 *  SimdHashTable::set_simd. For comparing both paths on one CPU. Process-wide: change it while
 *  no dgemm_fast call runs, or a call may run on either path. */
void dgemm_set_simd(bool on);

/** The core's measured double-precision peak (flop/s): independent fused multiply-adds on
 *  registers only, with the widest FMA vectors the core has (fma_peak_path), for about
 *  `seconds`; whichever kernel dgemm_fast runs, so that its share says what it leaves. What the
 *  DGEMM rate is compared with where the nominal peak (clock x FMA units) is not known, as
 *  on a virtual machine. */
double fma_peak_flops(double seconds = 0.2);

/** How fma_peak_flops measures on this CPU: "avx512" (8-wide FMAs), "avx2-fma" (4-wide FMAs:
 *  a core without AVX-512F but with AVX2 and FMA) or "portable" (what the compiler makes of
 *  plain code for the baseline, where neither is there). */
const char* fma_peak_path();

} // namespace calibration
