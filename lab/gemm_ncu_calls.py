"""GEMM calls for lab/gemm_ncu.sh, one each after warm-ups, between cudaProfilerStart/Stop: e4m3 through libhk in
both accumulation modes (the same launch shape), or bf16 (nt) through libhk; --peer adds cuBLAS's call of the same
problem (torch.matmul / torch._scaled_mm) so both kernels are read side by side.
    python3 lab/gemm_ncu_calls.py --lib build/libhk.so.1 [--size 8192 | --shape MxNxK] [--tune p192] [--dtype bf16]
                                    [--peer]"""
import argparse
import os
import sys

import torch

sys.path[:0] = [os.path.dirname(os.path.abspath(__file__)), os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'bench')]  # lab/, bench/
import gemm_bench  # noqa: E402
import peers  # noqa: E402

p = argparse.ArgumentParser()
p.add_argument('--lib', default=None)
p.add_argument('--size', type=int, default=8192)
p.add_argument('--shape', default='', help='MxNxK instead of --size cubed')
p.add_argument('--tune', default='p192', help='HK_CUDA_TUNE_GEMM shape for every libhk call ("" for the route)')
p.add_argument('--dtype', default='e4m3', choices=['e4m3', 'bf16'])
p.add_argument('--peer', action='store_true', help="also cuBLAS's call (torch)")
p.add_argument('--reps', type=int, default=1)  # peers.Bench reads these
p.add_argument('--warmup', type=int, default=0)
args = p.parse_args()
if args.tune:  # before hk_gemm_fn's workspace query, so that a forced pooled split gets its workspace
    os.environ['HK_CUDA_TUNE_GEMM'] = args.tune
b = peers.Bench(args)
m, n, k = (int(x) for x in args.shape.split('x')) if args.shape else (args.size,) * 3
a = torch.randn(m, k, device=b.dev) * 2
w = torch.randn(n, k, device=b.dev) * 2
out = torch.empty(m, n, device=b.dev, dtype=torch.bfloat16)
if args.dtype == 'e4m3':
    a, w = a.to(torch.float8_e4m3fn), w.to(torch.float8_e4m3fn)
    runs = [gemm_bench.hk_gemm_fn(b, a, w, out, fast_accum=fast) for fast in (1, 0)]
    one = torch.ones((), device=b.dev)
    peer = [lambda fast=fast: torch._scaled_mm(a, w.t(), scale_a=one, scale_b=one, out_dtype=torch.bfloat16,
                                               use_fast_accum=fast) for fast in (True, False)]
else:
    a, w = a.to(torch.bfloat16), w.to(torch.bfloat16)
    runs = [gemm_bench.hk_gemm_fn(b, a, w, out)]
    peer = [lambda: torch.matmul(a, w.t(), out=out)]
if args.peer:
    runs += peer
for run in runs:
    run()
    run()
torch.cuda.synchronize()
torch.cuda.cudart().cudaProfilerStart()
for run in runs:
    run()
torch.cuda.synchronize()
torch.cuda.cudart().cudaProfilerStop()
