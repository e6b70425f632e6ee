#!/usr/bin/env python3
"""`sonde-prof serve` tried as an attacker would (issue 35's table), with no
QEMU: fake kernels (tests/tools/fake_stream_kernel.py) stream the real x86
kernel's burn chain into a real serve on 127.0.0.1, and each hostile input
is a check that serve survives it as it should:

- bytes that are not UTF-8 in a path or a value (/%ff, /\\xff, kind=%ff, a
  2-byte character cut by the message's %.100s): a 4xx whose JSON shows
  them as \\xHH, and serve still serving (it used to exit);
- a Host header that is none of serve's names (DNS rebinding): 421, while
  127.0.0.1:PORT and localhost:PORT are answered; with --public, the
  --allow-host names too, and one address holds 16 connections at most;
- 64 connections trickling a header byte a second (never idle, so
  libmicrohttpd's idle timeout never fires): the 65th client is locked
  out at first, and answered once the request deadline (10 s, whole
  request) has cut them;
- 50,000 datagrams of random stream ids: 64 named on stderr, no more
  (5.4 MB of stderr before);
- two forged empty BATCHes without -k, each 65535 seqs ahead: the kernel
  streams on, its samples still counted (the real datagrams were all
  "late" and the kernel given up on before);
- frames no ELF names: shown as 0x... as record shows them (dropped
  before);
- `sonde-prof diff` on .pb.gz files whose samples name a location id out
  of order (2^17 and 2^20 locations, 2^17 samples): done in under 2 s
  and 4 s of CPU (2^17 took past 20 s before); a file that inflates past 8 MiB, or whose
  empty messages would unpack past 256 MiB, refused naming the cap, under
  a 1 GiB address-space limit (none for an ASan build, whose shadow needs
  terabytes of it: the peak RSS, under 1 GiB, is checked either way).

usage: tests/tools/check_serve_hostile.py   (ends "N passed, N failed")
SONDE_PROF=PATH runs another build of sonde-prof (one under ASan, say)."""
import gzip
import json
import os
import re
import resource
import socket
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import check_serve_http as h  # noqa: E402  (its helpers: raw, get, start_fake, ...)

ROOT, ELF, PROF = h.ROOT, h.ELF, h.PROF
check = h.check


def host_get(port, target, host):
    """GET target with Host: host (None: no Host at all, as HTTP/1.0)."""
    if host is None:
        return h.raw(port, b'GET ' + target + b' HTTP/1.0\r\n\r\n')
    return h.raw(port, b'GET ' + target + b' HTTP/1.1\r\nHost: ' + host +
                 b'\r\nConnection: close\r\n\r\n')


def error_of(body):
    try:
        return json.loads(body).get('error', '')
    except ValueError:
        return None


def samples(port, kernel):
    st, body = h.get(port, b'/api/flame?kernel=%d' % kernel)
    return json.loads(body)['samples'] if st == 200 else -1


def check_bytes(port):
    """Invalid UTF-8 in what a message echoes: escaped, never an exit."""
    cut = b'/' + b'a' * 98 + b'%c3%a9'

    def ask(target):
        try:
            return h.get(port, target)
        except OSError as e:            # nothing listens: serve has ended
            return None, str(e).encode()

    def alive():
        st, body = ask(b'/api/status')
        return st == 200
    for name, target, want, says in (
            ('GET /%ff', b'/%ff', 404, 'no such page: /\\xff'),
            ('GET /\\xff raw', b'/\xff', 404, 'no such page: /\\xff'),
            ('kind=%ff', b'/api/flame?kind=%ff', 400, 'kind=\\xff unknown'),
            ('a 2-byte character cut at 100 bytes', cut, 404, 'aaa\\xc3 (known:')):
        st, body = ask(target)
        e = error_of(body)
        check(f'{name}: {want}, the bytes shown as \\xHH', st == want and e is not None and
              says in e, f'got {st}: {body[:200]!r}')
        check(f'{name}: serve still answers', alive())


