"""Which kernels cuBLAS runs for a GEMM row, and for how long: torch.matmul (bf16, nt: a @ w.T) and
torch._scaled_mm (e4m3, fast and fp32 accumulation) under torch.profiler, one line per kernel with its grid,
block, dynamic shared memory and mean duration. Tells a split-K with a separate reduce kernel from a stream-K or
a plain tile walk, and the tile shape (in nvjet names) that libhk's route can be compared with. --lib adds libhk's
calls of the same problems (the route, and each HK_CUDA_TUNE_GEMM shape of --tunes), so that its main and sum
kernels read beside cuBLAS's.
    python3 lab/cublas_kernels.py 256x256x16384 128x1024x8192 ... [--iters 20] [--only bf16,fast,acc32]
                                    [--lib build/libhk.so.1 [--tunes pk128:8,pk96:5]]"""
import argparse
import collections
import json
import os
import sys
import tempfile

import torch
from torch.profiler import ProfilerActivity, profile


def hk_calls(bench, a, w, mode, tunes):
    """libhk's calls of the problem: the route, then each forced shape, each on the context created under it (the
    workspace query too, so that a forced pooled split gets its workspace)."""
    import gemm_bench
    out = torch.empty(a.shape[0], w.shape[0], device=a.device, dtype=torch.bfloat16)
    def build(_i=0):
        return gemm_bench.hk_gemm_fn(bench, a, w, out, fast_accum=int(mode == 'fast'))
    yield 'hk route', build()
    for tune in tunes:
        yield f'hk {tune}', gemm_bench.tuned(bench, gemm_bench.tuned(bench, build, tune)(), tune)


def calls(m, n, k, only, bench, tunes):
    dev = 'cuda'
    a = torch.randn(m, k, device=dev, dtype=torch.bfloat16)
    w = torch.randn(n, k, device=dev, dtype=torch.bfloat16)
    if 'bf16' in only:
        yield 'bf16', 'cublas', lambda: a @ w.t()
        if bench:
            yield from (('bf16', name, fn) for name, fn in hk_calls(bench, a, w, 'bf16', tunes))
    a8, w8 = a.to(torch.float8_e4m3fn), w.to(torch.float8_e4m3fn)
    one = torch.ones((), device=dev)
    for mode, fast in (('fast', True), ('acc32', False)):
        if mode in only:
            yield mode, 'cublas', lambda fast=fast: torch._scaled_mm(a8, w8.t(), scale_a=one, scale_b=one,
                                                                     out_dtype=torch.bfloat16, use_fast_accum=fast)
            if bench:
                yield from ((mode, name, fn) for name, fn in hk_calls(bench, a8, w8, mode, tunes))


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
    p.add_argument('--lib', default=None, help='libhk.so.1: also profile its calls')
    p.add_argument('--tunes', default='', help='HK_CUDA_TUNE_GEMM shapes to force, comma-separated')
    args = p.parse_args()
    only = set(args.only.split(','))
    bench = None
    if args.lib:
        sys.path[:0] = [os.path.dirname(os.path.abspath(__file__)), os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'bench')]  # lab/, bench/
        import peers
        bench = peers.Bench(argparse.Namespace(lib=args.lib, reps=1, warmup=0))
    tunes = [t for t in args.tunes.split(',') if t]
    for shape in args.shapes:
        m, n, k = (int(x) for x in shape.split('x'))
        for mode, who, fn in calls(m, n, k, only, bench, tunes):
            for (name, grid, block, smem), durs in kernels(fn, args.iters).items():
                print(f'{shape:>18} {mode:5} {who:12} {len(durs):3}x {sum(durs) / len(durs):8.2f} us  grid {grid} '
                      f'block {block} smem {smem}  {name[:110]}')


if __name__ == '__main__':
    main()
