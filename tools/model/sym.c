/* tools/model/sym.c: kernel addresses to functions, files, lines and
 * inlined frames, through libdw's dwfl.
 * Host pipeline: prefix sp_. */
#include "tools/model/sym.h"
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct sp_elf {
    Dwfl *dwfl;
    Dwfl_Module *mod;
    Dwarf_Addr start, limit;    /* the image: nothing outside is named */
    bool dwarf;
};

static const Dwfl_Callbacks offline_callbacks = {
    .find_debuginfo = dwfl_standard_find_debuginfo,
    .section_address = dwfl_offline_section_address,
};

static void hex_id(const unsigned char *id, int n, char *out, size_t cap)
{
    static const char digits[] = "0123456789abcdef";
    size_t k = 0;
    for (int i = 0; i < n && k + 2 < cap; i++) {
        out[k++] = digits[id[i] >> 4];
        out[k++] = digits[id[i] & 15];
    }
    out[k] = 0;
}

struct sp_elf *sp_elf_open(struct sp_profile *p, unsigned map, char *err,
                               size_t errcap)
{
    struct sp_map *m = &p->maps[map];
    struct sp_elf *e = calloc(1, sizeof *e);
    if (!e || !(e->dwfl = dwfl_begin(&offline_callbacks))) {
        free(e);
        snprintf(err, errcap, "%s: cannot start libdw", m->pm_path);
        return NULL;
    }
    dwfl_report_begin(e->dwfl);
    e->mod = dwfl_report_offline(e->dwfl, "kernel", m->pm_path, -1);
    dwfl_report_end(e->dwfl, NULL, NULL);
    if (!e->mod) {
        snprintf(err, errcap, "%s: not a readable ELF (%s)", m->pm_path,
                 dwfl_errmsg(-1));
        sp_elf_close(e);
        return NULL;
    }
    const unsigned char *bits;
    GElf_Addr vaddr;
    int n = dwfl_module_build_id(e->mod, &bits, &vaddr);
    if (n <= 0) {
        snprintf(err, errcap, "%s: no readable GNU build id note "
                 "(NT_GNU_BUILD_ID): link with --build-id=sha1, or the file "
                 "is cut short", m->pm_path);
        sp_elf_close(e);
        return NULL;
    }
    hex_id(bits, n, m->pm_build_id, sizeof m->pm_build_id);
    Dwarf_Addr low, high, bias;
    dwfl_module_info(e->mod, NULL, &low, &high, NULL, NULL, NULL, NULL);
    m->pm_start = e->start = low;
    m->pm_limit = e->limit = high;
    e->dwarf = dwfl_module_getdwarf(e->mod, &bias) != NULL;
    m->pm_dwarf = e->dwarf;
    return e;
}

void sp_elf_close(struct sp_elf *e)
{
    if (!e)
        return;
    dwfl_end(e->dwfl);
    free(e);
}

/* ---- one address ----------------------------------------------------- */

/* The file name as a reader wants it: relative to the compilation
 * directory when under it, so `kernel/burn.c` reads (and pprof -list
 * finds it from the tree's root) rather than a builder's absolute path. */
static const char *rel_file(struct sp_profile *p, Dwarf_Die *cu, const char *f)
{
    if (!f)
        return NULL;
    Dwarf_Attribute at;
    const char *dir = dwarf_formstring(dwarf_attr(cu, DW_AT_comp_dir, &at));
    size_t n = dir ? strlen(dir) : 0;
    if (n && strncmp(f, dir, n) == 0 && f[n] == '/')
        f += n + 1;
    while (f[0] == '.' && f[1] == '/')     /* headers found through -I. */
        f += 2;
    return sp_strdup(p, f);
}

static const char *die_name(Dwarf_Die *die)
{
    Dwarf_Attribute at;
    const char *s = dwarf_diename(die);
    if (!s)
        s = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_linkage_name, &at));
    return s;
}

