/*
 * rewriter_float_mode.h - the floating-point mode a compiled module runs in: XLA:CPU's.
 *
 * XLA:CPU runs a program with denormals flushed to zero, both as inputs (x86's DAZ) and
 * as results (FTZ; aarch64's FZ is both): under jax.jit, exp(-87.5f) is 0, sqrt(1e-40f)
 * is 0 and 1 / 5e-39f is inf.  A compiled module gives the same numbers by running in
 * that mode: each entry sets it and gives the caller back its own on return
 * (rw_flush_denormals before the call, rw_restore_float_mode after it: entries.py); the
 * async runtime's workers, started inside an entry, begin in it (async_runtime.c).  A
 * target without a known control register runs in the caller's mode.
 */
#ifndef REWRITER_FLOAT_MODE_H
#define REWRITER_FLOAT_MODE_H

#include <stdint.h>

#if defined(__x86_64__) || (defined(__i386__) && defined(__SSE2__))
#include <xmmintrin.h>
typedef unsigned int rw_float_mode;
/* MXCSR bit 15 is flush-to-zero, bit 6 denormals-are-zero. */
#define RW_FLUSHING_BITS 0x8040u
static inline rw_float_mode rw_flush_denormals(void)
{
    rw_float_mode saved = _mm_getcsr();
    _mm_setcsr(saved | RW_FLUSHING_BITS);
    return saved;
}
static inline void rw_restore_float_mode(rw_float_mode saved) { _mm_setcsr(saved); }
#elif defined(__aarch64__)
typedef uint64_t rw_float_mode;
/* FPCR bit 24 (FZ) flushes denormal inputs and results of single and double precision. */
#define RW_FLUSHING_BITS (UINT64_C(1) << 24)
static inline rw_float_mode rw_flush_denormals(void)
{
    rw_float_mode saved;
    __asm__ __volatile__("mrs %0, fpcr" : "=r"(saved));
    __asm__ __volatile__("msr fpcr, %0" : : "r"(saved | RW_FLUSHING_BITS));
    return saved;
}
static inline void rw_restore_float_mode(rw_float_mode saved)
{
    __asm__ __volatile__("msr fpcr, %0" : : "r"(saved));
}
#else
typedef int rw_float_mode;
static inline rw_float_mode rw_flush_denormals(void) { return 0; }
static inline void rw_restore_float_mode(rw_float_mode saved) { (void)saved; }
#endif

#endif
