#!/usr/bin/env python3
"""A fake Sonde kernel for sonde-prof's stream, with no QEMU: it answers the
UDP shell's `profile stream PORT MS WHO`, `profile keepalive ID`, `profile
status` and `profile stop` (the open protocol, or with --key the
authenticated one: docs/udpshell.md) and streams synthetic samples (uapi/profile_stream.h, encoded here from the header's
table, so the host's parsers are checked against the text, not against
themselves). As the kernel does, it sends one META until a keep-alive
from the stream's destination (its ip and port) confirms the stream,
heeds keep-alives from there only, and names the stream's id only to
requests from there.

usage: fake_stream_kernel.py --port P --build-id HEX --frames A,B,... [options]

  --cpus N         CPUs streaming (default 4)
  --hz N           samples per second per CPU (default 100)
  --drop-every K   lose every K-th datagram on the way (never the END):
                   the host must count exactly what that lost
  --drops N        each CPU reports N records dropped in the kernel
  --die-after S    stop answering anything (stream and shell) S seconds
                   after the stream started
  --no-end         never send the END
  --end-timeout-after S  end the first stream S seconds after it started
                   with an END "timeout", keep-alives or not (as a kernel
                   that missed them ends it); the shell answers on, and
                   another `profile stream` starts a new stream
  --restart-after S  restart S seconds into the first stream: the stream
                   is forgotten (no END, nothing more sent), the shell
                   answers on as a fresh boot's ("no stream since boot",
                   a new epoch under --key), and another `profile stream`
                   starts a new stream
  --old            answer as a kernel older than the control grammar
                   (uapi/stream_ctl.h): human sentences, no control line
  --ctl-version N  write control lines of version N (default 1)
  --control-lines  print each answer's control line, one per path, and
                   exit (tests/unit/test_stream_ctl.c parses them)
  --key FILE       a keyed kernel (ushkey=: FILE holds the 64 hex digits):
                   it answers only authenticated requests (docs/udpshell.md,
                   "Authentication": challenge, epoch, nonce, HMAC-SHA256
                   tags), tags its replies, and tags every stream datagram
                   (uapi/profile_stream.h, "Tagged datagrams")
  --forge K        after the K-th datagram of the stream, also send from
                   the stream's own socket (as a forger on the path would):
                   a datagram of an unknown stream id, datagrams of the
                   stream's id with a seq 2^31 ahead and a window ahead,
                   a batch with a pid above INT32_MAX (numbered past the
                   stream's END), a META whose task name holds
                   " samples=", and one with another build id. None may
                   change what the host counts.
  --forge-jump K   after the K-th datagram, from the stream's own socket:
                   two empty BATCHes of the stream's id, each 65535 seqs
                   ahead of the last (just inside the window), as a
                   forger without the key could
  --foreign N      once the stream is confirmed, N datagrams of random
                   stream ids from another socket to the stream's
                   destination (a flood of streams nobody started)

`profile off stream ...` streams off-CPU intervals instead (META source
"sched"): each record pid 7 (burn) waiting 1 ms on the wait queue
burn-q, woken by pid 9 (burn-waker, in the META) whose chain is the
record's first frame: flags weight and PSTR_REC_OFF (0x08), kind 1.

`profile allocs stream ...` streams heap records instead (META source
"heap allocs rate 4096"): each pid 7 (burn) allocating a 256-byte block
from the chain --frames, weighing 4096 bytes (16 objects): flags weight
and PSTR_REC_SIZE (0x04), kind 2.

`profile lock stream ...` streams lock records instead (META source
"locks"): each the mutex burn-m's release by pid 7 (burn) from the chain
--frames, ending 2 waits of 1 ms each (weight 2 ms): flags weight and
PSTR_REC_LOCK (0x10), kind 3.

`trace stream PORT MS` streams trace records instead (META source
"tick 100Hz"): on each CPU in turn, burn (pid 7) leaves for sleep and
idle comes in, idle wakes burn, idle leaves and burn comes in, and burn
is sampled in the chain --frames; each record's time its real time since
the stream's start: flags weight and PSTR_REC_TRACE (0x20), kind 4.

Records are made on the fake's clock: CPU c's record i is due at i / hz
seconds after the start, so a stream of MS ms holds exactly
cpus * hz * MS / 1000 of them. Prints "ready PORT" once listening, and on
exit (stdin closed, or killed) nothing more. Python 3 standard library."""
import argparse
import hashlib
import hmac
import os
import random
import socket
import struct
import sys
import threading
import time

