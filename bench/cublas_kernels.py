"""Which kernels cuBLAS runs for a GEMM row, and for how long: torch.matmul (bf16, nt: a @ w.T) and
torch._scaled_mm (e4m3, fast and fp32 accumulation) under torch.profiler, one line per kernel with its grid,
block, dynamic shared memory and mean duration. Tells a split-K with a separate reduce kernel from a stream-K or
a plain tile walk, and the tile shape (in nvjet names) that libhk's route can be compared with.
    python3 bench/cublas_kernels.py 256x256x16384 128x1024x8192 ... [--iters 20] [--only bf16,fast,acc32]"""
import argparse
import collections
import json
import os
import tempfile

import torch
from torch.profiler import ProfilerActivity, profile


def calls(m, n, k, only):
    dev = 'cuda'
    a = torch.randn(m, k, device=dev, dtype=torch.bfloat16)
    w = torch.randn(n, k, device=dev, dtype=torch.bfloat16)
    if 'bf16' in only:
        yield 'bf16', lambda: a @ w.t()
    a8, w8 = a.to(torch.float8_e4m3fn), w.to(torch.float8_e4m3fn)
    one = torch.ones((), device=dev)
    for mode, fast in (('fast', True), ('acc32', False)):
        if mode in only:
            yield mode, lambda fast=fast: torch._scaled_mm(a8, w8.t(), scale_a=one, scale_b=one,
                                                           out_dtype=torch.bfloat16, use_fast_accum=fast)


def kernels(fn, iters):
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(iters):
            fn()
        torch.cuda.synchronize()
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, 'trace.json')
        prof.export_chrome_trace(path)
        with open(path) as f:
            events = json.load(f)['traceEvents']
    rows = collections.OrderedDict()
    for e in events:
        if e.get('cat') != 'kernel':
            continue
        args = e.get('args', {})
        key = (e['name'], str(args.get('grid')), str(args.get('block')), args.get('shared memory'))
        rows.setdefault(key, []).append(e['dur'])
    return rows


def main():
    p = argparse.ArgumentParser()
    p.add_argument('shapes', nargs='+', help='MxNxK')
    p.add_argument('--iters', type=int, default=20)
    p.add_argument('--only', default='bf16,fast,acc32')
    args = p.parse_args()
    only = set(args.only.split(','))
    for shape in args.shapes:
        m, n, k = (int(x) for x in shape.split('x'))
        for mode, fn in calls(m, n, k, only):
            for (name, grid, block, smem), durs in kernels(fn, args.iters).items():
                print(f'{shape:>18} {mode:5} {len(durs):3}x {sum(durs) / len(durs):8.2f} us  grid {grid} block {block} '
                      f'smem {smem}  {name[:110]}')


if __name__ == '__main__':
    main()
