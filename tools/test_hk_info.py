#!/usr/bin/env python3
"""hk-info's output contract: one line of at most 120 characters per variant by default, every embedded kernel
named under --kernels (as many as the object's count says), each variant's whole description under --verbose,
exit status 2 on an unknown argument.

usage: test_hk_info.py HK_INFO"""
import re
import subprocess
import sys

LINE = 120


def run(*args):
    p = subprocess.run([sys.argv[1], *args], capture_output=True, text=True, timeout=120)
    return p.returncode, p.stdout


def variant_lines(out):
    """Variant rows: four spaces, an op name, a dotted variant name."""
    return [l for l in out.splitlines() if re.match(r'^    [a-z_]+ +[a-z0-9_]+\.[a-z0-9_.]+( |$)', l)]


def strip_groups(text):
    """text without its parenthesised groups (nested ones included)."""
    out, depth = [], 0
    for ch in text:
        depth += ch == '('
        if depth == 0:
            out.append(ch)
        depth -= ch == ')' and depth > 0
    return ''.join(out)


def main():
    failures = []
    rc, plain = run()
    if rc != 0:
        failures.append(f'hk-info exited {rc}')
    rows = variant_lines(plain)
    if not rows:
        failures.append('no variant lines')
    failures += [f'{len(l)} characters: {l}' for l in plain.splitlines() if len(l) > LINE and l in rows]
    counts = [int(n) for n in re.findall(r'bytes +(\d+) kernels$', plain, re.M)]

    rc, kernels = run('--kernels')
    if rc != 0:
        failures.append(f'hk-info --kernels exited {rc}')
    blocks = re.split(r'^  \S+ +\d+ bytes +\d+ kernels\n', kernels.split('\nembedded code objects')[1], flags=re.M)[1:]
    if len(blocks) != len(counts):
        failures.append(f'{len(blocks)} kernel lists for {len(counts)} code objects')
    for n, block in zip(counts, blocks):
        names = [w for l in block.split('\n\n')[0].splitlines() if l.startswith('    ') for w in l.split()]
        if len(names) != n or not all(w.startswith('hk_') for w in names):
            failures.append(f'a code object of {n} kernels lists {len(names)}')
    if any(len(l) > LINE for l in kernels.splitlines() if l.startswith('    hk_')):
        failures.append('a kernel list line is over 120 characters')

    rc, verbose = run('--verbose')
    if rc != 0:
        failures.append(f'hk-info --verbose exited {rc}')
    if len(variant_lines(verbose)) != len(rows):
        failures.append(f'--verbose lists {len(variant_lines(verbose))} variants, the default {len(rows)}')
    full = ''.join(verbose.split())
    plain_full = ''.join(strip_groups(verbose).split())
    for row in rows:  # each summary comes from its description, whole or without its parenthesised details
        words = ''.join(row[4 + 12 + 1 + 28 + 1:].removesuffix('...').split())
        if not words or (words not in full and words not in plain_full):
            failures.append(f'summary not drawn from the description: {row}')

    rc, _ = run('--no-such-flag')
    if rc != 2:
        failures.append(f'an unknown argument exited {rc}, not 2')

    for f in failures:
        print('FAIL', f)
    print(f'{len(rows)} variant lines, {len(counts)} code objects checked; {len(failures)} failures')
    return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main())