def check_host(port):
    """The Host header: serve's own names with its port, nothing else."""
    p = b'%d' % port
    for host, want in ((b'attacker.example:8080', 421), (b'attacker.example:' + p, 421),
                       (b'localhost:1', 421), (b'127.0.0.1', 421), (b'127.0.0.1:' + p, 200),
                       (b'localhost:' + p, 200), (b'LOCALHOST:' + p, 200), (None, 200)):
        st, body = host_get(port, b'/api/status', host)
        ok = st == want
        if want == 421:
            ok = ok and '127.0.0.1:%d' % port in (error_of(body) or '')
        check(f'Host: {host.decode() if host else "(none, HTTP/1.0)"}: {want}', ok,
              f'got {st}: {body[:200]!r}')
    r = subprocess.run([PROF, 'serve', '--allow-host', 'prof.example', '-e', ELF, '127.0.0.1'],
                       capture_output=True, text=True, timeout=10)
    check('--allow-host without --public: exit 2, says so',
          r.returncode == 2 and '--allow-host needs --public' in r.stderr, r.stderr.strip())
    r = subprocess.run([PROF, 'serve', '--public', '--allow-host', 'a:80', '-e', ELF,
                        '127.0.0.1'], capture_output=True, text=True, timeout=10)
    check('--allow-host a:80: exit 2, names what a name may be',
          r.returncode == 2 and 'no port' in r.stderr and "'-' and '.'" in r.stderr,
          r.stderr.strip())


def trickle(socks, stop):
    """A header byte a second on every socket: never idle."""
    while not stop.wait(1.0):
        for s in socks:
            try:
                s.send(b'a')
            except OSError:
                pass


def closed_by_peer(s):
    """True when serve has closed s (whatever it sent first)."""
    s.settimeout(0.5)
    try:
        while s.recv(4096):
            pass
        return True
    except (ConnectionResetError, BrokenPipeError):
        return True
    except (socket.timeout, OSError):
        return False


def check_deadline(port):
    """64 trickling clients lock the 65th out only until the deadline."""
    socks = []
    for _ in range(64):
        s = socket.create_connection(('127.0.0.1', port), timeout=5)
        s.sendall(b'GET /api/status HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nX-Slow: ' % port)
        socks.append(s)
    t0 = time.monotonic()
    stop = threading.Event()
    th = threading.Thread(target=trickle, args=(socks, stop), daemon=True)
    th.start()
    try:
        time.sleep(1.0)
        st, _ = h.raw(port, b'GET /api/status HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n'
                      b'Connection: close\r\n\r\n' % port, timeout=2.0)
        check('64 trickling connections: the 65th client is locked out at first', st is None,
              f'got {st}')
        # The deadline is 10 s from each accept; serve sweeps every 100 ms.
        time.sleep(max(0.0, t0 + 12.0 - time.monotonic()))
        st, _ = h.raw(port, b'GET /api/status HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n'
                      b'Connection: close\r\n\r\n' % port, timeout=3.0)
        check('12 s later (deadline 10 s): a new client is answered', st == 200,
              f'got {st} at {time.monotonic() - t0:.1f} s')
        stop.set()
        th.join()
        cut = sum(closed_by_peer(s) for s in socks)
        check('every trickling connection was closed by serve', cut == 64, f'{cut} of 64')
    finally:
        stop.set()
        for s in socks:
            s.close()


def check_public(tmp, procs, kport):
    """--public: --allow-host names answered, others 421; 16 connections
    per address."""
    sv, err, port = h.start_serve(tmp, 'serve-public.err', [
        '--public', '--allow-host', 'prof.example', '--allow-host', 'Other.Example',
        f'127.0.0.1:{kport}'])
    procs.append(sv)
    check('serve --public --allow-host starts', port is not None)
    if port is None:
        return
    p = b'%d' % port
    for host, want in ((b'prof.example:' + p, 200), (b'prof.example', 200),
                       (b'other.example:' + p, 200), (b'prof.example:1', 421),
                       (b'evil.example:' + p, 421), (b'127.0.0.1:' + p, 200)):
        st, body = host_get(port, b'/api/status', host)
        check(f'--public, Host: {host.decode()}: {want}', st == want, f'got {st}: {body[:200]!r}')
    held = []
    try:
        for _ in range(16):
            s = socket.create_connection(('127.0.0.1', port), timeout=5)
            s.sendall(b'GET /api/status HTTP/1.1\r\n')
            held.append(s)
        time.sleep(0.3)
        st, body = h.get(port, b'/api/status')
        check('--public: a 17th connection from one address is refused', st is None,
              f'got {st}')
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.settimeout(5)
        s.bind(('127.0.0.2', 0))
        s.connect(('127.0.0.1', port))
        s.sendall(b'GET /api/status HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nConnection: close\r\n\r\n'
                  % port)
        reply = b''
        try:
            while True:
                b = s.recv(65536)
                if not b:
                    break
                reply += b
        except socket.timeout:
            pass
        s.close()
        check('--public: another address is still answered', reply.startswith(b'HTTP/1.1 200'),
              repr(reply[:80]))
    finally:
        for s in held:
            s.close()
    sv.terminate()
    check('serve --public: SIGTERM, exit 0', sv.wait(10) == 0)


