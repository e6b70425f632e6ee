#!/usr/bin/env python3
"""`sonde-prof serve` against malformed and hostile HTTP requests, with no
QEMU: a fake kernel (tests/tools/fake_stream_kernel.py) streams the real
x86 kernel's burn chain, serve listens on 127.0.0.1, and every request
below goes over a raw socket so that nothing tidies it first: bad paths,
a huge request line, huge and many headers, out-of-range and malformed
query values, ranges out of bounds, other methods, garbage instead of
HTTP. Each must be answered with a 4xx (and a JSON error naming what was
wrong where serve, not libmicrohttpd, answers; bytes that are no request
at all may just get the connection closed), and serve must keep
serving: after each, /api/status answers 200 and, at the end, the
kernel's samples are still counted and the process is alive.
Also: -l on a non-loopback address without --public is refused; and
kernels whose streams do not start (nothing on the port, busy with
another collector's stream) leave serve running with the others, shown
failed with why, and one that comes up streams after a retry.
With -k, a keyed fake (authenticated shell, tagged stream) streams
through serve and is marked authenticated; the open one is marked open.

usage: tests/tools/check_serve_http.py   (ends "N passed, N failed")
SONDE_PROF=PATH runs another build of sonde-prof (one under ASan, say)."""
import json
import os
import re
import socket
import struct
import subprocess
import sys
import tempfile
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..'))
ELF = os.path.join(ROOT, 'build/x86_64/kernel.elf')
PROF = os.environ.get('SONDE_PROF', os.path.join(ROOT, 'build/host/sonde-prof'))
FAKE = os.path.join(ROOT, 'tests/tools/fake_stream_kernel.py')

passed = failed = 0


def check(name, ok, detail=''):
    global passed, failed
    if ok:
        passed += 1
        print(f'PASS {name}')
    else:
        failed += 1
        print(f'FAIL {name}{": " + detail if detail else ""}')
    sys.stdout.flush()


def free_port(kind):
    s = socket.socket(socket.AF_INET, kind)
    s.bind(('127.0.0.1', 0))
    p = s.getsockname()[1]
    s.close()
    return p


