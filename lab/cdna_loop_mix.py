#!/usr/bin/env python3
"""Instruction mix of a CDNA kernel's main loop, from its code object: the backward branch whose range holds the most
MFMAs (as kernels/cdna/isa_report.py finds it), its instructions counted by class. docs/perf/cdna-attention.md
predicts throughput from these counts.

usage: lab/cdna_loop_mix.py --arch gfx942 [--objdump llvm-objdump-22] OBJECT KERNEL..."""
import argparse
import collections
import re
import subprocess

CLASSES = [('mfma', r'v_mfma'), ('exp/log/rcp', r'v_(exp|log|rcp)_'), ('valu', r'v_'), ('ds_read', r'ds_read'),
           ('ds_write', r'ds_write'), ('ds_other', r'ds_'), ('buffer', r'buffer_'), ('global', r'global_'),
           ('waitcnt', r's_waitcnt'), ('barrier', r's_barrier'), ('branch', r's_(c?branch|cbranch)'), ('salu', r's_')]


def loop(objdump, arch, path, kernel):
    text = subprocess.run([objdump, '-d', '--mcpu=' + arch, path], check=True, capture_output=True, text=True).stdout
    insts, cur, start = [], None, 0
    for line in text.splitlines():
        m = re.match(r'^([0-9a-f]+) <(.+)>:$', line)
        if m:
            cur, start = m.group(2), int(m.group(1), 16)
            continue
        if cur != kernel:
            continue
        m = re.match(r'^\s+(\w+).*//\s*([0-9A-Fa-f]+):', line)
        if m:
            op, addr = m.group(1), int(m.group(2), 16)
            t = re.search(r'<' + re.escape(kernel) + r'\+0x([0-9a-f]+)>', line) if op.startswith('s_') else None
            insts.append((addr, op, start + int(t.group(1), 16) if t else None))
    best, body = 0, []
    for addr, op, target in insts:
        if target is not None and target <= addr:
            ops = [o for a, o, _ in insts if target <= a <= addr]
            n = sum(o.startswith('v_mfma') for o in ops)
            if n > best:
                best, body = n, ops
    return body


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--arch', required=True)
    ap.add_argument('--objdump', default='llvm-objdump-22')
    ap.add_argument('object')
    ap.add_argument('kernels', nargs='+')
    a = ap.parse_args()
    for k in a.kernels:
        counts = collections.Counter()
        for op in loop(a.objdump, a.arch, a.object, k):
            counts[next(name for name, rx in CLASSES if re.match(rx, op))] += 1
        print(a.arch, k, ' '.join(f'{name} {counts[name]}' for name, _ in CLASSES))


if __name__ == '__main__':
    main()