# ---- pprof files no Sonde tool writes ---------------------------------------

def varint(n):
    out = bytearray()
    while True:
        b, n = n & 0x7f, n >> 7
        if not n:
            out.append(b)
            return bytes(out)
        out.append(b | 0x80)


def field(num, payload):
    return varint(num << 3 | 2) + varint(len(payload)) + payload


def vfield(num, v):
    return varint(num << 3) + varint(v)


def out_of_order(nloc, nsamp):
    """A CPU profile of nloc locations whose ids run nloc, 1, 2, ... and
    nsamp samples, each naming location nloc - 1: no sample's id is at
    its place, so a scan per sample reads every location."""
    strs = [b'', b'samples', b'count', b'cpu', b'nanoseconds', b'kernel.elf', b'0' * 40]
    head = (field(1, vfield(1, 1) + vfield(2, 2)) + field(1, vfield(1, 3) + vfield(2, 4)) +
            field(3, vfield(1, 1) + vfield(2, 0x1000) + vfield(3, 0x2000) + vfield(5, 5) +
                  vfield(6, 6)))
    locs = [field(4, vfield(1, nloc))] + [field(4, vfield(1, i)) for i in range(1, nloc)]
    samp = field(2, field(1, varint(nloc - 1)) + field(2, varint(1) + varint(10000000)))
    tail = b''.join(field(6, s) for s in strs) + vfield(12, 10000000)
    return gzip.compress(head + b''.join(locs) + samp * nsamp + tail, 6)


def limit_memory():
    resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))


def sanitized():
    """PROF built with AddressSanitizer, which reserves terabytes of address
    space for its shadow: no address-space limit can be set for it."""
    with open(PROF, 'rb') as f:
        return b'__asan_init' in f.read()


