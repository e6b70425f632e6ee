/* hal/unwind.h: what the architecture knows about a sampled leaf.
 *
 * A frame-pointer walk follows fp, but fp names the sampled function's own
 * frame only between its prologue and its epilogue. On its first
 * instruction, between saving the caller's fp and setting its own, and
 * after its epilogue has restored the caller's fp, fp is still (or again)
 * the caller's frame, and the chain would skip the caller. Only the
 * instruction bytes around pc tell those positions apart, and their
 * encodings are per architecture: the decoder is a pure function over a
 * window of text, so the host tests link every architecture's. It needs
 * no symbol table (no lookup in an interrupt): the frame set-up idioms it
 * matches mean the same wherever they appear, shrink-wrapped prologues
 * included. */
#pragma once
#include <stddef.h>
#include <stdint.h>

/* How much text the portable walk hands the decoder around pc, when the
 * window lies inside kernel text (less near its ends). */
#define UNWIND_BEFORE 16
#define UNWIND_AFTER 16

enum leaf_pos {
    LEAF_FRAMED,            /* fp is the function's own frame, or unknown */
    LEAF_ENTRY,             /* first instruction: nothing saved yet */
    LEAF_PUSHED,            /* the caller's fp saved, its own not yet set */
    LEAF_RETURN,            /* its frame is gone: on the way out */
};

struct leaf_state {
    enum leaf_pos pos;
    /* >= 0: the caller's return address is at sp + 8 * ret_slot;
     * -1: it is in the link register. */
    int ret_slot;
};

/* Classify the instruction at code. code[-before] .. code[after - 1] are
 * readable text (after >= 1); nothing else may be read. NMI-safe. */
struct leaf_state unwind_leaf_state(const uint8_t *code, size_t before, size_t after);

/* The interrupted link register (0 where calls push the return address). */
struct trap_frame;
uintptr_t unwind_link(const struct trap_frame *tf);
