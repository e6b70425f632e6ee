#!/usr/bin/env python3
"""Writes the device-tree fuzzer's seeds (tests/fuzz/corpus/fdt/):
small-virt, a tree built here with one node of each kind the arm64 kernel
reads (memory, chosen, psci, cpus, GICv3, PL011, timer, PMU), and
qemu-virt, QEMU virt's own blob (tests/unit/data/virt.dtb) with its 1 MiB
padding cut off. Small seeds keep the fuzzer fast."""
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, 'corpus', 'fdt')


class Tree:
    def __init__(self):
        self.st, self.strings, self.soff = b'', b'', {}

    @staticmethod
    def pad(b):
        return b + b'\0' * (-len(b) % 4)

    def s(self, name):
        if name not in self.soff:
            self.soff[name] = len(self.strings)
            self.strings += name.encode() + b'\0'
        return self.soff[name]

    def begin(self, name):
        self.st += struct.pack('>I', 1) + self.pad(name.encode() + b'\0')

    def end(self):
        self.st += struct.pack('>I', 2)

    def prop(self, name, val):
        self.st += struct.pack('>III', 3, len(val), self.s(name)) + self.pad(val)

    def blob(self):
        st = self.st + struct.pack('>I', 9)
        rsv = b'\0' * 16
        off_st = 40 + len(rsv)
        off_str = off_st + len(st)
        total = off_str + len(self.strings)
        hdr = struct.pack('>10I', 0xd00dfeed, total, off_st, off_str, 40, 17, 16, 0,
                          len(self.strings), len(st))
        return hdr + rsv + st + self.strings


def cells(*v):
    return struct.pack('>%dI' % len(v), *v)


def small_virt():
    t = Tree()
    t.begin('')
    t.prop('#address-cells', cells(2))
    t.prop('#size-cells', cells(2))
    t.begin('memory@40000000')
    t.prop('device_type', b'memory\0')
    t.prop('reg', cells(0, 0x40000000, 0, 0x8000000))
    t.end()
    t.begin('chosen')
    t.prop('bootargs', b'udpshell=9000\0')
    t.end()
    t.begin('psci')
    t.prop('compatible', b'arm,psci-1.0\0')
    t.prop('method', b'hvc\0')
    t.end()
    t.begin('cpus')
    t.prop('#address-cells', cells(1))
    t.prop('#size-cells', cells(0))
    t.begin('cpu@0')
    t.prop('device_type', b'cpu\0')
    t.prop('reg', cells(0))
    t.end()
    t.end()
    t.begin('intc@8000000')
    t.prop('compatible', b'arm,gic-v3\0')
    t.prop('reg', cells(0, 0x8000000, 0, 0x10000, 0, 0x80a0000, 0, 0xf60000))
    t.end()
    t.begin('pl011@9000000')
    t.prop('compatible', b'arm,pl011\0arm,primecell\0')
    t.prop('reg', cells(0, 0x9000000, 0, 0x1000))
    t.prop('interrupts', cells(0, 1, 4))
    t.end()
    t.begin('timer')
    t.prop('compatible', b'arm,armv8-timer\0')
    t.prop('interrupts', cells(1, 13, 4, 1, 14, 4, 1, 11, 4, 1, 10, 4))
    t.end()
    t.begin('pmu')
    t.prop('compatible', b'arm,armv8-pmuv3\0')
    t.prop('interrupts', cells(1, 7, 4))
    t.end()
    t.end()
    return t.blob()


def qemu_virt():
    b = open(os.path.join(HERE, '..', 'unit', 'data', 'virt.dtb'), 'rb').read()
    h = list(struct.unpack('>10I', b[:40]))
    h[1] = max(h[2] + h[9], h[3] + h[8])     # totalsize: the blocks' end
    return struct.pack('>10I', *h) + b[40:h[1]]


if __name__ == '__main__':
    os.makedirs(OUT, exist_ok=True)
    for name, blob in (('small-virt', small_virt()), ('qemu-virt', qemu_virt())):
        with open(os.path.join(OUT, name), 'wb') as f:
            f.write(blob)
