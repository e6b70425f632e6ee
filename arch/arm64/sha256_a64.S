/* arch/arm64/sha256_a64.S: SHA-256's block function with the Armv8
 * Cryptographic Extension (FEAT_SHA256: SHA256H, SHA256H2, SHA256SU0,
 * SHA256SU1), about 100 instructions a block where lib/sha256.c's C takes
 * ~3,500. Called only through arch/arm64/sha256.c, which checks the ID
 * register first and runs this with interrupts masked.
 *
 *   void sha256_a64_blocks(uint32_t h[8], const uint8_t *p, size_t nblocks)
 *
 * The instructions (Arm ARM, C7.2 "SHA256H", "SHA256H2", "SHA256SU0",
 * "SHA256SU1"), with the state in two vectors, element 0 lowest:
 *   ABCD = {a, b, c, d}, EFGH = {e, f, g, h}, WK = W[t..t+3] + K[t..t+3];
 *   SHA256H  Qabcd, Qefgh, WK.4S: four rounds, gives the new ABCD;
 *   SHA256H2 Qefgh, Qabcd, WK.4S: the same four rounds from the OLD ABCD,
 *            gives the new EFGH (so ABCD is copied before SHA256H);
 *   SHA256SU0 W0.4S, W4.4S: W[0..3] + sigma0(W[1..4]);
 *   SHA256SU1 that.4S, W8.4S, W12.4S: + W[9..12] + sigma1(W[14..17]),
 *            the last two from its own first half: W[16..19].
 * The message is big-endian words (FIPS 180-4 3.1); REV32 swaps each.
 *
 * Registers: v0 ABCD, v1 EFGH, v2-v5 the schedule's four quarters, v6 WK,
 * v7 the copy of ABCD, v8/v9 the state at the block's start (d8/d9 are
 * callee-saved by the AAPCS64: kept on the stack), v16-v31 the 64 round
 * constants. The kernel is built -mgeneral-regs-only and saves no vector
 * register on a switch or an exception: this function is the kernel's only
 * user of them (arch/arm64/sha256.c says why that is safe). */
#include "arch/arm64/arm64.h"

    .arch armv8-a+sha2

/* Four rounds with WK = \m + \k; with \upd, \m then moves four words on
 * in the schedule (from W[t..t+3] to W[t+16..t+19]) using \n1 (W[t+4..]),
 * \n2 (W[t+8..]) and \n3 (W[t+12..]). */
.macro ROUNDS4 k, m, n1, n2, n3, upd
    add v6.4s, \m\().4s, \k\().4s
.if \upd
    sha256su0 \m\().4s, \n1\().4s
.endif
    mov v7.16b, v0.16b
    sha256h q0, q1, v6.4s
    sha256h2 q1, q7, v6.4s
.if \upd
    sha256su1 \m\().4s, \n2\().4s, \n3\().4s
.endif
.endm

    .text
    .globl sha256_a64_blocks
    .type sha256_a64_blocks, %function
    .balign 16
sha256_a64_blocks:
    cbz x2, 9f
    stp x29, x30, [sp, #-32]!           /* a frame record, as every C function keeps */
    mov x29, sp
    stp d8, d9, [sp, #16]
    adrp x3, sha256_a64_k
    add x3, x3, :lo12:sha256_a64_k
    ld1 {v16.4s-v19.4s}, [x3], #64
    ld1 {v20.4s-v23.4s}, [x3], #64
    ld1 {v24.4s-v27.4s}, [x3], #64
    ld1 {v28.4s-v31.4s}, [x3]
    ld1 {v0.4s, v1.4s}, [x0]            /* h[0..3], h[4..7] */
1:  ld1 {v2.16b-v5.16b}, [x1], #64      /* byte loads: any alignment */
    rev32 v2.16b, v2.16b
    rev32 v3.16b, v3.16b
    rev32 v4.16b, v4.16b
    rev32 v5.16b, v5.16b
    mov v8.16b, v0.16b
    mov v9.16b, v1.16b
    ROUNDS4 v16, v2, v3, v4, v5, 1      /* rounds 0-3; v2 becomes W[16..19] */
    ROUNDS4 v17, v3, v4, v5, v2, 1
    ROUNDS4 v18, v4, v5, v2, v3, 1
    ROUNDS4 v19, v5, v2, v3, v4, 1
    ROUNDS4 v20, v2, v3, v4, v5, 1      /* rounds 16-19 */
    ROUNDS4 v21, v3, v4, v5, v2, 1
    ROUNDS4 v22, v4, v5, v2, v3, 1
    ROUNDS4 v23, v5, v2, v3, v4, 1
    ROUNDS4 v24, v2, v3, v4, v5, 1      /* rounds 32-35: v2 ends at W[48..51] */
    ROUNDS4 v25, v3, v4, v5, v2, 1
    ROUNDS4 v26, v4, v5, v2, v3, 1
    ROUNDS4 v27, v5, v2, v3, v4, 1
    ROUNDS4 v28, v2, v3, v4, v5, 0      /* rounds 48-63: the schedule is complete */
    ROUNDS4 v29, v3, v4, v5, v2, 0
    ROUNDS4 v30, v4, v5, v2, v3, 0
    ROUNDS4 v31, v5, v2, v3, v4, 0
    add v0.4s, v0.4s, v8.4s             /* 6.2.2 step 4: add the block's start state */
    add v1.4s, v1.4s, v9.4s
    subs x2, x2, #1
    b.ne 1b
    st1 {v0.4s, v1.4s}, [x0]
    ldp d8, d9, [sp, #16]
    ldp x29, x30, [sp], #32
9:  ret
    .size sha256_a64_blocks, . - sha256_a64_blocks

/* FIPS 180-4 4.2.2, the same 64 constants as lib/sha256.c's K. */
    .section .rodata
    .balign 16
sha256_a64_k:
    .word 0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5
    .word 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174
    .word 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da
    .word 0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967
    .word 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85
    .word 0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070
    .word 0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3
    .word 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2
    .size sha256_a64_k, . - sha256_a64_k