MAGIC = 0x53505253
META, BATCH, END = 1, 2, 3
END_STOPPED, END_TIMEOUT, END_ELAPSED = 1, 2, 3
REASONS = {END_STOPPED: "stopped", END_TIMEOUT: "timeout", END_ELAPSED: "elapsed"}
USH_MAGIC = 0x4E4F5348
USH_LAST, USH_AUTH, USH_REPLY, USH_CHALLENGE = 1, 2, 4, 8
PSTR_TAGGED = 0x01


REC_WEIGHT, REC_SIZE, REC_OFF, REC_LOCK, REC_TRACE = 0x02, 0x04, 0x08, 0x10, 0x20
KIND_OFFCPU, KIND_HEAP, KIND_LOCK, WHY_WAITQ, LOCK_MUTEX = 1, 2, 3, 2, 2
KIND_TRACE, TEV_SWITCH, TEV_WAKE, TEV_SAMPLE, LEFT_SLEEP = 4, 1, 2, 4, 1
LOCK_WAITS, LOCK_NS = 2, 2000000      # each lock record: 2 waits, 2 ms in all
OFF_NS = 1000000                      # each off-CPU interval: 1 ms
HEAP_WEIGHT, HEAP_SIZE = 4096, 256    # each heap record: 16 objects of 256 bytes


