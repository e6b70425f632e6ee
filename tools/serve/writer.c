/* tools/serve/writer.c: serve's store written on a thread of its own
 * (tools/serve/writer.h): a queue of jobs under one mutex, taken by one
 * thread that holds its own connection.
 * Serve layer: prefix sv_. */
#define _GNU_SOURCE
#include "tools/serve/writer.h"
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tools/serve/persist.h"

enum job_kind { JOB_KERNEL, JOB_BUCKET };

struct job {
    struct job *next;
    enum job_kind kind;
    struct st_kernel k;             /* JOB_KERNEL */
    uint64_t start_ms, retain_at;   /* JOB_BUCKET; retain_at 0: no pass */
    struct st_row *rows;
    size_t n;
};

struct sv_writer {
    pthread_t t;
    pthread_mutex_t m;
    pthread_cond_t c;
    struct st_store *store;
    uint64_t retain_ms, retained_at;
    struct job *head, *tail;
    unsigned queued;                /* buckets queued (a kernel's identity is
                                       bounded by the kernels) */
    bool stop;
    uint64_t failed;
    char err[ST_ERR_MAX];
};

static void failed(struct sv_writer *w, const char *err)
{
    pthread_mutex_lock(&w->m);
    w->failed++;
    snprintf(w->err, sizeof w->err, "%s", err);
    pthread_mutex_unlock(&w->m);
}

static void run_job(struct sv_writer *w, struct job *j)
{
    char err[ST_ERR_MAX];
    if (j->kind == JOB_KERNEL) {
        if (st_kernel_put(w->store, &j->k, err, sizeof err))
            failed(w, err);
        return;
    }
    if (st_write(w->store, j->start_ms, ST_SPAN_FINE, j->rows, j->n, err, sizeof err))
        failed(w, err);
    if (j->retain_at && st_retain(w->store, j->retain_at, w->retain_ms, err, sizeof err))
        failed(w, err);
}

static void *writer_main(void *arg)
{
    struct sv_writer *w = arg;
    pthread_mutex_lock(&w->m);
    for (;;) {
        while (!w->head && !w->stop)
            pthread_cond_wait(&w->c, &w->m);
        struct job *j = w->head;
        if (!j)
            break;                  /* stopped, and nothing left */
        w->head = j->next;
        if (!w->head)
            w->tail = NULL;
        w->queued -= j->kind == JOB_BUCKET;
        pthread_mutex_unlock(&w->m);
        run_job(w, j);
        free(j->rows);
        free(j);
        pthread_mutex_lock(&w->m);
    }
    pthread_mutex_unlock(&w->m);
    return NULL;
}

struct sv_writer *sv_writer_start(const char *uri, uint64_t retain_ms, char *err, size_t len)
{
    struct sv_writer *w = sp_xcalloc(1, sizeof *w);
    w->store = st_open(uri, err, len);
    if (!w->store) {
        free(w);
        return NULL;
    }
    w->retain_ms = retain_ms;
    pthread_mutex_init(&w->m, NULL);
    pthread_cond_init(&w->c, NULL);
    if (pthread_create(&w->t, NULL, writer_main, w)) {
        snprintf(err, len, "the store's writer thread could not start");
        st_close(w->store);
        free(w);
        return NULL;
    }
    return w;
}

void sv_writer_stop(struct sv_writer *w)
{
    if (!w)
        return;
    pthread_mutex_lock(&w->m);
    w->stop = true;
    pthread_cond_signal(&w->c);
    pthread_mutex_unlock(&w->m);
    pthread_join(w->t, NULL);
    st_close(w->store);
    pthread_cond_destroy(&w->c);
    pthread_mutex_destroy(&w->m);
    free(w);
}

/* j at the queue's end; false (j freed) when the queue is full. */
static bool queue(struct sv_writer *w, struct job *j)
{
    pthread_mutex_lock(&w->m);
    bool ok = j->kind != JOB_BUCKET || w->queued < SV_WRITER_QUEUE_MAX;
    if (ok) {
        if (w->tail)
            w->tail->next = j;
        else
            w->head = j;
        w->tail = j;
        w->queued += j->kind == JOB_BUCKET;
        pthread_cond_signal(&w->c);
    }
    pthread_mutex_unlock(&w->m);
    if (!ok) {
        free(j->rows);
        free(j);
        failed(w, "behind: a bucket not written (the store took longer than the buckets came)");
    }
    return ok;
}

void sv_writer_kernel(struct sv_writer *w, const struct st_kernel *k)
{
    struct job *j = sp_xcalloc(1, sizeof *j);
    j->kind = JOB_KERNEL;
    j->k = *k;
    (void)queue(w, j);
}

void sv_writer_bucket(struct sv_writer *w, const struct sv_state *st, uint64_t index,
                      uint64_t now_ms)
{
    struct job *j = sp_xcalloc(1, sizeof *j);
    j->kind = JOB_BUCKET;
    j->start_ms = index * SV_HIST_BUCKET_MS;
    j->rows = sv_persist_rows(st, index, &j->n);
    if (now_ms - w->retained_at >= SV_WRITER_RETAIN_MS) {
        w->retained_at = now_ms;    /* the collector's alone */
        j->retain_at = now_ms;
    }
    (void)queue(w, j);
}

uint64_t sv_writer_failed(struct sv_writer *w, char *err, size_t len)
{
    pthread_mutex_lock(&w->m);
    uint64_t n = w->failed;
    snprintf(err, len, "%s", w->err);
    pthread_mutex_unlock(&w->m);
    return n;
}
