/* tools/output/flame_json.h: a profile as the tree the web pages' flame
 * graph draws (d3-flame-graph's data: name, value, children), written as
 * JSON that is safe inside an HTML <script> element.
 *
 * The document (tools/output/html.c inlines it; web/flame/main.js reads it):
 *
 *   {"title":S, "kind":"cpu"|"offcpu"|"heap", "view":S, "unit":U,
 *    "total":N, "diff":B, ["base_total":N,]
 *    "kernels":[{"name":S, "origin":S, "source":S, "ms":N, "samples":N,
 *                "dropped":N, ["lost":N,] ["note":S]}],
 *    "root":NODE}
 *   NODE = {"n":NAME, "v":WEIGHT, ["k":"kernel"|"task",] ["l":"inlined",]
 *           ["f":FILE, "ln":[[LINE,WEIGHT],...],] ["b":BASE,] ["c":[NODE,...]]}
 *
 * U is what a weight counts: "samples" (cpu), "ns" (off-CPU time) or
 * "bytes" (heap). The root is "all"; below it a frame per kernel when
 * per_kernel, then the task, then the outermost caller down to the
 * sampled function, each address's inlined frames as frames of their own
 * (the order of the folded stacks, tools/output/folded.h). Frames of one
 * name under one parent are one node: v is their weight with everything
 * above them; "ln" the source lines their samples hit, heaviest first (at
 * most SP_FJ_LINES); "l" marks a node only ever seen inlined. A diff's
 * nodes carry "b", the weight in BASE, and v is the weight in NEW.
 *
 * Every string is escaped so that no "<", ">", "&", control character or
 * byte above 0x7e appears raw: "</script>" in a name cannot end the
 * element, and invalid UTF-8 becomes U+FFFD. One JSON writer, jansson,
 * writes this document and serve's trees alike (sp_fj_node_json), which
 * spell a node's keys as d3-flame-graph does.
 *
 * Host pipeline: prefix sp_. */
#pragma once
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <jansson.h>
#include "tools/output/diff.h"
#include "tools/model/model.h"

#define SP_FJ_LINES 4           /* source lines kept per node */

enum sp_fj_kind { SP_FJ_FUNC, SP_FJ_INLINED, SP_FJ_TASK, SP_FJ_KERNEL };

struct sp_fj_line {
    unsigned fl_line;
    uint64_t fl_w;
};

struct sp_fj_node {
    const char *fn_name;
    const char *fn_file;            /* the first file seen, or NULL */
    uint64_t fn_v, fn_b;            /* weight (NEW in a diff), BASE's weight */
    uint64_t fn_inl;                /* weight through inlined instances */
    size_t fn_first, fn_next, fn_last;  /* children; 0 = none (0 is the root) */
    size_t fn_parent;
    struct sp_fj_line *fn_lines;    /* every line seen; the heaviest written */
    size_t fn_nlines, fn_caplines;
    enum sp_fj_kind fn_kind;
};

struct sp_fj_tree {
    struct sp_fj_node *v;       /* v[0] is "all" */
    size_t n, cap;
    /* Every node but the root by (parent, name): open addressing, a
     * power of two at least twice n; 0 a free slot. A node's children
     * are found in one probe or two, not a scan of its siblings (65536
     * of them would be 2^31 compares). */
    size_t *by_name, nslots;
};

void sp_fj_init(struct sp_fj_tree *t);
void sp_fj_free(struct sp_fj_tree *t);
/* The child of parent named name (made on first use), with w and b added
 * to its weights; returns its index. */
size_t sp_fj_step(struct sp_fj_tree *t, size_t parent, const char *name,
                  enum sp_fj_kind kind, uint64_t w, uint64_t b);
/* What stands between the root and the frames: a frame per kernel and
 * the task, the task alone, or nothing (a fleet's frames merged). */
enum sp_fj_by { SP_FJ_BY_KERNEL, SP_FJ_BY_TASK, SP_FJ_BY_FRAME };
/* Every chain of p as a path from the root. */
void sp_fj_build(const struct sp_profile *p, enum sp_fj_by by, struct sp_fj_tree *t);
/* Every row of a diff as a path: v from NEW, b from BASE. */
void sp_fj_build_diff(const struct sp_diff *d, struct sp_fj_tree *t);

/* How a node's keys are spelled: the page's document above, or
 * d3-flame-graph's own (name, value, children; a diff's base and delta,
 * NEW - BASE), which serve's API answers with. */
enum sp_fj_keys { SP_FJ_PAGE, SP_FJ_D3 };
/* Node i of t and everything under it. */
json_t *sp_fj_node_json(struct sp_fj_tree *t, size_t i, bool diff, enum sp_fj_keys keys);
/* What a profile's weights count and which view it is: "samples" and "CPU
 * samples", "ns" and "off-CPU time", "bytes" and "heap in use" or "heap
 * allocations". */
const char *sp_fj_unit(unsigned kind);
const char *sp_fj_view(const struct sp_input *in);

/* A JSON string of s, each byte that is not valid UTF-8 a U+FFFD. */
json_t *sp_fj_string(const char *s);
/* j, compact and escaped as above, to f (j is released): 0, or -1 on a
 * write error. */
int sp_fj_dump(json_t *j, FILE *f);
/* A JSON string: quotes and escapes as above. */
void sp_fj_str(FILE *f, const char *s);

/* The whole document of a profile; 0, or -1 on a write error. */
int sp_fj_write(const struct sp_profile *p, bool per_kernel, const char *title,
                FILE *f);
/* The same of a diff (no kernels, "diff":true, "b" on every node); kind is
 * both profiles' (PRAW_KIND_*). */
int sp_fj_write_diff(const struct sp_diff *d, unsigned kind, const char *title,
                     FILE *f);