def diff(tmp, path, timeout):
    """sonde-prof diff path path: (exit status or None on timeout, stderr,
    wall s, CPU s), under a 1 GiB address-space limit (none under ASan:
    the peak RSS is checked instead, by the caller)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    try:
        r = subprocess.run([PROF, 'diff', path, path, '-o', os.path.join(tmp, 'diff.txt')],
                           capture_output=True, text=True, timeout=timeout,
                           preexec_fn=None if sanitized() else limit_memory)
        rc, err = r.returncode, r.stderr
    except subprocess.TimeoutExpired:
        rc, err = None, 'timed out'
    wall = time.monotonic() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return rc, err, wall, cpu


def peak_rss_mb():
    """The largest RSS of any child so far, in MiB (ru_maxrss is in KiB)."""
    return resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024


def check_pprof(tmp):
    """The reader's hash and caps, through `sonde-prof diff` of a file with
    itself (two reads). Bounds in CPU time, 2 s for 2^17 locations and 4 s
    for 2^20 (0.5 s and 1.5 s measured, most of the latter protobuf-c's
    unpacking of a million messages), and 15 s of wall time on a shared
    machine."""
    for nloc, most in ((1 << 17, 2.0), (1 << 20, 4.0)):
        path = os.path.join(tmp, f'ooo{nloc}.pb.gz')
        with open(path, 'wb') as f:
            f.write(out_of_order(nloc, 1 << 17))
        rc, err, wall, cpu = diff(tmp, path, 15)
        print(f'diff of {nloc} out-of-order locations x 131072 samples: {wall:.2f} s, '
              f'{cpu:.2f} s CPU')
        check(f'diff, {nloc} locations out of order: done in under {most:g} s of CPU',
              rc == 0 and cpu < most, f'rc {rc}, {cpu:.2f} s CPU, {wall:.2f} s: {err[:200]}')
        if rc == 0:
            with open(os.path.join(tmp, 'diff.txt')) as f:
                head = f.readline()
            check(f'diff, {nloc} locations: every sample read',
                  head.startswith('base 131072 samples, new 131072 samples'), head)
    # 255 MiB of empty Location messages (2 bytes each): 260 KB of gzip.
    path = os.path.join(tmp, 'empty.pb.gz')
    with open(path, 'wb') as f:
        f.write(gzip.compress(b'\x22\x00' * (255 << 19), 9))
    rc, err, wall, cpu = diff(tmp, path, 15)
    check('255 MiB of empty Locations: refused naming the 8 MiB cap',
          rc == 2 and 'inflates to more than 8 MiB' in err, f'rc {rc}: {err[:300]}')
    path = os.path.join(tmp, 'empty8.pb.gz')
    with open(path, 'wb') as f:
        f.write(gzip.compress(b'\x22\x00' * ((8 << 19) - 2048), 9))
    rc, err, wall, cpu = diff(tmp, path, 15)
    check('8 MiB of empty Locations: refused naming the 256 MiB budget',
          rc == 2 and 'unpacks to more than 256 MiB' in err, f'rc {rc}: {err[:300]}')
    rss = peak_rss_mb()
    print(f'peak RSS of the diffs (and of every child before them): {rss:.0f} MiB')
    check('no diff of these held more than 1 GiB', rss < 1024, f'{rss:.0f} MiB')


def main():
    r = subprocess.run(['make', '-s', '-C', ROOT, 'build/x86_64/kernel.elf',
                        'build/host/sonde-prof'])
    if r.returncode:
        print('build failed\n0 passed, 1 failed')
        return 1
    tmp = tempfile.mkdtemp()
    procs = []
    try:
        frames = f'{h.sym("burn_spin") + 0x30:x},{h.sym("burn_task"):x}'
        kport, uport = h.free_port(socket.SOCK_DGRAM), h.free_port(socket.SOCK_DGRAM)
        # Kernel 0: forged seq jumps after its 20th datagram, and a flood
        # of foreign stream ids. Kernel 1: a leaf frame no symbol covers.
        procs.append(h.start_fake(tmp, 'fake-hostile', kport, frames,
                                  ('--forge-jump', '20', '--foreign', '50000')))
        procs.append(h.start_fake(tmp, 'fake-unnamed', uport, f'10,{h.sym("burn_task"):x}'))
        sv, err, port = h.start_serve(tmp, 'serve.err', [f'127.0.0.1:{kport}',
                                                         f'127.0.0.1:{uport}'])
        procs.append(sv)
        check('serve starts with two fake kernels', port is not None)
        if port is None:
            return 1
        check_host(port)

        # Past the forged jumps (20 datagrams: a fraction of a second) and
        # past SERVE_SILENT_MS (3 s) after them.
        time.sleep(3.5)
        n0 = samples(port, 0)
        time.sleep(1.5)
        n1 = samples(port, 0)
        k0 = h.kernels(port)[0]
        check('after two forged jumps of 65535: the kernel streams on',
              k0['state'] == 'streaming', str(k0)[:300])
        check('and its samples are still counted (2 CPUs x 100 Hz)', n0 > 0 and n1 - n0 >= 100,
              f'{n0} then {n1}')
        st, body = h.get(port, b'/api/flame?kernel=1')
        tree = json.loads(body)['tree'] if st == 200 else {}
        names = re.findall(r'"name": ?"([^"]*)"', json.dumps(tree))
        check('frames no ELF names are shown as 0x...', '0x10' in names, str(names)[:300])

        check_deadline(port)
        check('serve is still running', sv.poll() is None)
        check_public(tmp, procs, uport)
        sv.terminate()
        check('SIGTERM: serve exits 0', sv.wait(10) == 0)
        err.seek(0)
        said = err.read()
        named = said.count('datagrams of stream 0x')
        print(f'serve stderr after 50,000 foreign datagrams: {len(said)} bytes, '
              f'{named} ids named')
        check('50,000 foreign stream ids: 64 named, stderr under 16 KB',
              named == 64 and len(said) < 16384, f'{named} named, {len(said)} bytes')
        more = re.findall(r'(\d+) more datagrams of streams not started by this collector', said)
        check('and one line at the end counts the rest',
              len(more) == 1 and 0 < int(more[0]) <= 50000 - 64, str(more))
        check_pprof(tmp)
        # Last, on a serve of its own: before, the first of these ended it.
        sv, err, port = h.start_serve(tmp, 'serve-bytes.err', [f'127.0.0.1:{uport}'])
        procs.append(sv)
        check('serve starts for the bytes', port is not None)
        if port is not None:
            check_bytes(port)
            sv.terminate()
            check('after them: SIGTERM, exit 0', sv.wait(10) == 0)
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
    print(f'{h.passed} passed, {h.failed} failed')
    return 0 if h.failed == 0 else 1


if __name__ == '__main__':
    sys.exit(main())
