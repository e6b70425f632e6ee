#!/usr/bin/env python3
"""`sonde-prof serve` with its store (tools/store/), with no QEMU: fake
kernels (tests/tools/fake_stream_kernel.py) stream into real serves.

 1. For SQLite and for PostgreSQL: a serve streams one fake kernel until a
    whole 10 s bucket has closed, answers /api/flame for that bucket, is
    killed with SIGKILL, and a serve started again on the same store
    answers the same range with >= 95% of those samples (all of them:
    the bucket was written when it closed), and streams on. The store
    holds that bucket's rows (read back with the sqlite3 and psql shells).
 2. Two serves stream disjoint fake kernels into one PostgreSQL; each
    lists both kernels in /api/status and answers /api/flame with both
    kernels' samples for a closed bucket, the same on both, and a kernel
    filter of the other serve's kernel gives its samples alone.
 3. `sonde-prof query` reads the killed serve's bucket from each store
    without a serve: the same samples, named by the ELF.
 4. Bad --store and --retain, and a bad --from, are refused with what was
    wrong.

PostgreSQL: $SONDE_PG_URI, or a throwaway cluster of scripts/pg.sh made
here and stopped at the end. Ends "N passed, N failed"."""
import json
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..'))
ELF = os.path.join(ROOT, 'build/x86_64/kernel.elf')
PROF = os.environ.get('SONDE_PROF', os.path.join(ROOT, 'build/host/sonde-prof'))
FAKE = os.path.join(ROOT, 'tests/tools/fake_stream_kernel.py')
BUCKET = 10000
HZ, CPUS = 100, 2

passed = failed = 0
lock = threading.Lock()


def check(name, ok, detail=''):
    global passed, failed
    with lock:
        if ok:
            passed += 1
            print(f'PASS {name}')
        else:
            failed += 1
            print(f'FAIL {name}{": " + detail if detail else ""}')
        sys.stdout.flush()


def free_port(kind=socket.SOCK_DGRAM):
    s = socket.socket(socket.AF_INET, kind)
    s.bind(('127.0.0.1', 0))
    p = s.getsockname()[1]
    s.close()
    return p


def elf_facts():
    bid = re.search(r'Build ID: ([0-9a-f]+)',
                    subprocess.run(['readelf', '-n', ELF], capture_output=True, text=True,
                                   check=True).stdout).group(1)
    syms = {}
    for line in subprocess.run(['nm', ELF], capture_output=True, text=True,
                               check=True).stdout.splitlines():
        f = line.split()
        if len(f) == 3:
            syms[f[2]] = int(f[0], 16)
    return bid, syms


BUILD_ID, SYMS = elf_facts()


def start_fake(tmp, name, frames):
    port = free_port()
    out = open(os.path.join(tmp, name + '.log'), 'w+')
    p = subprocess.Popen([sys.executable, FAKE, '--port', str(port), '--build-id', BUILD_ID,
                          '--frames', frames, '--cpus', str(CPUS), '--hz', str(HZ)],
                         stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.PIPE)
    for _ in range(50):
        out.seek(0)
        if 'ready' in out.read():
            break
        time.sleep(0.1)
    return p, port


def start_serve(tmp, name, store, kernels, extra=()):
    err = open(os.path.join(tmp, name + '.err'), 'w+')
    sv = subprocess.Popen([PROF, 'serve', '-l', '127.0.0.1:0', '-e', ELF, '--store', store,
                           '--retry', '1s', *extra] + ['127.0.0.1:%d' % k for k in kernels],
                          stdout=subprocess.PIPE, stderr=err, text=True)
    line = sv.stdout.readline()
    m = re.search(r'http://127\.0\.0\.1:(\d+)/', line)
    return sv, (int(m.group(1)) if m else None), line


def get(port, path):
    s = socket.create_connection(('127.0.0.1', port), timeout=10)
    s.sendall(b'GET ' + path.encode() + b' HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n'
              b'Connection: close\r\n\r\n' % port)
    reply = b''
    while True:
        b = s.recv(65536)
        if not b:
            break
        reply += b
    s.close()
    head, _, body = reply.partition(b'\r\n\r\n')
    m = re.match(rb'HTTP/1\.[01] (\d{3})', head)
    try:
        return (int(m.group(1)) if m else None), json.loads(body)
    except ValueError:
        return (int(m.group(1)) if m else None), None


def status(port):
    return get(port, '/api/status')[1]


