#!/usr/bin/env python3
"""`sonde-prof serve`'s collector apart from its HTTP side, with no QEMU:
three fake kernels (tests/tools/fake_stream_kernel.py) stream into one
serve (--retry 1s) while a request takes 7 s to answer
(SONDE_SERVE_TEST_STALL_MS, tests only: tools/serve/http.h):

- stall: the kernel that streams on is never left without its
  keep-alives: its stream never ends (the fake logs every END it sends),
  it is streaming at the end with nothing lost, its last datagram recent,
  and the slow request is answered (200) after its 7 s.
- timeout: a kernel that ends its stream on a timeout 2 s in is asked
  again at --retry and streams on (a second stream started, streaming at
  the end).
- restart: a kernel that restarts 2 s in (its stream forgotten) is asked
  again and streams on as well.

usage: tests/tools/check_serve_stall.py   (ends "N passed, N failed")
SONDE_PROF=PATH runs another build of sonde-prof (one under TSan, say)."""
import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import check_serve_http as H  # noqa: E402

STALL_MS = 7000


def status(port):
    st, body = H.get(port, b'/api/status')
    return json.loads(body) if st == 200 else None


def events(path):
    with open(path) as f:
        return [l.split()[0] for l in f if l.split() and l.split()[0] in ('start', 'end', 'restart')]


def main():
    r = subprocess.run(['make', '-s', '-C', H.ROOT, 'build/x86_64/kernel.elf',
                        'build/host/sonde-prof'])
    if r.returncode:
        print('build failed\n0 passed, 1 failed')
        return 1
    frames = '%x,%x' % (H.sym('burn_spin') + 0x30, H.sym('burn_task'))
    procs = []
    with tempfile.TemporaryDirectory(prefix='check_serve_stall.') as tmp:
        try:
            run(tmp, procs, frames)
        finally:
            for p in procs:
                p.kill()
                p.wait()
    print(f'{H.passed} passed, {H.failed} failed')
    return 0 if H.failed == 0 else 1


def run(tmp, procs, frames):
    ports = [H.free_port(socket.SOCK_DGRAM) for _ in range(3)]
    extra = ([], ['--end-timeout-after', '2'], ['--restart-after', '2'])
    names = ('steady', 'timeout', 'restart')
    for name, port, x in zip(names, ports, extra):
        procs.append(H.start_fake(tmp, name, port, frames, x))
    os.environ['SONDE_SERVE_TEST_STALL_MS'] = str(STALL_MS)
    sv, err, hport = H.start_serve(tmp, 'serve.err', ['--retry', '1s'] +
                                   ['127.0.0.1:%d' % p for p in ports])
    del os.environ['SONDE_SERVE_TEST_STALL_MS']
    procs.append(sv)
    H.check('serve started', hport is not None)
    if hport is None:
        return
    up = H.wait_for(lambda: all(k['state'] == 'streaming' for k in status(hport)['kernels']), 5)
    H.check('all three stream', up, json.dumps(status(hport)))
    slow = {}

    def flame():
        t0 = time.monotonic()
        slow['status'], _ = H.raw(hport, b'GET /api/flame HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n'
                                  b'Connection: close\r\n\r\n' % hport, timeout=STALL_MS / 1000 + 10)
        slow['s'] = time.monotonic() - t0
    t = threading.Thread(target=flame)
    t.start()
    t.join(STALL_MS / 1000 + 12)
    H.check('stall: the slow request answered after its 7 s',
            slow.get('status') == 200 and slow.get('s', 0) >= STALL_MS / 1000 - 0.1, repr(slow))
    # Past the stall, the retries (every 1 s, the restarted fake's new
    # stream confirmed at once) have had time.
    ok = H.wait_for(lambda: all(k['state'] == 'streaming' for k in status(hport)['kernels']), 6)
    st = status(hport)
    k = {kk['name']: kk for kk in st['kernels']}
    steady = k['127.0.0.1:%d' % ports[0]]
    ev = [events(os.path.join(tmp, n)) for n in names]
    H.check('stall: the steady kernel streams on', steady['state'] == 'streaming', repr(steady))
    H.check('stall: its stream never ended (one start, no END sent)',
            ev[0] == ['start'], repr(ev[0]))
    H.check('stall: nothing of it lost', steady['lost'] == 0, repr(steady))
    H.check('stall: its last datagram recent',
            steady['last_ms'] is not None and st['now_ms'] - steady['last_ms'] < 1500,
            'now %s, last %s' % (st['now_ms'], steady['last_ms']))
    for i, name in ((1, 'timeout'), (2, 'restart')):
        kk = k['127.0.0.1:%d' % ports[i]]
        first = ['start', 'end'] if name == 'timeout' else ['start', 'restart']
        H.check(f'{name}: asked again, a second stream started',
                ev[i][:3] == first + ['start'], repr(ev[i]))
        H.check(f'{name}: streaming at the end', kk['state'] == 'streaming', repr(kk))
    H.check('all streaming at the end', ok)
    sv.terminate()
    H.check('serve exits on SIGTERM', sv.wait(timeout=15) is not None)
    err.seek(0)
    print(err.read()[-2000:])


if __name__ == '__main__':
    sys.exit(main())
