#!/usr/bin/env python3
"""Resource report of CDNA code objects: one TSV row per kernel with the register, LDS and scratch use from
the code object metadata (llvm-readelf --notes), the MFMA count, the MFMA count of the main loop and the opcodes
from the disassembly (llvm-objdump -d), and the occupancy they allow (waves per SIMD). tests/amd/test_isa.c checks
the rows.

usage: isa_report.py --arch gfx942 --readelf R --objdump O --out X.tsv OBJECT...
"""
import argparse
import re
import subprocess
import sys

LDS_BYTES = {'gfx942': 64 * 1024, 'gfx950': 160 * 1024}
FIELDS = ['.name', '.vgpr_count', '.agpr_count', '.sgpr_count', '.vgpr_spill_count', '.sgpr_spill_count',
          '.group_segment_fixed_size', '.private_segment_fixed_size', '.max_flat_workgroup_size']


def kernels(readelf, path):
    text = subprocess.run([readelf, '--notes', path], check=True, capture_output=True, text=True).stdout
    out, cur = [], None
    for line in text.splitlines():
        m = re.match(r'\s*-?\s*(\.[a-z_]+):\s+(\S+)\s*$', line)
        if not m or m.group(1) not in FIELDS:
            continue
        key, value = m.group(1), m.group(2)
        if line.lstrip().startswith('- '):  # a new kernel's map starts with "- "
            cur = {}
            out.append(cur)
        if cur is not None:
            cur[key] = value
    return [k for k in out if '.name' in k]


def mfma_counts(objdump, arch, path):
    """Per kernel: the MFMA opcodes in order, and the MFMA count of its main loop: the backward branch whose
    range [target, branch] holds the most MFMAs (0 when no loop holds any)."""
    text = subprocess.run([objdump, '-d', '--mcpu=' + arch, path], check=True, capture_output=True, text=True).stdout
    counts, loops, cur, start, insts = {}, {}, None, 0, []

    def close():
        if cur is None:
            return
        best = 0
        for addr, op, target in insts:
            if target is not None and target <= addr:
                best = max(best, sum(1 for a, o, _ in insts if target <= a <= addr and o.startswith('v_mfma')))
        loops[cur] = best

    for line in text.splitlines():
        m = re.match(r'^([0-9a-f]+) <(.+)>:$', line)
        if m:
            close()
            cur, start, insts = m.group(2), int(m.group(1), 16), []
            counts[cur] = []
            continue
        if cur is None:
            continue
        m = re.match(r'^\s+(\w+).*//\s*([0-9A-Fa-f]+):', line)
        if not m:
            continue
        op, addr = m.group(1), int(m.group(2), 16)
        t = re.search(r'<' + re.escape(cur) + r'\+0x([0-9a-f]+)>', line) if op.startswith('s_cbranch') or op == 's_branch' else None
        insts.append((addr, op, start + int(t.group(1), 16) if t else None))
        if op.startswith('v_mfma'):
            counts[cur].append(op)
    close()
    return counts, loops

def occupancy(arch, k):
    """Waves per SIMD (max 8): unified VGPR file of 512 per lane (arch + acc, granule 8), LDS per CU shared by
    the workgroups, each workgroup's waves spread over the CU's 4 SIMDs."""
    vgpr = -(-int(k['.vgpr_count']) // 4) * 4 + int(k.get('.agpr_count', 0))
    by_vgpr = min(8, 512 // max(8, -(-vgpr // 8) * 8))
    waves_per_group = max(1, -(-int(k['.max_flat_workgroup_size']) // 64))
    lds = int(k['.group_segment_fixed_size'])
    by_lds = 8 if lds == 0 else (LDS_BYTES[arch] // lds) * waves_per_group // 4
    return min(by_vgpr, by_lds)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--arch', required=True)
    ap.add_argument('--readelf', required=True)
    ap.add_argument('--objdump', required=True)
    ap.add_argument('--out', required=True)
    ap.add_argument('objects', nargs='+')
    a = ap.parse_args()
    rows = ['arch\tobject\tkernel\tvgpr\tagpr\tsgpr\tvgpr_spill\tsgpr_spill\tlds\tscratch\tmax_threads\tmfma\t'
            'loop_mfma\toccupancy\tmfma_ops']
    for path in a.objects:
        mfma, loops = mfma_counts(a.objdump, a.arch, path)
        for k in kernels(a.readelf, path):
            rows.append('\t'.join([a.arch, path.split('/')[-1], k['.name'], k['.vgpr_count'], k.get('.agpr_count', '0'),
                                   k['.sgpr_count'], k.get('.vgpr_spill_count', '0'), k.get('.sgpr_spill_count', '0'),
                                   k['.group_segment_fixed_size'], k['.private_segment_fixed_size'],
                                   k['.max_flat_workgroup_size'], str(len(mfma.get(k['.name'], []))),
                                   str(loops.get(k['.name'], 0)), str(occupancy(a.arch, k)), ','.join(sorted(set(mfma.get(k['.name'], [])))) or '-']))
    if len(rows) == 1:
        sys.exit('isa_report.py: no kernels found')
    open(a.out, 'w').write('\n'.join(rows) + '\n')


if __name__ == '__main__':
    main()