def wait_bucket_closed(port, timeout=40):
    """The start of the first whole bucket after now, once it has closed."""
    st = status(port)
    start = (st['now_ms'] // BUCKET + 1) * BUCKET
    t_end = time.time() + timeout
    while time.time() < t_end:
        st = status(port)
        if st['now_ms'] >= start + BUCKET + 500:
            return start
        time.sleep(0.25)
    return None


def samples(port, frm, to, extra=''):
    code, j = get(port, '/api/flame?from=%d&to=%d%s' % (frm, to, extra))
    return (j or {}).get('samples', -1) if code == 200 else -1, j


def children(j):
    return sorted(c['name'] for c in (j or {}).get('tree', {}).get('children', []))


def kill_and_restart(tmp, label, store, count_rows):
    fake, kp = start_fake(tmp, label + '-fake', '0x%x' % SYMS['burn_spin'])
    sv, port, line = start_serve(tmp, label + '-serve', store, [kp])
    check(f'{label}: the first line names the store', store in line, line.strip())
    try:
        b = wait_bucket_closed(port) if port else None
        check(f'{label}: a bucket closed', b is not None)
        if b is None:
            return
        before, _ = samples(port, b, b + BUCKET)
        want = CPUS * HZ * BUCKET // 1000
        check(f'{label}: the closed bucket answered ({before} of {want} samples)',
              before >= want * 0.9, str(before))
        sv.send_signal(signal.SIGKILL)
        sv.wait()
        rows = count_rows(b)
        check(f'{label}: the store holds the bucket after kill -9 ({rows} samples)',
              rows == before, f'{rows} != {before}')
        sv, port, _ = start_serve(tmp, label + '-again', store, [kp])
        after, _ = samples(port, b, b + BUCKET)
        check(f'{label}: restarted, the range answers {after} of {before} samples (>= 95%)',
              before > 0 and after >= 0.95 * before, f'{after} vs {before}')
        query(tmp, label, store, b, before)
        streaming = False
        for _ in range(60):             # the fake's old stream times out, then a retry
            st = status(port)
            if st['kernels'][0]['state'] == 'streaming':
                streaming = True
                break
            time.sleep(0.25)
        check(f'{label}: restarted, it streams on', streaming,
              str(status(port)['kernels'][0]))
    finally:
        sv.kill()
        sv.wait()
        fake.kill()
        fake.wait()


def query(tmp, label, store, b, before):
    """sonde-prof query reads the same bucket without a serve, as folded
    stacks and as text named by the ELF."""
    out = os.path.join(tmp, label + '.folded')
    r = subprocess.run([PROF, 'query', '--store', store, '--from', str(b), '--to',
                        str(b + BUCKET), '-e', ELF, '-o', out], capture_output=True, text=True,
                       timeout=30)
    total = 0
    if r.returncode == 0:
        with open(out) as f:
            total = sum(int(l.rsplit(' ', 1)[1]) for l in f if l.strip())
    check(f'{label}: query reads the bucket ({total} of {before} samples, folded)',
          r.returncode == 0 and total == before, r.stderr.strip()[:300])
    txt = os.path.join(tmp, label + '.txt')
    r = subprocess.run([PROF, 'query', '--store', store, '--from', 'now-1h', '-e', ELF, '-o',
                        txt], capture_output=True, text=True, timeout=30)
    named = r.returncode == 0 and 'burn_spin' in open(txt).read()
    check(f'{label}: query --from now-1h names the frames (.txt)', named, r.stderr[:300])
    r = subprocess.run([PROF, 'query', '--store', store, '--from', 'yesterday', '-e', ELF,
                        '-o', txt], capture_output=True, text=True, timeout=30)
    check(f'{label}: query --from yesterday refused, saying what a time is',
          r.returncode == 2 and 'now-D' in r.stderr, r.stderr[:300])


def two_serves(tmp, uri):
    fa, pa = start_fake(tmp, 'two-fake-a', '0x%x' % SYMS['burn_spin'])
    fb, pb = start_fake(tmp, 'two-fake-b', '0x%x' % SYMS['burn_spin'])
    s1, p1, _ = start_serve(tmp, 'two-serve-1', uri, [pa])
    s2, p2, _ = start_serve(tmp, 'two-serve-2', uri, [pb])
    try:
        b = wait_bucket_closed(p1)
        # The second serve's bucket closes at the same boundary; its
        # writes and both serves' reading of the kernels list follow.
        time.sleep(1.0)
        names = {'127.0.0.1:%d' % pa, '127.0.0.1:%d' % pb}
        answers = []
        for label, port in (('serve 1', p1), ('serve 2', p2)):
            st = status(port)
            listed = {k['name'] for k in st['kernels']}
            check(f'two serves: {label} lists both kernels', names <= listed, str(listed))
            n, j = samples(port, b, b + BUCKET)
            got = set(children(j))
            check(f'two serves: {label} answers /api/flame with both kernels ({n} samples)',
                  names <= got and n >= 2 * CPUS * HZ * BUCKET // 1000 * 0.9,
                  f'{n} samples, children {sorted(got)}')
            answers.append(n)
        check('two serves: both answer the same samples', answers[0] == answers[1],
              str(answers))
        st = status(p1)
        other = [k['index'] for k in st['kernels'] if k['name'] == '127.0.0.1:%d' % pb]
        if other:
            n, j = samples(p1, b, b + BUCKET, '&kernel=%d' % other[0])
            check(f'two serves: serve 1 filters the other\'s kernel ({n} samples)',
                  children(j) == ['127.0.0.1:%d' % pb] and n > 0, str(children(j)))
        else:
            check("two serves: serve 1 filters the other's kernel", False, 'not listed')
    finally:
        for p in (s1, s2, fa, fb):
            p.kill()
            p.wait()


def bad_options(tmp):
    for args, says in ((['--store', '/nonexistent/dir/x.db'], '/nonexistent/dir/x.db'),
                       (['--store', 'postgresql://nobody@127.0.0.1:1/none'], 'postgresql'),
                       (['--retain', '10m'], '1h to 3650d'),
                       (['--retain', 'week'], 'out of range')):
        r = subprocess.run([PROF, 'serve', '-l', '127.0.0.1:0', '-e', ELF, *args,
                            '127.0.0.1:9'], capture_output=True, text=True, timeout=20)
        check(f'serve {" ".join(args)}: refused, saying {says!r}',
              r.returncode == 2 and says in r.stderr, r.stderr.strip()[:200])


def pg_cluster():
    uri = os.environ.get('SONDE_PG_URI')
    if uri:
        return uri, None
    out = subprocess.run(['bash', os.path.join(ROOT, 'scripts/pg.sh'), 'start'],
                         capture_output=True, text=True, timeout=60)
    facts = dict(l.split('=', 1) for l in out.stdout.splitlines() if '=' in l)
    if 'PGURI' not in facts:
        check('a PostgreSQL cluster starts (scripts/pg.sh)', False, out.stderr[-300:])
        return None, None
    return facts['PGURI'], facts['PGDIR']


def main():
    uri, pgdir = pg_cluster()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            db = os.path.join(tmp, 'store.db')

            def lite_rows(b):
                r = subprocess.run(['sqlite3', db, 'SELECT coalesce(sum(count), 0) FROM counts '
                                    'WHERE bucket_ms = %d AND kind = 0' % b],
                                   capture_output=True, text=True)
                return int(r.stdout.strip() or -1)

            def pg_rows(b):
                r = subprocess.run(['psql', '-At', uri, '-c', 'SELECT coalesce(sum(count), 0) '
                                    'FROM counts WHERE bucket_ms = %d AND kind = 0' % b],
                                   capture_output=True, text=True)
                return int(r.stdout.strip() or -1)

            runs = [threading.Thread(target=kill_and_restart,
                                     args=(tmp, 'sqlite', db, lite_rows))]
            if uri:
                # One database per scenario: the two-serve one's kernels
                # are not the restarted one's.
                subprocess.run(['psql', '-q', uri, '-c', 'CREATE DATABASE two'],
                               capture_output=True)
                runs.append(threading.Thread(target=kill_and_restart,
                                             args=(tmp, 'postgresql', uri, pg_rows)))
                runs.append(threading.Thread(target=two_serves,
                                             args=(tmp, uri.rsplit('/', 1)[0] + '/two')))
            for t in runs:
                t.start()
            bad_options(tmp)
            for t in runs:
                t.join()
    finally:
        if pgdir:
            subprocess.run(['bash', os.path.join(ROOT, 'scripts/pg.sh'), 'stop', pgdir])
    print(f'{passed} passed, {failed} failed')
    return 0 if failed == 0 else 1


if __name__ == '__main__':
    sys.exit(main())
