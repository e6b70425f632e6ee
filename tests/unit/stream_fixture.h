/* tests/unit/stream_fixture.h: what the profile stream's host tests share
 * (test_prof_stream*.c): requests from the UDP shell client at
 * 10.0.2.2:port, and a stream started from there and confirmed at once
 * with a keep-alive from there, as a collector does. */
#pragma once
#include "test.h"
#include "fake_profiler.h"
#include <stdio.h>
#include <stdlib.h>

static inline void stream_from(uint16_t port)
{
    fake_requester = true;
    fake_requester_ip = 0x0a000202;
    fake_requester_port = port;
}

/* The id a start's answer names ("streaming id 0x..."), or 0. */
static inline uint32_t stream_id_in(const char *answer)
{
    const char *s = strstr(answer, "streaming id 0x");
    return s ? (uint32_t)strtoul(s + 15, NULL, 16) : 0;
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
    snprintf(started, cap, "%s", got());
    uint32_t id = stream_id_in(started);
    CHECK(id != 0);
    CHECK_EQ(stream_keepalive(id), 0);
    return id;
}