class Stream:
    def __init__(self, k, dest, ms, what="cpu"):
        self.k, self.dest, self.ms = k, dest, ms
        self.off, self.heap, self.lock = what == "off", what == "allocs", what == "lock"
        self.trace, self.tnext = what == "trace", 0
        self.id = random.getrandbits(32) | 1
        self.seq = 0
        self.sent = [0] * k.a.cpus           # records numbered per CPU
        self.t0 = time.monotonic()
        self.last_keepalive = self.t0
        self.confirmed = False
        self.stop_reason = None
        self.dgrams = 0
        self.forged = False
        self.jumped = False
        self.flooded = False

    def hdr(self, typ, cpu, payload, count):
        t_ns = int((time.monotonic() - self.t0) * 1e9)
        h = struct.pack(">IBBHIIQHHI", MAGIC, 1, typ, cpu, self.id, self.seq, t_ns,
                        len(payload), count, 0)
        self.seq += 1
        return h + payload

    def send(self, d, droppable=True):
        self.dgrams += 1
        a = self.k.a
        if droppable and a.drop_every and self.dgrams % a.drop_every == 0:
            return
        self.k.out.sendto(self.k.tag_stream(d), self.dest)
        if a.forge and self.dgrams >= a.forge and not self.forged:
            self.forged = True
            self.forge()
        if a.forge_jump and self.dgrams >= a.forge_jump and not self.jumped:
            self.jumped = True
            self.forge_jump()

    def forge_jump(self):
        """Two empty BATCHes, each skipping 65535 seqs: believed, every real
        datagram after them would be late."""
        first = self.sent[0]
        for ahead in (65535, 2 * 65535 + 1):
            seq = (self.seq + ahead) & 0xffffffff
            p = struct.pack(">III", first, 0, 0)
            self.k.out.sendto(struct.pack(">IBBHIIQHHI", MAGIC, 1, BATCH, 0, self.id, seq, 0,
                                          len(p), 0, 0) + p, self.dest)

    def flood_foreign(self):
        """a.foreign datagrams of random stream ids, from a socket of their own."""
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        p = struct.pack(">III", 0, 0, 0) + struct.pack(">IBBH", 7, 1, 1, 0) + \
            struct.pack(">Q", self.k.a.frames[0])
        for _ in range(self.k.a.foreign):
            sid = random.getrandbits(32) | 1
            s.sendto(struct.pack(">IBBHIIQHHI", MAGIC, 1, BATCH, 0, sid, 0, 0, len(p), 1, 0) + p,
                     self.dest)
        s.close()

    def forge(self):
        """What a forger on the path might send the collector."""
        a, out = self.k.a, self.k.out

        def hdr(typ, cpu, sid, seq, payload, count):
            return struct.pack(">IBBHIIQHHI", MAGIC, 1, typ, cpu, sid, seq, 0, len(payload), count, 0) + payload

        def rec(pid):
            return struct.pack(">IBBH", pid, 1, 1, 0) + struct.pack(">Q", a.frames[0])

        def meta(bid, task):
            src = b"tick 100Hz"
            p = bid.encode() + bytes([len(src)]) + src + struct.pack(">IIIH", 0xffffffff, self.ms, 10000000, a.cpus)
            return p + struct.pack(">IB", 9, len(task)) + task
        batch = struct.pack(">III", 0, 0, 0)
        for d in (hdr(BATCH, 0, self.id ^ 0x5a5a5a5a, 1, batch + rec(7), 1),
                  hdr(BATCH, 0, self.id, (self.seq + (1 << 31) - 1) & 0xffffffff, batch + rec(7), 1),
                  hdr(BATCH, 0, self.id, self.seq + 70000, batch + rec(7), 1),
                  # numbered past the END: no real datagram of the stream is lost
                  hdr(BATCH, a.cpus + 2, self.id, self.seq + 5000, batch + rec(0x80000000), 1),
                  hdr(META, 0, self.id, self.seq + 3, meta(a.build_id, b"x samples=1"), 1),
                  hdr(META, 0, self.id, self.seq + 4, meta("f" * 40, b"evil"), 1)):
            out.sendto(d, self.dest)

    def meta(self):
        a = self.k.a
        src = b"sched" if self.off else b"heap allocs rate 4096" if self.heap else \
            b"locks" if self.lock else b"tick 100Hz"
        p = a.build_id.encode() + bytes([len(src)]) + src
        p += struct.pack(">IIIH", 0xffffffff, self.ms, 10000000, a.cpus)
        p += struct.pack(">IB", 7, 4) + b"burn" + struct.pack(">IB", 0, 4) + b"idle"
        p += struct.pack(">IB", 9, 10) + b"burn-waker"
        self.send(self.hdr(META, 0, p, 3))

    def record(self, frames):
        """One record: a CPU sample, or (off) an interval with why, name,
        waker and the waker's chain, as uapi/profile_stream.h lays it out."""
        fr = b"".join(struct.pack(">Q", f) for f in frames)
        if self.heap:
            return (struct.pack(">IBBBB", 7, len(frames), REC_WEIGHT | REC_SIZE, KIND_HEAP, 0) +
                    struct.pack(">QQ", HEAP_WEIGHT, HEAP_SIZE) + fr)
        if self.trace:
            return self.trace_record(frames)
        if self.lock:
            name = b"burn-m"
            return (struct.pack(">IBBBB", 7, len(frames), REC_WEIGHT | REC_LOCK, KIND_LOCK, 0) +
                    struct.pack(">QIBBH", LOCK_NS, LOCK_WAITS, LOCK_MUTEX, len(name), 0) + name + fr)
        if not self.off:
            return struct.pack(">IBBH", 7, len(frames), 1, 0) + fr
        name = b"burn-q"
        return (struct.pack(">IBBBB", 7, len(frames), REC_WEIGHT | REC_OFF, KIND_OFFCPU, 0) +
                struct.pack(">Q", OFF_NS) + struct.pack(">BBBBi", WHY_WAITQ, len(name), 1, 0, 9) +
                name + fr + struct.pack(">Q", frames[0]))

    def trace_record(self, frames):
        """The next of the trace's four events (the module's doc)."""
        step, self.tnext = self.tnext % 4, self.tnext + 1
        ns = max(1, int((time.monotonic() - self.t0) * 1e9))

        def part(tev, arg, other, wcpu=0):
            return struct.pack(">BBBBIHHI", tev, arg, 0, 0, other, 0, wcpu, 0)
        head = lambda pid, depth: struct.pack(">IBBBB", pid, depth, REC_WEIGHT | REC_TRACE,
                                              KIND_TRACE, 0) + struct.pack(">Q", ns)
        if step == 0:
            return head(7, 0) + part(TEV_SWITCH, LEFT_SLEEP, 0)
        if step == 1:
            return head(0, 0) + part(TEV_WAKE, 0, 7)
        if step == 2:
            return head(0, 0) + part(TEV_SWITCH, 0, 7)
        return head(7, len(frames)) + part(TEV_SAMPLE, 0, 0) + \
            b"".join(struct.pack(">Q", f) for f in frames)

    def batch(self, cpu, upto):
        a = self.k.a
        frames = a.frames
        while self.sent[cpu] < upto:
            first = self.sent[cpu]
            n = min(upto - first, 7 if self.off else 16)
            recs = b""
            for _ in range(n):
                recs += self.record(frames)
            p = struct.pack(">III", first, a.drops if first else 0, a.drops) + recs
            self.send(self.hdr(BATCH, cpu, p, n))
            self.sent[cpu] += n

    def end(self, reason):
        a = self.k.a
        p = struct.pack(">B3x", reason)
        for c in range(a.cpus):
            p += struct.pack(">HHII", c, 0, self.sent[c], a.drops)
        d = self.hdr(END, 0, p, a.cpus)
        self.k.event("end %s" % REASONS[reason])
        if not a.no_end:
            for _ in range(3):
                self.send(d, droppable=False)

    def run(self):
        a = self.k.a
        next_meta = 0.0
        first = self.k.streams == 1
        while True:
            now = time.monotonic() - self.t0
            if self.k.dead() or self.k.stream is not self:
                return                # dead, or restarted: forgotten
            if first and a.end_timeout_after and now >= a.end_timeout_after:
                self.stop_reason = self.stop_reason or END_TIMEOUT
            if self.ms and now * 1000 >= self.ms:
                now = self.ms / 1000
                self.stop_reason = self.stop_reason or END_ELAPSED
            if time.monotonic() - self.last_keepalive > 5:
                self.stop_reason = self.stop_reason or END_TIMEOUT
                if not self.confirmed:
                    return            # never confirmed: no END either
            if not self.confirmed:
                if next_meta == 0.0:
                    self.meta()       # the one datagram before the confirmation
                    next_meta = 1.0
                time.sleep(0.01)
                continue
            if now >= next_meta:
                self.meta()
                next_meta += 1.0
            if a.foreign and not self.flooded:
                self.flooded = True
                self.flood_foreign()
            for c in range(a.cpus):
                self.batch(c, int(now * a.hz))
            if self.stop_reason:
                self.end(self.stop_reason)
                return
            time.sleep(0.05)


