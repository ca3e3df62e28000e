"""GEMM rows (libhk vs torch.matmul = cuBLAS, and torch._scaled_mm for fp8) on the same random inputs, timed
with bench/peers.py's Bench:
    HK_LIB=build/libhk.so.1 python3 bench/gemm_bench.py [--reps N] [--sweep] [--cover]
Contenders of a shape are timed call by call in alternation (the card is power-capped under sustained GEMM).
--sweep adds libhk under each HK_CUDA_TUNE_GEMM launch shape. Compute-bound: inputs are not rotated (a 4096^3
GEMM re-reads its 64 MB of operands from L2 either way)."""
import argparse
import ctypes
import os
import sys
from ctypes import POINTER, c_float, c_int, c_int64, c_size_t, c_void_p

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import hk  # noqa: E402
import peers  # noqa: E402  (the shared Bench: timing, rows, checks)


class GemmArgs(hk._Args):
    _fields_ = [('struct_size', c_size_t), ('m', c_int64), ('n', c_int64), ('k', c_int64),
                ('a_type', c_int), ('b_type', c_int), ('d_type', c_int), ('trans_a', c_int), ('trans_b', c_int),
                ('a', c_void_p), ('lda', c_int64), ('b', c_void_p), ('ldb', c_int64),
                ('c', c_void_p), ('ldc', c_int64), ('d', c_void_p), ('ldd', c_int64),
                ('alpha', c_float), ('beta', c_float), ('scale_a', c_float), ('scale_b', c_float),
                ('fp8_fast_accum', c_int), ('stream', c_void_p), ('workspace', c_void_p), ('workspace_size', c_size_t)]


TORCH_DTYPE = {torch.bfloat16: 'bf16', torch.float32: 'f32', torch.float16: 'f16', torch.float8_e4m3fn: 'fp8_e4m3',
               torch.float8_e4m3fnuz: 'fp8_e4m3fnuz'}


def fp8_type(b):
    """The context's native e4m3: gfx942 (MI300X) has only the fnuz variant."""
    return torch.float8_e4m3fnuz if b.lib.lib.hk_context_arch(b.ctx).decode() == 'gfx942' else torch.float8_e4m3fn


def rel_err(out, ref):
    out, ref = out.double(), ref.double()
    return ((out - ref).norm() / ref.norm().clamp_min(1e-30)).item()


def hk_gemm_fn(b, a, w, out, trans_b=True, alpha=1.0, beta=0.0, c=None, scale_a=0.0, scale_b=0.0, fast_accum=0,
               use_workspace=True):
    """out = alpha * scale_a * scale_b * a @ (w.T if trans_b else w) + beta * c, through libhk, with the workspace
    hk_gemm_workspace_size asks for (as the peer's cuBLASLt has one) unless use_workspace is False."""
    L = b.lib.lib
    L.hk_gemm.argtypes = [c_void_p, POINTER(GemmArgs)]
    m, k = a.shape
    n = w.shape[0] if trans_b else w.shape[1]
    args = GemmArgs(m=m, n=n, k=k, a_type=hk.DTYPE[TORCH_DTYPE[a.dtype]], b_type=hk.DTYPE[TORCH_DTYPE[w.dtype]],
                    d_type=hk.DTYPE[TORCH_DTYPE[out.dtype]], trans_a=0, trans_b=int(trans_b),
                    a=a.data_ptr(), lda=a.stride(0), b=w.data_ptr(), ldb=w.stride(0),
                    c=c.data_ptr() if c is not None else None, ldc=c.stride(0) if c is not None else 0,
                    d=out.data_ptr(), ldd=out.stride(0), alpha=alpha, beta=beta, scale_a=scale_a, scale_b=scale_b,
                    fp8_fast_accum=fast_accum, stream=b.stream)
    L.hk_gemm_workspace_size.argtypes = [c_void_p, POINTER(GemmArgs), POINTER(c_size_t)]
    need = c_size_t(0)
    b.lib.check(L.hk_gemm_workspace_size(b.ctx, ctypes.byref(args), ctypes.byref(need)), 'hk_gemm_workspace_size')
    workspace = torch.empty(need.value, dtype=torch.uint8, device=a.device) if need.value and use_workspace else None
    if workspace is not None:
        args.workspace, args.workspace_size = workspace.data_ptr(), need.value

    def run(_i=0, _workspace=workspace):
        b.lib.check(L.hk_gemm(b.ctx, ctypes.byref(args)), 'hk_gemm')
    return run


