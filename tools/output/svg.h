/* tools/output/svg.h: a flame graph as a standalone SVG, in the conventions
 * of flamegraph.pl: the root ("all") at the bottom, callees above, each
 * frame as wide as its share of the samples, siblings in name order, warm
 * colours chosen from a hash of the name (the same function is the same
 * colour in every graph). Each frame is a <g> holding a <title>
 * ("name (N samples, P%)"), a <rect> and, where it fits, a <text>.
 * Host pipeline: prefix sp_. */
#pragma once
#include <stdbool.h>
#include <stdio.h>
#include "tools/model/model.h"

#define SP_SVG_WIDTH   1200     /* the whole image, pixels */
#define SP_SVG_XPAD    10       /* left and right margins */
#define SP_SVG_FRAME_H 16

/* Pixels per sample: what a frame of n samples is wide. */
double sp_svg_scale(uint64_t total);

/* Returns 0, or -1 on a write error. */
int sp_svg_write(const struct sp_profile *p, bool per_kernel, const char *title,
                   FILE *f);