MASK64 = (1 << 64) - 1
PSTR_DGRAM_MAX = 1400
NH_KEY_WORDS = (PSTR_DGRAM_MAX + 15) // 16 * 2 + 2


def nh_key(key, epoch):
    """The NH key of a key and an epoch (uapi/profile_stream.h, "Tagged
    datagrams"): HMAC blocks of "SPRS-NHK" || epoch || j, as 64-bit
    little-endian words."""
    b = b"".join(hmac.new(key, b"SPRS-NHK" + struct.pack(">QI", epoch, j), hashlib.sha256).digest()
                 for j in range((NH_KEY_WORDS + 3) // 4))
    return [int.from_bytes(b[8 * i:8 * i + 8], "little") for i in range(NH_KEY_WORDS)]


def stream_tag(key, epoch, nhk, d):
    """The tag of the datagram d (its flag set): NH of d zero-padded to 16,
    two passes (the second's key two words on), then HMAC-SHA256 of the
    label, the epoch, d's length and the two 16-byte sums."""
    m = d + bytes(-len(d) % 16)
    w = [int.from_bytes(m[i:i + 8], "little") for i in range(0, len(m), 8)]
    h = b""
    for shift in (0, 2):
        k = nhk[shift:]
        s = sum(((w[i] + k[i]) & MASK64) * ((w[i + 1] + k[i + 1]) & MASK64)
                for i in range(0, len(w), 2))
        h += (s % (1 << 128)).to_bytes(16, "big")
    msg = b"SPRS-TAG" + struct.pack(">QI", epoch, len(d)) + h
    return hmac.new(key, msg, hashlib.sha256).digest()


class Kernel:
    def __init__(self, a):
        self.a = a
        self.sh = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sh.bind(("127.0.0.1", a.port))
        self.out = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.stream = None
        self.key = bytes.fromhex(open(a.key).read().strip()) if a.key else None
        self.epoch = random.getrandbits(64) | 1
        self.nhk = nh_key(self.key, self.epoch) if self.key else None
        self.high_nonce = 0
        self.streams = 0
        self.lock = threading.Lock()

    def event(self, what):
        """One line of what became of the streams, for the tests (none
        under --control-lines, whose output is parsed)."""
        if self.a.control_lines:
            return
        with self.lock:
            print(what, flush=True)

    def restart(self):
        """--restart-after: the first stream forgotten, as a fresh boot."""
        self.stream = None
        self.epoch = random.getrandbits(64) | 1
        self.nhk = nh_key(self.key, self.epoch) if self.key else None
        self.high_nonce = 0
        self.event("restart")

    def start_stream(self, dest, ms, what):
        self.streams += 1
        s = Stream(self, dest, ms, what)
        self.stream = s
        self.event("start 0x%08x" % s.id)
        if self.a.restart_after and self.streams == 1:
            t = threading.Timer(self.a.restart_after, lambda: self.stream is s and self.restart())
            t.daemon = True
            t.start()
        threading.Thread(target=s.run, daemon=True).start()
        return s

    def dead(self):
        s = self.stream
        return bool(self.a.die_after and s and time.monotonic() - s.t0 >= self.a.die_after)

    def mac(self, d):
        return hmac.new(self.key, d, hashlib.sha256).digest()

    def tag_stream(self, d):
        """With a key: flags PSTR_TAGGED (byte 28) and the tag
        (stream_tag) appended."""
        if not self.key:
            return d
        d = d[:28] + bytes([d[28] | PSTR_TAGGED]) + d[29:]
        return d + stream_tag(self.key, self.epoch, self.nhk, d)

    def reply(self, seq, text, to, nonce=None):
        p = text.encode()
        if nonce is None:
            # LAST | REPLY, as the kernel flags every reply
            self.sh.sendto(struct.pack(">IIHHHH", USH_MAGIC, seq, 0, 5, len(p), 0) + p, to)
            return
        d = struct.pack(">IIHHHHQQ", USH_MAGIC, seq, 0, USH_LAST | USH_AUTH | USH_REPLY,
                        len(p), 1, nonce, self.epoch) + p
        self.sh.sendto(d + self.mac(d), to)

    def keyed_request(self, d, frm):
        """An authenticated request or challenge: (seq, command, nonce) to
        run, or None when it is answered here or refused."""
        magic, seq, _, flags, n, _ = struct.unpack(">IIHHHH", d[:16])
        if not flags & USH_AUTH or flags & USH_REPLY or len(d) != 64 + n or \
                not hmac.compare_digest(self.mac(d[:32 + n]), d[32 + n:]):
            return None                   # untagged, a reply, malformed or forged
        nonce, epoch = struct.unpack(">QQ", d[16:32])
        if flags & USH_CHALLENGE:
            a = struct.pack(">IIHHHHQQQ", USH_MAGIC, seq, 0,
                            USH_LAST | USH_AUTH | USH_REPLY | USH_CHALLENGE, 8, 0, nonce,
                            self.epoch, self.high_nonce)
            self.sh.sendto(a + self.mac(a), frm)
            return None
        if epoch != self.epoch or nonce <= self.high_nonce:
            return None                   # another boot's, or a replay
        self.high_nonce = nonce
        return seq, d[32:32 + n].decode(errors="replace"), nonce

    def command(self, cmd, frm):
        """The reply to cmd from frm: the control line first (ctl_line),
        then the kernel's human text; with --old, the human text alone, as
        a kernel older than the grammar answers."""
        w = cmd.split()
        what = w[1] if len(w) > 2 and w[1] in ("off", "allocs", "lock") and w[2] == "stream" \
            else "trace" if w[:2] == ["trace", "stream"] else "cpu"
        if what == "trace":
            w = ["profile"] + w[1:]
        elif what != "cpu":
            w = w[:1] + w[2:]
        s = self.stream
        busy = s is not None and s.stop_reason is None
        peer = s is not None and tuple(frm) == tuple(s.dest)
        name = "id 0x%08x to %s:%d" % (s.id, s.dest[0], s.dest[1]) if peer else \
            ("to %s:%d" % tuple(s.dest) if s else "")
        told = {"id": s.id} if peer else {}
        to = {"to": "%s:%d" % tuple(s.dest)} if s else {}
        state = "streaming" if busy else "ended" if s else "none"
        if w[:2] == ["profile", "stream"] and len(w) >= 3:
            if busy:
                return self.ctl("start", "busy", state, **told, **to) + \
                    "profile: busy (streaming %s)\n" % name
            ms = int(w[3]) if len(w) > 3 else 0
            s = self.start_stream((frm[0], int(w[2])), ms, what)
            line = self.ctl("start", "ok", "streaming", **({"id": s.id} if tuple(frm) == s.dest else {}),
                            to="%s:%d" % s.dest, kind=what,
                            cpus=self.a.cpus, len=ms)
            if tuple(frm) != tuple(s.dest):
                return line + "profile: streaming to %s:%s (fake), once a keep-alive from there " \
                    "confirms it\n" % (frm[0], w[2])
            return line + "profile: streaming id 0x%08x to %s:%s (fake)\n" % (s.id, frm[0], w[2])
        if w[:2] == ["profile", "keepalive"]:
            if not busy:
                return self.ctl("keepalive", "none", state) + "profile: no stream running\n"
            if not peer:
                return self.ctl("keepalive", "refused", state, **to) + \
                    "profile: keep-alive refused: a stream is kept alive only from its " \
                    "destination, %s:%d\n" % tuple(s.dest)
            if len(w) != 3 or int(w[2], 16) != s.id:
                return self.ctl("keepalive", "other", state, **told, **to) + \
                    "profile: stream %s is not running (0x%08x is)\n" % (w[2:3], s.id)
            s.last_keepalive = time.monotonic()
            s.confirmed = True
            return self.ctl("keepalive", "ok", state, **told, **to) + \
                "profile: stream 0x%08x kept alive\n" % s.id
        if w[:2] == ["profile", "status"]:
            if busy:
                age = int((time.monotonic() - s.t0) * 1000)
                ka = {"ka": int((time.monotonic() - s.last_keepalive) * 1000)} if s.confirmed else {}
                return self.ctl("status", "ok", state, **told, **to, age=age,
                                confirmed=int(s.confirmed), **ka, **self.counts(s)) + \
                    "profile: streaming %s, 0 ms, (fake)\n" % name
            if s:
                return self.ctl("status", "ok", state, **({"last": s.id} if peer else {}), **to,
                                reason=REASONS[s.stop_reason], **self.counts(s)) + \
                    "profile: no stream running; the last, %s, ended (fake)\n" % (
                        "0x%08x" % s.id if peer else "to %s:%d" % tuple(s.dest))
            return self.ctl("status", "ok", state) + "profile: no stream since boot\n"
        if w[:2] == ["profile", "stop"]:
            if not busy:
                return self.ctl("stop", "none", state) + "profile: no stream running\n"
            s.stop_reason = END_STOPPED
            return self.ctl("stop", "ok", "ended", **told, **to, reason="stopped",
                            **self.counts(s)) + "profile: stream %s stopped\n" % name
        return "profile: no stream\n"

    def counts(self, s):
        return {"records": sum(s.sent), "datagrams": s.dgrams, "drops": self.a.drops * self.a.cpus,
                "sendfail": 0, "karefused": 0}

    def ctl(self, op, result, state, **kw):
        """The control line (uapi/stream_ctl.h), written by hand: the fake
        cannot link uapi/stream_ctl.c; tests/unit/test_stream_ctl.c parses
        what this writes (--control-lines). --ctl-version writes another
        version's, --old none at all."""
        if self.a.old:
            return ""
        words = ["stream", "v=%d" % self.a.ctl_version, "op=" + op, "result=" + result,
                 "state=" + state]
        for k in ("id", "last", "to", "kind", "cpus", "len", "age", "confirmed", "ka", "reason",
                  "records", "datagrams", "drops", "sendfail", "karefused"):
            if k in kw:
                words.append("%s=%s" % (k, "0x%08x" % kw[k] if k in ("id", "last") else kw[k]))
        return " ".join(words) + "\n"

    def command_old(self, cmd, frm):
        """The answers of a kernel older than the control grammar: human
        sentences alone (--old)."""
        w = cmd.split()
        what = w[1] if len(w) > 2 and w[1] in ("off", "allocs", "lock") and w[2] == "stream" \
            else "trace" if w[:2] == ["trace", "stream"] else "cpu"
        if what == "trace":
            w = ["profile"] + w[1:]
        elif what != "cpu":
            w = w[:1] + w[2:]
        s = self.stream
        busy = s is not None and s.stop_reason is None
        peer = s is not None and tuple(frm) == tuple(s.dest)
        name = "id 0x%08x to %s:%d" % (s.id, s.dest[0], s.dest[1]) if peer else \
            ("to %s:%d" % tuple(s.dest) if s else "")
        if w[:2] == ["profile", "stream"] and len(w) >= 3:
            if busy:
                return "profile: busy (streaming %s)\n" % name
            ms = int(w[3]) if len(w) > 3 else 0
            self.start_stream((frm[0], int(w[2])), ms, what)
            return "profile: streaming id 0x%08x to %s:%s (fake)\n" % (self.stream.id, frm[0],
                                                                    w[2])
        if w[:2] == ["profile", "keepalive"] and busy and peer and int(w[2], 16) == s.id:
            s.last_keepalive = time.monotonic()
            s.confirmed = True
            return "profile: stream 0x%08x kept alive\n" % s.id
        if w[:2] == ["profile", "stop"] and busy:
            s.stop_reason = END_STOPPED
            return "profile: stream %s stopped\n" % name
        return "profile: no stream\n"

    def answer(self, cmd, frm):
        return self.command_old(cmd, frm) if self.a.old else self.command(cmd, frm)

    def serve(self):
        self.sh.settimeout(0.2)
        while not self.dead():
            try:
                d, frm = self.sh.recvfrom(2048)
            except socket.timeout:
                continue
            if len(d) < 16:
                continue
            magic, seq, _, _, n, _ = struct.unpack(">IIHHHH", d[:16])
            if magic != USH_MAGIC:
                continue
            if self.key:
                req = self.keyed_request(d, frm)
                if req:
                    self.reply(req[0], self.answer(req[1], frm), frm, req[2])
                continue
            self.reply(seq, self.answer(d[16:16 + n].decode(errors="replace"), frm), frm)
        time.sleep(3600)                  # dead: silent until killed


def control_lines(a):
    """--control-lines: every path of command() once, each reply's first
    line as "LABEL<TAB>line" (labels "stranger-..." are answers to someone
    other than the stream's destination), for the unit test that parses
    them with uapi/stream_ctl.c. The stream's datagrams go to a socket of
    this process's own, never to a port someone else may hold."""
    a.port, a.build_id, a.frames = 0, "0" * 40, [0x1000]
    k = Kernel(a)
    sink = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sink.bind(("127.0.0.1", 0))
    dest = sink.getsockname()
    other = ("127.0.0.1", dest[1] ^ 1 or 1)

    def say(label, cmd, frm=dest):
        print("%s\t%s" % (label, k.command(cmd, frm).split("\n")[0]))
    say("status-none", "profile status")
    say("stop-none", "profile stop")
    say("keepalive-none", "profile keepalive 0x1")
    say("start", "profile stream %d 2000 all" % dest[1])
    sid = k.stream.id
    say("start-busy", "profile stream %d" % dest[1])
    say("stranger-start-busy", "profile stream %d" % dest[1], other)
    say("keepalive", "profile keepalive 0x%08x" % sid)
    say("keepalive-other", "profile keepalive 0x%08x" % (sid ^ 2))
    say("stranger-keepalive", "profile keepalive 0x%08x" % sid, other)
    say("status", "profile status")
    say("stranger-status", "profile status", other)
    say("stop", "profile stop")
    say("status-ended", "profile status")
    say("stranger-status-ended", "profile status", other)
    say("start-off", "profile off stream %d" % dest[1])
    k.stream.stop_reason = END_STOPPED
    say("stranger-start", "profile allocs stream %d 10 all" % dest[1], other)
    k.stream.stop_reason = END_STOPPED
    sys.stdout.flush()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--control-lines", action="store_true")
    p.add_argument("--port", type=int)
    p.add_argument("--build-id")
    p.add_argument("--frames")
    p.add_argument("--cpus", type=int, default=4)
    p.add_argument("--hz", type=int, default=100)
    p.add_argument("--drop-every", type=int, default=0)
    p.add_argument("--drops", type=int, default=0)
    p.add_argument("--die-after", type=float, default=0)
    p.add_argument("--no-end", action="store_true")
    p.add_argument("--end-timeout-after", type=float, default=0)
    p.add_argument("--restart-after", type=float, default=0)
    p.add_argument("--forge", type=int, default=0)
    p.add_argument("--forge-jump", type=int, default=0)
    p.add_argument("--foreign", type=int, default=0)
    p.add_argument("--key")
    p.add_argument("--old", action="store_true")
    p.add_argument("--ctl-version", type=int, default=1)
    a = p.parse_args()
    if a.control_lines:
        control_lines(a)
        return
    if a.port is None or not a.build_id or not a.frames:
        p.error("--port, --build-id and --frames are required")
    a.frames = [int(f, 16) for f in a.frames.split(",")]
    k = Kernel(a)
    print("ready %d" % a.port, flush=True)
    k.serve()


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:
        sys.exit(0)
    os._exit(0)