# HK_CUDA_TUNE_GEMM launch shapes (backends/cuda/gemm.c: a gemm.h shape id, ':2' splits K over the cluster)
def tunes(m, n, k):
    if m <= 64:
        return ['sk64:2', 'sw16', 'sw64']
    if m * n * k <= 2 ** 29:
        return ['p256', 'p144', 'p128', 'sk64:2', 'm64', 'm64n64']
    return ['p256', 'p192', 'p144', 'p128', 'm64'] if m * n * k <= 2 ** 31 else ['p320', 'p256', 'p192']


def sweep_tunes(b, default):
    """--tunes a,b replaces every row's list of swept launch shapes."""
    return b.args.tunes.split(',') if getattr(b.args, 'tunes', '') else list(default)


def tuned(b, run, tune):
    """run() on b's context created under HK_CUDA_TUNE_GEMM=tune (libhk reads it once per context)."""
    return b.with_env(run, 'HK_CUDA_TUNE_GEMM', tune)


def bench_gemm(b):
    dev = b.dev
    if getattr(b.args, 'cover', False):  # gemm_bench.py --cover
        bench_cover(b)
        return
    # correctness first: ragged nn.Linear layout with alpha/beta and C aliasing D, then fp8 with scales
    m, n, k = 1000, 1500, 776
    a = torch.randn(m, k, device=dev, dtype=torch.bfloat16)
    w = torch.randn(n, k, device=dev, dtype=torch.bfloat16)
    c0 = torch.randn(m, n, device=dev, dtype=torch.bfloat16)
    d = c0.clone()
    hk_gemm_fn(b, a, w, d, alpha=0.5, beta=0.25, c=d)()
    torch.cuda.synchronize()
    ref = 0.5 * (a.double() @ w.double().T) + 0.25 * c0.double()
    b.check('gemm', f'{m}x{n}x{k} bf16 nt', 'alpha/beta, C aliases D', rel_err(d, ref), 1e-2)
    a8 = (torch.randn(m, 784, device=dev) * 2).to(fp8_type(b))
    w8 = (torch.randn(n, 784, device=dev) * 2).to(fp8_type(b))
    d8 = torch.empty(m, n, device=dev, dtype=torch.bfloat16)
    hk_gemm_fn(b, a8, w8, d8, scale_a=0.5, scale_b=2.5, fast_accum=1)()
    torch.cuda.synchronize()
    ref = 1.25 * (a8.double() @ w8.double().T)
    b.check('gemm', f'{m}x{n}x784 e4m3 nt', 'scales', rel_err(d8, ref), 1e-2)
    # the persistent widths whose tiles end in a narrower TMA store box (map_t), forced, ragged, both outputs
    for tune in ('p208', 'p168', 'p144', 'p96'):
        for (m, n, k) in ((1000, 1500, 776), (257, 1030, 520)):
            a = torch.randn(m, k, device=dev, dtype=torch.bfloat16)
            w = torch.randn(n, k, device=dev, dtype=torch.bfloat16)
            for dt in (torch.bfloat16, torch.float32):
                c0 = torch.randn(m, n, device=dev, dtype=dt)
                d = c0.clone()
                tuned(b, hk_gemm_fn(b, a, w, d, alpha=0.5, beta=0.25, c=d), tune)()
                torch.cuda.synchronize()
                ref = 0.5 * (a.double() @ w.double().T) + 0.25 * c0.double()
                b.check('gemm', f'{m}x{n}x{k} bf16 nt -> {TORCH_DTYPE[dt]}', tune + ', C aliases D', rel_err(d, ref),
                        1e-2 if dt == torch.bfloat16 else 1e-4)
    # the finale (the last two rounds' tiles in parts of K through the workspace), forced at short K, ragged
    for tune, (m, n, k) in (('p256:2', (2304, 4096, 1000)), ('p256:3', (2200, 4000, 776))):
        a = torch.randn(m, k, device=dev, dtype=torch.bfloat16)
        w = torch.randn(n, k, device=dev, dtype=torch.bfloat16)
        c0 = torch.randn(m, n, device=dev, dtype=torch.float32)
        d = torch.full((m, n), float('nan'), device=dev, dtype=torch.float32)
        # built under the tune too: hk_gemm_workspace_size sizes the finale's workspace for it
        run = tuned(b, lambda _i=0: hk_gemm_fn(b, a, w, d, alpha=0.5, beta=0.25, c=c0), tune)()
        tuned(b, run, tune)()
        torch.cuda.synchronize()
        ref = 0.5 * (a.double() @ w.double().T) + 0.25 * c0.double()
        b.check('gemm', f'{m}x{n}x{k} bf16 nt -> f32', tune + ' (finale), separate C', rel_err(d, ref), 1e-4)
    if getattr(b.args, 'checks', False):  # gemm_bench.py --checks
        return

    shapes = [(4096, 4096, 4096), (8192, 8192, 8192), (16384, 16384, 16384), (8192, 28672, 8192), (8192, 8192, 28672),
              (512, 512, 512), (1024, 1024, 1024), (1536, 1536, 1536), (2048, 2048, 2048), (3072, 3072, 3072), (16, 8192, 8192),
              (64, 8192, 8192), (128, 8192, 8192), (256, 256, 16384)]
    if getattr(b.args, 'shapes', ''):
        shapes = [tuple(int(x) for x in row.split('x')) for row in b.args.shapes.split(',')]
    for (m, n, k) in shapes:
        shape = f'{m}x{n}x{k}'
        a = torch.randn(m, k, device=dev, dtype=torch.bfloat16)
        w = torch.randn(n, k, device=dev, dtype=torch.bfloat16)
        out = torch.empty(m, n, device=dev, dtype=torch.bfloat16)
        run = hk_gemm_fn(b, a, w, out)
        contenders = [('libhk', run), ('torch.matmul', lambda i: torch.matmul(a, w.T))]
        if b.args.sweep:
            contenders += [('libhk ' + t, tuned(b, run, t)) for t in sweep_tunes(b, tunes(m, n, k))]
        b.alternate('gemm', shape + ' bf16', contenders, flops=2.0 * m * n * k)
        ref = torch.matmul(a, w.T)
        for impl, fn in [('libhk', run)] + ([('libhk ' + t, tuned(b, run, t)) for t in sweep_tunes(b, tunes(m, n, k))]
                                            if b.args.sweep else []):
            out.fill_(float('nan'))
            fn()
            torch.cuda.synchronize()
            b.check('gemm', shape + ' bf16', impl + ' vs torch.matmul', rel_err(out, ref), 1e-2)
        del a, w, out, ref
    one = torch.ones((), device=dev)
    # fp8 accumulation error against float64, libhk and torch._scaled_mm in both modes (f32 out: nothing rounds it)
    for (m, n, k) in ((1024, 1024, 2048), (1024, 1024, 8192), (2048, 2048, 16384)):
        a = (torch.randn(m, k, device=dev) * 2).to(fp8_type(b))
        w = (torch.randn(n, k, device=dev) * 2).to(fp8_type(b))
        ref = a.double() @ w.double().T
        out = torch.empty(m, n, device=dev, dtype=torch.float32)
        for fast in (1, 0):
            out.fill_(float('nan'))
            hk_gemm_fn(b, a, w, out, fast_accum=fast)()
            torch.cuda.synchronize()
            b.check('gemm', f'{m}x{n}x{k} e4m3 -> f32', f'libhk fast_accum={fast} vs float64', rel_err(out, ref),
                    4e-3 if fast else 3e-4)
            peer = torch._scaled_mm(a, w.T, scale_a=one, scale_b=one, out_dtype=torch.float32, use_fast_accum=bool(fast))
            b.check('gemm', f'{m}x{n}x{k} e4m3 -> f32', f'torch._scaled_mm use_fast_accum={bool(fast)} vs float64 '
                    '(the peer, for scale)', rel_err(peer, ref), 1.0)
        del a, w, ref, out, peer
    bench_cover(b)
    for s in (8192, 16384):
        shape = f'{s}x{s}x{s}'
        a = (torch.randn(s, s, device=dev) * 2).to(fp8_type(b))
        w = (torch.randn(s, s, device=dev) * 2).to(fp8_type(b))
        out = torch.empty(s, s, device=dev, dtype=torch.bfloat16)
        # fast accumulation (the tensor cores' fp8 precision over all of K) against cuBLAS's fast mode
        run = hk_gemm_fn(b, a, w, out, fast_accum=1)
        contenders = [('libhk', run), ('torch._scaled_mm', lambda i: torch._scaled_mm(
                          a, w.T, scale_a=one, scale_b=one, out_dtype=torch.bfloat16, use_fast_accum=True))]
        if b.args.sweep:
            contenders += [('libhk ' + t, tuned(b, run, t)) for t in sweep_tunes(b, ('p320', 'p256', 'p144'))]
        b.alternate('gemm', shape + ' e4m3', contenders, flops=2.0 * s ** 3)
        # without fast accumulation: libhk sums k-blocks of 128 in fp32 (tiles up to 192 wide), cuBLAS its own way
        b.alternate('gemm', shape + ' e4m3 fp32 accumulation', [
            ('libhk', hk_gemm_fn(b, a, w, out, fast_accum=0)),
            ('torch._scaled_mm', lambda i: torch._scaled_mm(a, w.T, scale_a=one, scale_b=one, out_dtype=torch.bfloat16,
                                                            use_fast_accum=False))], flops=2.0 * s ** 3)
        del a, w, out


