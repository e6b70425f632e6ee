/* uapi/trace_raw.h: the raw scheduling trace, as `trace [ms] [cpu,...] raw`
 * prints it and sonde-prof reads it (record --trace).
 *
 * Raw, as uapi/profile_raw.h is: times in ns since the window's start on
 * the one clock every CPU shares (kernel/prof/trace.h says how it is kept
 * consistent), samples' addresses unsymbolized (the host names them from
 * the kernel ELF). The text is ASCII; every line, the last included, ends
 * with a single '\n'. The grammar, exactly:
 *
 *   trace    = header event*
 *   header   = "# sonde trace build-id=" BUILDID " cpus=" DEC " ms=" DEC
 *              " events=" DEC " dropped=" DROPS "\n"
 *   event    = switch | wake | irq | sample
 *   switch   = "S " NS " " CPU " " PID " " TASK " " LEFT [":" NAME] " " PID " " TASK "\n"
 *   wake     = "W " NS " " CPU " " PID " " TASK " " PID " " TASK " " CPU
 *              [" irq=" VEC ":" CLASS [":" IRQNAME]] "\n"
 *   irq      = "I " NS " " CPU " " NS " " VEC " " CLASS [" " IRQNAME] " " PID "\n"
 *   sample   = "P " NS " " CPU " " PID " " TASK " " PC (" " RET){0,7} "\n"
 *
 *   switch: at NS on CPU the first task left (LEFT, and for waitq and
 *           mutex the queue's or mutex's NAME) and the second came in.
 *   wake:   at NS on CPU the first task (the one running there: the
 *           waker, or the task an interrupt interrupted) woke the second,
 *           which will run on the second CPU. With " irq=", the wake was
 *           made inside that interrupt, whose vector, class and name
 *           follow: the interrupt is the waker, the first task only the
 *           one it landed on.
 *   irq:    an interrupt's slice on CPU: entry NS, exit NS (>= entry),
 *           its vector, class and name, and the task it interrupted.
 *   sample: a CPU sample taken at NS on CPU in task PID: the interrupted
 *           PC, then the frame-pointer walk's return addresses, innermost
 *           first (a reader names a RET from RET - 1).
 *
 *   BUILDID  = 40 lowercase hex digits: the kernel's GNU build id
 *   DEC      = decimal digits, no sign, no leading zero (but "0" itself)
 *   NS       = DEC, 0 .. 2^64-1: ns since the window's start
 *   CPU      = DEC, 0 .. cpus-1 (cpus at most TRAW_CPUS)
 *   PID      = DEC, 0 .. 2147483647. 0 is a CPU's idle task (every CPU's
 *              idle is 0, as Linux's swapper): its TASK is "<idle>".
 *   TASK     = 1-31 characters from '!'..'~' except ';' (a task's name,
 *              spaces and ';' written as '_'; "-" when it has exited
 *              before the trace was printed)
 *   LEFT     = "-" (idle left) | "sleep" | "waitq" | "mutex" | "preempted"
 *              | "exit" | "yield": kernel/prof/trace.h's enum
 *              prof_trace_left, in the same order from 0
 *   NAME     = 1-31 characters from '!'..'~' except ';' and ':'
 *   VEC      = DEC, 0 .. 1023: the interrupt's vector (arm64: its INTID)
 *   CLASS    = "tick" | "device" | "ipi" | "nmi"
 *   IRQNAME  = 1-31 characters from 'a'..'z', '0'..'9', '.', '_', '-', '+'
 *              (kernel/irqname.h: the device's name, two sharing a line
 *              joined by '+'); absent when the vector has none
 *   PC, RET  = 1-16 lowercase hex digits, no "0x"
 *   DROPS    = DEC ("," DEC)*: exactly cpus numbers, 0 .. 2^32-1, the
 *              records each CPU's ring could not take, CPU 0 first
 *
 * Events come in time order (NS; an irq by its entry), ties in any order.
 * events= counts the event lines (the reader checks it: a lost line is
 * caught, not silently dropped). ms= (1 .. 2000) is the window asked for.
 *
 * Example:
 *   # sonde trace build-id=0123...cdef cpus=2 ms=10 events=4 dropped=0,0
 *   I 1000 0 1712 32 tick 7
 *   W 1400 0 7 burn 8 pong 1
 *   S 1900 1 0 <idle> - 8 pong
 *   P 2500 1 8 pong ffffffff80104a1c ffffffff80104a5b
 *
 * The parser (uapi/trace_raw.c) is portable C with no library calls, as
 * uapi/profile_raw.c is.
 *
 * Wire format: prefix traw_ and TRAW_. */
#pragma once
#include <stddef.h>
#include <stdint.h>

