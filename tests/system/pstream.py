"""tests/system/pstream.py: a decoder of the profile stream's datagrams
(uapi/profile_stream.h), written from the header's table alone and apart
from the C parser (uapi/profile_stream.c uapi/profile_stream_meta.c), so that the system tests
cross-check the kernel's encoder against a second reading of the format;
and a receiver that collects one stream on a loopback port and, as a
collector must, asks for it, confirms it and keeps it alive over the UDP
shell (open protocol) from that same port: a kernel heeds keep-alives only
from the stream's own destination.

Python 3 standard library only."""
import queue
import random
import socket
import struct
import threading
import time

MAGIC = 0x53505253
VERSION = 1
META, BATCH, END = 1, 2, 3
END_STOPPED, END_TIMEOUT, END_ELAPSED = 1, 2, 3
REC_TICK = 0x01
FRAMES = 8
HDR = struct.Struct(">IBBHIIQHHI")       # 32 bytes; the last word: flags, reserved
FLAG_TAGGED = 0x01
TAG_LEN = 32


class Bad(Exception):
    """A datagram the format refuses; the message says which rule."""


def ctl(text):
    """The control line of a stream command's answer (uapi/stream_ctl.h),
    which must be its first line: {key: value}, the values as text; None
    when the answer has none of version 1. A second reading of the
    grammar, apart from uapi/stream_ctl.c."""
    line = text.split("\n", 1)[0]
    w = line.split(" ")
    if len(w) < 2 or w[0] != "stream" or w[1] != "v=1":
        return None
    d = {}
    for x in w[1:]:
        k, eq, v = x.partition("=")
        if not eq or not k or not v or k in d:
            return None
        d[k] = v
    return d if {"op", "result", "state"} <= d.keys() else None


def human(text):
    """The answer's text for people: past its control line."""
    return text.split("\n", 1)[1] if ctl(text) is not None and "\n" in text else text


def decode(d):
    """One datagram as a dict: the header's fields, and per type: BATCH
    first/drops/drops_total/records [(pid, flags, [frames])]; META
    build_id/source/pid/ms/period_ns/cpus/tasks {pid: name}; END
    reason/cpus {cpu: (records, drops_total)}. Raises Bad."""
    if len(d) < HDR.size:
        raise Bad("short header (%d bytes)" % len(d))
    magic, ver, typ, cpu, stream, seq, t_ns, plen, count, res = HDR.unpack_from(d)
    if magic != MAGIC or ver != VERSION:
        raise Bad("magic 0x%08x version %d" % (magic, ver))
    flags, res = res >> 24, res & 0xffffff
    tag = TAG_LEN if flags & FLAG_TAGGED else 0
    if HDR.size + plen + tag != len(d) or len(d) > 1400 + tag:
        raise Bad("len %d for a %d-byte datagram" % (plen, len(d)))
    if res or flags & ~FLAG_TAGGED:
        raise Bad("reserved header field %d, flags 0x%x" % (res, flags))
    p = d[HDR.size:HDR.size + plen]     # the tag (unchecked here) after it
    h = dict(type=typ, cpu=cpu, stream=stream, seq=seq, t_ns=t_ns, count=count, tagged=bool(tag))
    if typ == BATCH:
        if len(p) < 12:
            raise Bad("short batch head")
        h["first"], h["drops"], h["drops_total"] = struct.unpack_from(">III", p)
        if h["drops"] > h["drops_total"]:
            raise Bad("drops %d > drops_total %d" % (h["drops"], h["drops_total"]))
        off, recs, prev = 12, [], []
        for _ in range(count):
            if off + 8 > len(p):
                raise Bad("record %d cut short" % len(recs))
            pid, depth, flags, kind, tail = struct.unpack_from(">IBBBB", p, off)
            # A shared tail: the last `tail` frames are the previous record's.
            if not 1 <= depth <= FRAMES or flags & ~REC_TICK or kind or tail > min(depth, len(prev)):
                raise Bad("record %d: depth %d flags 0x%x kind %d tail %d" % (
                    len(recs), depth, flags, kind, tail))
            own = depth - tail
            if off + 8 + 8 * own > len(p):
                raise Bad("record %d's frames cut short" % len(recs))
            frames = list(struct.unpack_from(">%dQ" % own, p, off + 8))
            frames += prev[len(prev) - tail:] if tail else []
            recs.append((pid, flags, frames))
            prev = frames
            off += 8 + 8 * own
        if off != len(p):
            raise Bad("%d bytes after %d records" % (len(p) - off, count))
        h["records"] = recs
    elif typ == META:
        if cpu:
            raise Bad("META names cpu %d" % cpu)
        bid = p[:40].decode("ascii", "replace")
        if len(p) < 41 or any(c not in "0123456789abcdef" for c in bid):
            raise Bad("build id %r" % bid)
        sl = p[40]
        if not 1 <= sl <= 63 or len(p) < 41 + sl + 14:
            raise Bad("source length %d" % sl)
        h["build_id"], h["source"] = bid, p[41:41 + sl].decode("ascii")
        h["pid"], h["ms"], h["period_ns"], h["cpus"] = struct.unpack_from(">IIIH", p, 41 + sl)
        off, tasks = 41 + sl + 14, {}
        for _ in range(count):
            if off + 5 > len(p):
                raise Bad("task cut short")
            pid, nl = struct.unpack_from(">IB", p, off)
            name = p[off + 5:off + 5 + nl]
            if not 1 <= nl <= 31 or len(name) != nl or any(c < 0x21 or c > 0x7e or c == 0x3b for c in name):
                raise Bad("task name %r" % name)
            tasks[pid] = name.decode("ascii")
            off += 5 + nl
        if off != len(p):
            raise Bad("%d bytes after %d tasks" % (len(p) - off, count))
        h["tasks"] = tasks
    elif typ == END:
        if cpu:
            raise Bad("END names cpu %d" % cpu)
        if len(p) != 4 + 12 * count:
            raise Bad("END of %d bytes for %d cpus" % (len(p), count))
        h["reason"] = p[0]
        if not END_STOPPED <= p[0] <= END_ELAPSED or p[1:4] != b"\0\0\0":
            raise Bad("END reason %d / reserved %r" % (p[0], p[1:4]))
        h["cpus"] = {}
        for i in range(count):
            c, r, n, drops = struct.unpack_from(">HHII", p, 4 + 12 * i)
            if r:
                raise Bad("END cpu reserved %d" % r)
            h["cpus"][c] = (n, drops)
    else:
        raise Bad("type %d" % typ)
    return h