def sym(name):
    out = subprocess.run(['nm', ELF], capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        f = line.split()
        if len(f) == 3 and f[2] == name:
            return int(f[0], 16)
    raise SystemExit(f'{name} not in {ELF}')


def build_id():
    out = subprocess.run(['readelf', '-n', ELF], capture_output=True, text=True,
                         check=True).stdout
    return re.search(r'Build ID: ([0-9a-f]+)', out).group(1)


def raw(port, data, timeout=5.0):
    """Sends data as it is; returns (status or None, body) of the reply."""
    s = socket.create_connection(('127.0.0.1', port), timeout=timeout)
    reply = b''
    try:
        s.sendall(data)
        while True:
            b = s.recv(65536)
            if not b:
                break
            reply += b
            head, sep, body = reply.partition(b'\r\n\r\n')
            m = re.search(rb'content-length: *(\d+)', head, re.I)
            if sep and m and len(body) >= int(m.group(1)):
                break
    except (ConnectionResetError, BrokenPipeError, socket.timeout):
        pass
    finally:
        s.close()
    m = re.match(rb'HTTP/1\.[01] (\d{3})', reply)
    return (int(m.group(1)) if m else None), reply.partition(b'\r\n\r\n')[2]


def get(port, target, extra=b''):
    return raw(port, b'GET ' + target + b' HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n' % port +
               b'Connection: close\r\n' + extra + b'\r\n')


def alive(port):
    st, body = get(port, b'/api/status')
    try:
        return st == 200 and 'kernels' in json.loads(body)
    except ValueError:
        return False


def error_says(body, words):
    try:
        e = json.loads(body).get('error', '')
    except ValueError:
        return False
    return words in e


def start_fake(tmp, name, port, frames, extra=()):
    out = open(os.path.join(tmp, name), 'w+')
    p = subprocess.Popen([sys.executable, FAKE, '--port', str(port), '--build-id', build_id(),
                          '--frames', frames, '--cpus', '2', '--hz', '100', *extra],
                         stdout=out, stderr=subprocess.STDOUT)
    for _ in range(50):
        out.seek(0)
        if 'ready' in out.read():
            break
        time.sleep(0.1)
    return p


def start_serve(tmp, name, args):
    err = open(os.path.join(tmp, name), 'w+')
    # A store of its own (not the default one in the working directory,
    # which every other test's serve would share).
    store = ['--store', os.path.join(tmp, name + '.db')]
    sv = subprocess.Popen([PROF, 'serve', '-l', '127.0.0.1:0', '-e', ELF] + store + args,
                          stdout=subprocess.PIPE, stderr=err, text=True)
    m = re.search(r'http://127\.0\.0\.1:(\d+)/', sv.stdout.readline())
    return sv, err, int(m.group(1)) if m else None


def kernels(port):
    st, body = get(port, b'/api/status')
    return json.loads(body)['kernels'] if st == 200 else []


def wait_for(cond, seconds):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if cond():
            return True
        time.sleep(0.1)
    return cond()


def make_busy(port):
    """Starts a stream on the fake at port for another collector (a socket
    that never keeps it alive): for 5 s it answers others "profile: busy"."""
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    cmd = b'profile stream 9 0 all'
    s.sendto(struct.pack('>IIHHHH', 0x4E4F5348, 1, 0, 0, len(cmd), 0) + cmd,
             ('127.0.0.1', port))
    s.settimeout(2)
    reply = s.recv(2048)[16:]
    s.close()
    return reply


def check_retry(tmp, procs, frames):
    """Kernels whose streams do not start: serve goes on with the others,
    shows each failed with why, and streams it once a retry works."""
    ok_port, down_port, busy_port = (free_port(socket.SOCK_DGRAM) for _ in range(3))
    procs.append(start_fake(tmp, 'fake-ok', ok_port, frames))
    procs.append(start_fake(tmp, 'fake-busy', busy_port, frames))
    check('a fake kernel made busy by another collector',
          make_busy(busy_port).startswith(b'stream v=1 op=start result=ok state=streaming '))
    sv, err, port = start_serve(tmp, 'serve-retry.err', [
        '--retry', '1s', f'127.0.0.1:{ok_port}', f'127.0.0.1:{down_port}',
        f'127.0.0.1:{busy_port}'])
    procs.append(sv)
    check('serve starts though two of its kernels cannot stream', port is not None)
    if port is None:
        return
    ks = kernels(port)
    states = [k['state'] for k in ks]
    check('the kernel that streams streams; the others are failed',
          states == ['streaming', 'failed', 'failed'], str(states))
    check('the kernel with nothing on its port: its note says so, and the retry',
          'nothing listens' in ks[1]['note'] and 'asked again every 1 s' in ks[1]['note'],
          ks[1]['note'])
    check('the busy kernel: its note quotes its answer',
          'it said: profile: busy' in ks[2]['note'], ks[2]['note'])
    procs.append(start_fake(tmp, 'fake-late', down_port, frames))
    check('the kernel that came up is streaming after a retry',
          wait_for(lambda: kernels(port)[1]['state'] == 'streaming', 3),
          str(kernels(port)[1]))

    def samples(k):
        st, body = get(port, b'/api/flame?kernel=%d' % k)
        return json.loads(body)['samples'] if st == 200 else -1
    check('its samples are counted', wait_for(lambda: samples(1) > 0, 2), str(samples(1)))
    k0 = kernels(port)[0]
    check('the first kernel streamed on, nothing lost',
          k0['state'] == 'streaming' and k0['lost'] == 0 and samples(0) > 0, str(k0))
    sv.terminate()
    check('SIGTERM: serve exits 0', sv.wait(10) == 0)
    err.seek(0)
    said = err.read()
    check('stderr says why once, and when it streams',
          said.count(f'kernel 127.0.0.1:{down_port}: its stream did not start') == 1 and
          f'kernel 127.0.0.1:{down_port} streams now' in said, said[:600])


def check_keyed(tmp, procs, frames):
    """serve -k: a keyed kernel (the fake speaking the authenticated
    shell and tagging its stream) streams through it, marked authenticated."""
    key = os.path.join(tmp, 'ushkey')
    with open(key, 'w') as f:
        f.write(os.urandom(32).hex() + '\n')
    kport = free_port(socket.SOCK_DGRAM)
    procs.append(start_fake(tmp, 'fake-keyed', kport, frames, ('--key', key)))
    sv, err, port = start_serve(tmp, 'serve-keyed.err', ['-k', key, f'127.0.0.1:{kport}'])
    procs.append(sv)
    check('serve -k starts with a keyed kernel', port is not None)
    if port is None:
        return
    k = kernels(port)[0]
    check('the keyed kernel streams, marked authenticated',
          k['state'] == 'streaming' and k['authenticated'] is True, str(k))

    def samples():
        st, body = get(port, b'/api/flame')
        return json.loads(body)['samples'] if st == 200 else -1
    check('its tagged stream is counted', wait_for(lambda: samples() > 0, 2), str(samples()))
    sv.terminate()
    check('serve -k: SIGTERM, exit 0', sv.wait(10) == 0)
    err.seek(0)
    said = err.read()
    check('serve -k said nothing on stderr (no refused datagram)', said == '', said[:300])


def check_kind_off(tmp, procs, frames):
    """serve --kind off: every kernel is asked for `profile off stream`;
    its intervals are the offcpu kind, the reason the leaf; a kind serve
    does not know is refused by name."""
    r = subprocess.run([PROF, 'serve', '--kind', 'bogus', '-e', ELF, '127.0.0.1:1'],
                       capture_output=True, text=True, timeout=10)
    check('serve --kind bogus: exit 2, the kinds named',
          r.returncode == 2 and 'cpu, off, wall, allocs, lock or trace' in r.stderr, r.stderr)
    kport = free_port(socket.SOCK_DGRAM)
    procs.append(start_fake(tmp, 'fake-off', kport, frames))
    sv, err, port = start_serve(tmp, 'serve-off.err', ['--kind', 'off', f'127.0.0.1:{kport}'])
    procs.append(sv)
    check('serve --kind off starts', port is not None)
    if port is None:
        return

    def flame():
        st, body = get(port, b'/api/flame?kind=offcpu')
        return json.loads(body) if st == 200 else {}
    check('its intervals are the offcpu kind',
          wait_for(lambda: flame().get('samples', 0) > 0, 3), str(flame())[:300])
    st, body = get(port, b'/api/status')
    kinds = json.loads(body)['kinds'] if st == 200 else []
    check('status lists the offcpu kind alone (the page shows the first)', kinds == ['offcpu'],
          str(kinds))
    check('the reason is a frame', '[waitq burn-q]' in json.dumps(flame()))
    st, body = get(port, b'/api/flame')
    check('no CPU samples were asked for', st == 200 and json.loads(body)['samples'] == 0,
          body[:200])
    sv.terminate()
    check('serve --kind off: SIGTERM, exit 0', sv.wait(10) == 0)


def check_kind_allocs(tmp, procs, frames):
    """serve --kind allocs: every kernel is asked for `profile allocs
    stream`; its heap records are the heap kind, the one listed, shown as
    allocated bytes with the objects they stand for (weight / size)."""
    kport = free_port(socket.SOCK_DGRAM)
    procs.append(start_fake(tmp, 'fake-allocs', kport, frames))
    sv, err, port = start_serve(tmp, 'serve-allocs.err', ['--kind', 'allocs',
                                                          f'127.0.0.1:{kport}'])
    procs.append(sv)
    check('serve --kind allocs starts', port is not None)
    if port is None:
        return

    def flame():
        st, body = get(port, b'/api/flame?kind=heap')
        return json.loads(body) if st == 200 else {}
    check('its records are the heap kind',
          wait_for(lambda: flame().get('samples', 0) > 0, 3), str(flame())[:300])
    st, body = get(port, b'/api/status')
    kinds = json.loads(body)['kinds'] if st == 200 else []
    check('status lists the heap kind alone', kinds == ['heap'], str(kinds))
    f = flame()
    n = f.get('samples', 0)
    check('allocated bytes: 4096 a record, the 16 objects of 256 bytes it stands for',
          f.get('unit') == 'bytes' and f.get('heap_view') == 'allocated' and n > 0 and
          f.get('weight') == 4096 * n and f.get('objects') == 16 * n, str(f)[:300])
    sv.terminate()
    check('serve --kind allocs: SIGTERM, exit 0', sv.wait(10) == 0)


def check_kind_lock(tmp, procs, frames):
    """serve --kind lock: every kernel is asked for `profile lock stream`;
    its records are the lock kind, the one listed, the lock the root
    frame, and a chain counts the waits its releases ended (Go's
    contentions): 2 waits of 1 ms each a record in the fake."""
    kport = free_port(socket.SOCK_DGRAM)
    procs.append(start_fake(tmp, 'fake-lock', kport, frames))
    sv, err, port = start_serve(tmp, 'serve-lock.err', ['--kind', 'lock', f'127.0.0.1:{kport}'])
    procs.append(sv)
    check('serve --kind lock starts', port is not None)
    if port is None:
        return

    def flame():
        st, body = get(port, b'/api/flame?kind=lock')
        return json.loads(body) if st == 200 else {}
    check('its records are the lock kind',
          wait_for(lambda: flame().get('samples', 0) > 0, 3), str(flame())[:300])
    st, body = get(port, b'/api/status')
    kinds = json.loads(body)['kinds'] if st == 200 else []
    check('status lists the lock kind alone', kinds == ['lock'], str(kinds))
    f = flame()
    n = f.get('samples', 0)
    check('the lock is a frame', '[mutex burn-m]' in json.dumps(f), json.dumps(f)[:300])
    check('a count is a wait: 1 ms of delay each',
          n > 0 and n % 2 == 0 and f.get('weight') == 1000000 * n, str(f)[:300])
    sv.terminate()
    check('serve --kind lock: SIGTERM, exit 0', sv.wait(10) == 0)


def check_kind_trace(tmp, procs, frames):
    """serve --kind trace: every kernel is asked for `trace stream`; its
    last minute is kept, and /api/trace gives one kernel's range as Chrome
    trace-event JSON: burn's runs on its CPUs' lanes, the wakes as flows,
    the samples named. Bad requests say what was wrong."""
    kport = free_port(socket.SOCK_DGRAM)
    procs.append(start_fake(tmp, 'fake-trace', kport, frames))
    sv, err, port = start_serve(tmp, 'serve-trace.err', ['--kind', 'trace', f'127.0.0.1:{kport}'])
    procs.append(sv)
    check('serve --kind trace starts', port is not None)
    if port is None:
        return
    name = f'127.0.0.1:{kport}'.encode()

    def trace():
        st, body = get(port, b'/api/trace?kernel=' + name)
        return json.loads(body) if st == 200 else {}

    def runs(t):
        return [e for e in t.get('traceEvents', []) if e.get('ph') == 'X' and e.get('cat') == 'run']
    check('its trace comes: burn runs on a CPU lane', wait_for(lambda: any(
        e['name'] == 'burn' for e in runs(trace())), 4), str(trace())[:300])
    t = trace()
    evs = t.get('traceEvents', [])
    lanes = {e['args']['name'] for e in evs if e.get('ph') == 'M' and e.get('name') == 'process_name'}
    check('a lane per CPU', {'CPU 0', 'CPU 1'} <= lanes, str(lanes))
    check('burn left for sleep', any(e['args'].get('left') == 'sleep' for e in runs(t)
                                     if e['name'] == 'burn'), str(runs(t)[:3]))
    flows = [e for e in evs if e.get('cat') == 'wake']
    check('the wakes are flows that pair',
          flows and sorted(e['id'] for e in flows if e['ph'] == 's') ==
          sorted(e['id'] for e in flows if e['ph'] == 'f'), str(flows[:4]))
    frames = {f['name'] for f in t.get('stackFrames', {}).values()}
    check('the samples are named from the ELF', 'burn_spin' in frames, str(sorted(frames))[:300])
    st, body = get(port, b'/api/status')
    kinds = json.loads(body)['kinds'] if st == 200 else []
    check('status lists the trace kind alone', kinds == ['trace'], str(kinds))
    for path, code, said in ((b'/api/trace', 400, b'needs kernel=NAME'),
                             (b'/api/trace?kernel=nobody:1', 404, b'no such kernel'),
                             (b'/api/trace?kernel=' + name + b'&from=x', 400, b'from=x out of range'),
                             (b'/api/trace?kernel=' + name + b'&from=9&to=3', 400, b'is after'),
                             (b'/api/trace?colour=red', 400, b'unknown argument colour')):
        st, body = get(port, path)
        check('GET %s: %d, says why' % (path.decode(), code), st == code and said in body,
              '%d %r' % (st, body[:200]))
    sv.terminate()
    check('serve --kind trace: SIGTERM, exit 0', sv.wait(10) == 0)


def main():
    r = subprocess.run(['make', '-s', '-C', ROOT, 'build/x86_64/kernel.elf',
                        'build/host/sonde-prof'])
    if r.returncode:
        print('build failed\n0 passed, 1 failed')
        return 1
    tmp = tempfile.mkdtemp()
    procs = []
    try:
        kport = free_port(socket.SOCK_DGRAM)
        frames = f'{sym("burn_spin") + 0x30:x},{sym("burn_task"):x}'
        fake_out = open(os.path.join(tmp, 'fake'), 'w+')
        procs.append(subprocess.Popen([sys.executable, FAKE, '--port', str(kport),
                                       '--build-id', build_id(), '--frames', frames,
                                       '--cpus', '2', '--hz', '100'],
                                      stdout=fake_out, stderr=subprocess.STDOUT))
        for _ in range(50):
            fake_out.seek(0)
            if 'ready' in fake_out.read():
                break
            time.sleep(0.1)

        # Refused before anything starts: a public address without --public.
        r = subprocess.run([PROF, 'serve', '-l', '0.0.0.0:0', '-e', ELF, f'127.0.0.1:{kport}'],
                           capture_output=True, text=True, timeout=10)
        check('-l 0.0.0.0 without --public: exit 2, says why',
              r.returncode == 2 and 'not a loopback address' in r.stderr and '--public' in r.stderr,
              f'rc {r.returncode}: {r.stderr.strip()}')
        r = subprocess.run([PROF, 'serve', '-l', '127.0.0.1:70000', '-e', ELF, '127.0.0.1'],
                           capture_output=True, text=True, timeout=10)
        check('-l port 70000: exit 2, names the range',
              r.returncode == 2 and '(0-65535' in r.stderr, r.stderr.strip())

        r = subprocess.run([PROF, 'serve', '--help'], capture_output=True, text=True, timeout=10)
        check('serve --help: usage on stdout, exit 0',
              r.returncode == 0 and r.stdout.startswith('usage: sonde-prof serve') and
              '--public' in r.stdout and r.stderr == '', f'rc {r.returncode}')
        for args, says in ((['-e', ELF], 'no kernel to watch'),
                           (['127.0.0.1'], 'no kernel ELF'),
                           (['--max-stacks', '5', '-e', ELF, '127.0.0.1'], '16-1048576'),
                           (['--id', '3', '-e', ELF, '127.0.0.1'], '--id needs -k'),
                           (['--retry', '500ms', '-e', ELF, '127.0.0.1'],
                            '--retry 500ms out of range (1000 ms to 3600 s'),
                           (['-l', 'nowhere', '-e', ELF, '127.0.0.1'], 'want ADDR:PORT')):
            r = subprocess.run([PROF, 'serve'] + args, capture_output=True, text=True, timeout=10)
            check(f'serve {" ".join(a for a in args if a != ELF)}: exit 2, says {says!r}',
                  r.returncode == 2 and says in r.stderr, f'rc {r.returncode}: {r.stderr.strip()}')

        check_retry(tmp, procs, frames)
        check_keyed(tmp, procs, frames)
        check_kind_off(tmp, procs, frames)
        check_kind_allocs(tmp, procs, frames)
        check_kind_lock(tmp, procs, frames)
        check_kind_trace(tmp, procs, frames)

        serve_err = open(os.path.join(tmp, 'serve.err'), 'w+')
        sv = subprocess.Popen([PROF, 'serve', '-l', '127.0.0.1:0', '-e', ELF,
                               '--store', os.path.join(tmp, 'serve.db'),
                               f'127.0.0.1:{kport}'], stdout=subprocess.PIPE,
                              stderr=serve_err, text=True)
        procs.append(sv)
        line = sv.stdout.readline()
        m = re.search(r'http://127\.0\.0\.1:(\d+)/', line)
        check('serve says where it listens', m is not None, line.strip())
        if not m:
            return 1
        port = int(m.group(1))
        check('GET /api/status: 200', alive(port))
        k = kernels(port)[0]
        check('the open kernel is marked open (not authenticated)',
              k['authenticated'] is False and k['state'] == 'streaming', str(k))
        time.sleep(0.5)             # serve's clock past the ranges below

        cases = [
            ('unknown path', get(port, b'/nope'), 404, 'no such page'),
            ('path with ..', get(port, b'/../../etc/passwd'), 404, None),
            ('encoded NUL in the path', get(port, b'/api/status%00x'), 404, None),
            ('a 40 KB path', get(port, b'/' + b'a' * 40000), (414, 431, 413, 400), None),
            ('a 20 KB path', get(port, b'/' + b'a' * 20000), (404,), 'no such page'),
            ('a 100 KB header', get(port, b'/api/status', b'X-Big: ' + b'b' * 100000 + b'\r\n'),
             (431, 413, 400), None),
            ('2000 headers', get(port, b'/api/status',
                                 b''.join(b'X-%d: y\r\n' % i for i in range(2000))),
             (431, 413, 400), None),
            ('from out of bounds', get(port, b'/api/flame?from=99999999999999'), 400,
             'out of range'),
            ('to before from', get(port, b'/api/flame?from=50&to=10'), 400, 'an empty range'),
            ('negative from', get(port, b'/api/flame?from=-1'), 400, 'out of range'),
            ('from not a number', get(port, b'/api/flame?from=1e3'), 400, 'out of range'),
            ('a 30-digit from', get(port, b'/api/flame?from=' + b'9' * 30), 400, 'out of range'),
            ('kernel out of range', get(port, b'/api/flame?kernel=1'), 400,
             "kernel=1 out of range (a kernel's index 0-0, or all)"),
            ('pid not a number', get(port, b'/api/flame?pid=seven'), 400, 'pid 0-2147483647'),
            ('cpu -1', get(port, b'/api/flame?cpu=-1'), 400, 'cpu 0-4095'),
            ('kind empty', get(port, b'/api/flame?kind='), 400, 'known: cpu, offcpu, heap'),
            ('an unknown argument', get(port, b'/api/flame?x=%ZZ'), 400, "unknown argument 'x'"),
            ('diff without a base', get(port, b'/api/diff?from=0'), 400, 'base_from'),
            ('diff base out of bounds', get(port, b'/api/diff?base_from=0&base_to=99999999999999'),
             400, 'base_to=99999999999999 out of range'),
            ('40 arguments', get(port, b'/api/flame?' + b'&'.join(b'a%d=1' % i for i in range(40))),
             400, 'too many arguments'),
            ('download with a bad range', get(port, b'/download/selection.pb.gz?to=0'), 400,
             'an empty range'),
            ('POST', raw(port, b'POST /api/status HTTP/1.1\r\nHost: localhost:%d\r\n' % port +
                         b'Content-Length: 5\r\nConnection: close\r\n\r\nhello'), 405,
             'only GET and HEAD'),
            ('DELETE', raw(port, b'DELETE / HTTP/1.1\r\nHost: localhost:%d\r\n' % port +
                           b'Connection: close\r\n\r\n'), 405, None),
            ('a request line of two words', raw(port, b'HELLO WORLD\r\n\r\n'), 400, None),
            # Bytes that are no request line at all: libmicrohttpd closes
            # the connection without a word (None), which is fine.
            ('binary garbage', raw(port, bytes(range(1, 256)) * 4 + b'\r\n\r\n'), (400, None),
             None),
            ('HTTP/1.1 without Host', raw(port, b'GET /api/status HTTP/1.1\r\n\r\n'), 400, None),
            ('unknown HTTP version', raw(port, b'GET / HTTP/9.9\r\nHost: x\r\n\r\n'), (505, 400),
             None),
        ]
        for name, (st, body), want, says in cases:
            wants = want if isinstance(want, tuple) else (want,)
            ok = st in wants and (says is None or error_says(body, says))
            check(f'{name}: {"/".join(str(w) for w in wants)}', ok,
                  f'got {st}: {body[:200]!r}')
            check(f'{name}: serve still answers', alive(port))

        time.sleep(1.2)
        st, body = get(port, b'/api/flame')
        try:
            n = json.loads(body)['samples']
        except (ValueError, KeyError):
            n = -1
        check('after all that, the kernel\'s samples are still counted', st == 200 and n > 0,
              f'{st}, {n} samples')
        st, body = get(port, b'/download/selection.folded')
        check('the folded download names burn_spin', st == 200 and b'burn_spin' in body,
              body[:200])
        st, body = get(port, b'/download/selection.pb.gz')
        check('the pprof download is gzip', st == 200 and body[:2] == b'\x1f\x8b', body[:20])
        st, body = get(port, b'/api/diff?base_from=0&base_to=500')
        check('a diff answers 200 with a tree', st == 200 and b'"delta"' in body, body[:200])
        st, body = get(port, b'/api/timeline')
        check('the timeline answers 200', st == 200 and b'"rate"' in body, body[:200])
        st, body = get(port, b'/api/trace?kernel=127.0.0.1:1')
        check('a CPU serve keeps no trace: 404, says how to keep one',
              st == 404 and b'--kind trace' in body, body[:200])
        st, body = get(port, b'/')
        check('the page is served whole, the library inlined',
              st == 200 and b'.d3-flame-graph' in body and b'<script>' in body and
              b'<!--' not in body and b' src=' not in body, body[:200])
        check('serve is still running', sv.poll() is None)
        sv.terminate()
        try:
            rc = sv.wait(10)
        except subprocess.TimeoutExpired:
            rc = None
        check('SIGTERM: serve exits 0', rc == 0, f'rc {rc}')
        serve_err.seek(0)
        err = serve_err.read()
        check('serve said nothing on stderr', err == '', err[:300])
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
    print(f'{passed} passed, {failed} failed')
    return 0 if failed == 0 else 1


if __name__ == '__main__':
    sys.exit(main())
