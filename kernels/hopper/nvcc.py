#!/usr/bin/env python3
"""Run nvcc for one cubin and keep ptxas's resource report (registers, shared memory, stack, spills per
kernel) in a file beside it instead of on the console; other diagnostics pass through.

usage: nvcc.py REPORT -- NVCC ARGS...   (ARGS should include -Xptxas -v)
"""
import re
import subprocess
import sys


def main(argv):
    report = argv[1]
    cmd = argv[argv.index('--') + 1:]
    proc = subprocess.run(cmd, stderr=subprocess.PIPE, text=True)
    rows, other, kernel, frame = [], [], None, ''
    for line in proc.stderr.splitlines():
        if not line.startswith('ptxas info') and not re.match(r'\s+\d+ bytes stack frame', line):
            other.append(line)
            continue
        m = re.search(r"Compiling entry function '([^']*)'", line)
        if m:
            kernel, frame = m.group(1), ''
        m = re.search(r'(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads', line)
        if m:
            frame = 'stack %4s  spill st/ld %s/%s' % m.groups()
        m = re.search(r'Used (\d+) registers(?:.*?(\d+) bytes smem)?', line)
        if m and kernel:
            rows.append('%-32s regs %4s  smem %6s  %s' % (kernel, m.group(1), m.group(2) or '0', frame))
            kernel = None
    with open(report, 'w') as f:
        f.write('# ptxas resources per kernel: ' + ' '.join(cmd) + '\n')
        f.write('\n'.join(sorted(rows)) + '\n')
    if other:
        print('\n'.join(other), file=sys.stderr)
    return proc.returncode


if __name__ == '__main__':
    sys.exit(main(sys.argv))