#define TRAW_MAGIC        "# sonde trace "
#define TRAW_CPUS         64        /* cpus= at most (the kernel's MAX_CPUS) */
#define TRAW_FRAMES       8         /* PC plus at most 7 return addresses */
#define TRAW_TASK_MAX     31
#define TRAW_NAME_MAX     31
#define TRAW_VEC_MAX      1023
#define TRAW_MS_MAX       2000
#define TRAW_PID_MAX      2147483647u
#define TRAW_BUILD_ID_HEX 40
#define TRAW_ERR_MAX      160       /* a parse error message, NUL included */
#define TRAW_IDLE_TASK    "<idle>"

enum traw_type { TRAW_SWITCH = 1, TRAW_WAKE = 2, TRAW_IRQ = 3, TRAW_SAMPLE = 4 };

/* LEFT, numbered as kernel/prof/trace.h's enum prof_trace_left. */
enum traw_left {
    TRAW_LEFT_NONE = 0, TRAW_LEFT_SLEEP = 1, TRAW_LEFT_WAITQ = 2, TRAW_LEFT_MUTEX = 3,
    TRAW_LEFT_PREEMPTED = 4, TRAW_LEFT_EXIT = 5, TRAW_LEFT_YIELD = 6,
};
#define TRAW_LEFT_MAX     TRAW_LEFT_YIELD

/* CLASS, numbered as kernel/prof/trace.h's enum prof_trace_irq. */
enum traw_class { TRAW_IRQ_TICK = 1, TRAW_IRQ_DEVICE = 2, TRAW_IRQ_IPI = 3, TRAW_IRQ_NMI = 4 };
#define TRAW_CLASS_MAX    TRAW_IRQ_NMI

struct traw_header {
    char th_build_id[TRAW_BUILD_ID_HEX + 1];
    uint32_t th_cpus;               /* 1 .. TRAW_CPUS */
    uint32_t th_ms;
    uint64_t th_events;
    uint32_t th_dropped[TRAW_CPUS]; /* [0, th_cpus) */
};

/* One event line. Fields an event type does not have are 0 or "". */
struct traw_event {
    uint8_t te_type;                /* enum traw_type */
    uint32_t te_cpu;
    uint64_t te_ns;                 /* the time; an irq's entry */
    /* switch: the task leaving; wake: the task running on te_cpu; irq:
     * the task interrupted; sample: the task sampled */
    uint32_t te_pid;
    char te_task[TRAW_TASK_MAX + 1];
    /* switch: the task entering; wake: the task woken */
    uint32_t te_pid2;
    char te_task2[TRAW_TASK_MAX + 1];
    /* switch */
    uint8_t te_left;                /* enum traw_left */
    char te_name[TRAW_NAME_MAX + 1];/* waitq and mutex only */
    /* wake */
    uint32_t te_wcpu;               /* the wakee's CPU */
    uint8_t te_in_irq;              /* made inside the interrupt below */
    /* irq, and a wake's interrupt */
    uint64_t te_end;                /* irq: the exit */
    uint32_t te_vec;
    uint8_t te_class;               /* enum traw_class */
    char te_irq[TRAW_NAME_MAX + 1]; /* IRQNAME, or "" */
    /* sample */
    unsigned te_depth;              /* 1 .. TRAW_FRAMES */
    uint64_t te_frames[TRAW_FRAMES];
};

/* "-", "sleep", ..., "yield"; NULL above TRAW_LEFT_MAX. */
const char *traw_left_name(unsigned left);
/* "tick", "device", "ipi", "nmi"; NULL for 0 or above TRAW_CLASS_MAX. */
const char *traw_class_name(unsigned cls);

/* Called once per event line, in order; a non-zero return stops the
 * parse and is returned by traw_parse (the callback wrote err itself). */
typedef int (*traw_event_fn)(void *ctx, const struct traw_event *e,
                             unsigned line, char *err, size_t errcap);

/* Parses a whole raw trace of len bytes (NUL bytes are malformed):
 * the grammar above, times in order, every CPU below cpus=, events=
 * matching. Returns 0 with *h filled and fn called for each event, or -1
 * with err holding "line N: what was wrong" (cut to errcap). */
int traw_parse(const char *text, size_t len, struct traw_header *h,
               traw_event_fn fn, void *ctx, char *err, size_t errcap);

/* One line without its '\n', for the parser and for tests: 0, or -1
 * with err saying what was wrong (no line number). An event's CPUs are
 * checked against cpus. */
int traw_parse_header(const char *s, size_t len, struct traw_header *h,
                      char *err, size_t errcap);
int traw_parse_event(const char *s, size_t len, uint32_t cpus, struct traw_event *e,
                     char *err, size_t errcap);
