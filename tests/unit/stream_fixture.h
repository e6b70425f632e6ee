/* tests/unit/stream_fixture.h: what the profile stream's host tests share
 * (test_prof_stream*.c): requests from the UDP shell client at
 * 10.0.2.2:port, and a stream started from there and confirmed at once
 * with a keep-alive from there, as a collector does: the id from its
 * control line (uapi/stream_ctl.h), as a collector reads it. */
#pragma once
#include "test.h"
#include "fake_profiler.h"
#include "uapi/stream_ctl.h"
#include <stdio.h>
#include <stdlib.h>

static inline void stream_from(uint16_t port)
{
    fake_requester = true;
    fake_requester_ip = 0x0a000202;
    fake_requester_port = port;
}

/* The last answer's control line (uapi/stream_ctl.h), as said() read it:
 * sl_op 0 when the answer had none (a windowed command's). */
static struct sctl_line said_ctl;

/* The last answer's text for people: past its control line, which must
 * parse when the answer has one (a stream command's always has). */
static inline const char *said(void)
{
    const char *t = got();
    said_ctl = (struct sctl_line){ 0 };
    if (!sctl_is_line(t, strlen(t)))
        return t;
    CHECK_EQ(sctl_parse(t, strlen(t), &said_ctl), 0);
    const char *nl = strchr(t, '\n');
    return nl ? nl + 1 : t;
}

/* The id a start's answer names: its control line's id= (told to the
 * stream's destination only), or 0. */
static inline uint32_t stream_id_in(const char *answer)
{
    struct sctl_line l;
    if (sctl_find(answer, strlen(answer), &l) != 0 || !(l.sl_have & SCTL_HAVE_ID))
        return 0;
    return l.sl_id;
}

/* `profile keepalive <id>`, from whoever asks now: its exit status. */
static inline int stream_keepalive(uint32_t id)
{
    char line[64];
    snprintf(line, sizeof line, "profile keepalive 0x%08x", id);
    return run_cmd(line);
}

/* line (a `profile ... stream <port> ...`) asked from port and confirmed:
 * the stream's id; the start's answer is kept in started. */
static inline uint32_t stream_start_confirmed(const char *line, uint16_t port, char *started,
                                              size_t cap)
{
    stream_from(port);
    CHECK_EQ(run_cmd(line), 0);
    uint32_t id = stream_id_in(got());
    snprintf(started, cap, "%s", said());       /* the text for people */
    CHECK(id != 0);
    CHECK_EQ(stream_keepalive(id), 0);
    return id;
}