struct frames {
    struct sp_frame f[32];      /* deeper inline nests are cut */
    unsigned n;
};

static void push(struct frames *fs, struct sp_profile *p, const char *func,
                 const char *file, unsigned line, unsigned func_line)
{
    if (fs->n == 32)
        return;
    struct sp_frame *f = &fs->f[fs->n++];
    f->pf_func = sp_strdup(p, func);
    f->pf_file = file;
    f->pf_line = line;
    f->pf_func_line = func_line;
}

/* One function scope as a frame at file:line; for an inlined one, moves
 * file:line to its call site, where the frame around it stands. True
 * when the scope was the subprogram, the outermost frame. */
static bool scope_frame(struct sp_profile *p, Dwarf_Die *cu, Dwarf_Files *files,
                        Dwarf_Die *s, const char **file, int *line,
                        struct frames *fs)
{
    int tag = dwarf_tag(s);
    if (tag != DW_TAG_inlined_subroutine && tag != DW_TAG_subprogram)
        return false;
    const char *name = die_name(s);
    int decl = 0;
    dwarf_decl_line(s, &decl);
    push(fs, p, name ? name : "??", *file, *line > 0 ? (unsigned)*line : 0,
         decl > 0 ? (unsigned)decl : 0);
    if (tag == DW_TAG_subprogram)
        return true;
    Dwarf_Attribute at;
    Dwarf_Word cf = 0, cl = 0;
    dwarf_formudata(dwarf_attr(s, DW_AT_call_file, &at), &cf);
    dwarf_formudata(dwarf_attr(s, DW_AT_call_line, &at), &cl);
    *file = files ? rel_file(p, cu, dwarf_filesrc(files, cf, NULL, NULL)) : NULL;
    *line = (int)cl;
    return false;
}

/* The innermost function scope at a comes from dwarf_getscopes; past an
 * inlined one, that list goes on into the inlined function's abstract
 * definition, so the concrete callers come from dwarf_getscopes_die on
 * the innermost scope, as eu-addr2line -i does. */
static void dwarf_frames(struct sp_profile *p, struct sp_elf *e, Dwarf_Addr a,
                         struct frames *fs)
{
    Dwarf_Addr bias;
    Dwarf_Die *cu = dwfl_module_addrdie(e->mod, a, &bias);
    if (!cu)
        return;
    const char *file = NULL;
    int line = 0;
    Dwfl_Line *dl = dwfl_module_getsrc(e->mod, a);
    Dwarf_Addr lbias;
    Dwarf_Line *ln = dl ? dwfl_dwarf_line(dl, &lbias) : NULL;
    if (ln) {
        file = rel_file(p, cu, dwarf_linesrc(ln, NULL, NULL));
        dwarf_lineno(ln, &line);
    }
    Dwarf_Files *files = NULL;
    size_t nfiles = 0;
    if (dwarf_getsrcfiles(cu, &files, &nfiles) != 0)
        files = NULL;
    Dwarf_Die *scopes = NULL, *chain = NULL;
    int n = dwarf_getscopes(cu, a - bias, &scopes);
    int i = 0;
    while (i < n && dwarf_tag(&scopes[i]) != DW_TAG_inlined_subroutine &&
           dwarf_tag(&scopes[i]) != DW_TAG_subprogram)
        i++;
    if (i < n && !scope_frame(p, cu, files, &scopes[i], &file, &line, fs)) {
        int m = dwarf_getscopes_die(&scopes[i], &chain);
        for (int k = 1; k < m; k++)
            if (scope_frame(p, cu, files, &chain[k], &file, &line, fs))
                break;
    }
    free(chain);
    free(scopes);
    if (fs->n == 0 && file)     /* a line but no function DIE */
        push(fs, p, "??", file, line > 0 ? (unsigned)line : 0, 0);
}

