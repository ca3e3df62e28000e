"""Sustained bf16 GEMM, one contender at a time (libhk, torch.matmul = cuBLAS), about 2 s each, with the SM clock,
board power and clock-event reasons sampled by nvidia-smi. Answers whether a shape runs power-capped and how
much work each contender gets out of a clock cycle:
    HK_LIB=build/libhk.so.1 python3 lab/gemm_clocks.py [--seconds S] [--tune p320,...] [--shapes 8192x8192x8192,...]
(--tune: libhk also with each forced launch shape, HK_CUDA_TUNE_GEMM; a shape ending in e4m3, e.g. 8192x8192x8192e4m3,
runs fp8 against torch._scaled_mm with fast accumulation)
Per window: TFLOP/s (GPU time of the whole burst), median SM MHz and W, the reasons seen, and the fraction of
the dense peak at the sampled clock (132 SMs x 4096 bf16 or 8192 fp8 FLOP per clock on the H200)."""
import argparse
import datetime
import os
import statistics
import subprocess
import sys
import tempfile
import time

import torch

sys.path[:0] = [os.path.dirname(os.path.abspath(__file__)), os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'bench')]  # lab/, bench/
import gemm_bench  # noqa: E402
import peers  # noqa: E402

FIELDS = ['timestamp', 'clocks.sm', 'power.draw', 'temperature.gpu', 'clocks_event_reasons.active']
FIELDS_OLD = FIELDS[:-1] + ['clocks_throttle_reasons.active']  # drivers before the rename
# clocks_event_reasons bits (nvml.h): the ones a sustained GEMM can hit
REASONS = {0x1: 'idle', 0x4: 'sw_power_cap', 0x8: 'hw_slowdown', 0x20: 'sw_thermal', 0x40: 'hw_thermal',
           0x80: 'hw_power_brake'}


def start_sampler(path):
    for fields in (FIELDS, FIELDS_OLD):
        q = ','.join(fields)
        if subprocess.run(['nvidia-smi', f'--query-gpu={q}', '--format=csv,noheader,nounits'],
                          capture_output=True).returncode == 0:
            return subprocess.Popen(['nvidia-smi', f'--query-gpu={q}', '--format=csv,noheader,nounits', '-lms', '50'],
                                    stdout=open(path, 'w'), stderr=subprocess.DEVNULL)
    return None


def read_samples(path):
    out = []
    for line in open(path):
        f = [x.strip() for x in line.split(',')]
        try:
            ts = datetime.datetime.strptime(f[0], '%Y/%m/%d %H:%M:%S.%f').timestamp()
            out.append((ts, float(f[1]), float(f[2]), float(f[3]), int(f[4], 16)))
        except (ValueError, IndexError):
            continue
    return out


def burst(run, seconds):
    """run() back to back for about `seconds` of GPU time; returns (calls, GPU ms, wall start, wall end)."""
    for i in range(3):
        run(i)
    torch.cuda.synchronize()
    e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    e0.record()
    run(0)
    e1.record()
    torch.cuda.synchronize()
    calls = max(10, int(seconds * 1e3 / e0.elapsed_time(e1)))
    t0 = time.time()
    e0.record()
    for i in range(calls):
        run(i)
    e1.record()
    torch.cuda.synchronize()
    return calls, e0.elapsed_time(e1), t0, time.time()


def main():
    p = argparse.ArgumentParser()
    p.add_argument('--lib', default=None)
    p.add_argument('--seconds', type=float, default=2.0)
    p.add_argument('--reps', type=int, default=1)  # peers.Bench reads these
    p.add_argument('--warmup', type=int, default=0)
    p.add_argument('--tune', default='')
    p.add_argument('--shapes', default='8192x8192x8192,4096x4096x4096,8192x28672x8192,8192x8192x28672')
    args = p.parse_args()
    b = peers.Bench(args)
    log = tempfile.NamedTemporaryFile(suffix='.csv', delete=False).name
    sampler = start_sampler(log)
    time.sleep(0.5)  # an idle baseline
    windows = []
    for shape in args.shapes.split(','):
        fp8 = shape.endswith('e4m3')
        m, n, k = (int(x) for x in shape.removesuffix('e4m3').split('x'))
        a = torch.randn(m, k, device=b.dev, dtype=torch.bfloat16)
        w = torch.randn(n, k, device=b.dev, dtype=torch.bfloat16)
        out = torch.empty(m, n, device=b.dev, dtype=torch.bfloat16)
        if fp8:
            a, w = (a * 2).to(torch.float8_e4m3fn), (w * 2).to(torch.float8_e4m3fn)
            one = torch.ones((), device=b.dev)
            hk = gemm_bench.hk_gemm_fn(b, a, w, out, fast_accum=1)
            contenders = [('libhk', hk), ('_scaled_mm', lambda i: torch._scaled_mm(
                a, w.T, scale_a=one, scale_b=one, out_dtype=torch.bfloat16, use_fast_accum=True))]
        else:
            hk = gemm_bench.hk_gemm_fn(b, a, w, out)
            contenders = [('libhk', hk), ('torch.matmul', lambda i: torch.matmul(a, w.T, out=out))]
        contenders += [(f'libhk {t}', b.with_env(hk, 'HK_CUDA_TUNE_GEMM', t)) for t in args.tune.split(',') if t]
        for impl, run in contenders + contenders:
            calls, ms, t0, t1 = burst(run, args.seconds)
            windows.append((shape, impl, 2.0 * m * n * k * calls / ms / 1e9, t0, t1, 2 if fp8 else 1))
            time.sleep(0.3)
        del a, w, out
    time.sleep(0.3)
    if sampler:
        sampler.terminate()
        sampler.wait()
    samples = read_samples(log) if sampler else []
    idle = [s for s in samples if s[0] < samples[0][0] + 0.4] if samples else []
    if idle:
        print(f'idle: {statistics.median(s[1] for s in idle):.0f} MHz, {statistics.median(s[2] for s in idle):.0f} W')
    print(f'{"shape":18s} {"impl":13s} {"TFLOP/s":>8s} {"MHz":>6s} {"W":>6s} {"degC":>5s} {"peak@clk":>8s} '
          f'{"TF/GHz":>7s}  reasons (share of samples)')
    for shape, impl, tf, t0, t1, rate in windows:
        # the first 0.3 s settles the clock; samples stamp the end of NVML's averaging window
        s = [x for x in samples if t0 + 0.3 <= x[0] <= t1]
        if not s:
            print(f'{shape:18s} {impl:13s} {tf:8.1f}  (no clock samples)')
            continue
        mhz, w, deg = (statistics.median(x[i] for x in s) for i in (1, 2, 3))
        seen = {}
        for x in s:
            for bit, name in REASONS.items():
                if x[4] & bit:
                    seen[name] = seen.get(name, 0) + 1
        reasons = ', '.join(f'{k} {v / len(s):.0%}' for k, v in seen.items()) or 'none'
        peak = 132 * 4096 * rate * mhz * 1e6 / 1e12
        print(f'{shape:18s} {impl:13s} {tf:8.1f} {mhz:6.0f} {w:6.0f} {deg:5.0f} {tf / peak:8.1%} {tf / mhz * 1e3:7.1f}'
              f'  {reasons} ({len(s)} samples)')
    os.unlink(log)
    return 0


if __name__ == '__main__':
    sys.exit(main())