USH_MAGIC = 0x4E4F5348
USH_LAST = 0x0001
USH_HDR = struct.Struct(">IIHHHH")    # 16 bytes


class Receiver:
    """Collects every datagram sent to 127.0.0.1:port (QEMU's user
    network delivers the guest's 10.0.2.2:port there) in a thread, until
    close(). sh() runs a UDP shell
    command from that same socket; the shell's replies (its magic) are
    handed to sh(), everything else is the stream's."""

    def __init__(self, port=0):
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind(("127.0.0.1", port))
        self.port = self.sock.getsockname()[1]
        self.sock.settimeout(0.1)
        self.got = []                 # (host monotonic time, decoded or Bad)
        self.ended_at = None
        self.replies = queue.Queue()
        self.seq = random.getrandbits(31)
        self._stop = False
        self._th = threading.Thread(target=self._run, daemon=True)
        self._th.start()

    def _run(self):
        while not self._stop:
            try:
                d, frm = self.sock.recvfrom(2048)
            except socket.timeout:
                continue
            except OSError:
                break
            if len(d) >= 16 and struct.unpack_from(">I", d)[0] == USH_MAGIC:
                self.replies.put((frm, d))
                continue
            try:
                h = decode(d)
            except Bad as e:
                h = e
            self.got.append((time.monotonic(), h))
            if isinstance(h, dict) and h["type"] == END and not self.ended_at:
                self.ended_at = time.monotonic()

    def sh(self, line, shell_port, timeout=10.0):
        """line over the UDP shell at 127.0.0.1:shell_port, sent from this
        receiver's own socket, as sonde-sh would (docs/udpshell.md, "What
        a client does": resent after 1 s without a new chunk, 3 sends in
        all); the reply's text. Raises RuntimeError on silence."""
        self.seq = (self.seq + 1) & 0xffffffff
        p = line.encode()
        req = USH_HDR.pack(USH_MAGIC, self.seq, 0, USH_LAST, len(p), 0) + p
        dest = ("127.0.0.1", shell_port)
        self.sock.sendto(req, dest)
        sends, got, last = 1, {}, None
        deadline, resend = time.monotonic() + timeout, time.monotonic() + 1.0
        while last is None or len(got) < last + 1:
            now = time.monotonic()
            if now >= deadline:
                raise RuntimeError("no reply to %r from port %d within %.0f s" % (line, shell_port, timeout))
            if now >= resend and sends < 3:
                self.sock.sendto(req, dest)
                sends, resend = sends + 1, now + 1.0
            try:
                frm, d = self.replies.get(timeout=0.05)
            except queue.Empty:
                continue
            magic, seq, chunk, flags, n, _ = USH_HDR.unpack_from(d)
            if frm[1] != shell_port or seq != self.seq or n != len(d) - 16:
                continue              # a late reply to an earlier command
            if chunk not in got:
                resend = time.monotonic() + 1.0
            got[chunk] = d[16:]
            if flags & USH_LAST:
                last = chunk
        return b"".join(got[i] for i in range(last + 1)).decode("latin-1")

    def wait_end(self, timeout):
        """The monotonic time the first END arrived, or None after timeout."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and not self.ended_at:
            time.sleep(0.05)
        if self.ended_at:
            time.sleep(max(0.0, self.ended_at + 0.5 - time.monotonic()))   # the END's copies
        return self.ended_at

    def close(self):
        self._stop = True
        self._th.join(2)
        self.sock.close()


def summarize(got):
    """What a stream's datagrams add up to, and what is wrong with them:
    a dict with bad (messages), metas, batches, ends (decoded), records per
    cpu, seq gaps, first-index gaps per cpu, ticks (records flagged tick)."""
    s = dict(bad=[], metas=[], batches=[], ends=[], records={}, seq_gaps=0, first_gaps=0,
             ticks=0, streams=set())
    seqs = set()
    next_first = {}
    for _, h in got:
        if isinstance(h, Bad):
            s["bad"].append(str(h))
            continue
        s["streams"].add(h["stream"])
        if h["type"] == END:
            s["ends"].append(h)
            seqs.add(h["seq"])
            continue
        if h["seq"] in seqs:
            s["bad"].append("seq %d twice (not an END copy)" % h["seq"])
        seqs.add(h["seq"])
        if h["type"] == META:
            s["metas"].append(h)
        else:
            s["batches"].append(h)
            c = h["cpu"]
            if h["first"] != next_first.get(c, 0):
                s["first_gaps"] += 1
            next_first[c] = h["first"] + h["count"]
            s["records"][c] = s["records"].get(c, 0) + h["count"]
            s["ticks"] += sum(1 for r in h["records"] if r[1] & REC_TICK)
    if seqs:
        s["seq_gaps"] = max(seqs) + 1 - len(seqs)
    return s