static void name_loc(struct sp_profile *p, struct sp_elf *e, struct sp_loc *l)
{
    /* A return address points just past its call, possibly past the end
     * of the calling function (a call to a noreturn function). */
    Dwarf_Addr a = l->pl_ret ? l->pl_addr - 1 : l->pl_addr;
    GElf_Off off = 0;
    GElf_Sym sym;
    const char *name = NULL;
    if (a >= e->start && a < e->limit)
        name = dwfl_module_addrinfo(e->mod, a, &off, &sym, NULL, NULL, NULL);
    /* dwfl names an address past a symbol's end after the symbol before
     * it; a sized symbol must hold the address, or it names nothing. */
    if (name && sym.st_size && off >= sym.st_size)
        name = NULL;
    if (name) {
        l->pl_sym = sp_strdup(p, name);
        l->pl_sym_off = off + (l->pl_ret ? 1 : 0);
    }
    struct frames fs = { .n = 0 };
    if (e->dwarf)
        dwarf_frames(p, e, a, &fs);
    if (fs.n && strcmp(fs.f[fs.n - 1].pf_func, "??") == 0 && name)
        fs.f[fs.n - 1].pf_func = l->pl_sym;
    if (fs.n == 0 && name)
        push(&fs, p, name, NULL, 0, 0);
    if (fs.n == 0)
        return;                 /* sp_profile_name_unknown gives it its address */
    l->pl_frames = calloc(fs.n, sizeof *l->pl_frames);
    if (!l->pl_frames) {
        fprintf(stderr, "sonde-prof: out of memory\n");
        exit(2);
    }
    memcpy(l->pl_frames, fs.f, fs.n * sizeof *fs.f);
    l->pl_nframes = fs.n;
}

void sp_elf_name(struct sp_profile *p, struct sp_elf *e, struct sp_loc *l)
{
    if (!l->pl_frames)
        name_loc(p, e, l);
}

void sp_elf_symbolize(struct sp_profile *p, unsigned map, struct sp_elf *e)
{
    for (size_t i = 0; i < p->nlocs; i++)
        if (p->locs[i]->pl_map == map && !p->locs[i]->pl_frames)
            name_loc(p, e, p->locs[i]);
}

void sp_elfset_init(struct sp_elfset *s)
{
    memset(s, 0, sizeof *s);
    sp_profile_init(&s->p);
}

int sp_elfset_add(struct sp_elfset *s, unsigned k, const char *path, const char *prog)
{
    for (unsigned i = 0; i < s->p.nmaps; i++)
        if (strcmp(s->p.maps[i].pm_path, path) == 0) {
            s->kmap[k] = i;
            return 0;
        }
    if (k >= SP_ELFSET_KERNELS || s->p.nmaps >= SP_ELFSET_MAX) {
        fprintf(stderr, "%s: -e %s: more than %u distinct ELFs (or kernels past %u)\n",
                prog, path, SP_ELFSET_MAX, SP_ELFSET_KERNELS);
        return -1;
    }
    char err[SP_ERR_MAX];
    unsigned m = sp_profile_add_map(&s->p, path);
    s->kmap[k] = m;
    s->elfs[m] = sp_elf_open(&s->p, m, err, sizeof err);
    if (!s->elfs[m]) {
        fprintf(stderr, "%s: %s\n", prog, err);
        return -1;
    }
    if (!s->p.maps[m].pm_dwarf)
        fprintf(stderr, "%s: warning: %s has no DWARF debug info: names come "
                "from the ELF symbol table\n", prog, path);
    return 0;
}

void sp_elfset_symbolize(void *ctx, struct sp_profile *p, unsigned map)
{
    struct sp_elfset *s = ctx;
    sp_elf_symbolize(p, map, s->elfs[map]);
}

void sp_elfset_free(struct sp_elfset *s)
{
    for (unsigned i = 0; i < s->p.nmaps; i++)
        sp_elf_close(s->elfs[i]);
    sp_profile_free(&s->p);
}