def bench_cover(b):
    """The calls the TMA kernels do not read in place (leading dimensions off 16 bytes, fp32 operands) and f16
    operands, each beside torch.matmul on the same tensors (cuBLAS on the same strides and dtypes; fp32 without
    TF32)."""
    dev = b.dev
    rows = [(333, 1000, 777, torch.bfloat16, False, 'bf16 nn, lda 777'), (4095, 4095, 4095, torch.bfloat16, False,
            'bf16 nn, lda 4095'), (333, 1000, 777, torch.float16, False, 'f16 nn, lda 777'),
            (4096, 4096, 4096, torch.float16, True, 'f16 nt'), (4096, 4096, 4096, torch.float32, False, 'f32 nn'),
            (4095, 4095, 4095, torch.float32, True, 'f32 nt, ld 4095')]
    tf32 = torch.backends.cuda.matmul.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = False
    try:
        for (m, n, k, dt, trans_b, what) in rows:
            a = torch.randn(m, k, device=dev, dtype=dt)
            w = torch.randn(n, k, device=dev, dtype=dt) if trans_b else torch.randn(k, n, device=dev, dtype=dt)
            out = torch.full((m, n), float('nan'), device=dev, dtype=dt)
            # with the workspace libhk asks for (unaligned 16-bit rows: copied to aligned rows for the TMA kernels) and
            # without (cuda.gemm.any reads them in place)
            runs = [('libhk', hk_gemm_fn(b, a, w, out, trans_b=trans_b)),
                    ('libhk no workspace', hk_gemm_fn(b, a, w, out, trans_b=trans_b, use_workspace=False))]
            ref = a.double() @ (w.double().T if trans_b else w.double())
            for impl, run in runs:
                out.fill_(float('nan'))
                run()
                torch.cuda.synchronize()
                b.check('gemm', f'{m}x{n}x{k} {what}', impl + ' vs float64', rel_err(out, ref),
                        1e-4 if dt == torch.float32 else 1e-2 if dt == torch.bfloat16 else 2e-3)  # TF32: ~5e-4
            peer = (lambda i: torch.matmul(a, w.T)) if trans_b else (lambda i: torch.matmul(a, w))
            b.alternate('gemm', f'{m}x{n}x{k} {what}', runs + [('torch.matmul', peer)], flops=2.0 * m * n * k)
            del a, w, out, ref
    finally:
        torch.backends.cuda.matmul.allow_tf32 = tf32


def main():
    p = argparse.ArgumentParser()
    p.add_argument('--lib', default=None)
    p.add_argument('--reps', type=int, default=30)
    p.add_argument('--warmup', type=int, default=5)
    p.add_argument('--sweep', action='store_true', help='also time each HK_CUDA_TUNE_GEMM launch shape')
    p.add_argument('--tunes', default='', help='with --sweep: these launch shapes on every row (e.g. mc256,p320)')
    p.add_argument('--shapes', default='', help='only these bf16 rows (e.g. 8192x8192x8192,4096x4096x4096)')
    p.add_argument('--checks', action='store_true', help='correctness checks only, no timing')
    p.add_argument('--cover', action='store_true', help='only the unaligned, f16 and f32 rows (bench_cover)')
    args = p.parse_args()
    b = peers.Bench(args)
    bench_gemm(b)
    fails = [c for c in b.checks if not c['ok']]
    print(f'{len(b.checks) - len(fails)} passed, {len(fails)} failed')
    return 1 if fails else 0


if __name__ == '__main__':
    sys.exit(main())
