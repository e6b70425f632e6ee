/* tools/pipeline/top_view.h: `sonde-prof top`'s screen as text, a pure
 * function of the model (tools/pipeline/top.h) and the view state, so that
 * what the terminal shows is unit-tested line by line without one.
 *
 * The grid is at least 80x24 (a larger terminal's real size otherwise).
 * Layout, top to bottom: the title (the kernel and its source, or how
 * many kernels; the window), the samples and rate over the window and
 * the lost count, one line per kernel when there are several, a blank
 * line, the table's header and rows, and the keys on the last line. No
 * line is longer than the width: a longer one ends in "...". */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include "tools/pipeline/top.h"

#define TOP_GRID_MIN_W 80
#define TOP_GRID_MIN_H 24

enum top_mode { TOP_TABLE, TOP_CALLERS };

struct top_view {
    enum top_mode mode;
    bool plain;         /* no selection marker, no keys line (not a tty) */
    int fid;            /* table: the selected function, or -1 */
    size_t sel, scroll; /* table: its row, the first row shown */
    int cfid;           /* callers: whose callers are shown */
    size_t csel, cscroll;
};

/* h lines of at most w characters, NUL-terminated, no trailing blanks. */
struct top_grid {
    unsigned w, h;
    char *cells;        /* line r at cells + r * (w + 1) */
    int hl;             /* the line of the selection, or -1 */
};

/* w and h below the minimum are raised to it. */
void top_grid_init(struct top_grid *g, unsigned w, unsigned h);
void top_grid_free(struct top_grid *g);
const char *top_grid_line(const struct top_grid *g, unsigned row);

void top_view_init(struct top_view *v);
/* Draws the model into g. Keeps the selection on the same function as
 * rows move (when it has left the window, on the same row), and the
 * selected row in sight. */
void top_render(const struct top_model *m, struct top_view *v,
                struct top_grid *g);

enum top_key { TOP_KEY_UP, TOP_KEY_DOWN, TOP_KEY_PGUP, TOP_KEY_PGDN,
               TOP_KEY_ENTER, TOP_KEY_BACK };
/* A key's effect on the view: up/down (and by pages) move the selection;
 * enter shows the selected function's callers (in the callers view, the
 * selected caller's); back returns to the table. rows: lines of table
 * that the last render showed, for the page keys. */
void top_view_key(const struct top_model *m, struct top_view *v,
                  enum top_key key, unsigned rows);
