"""The fp8 GEMM in both accumulation modes, one call each after warm-ups, between cudaProfilerStart/Stop, for
bench/gemm_ncu.sh:  python3 bench/gemm_ncu_calls.py --lib build/libhk.so.1 [--size 8192 | --shape MxNxK] [--tune p192]"""
import argparse
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gemm_bench  # noqa: E402
import peers  # noqa: E402

p = argparse.ArgumentParser()
p.add_argument('--lib', default=None)
p.add_argument('--size', type=int, default=8192)
p.add_argument('--shape', default='', help='MxNxK instead of --size cubed')
p.add_argument('--tune', default='p192', help='HK_CUDA_TUNE_GEMM shape for both modes ("" for the route)')
p.add_argument('--reps', type=int, default=1)  # peers.Bench reads these
p.add_argument('--warmup', type=int, default=0)
args = p.parse_args()
b = peers.Bench(args)
m, n, k = (int(x) for x in args.shape.split('x')) if args.shape else (args.size,) * 3
a = (torch.randn(m, k, device=b.dev) * 2).to(torch.float8_e4m3fn)
w = (torch.randn(n, k, device=b.dev) * 2).to(torch.float8_e4m3fn)
out = torch.empty(m, n, device=b.dev, dtype=torch.bfloat16)
runs = [gemm_bench.hk_gemm_fn(b, a, w, out, fast_accum=fast) for fast in (1, 0)]
if args.tune:
    runs = [gemm_bench.tuned(run, args.tune) for run in runs]
for run in runs:
    run()
    run()
torch.cuda.synchronize()
torch.cuda.cudart().cudaProfilerStart()
for run in runs:
    run()
torch.cuda.synchronize()
torch.cuda.cudart().cudaProfilerStop()
