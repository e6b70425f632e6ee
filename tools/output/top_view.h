/* tools/output/top_view.h: `sonde-prof top`'s screen as text, a pure
 * function of the model (tools/model/top.h) and the view state, so that
 * what the terminal shows is unit-tested line by line without one.
 *
 * The grid is at least 80x24 (a larger terminal's real size otherwise).
 * Layout, top to bottom: the title (the kernel and its source, or how
 * many kernels; the window), the samples and rate over the window and
 * the lost count, one line per kernel when there are several, a blank
 * line, the table's header and rows, and the keys on the last line. No
 * line is longer than the width: a longer one ends in "...".
 *
 * Host pipeline: prefix sp_. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include "tools/model/top.h"

#define SP_TOP_GRID_MIN_W 80
#define SP_TOP_GRID_MIN_H 24

enum sp_top_mode { SP_TOP_TABLE, SP_TOP_CALLERS };

struct sp_top_view {
    enum sp_top_mode mode;
    bool plain;         /* no selection marker, no keys line (not a tty) */
    int fid;            /* table: the selected function, or -1 */
    size_t sel, scroll; /* table: its row, the first row shown */
    int cfid;           /* callers: whose callers are shown */
    size_t csel, cscroll;
};

/* h lines of at most w characters, NUL-terminated, no trailing blanks. */
struct sp_top_grid {
    unsigned w, h;
    char *cells;        /* line r at cells + r * (w + 1) */
    int hl;             /* the line of the selection, or -1 */
};

/* w and h below the minimum are raised to it. */
void sp_top_grid_init(struct sp_top_grid *g, unsigned w, unsigned h);
void sp_top_grid_free(struct sp_top_grid *g);
const char *sp_top_grid_line(const struct sp_top_grid *g, unsigned row);

void sp_top_view_init(struct sp_top_view *v);
/* Draws the model into g. Keeps the selection on the same function as
 * rows move (when it has left the window, on the same row), and the
 * selected row in sight. */
void sp_top_render(const struct sp_top_model *m, struct sp_top_view *v,
                struct sp_top_grid *g);

enum sp_top_key { SP_TOP_KEY_UP, SP_TOP_KEY_DOWN, SP_TOP_KEY_PGUP, SP_TOP_KEY_PGDN,
               SP_TOP_KEY_ENTER, SP_TOP_KEY_BACK };
/* A key's effect on the view: up/down (and by pages) move the selection;
 * enter shows the selected function's callers (in the callers view, the
 * selected caller's); back returns to the table. rows: lines of table
 * that the last render showed, for the page keys. */
void sp_top_view_key(const struct sp_top_model *m, struct sp_top_view *v,
                  enum sp_top_key key, unsigned rows);
