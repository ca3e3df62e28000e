#!/usr/bin/env python3
"""libhk against its peers on one GPU, in one process, on the same inputs.

libhk is called through ctypes (bench/hk.py) on torch tensors' device pointers and torch's current stream;
the peers are PyTorch eager and torch.compile of the same math, and a plain device copy (the memory
ceiling). Timing: CUDA events around every call, median of many calls after warm-up, the calls rotating over
input sets that together exceed the L2 several times. Each benchmark group also checks libhk's output
against a float32 reference before timing it.

Adding a row: write a function decorated with @group('name') that takes the Bench and calls
bench.row(group, shape, impl, fn, bytes=... or flops=...), where fn(i) runs the i-th call (use input set
i % sets), or bench.alternate(group, shape, [(impl, fn), ...], bytes=...) to time several contenders in
alternation (GEMM call by call; the rotary rows in rounds of settled calls). Rows of one (group, shape) are
compared with each other and with the copy ceiling.

usage: peers.py --lib build/libhk.so --out DIR [--only rotary,ln_fwd] [--reps 100]
"""
import argparse
import ctypes
import datetime
import json
import math
import os
import statistics
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import hk  # noqa: E402

GROUPS = []


def group(name):
    def register(fn):
        GROUPS.append((name, fn))
        return fn
    return register


class Bench:
    def __init__(self, args):
        self.args = args
        torch.manual_seed(0)
        self.dev = torch.device('cuda')
        torch.cuda.init()
        self.props = torch.cuda.get_device_properties(0)
        self.l2 = getattr(self.props, 'L2_cache_size', 50 << 20)
        self.lib = hk.Lib(args.lib)
        self.ctx = self.lib.context('auto')  # CUDA here; HIP under ROCm PyTorch
        self.env_contexts = {}  # (NAME, value) -> a context created under it (with_env)
        self.stream = torch.cuda.current_stream().cuda_stream or None  # CUstream as an int
        self.rows = []
        self.checks = []
        self.copy_tbs = None

    def sets_for(self, bytes_per_set):
        """Input sets to rotate over: together at least 3x the L2, at least 2."""
        return max(2, math.ceil(3 * self.l2 / max(bytes_per_set, 1)))

    def time_ms(self, fn):
        reps, warmup = self.args.reps, self.args.warmup
        for i in range(warmup):
            fn(i)
        torch.cuda.synchronize()
        start = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
        end = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
        for i in range(reps):
            start[i].record()
            fn(warmup + i)
            end[i].record()
        torch.cuda.synchronize()
        return spread(s.elapsed_time(e) for s, e in zip(start, end))

    def row(self, grp, shape, impl, fn, bytes=None, flops=None):
        if self.args.libhk_only and impl.startswith('torch') and grp != 'copy':  # the ceiling always runs
            return
        if impl == 'libhk' and self.args.env:
            # libhk once per value of the variable (a context created under each), in two alternating rounds
            for _ in range(2):
                self.each_env(lambda tag: self._timed_row(grp, shape, f'libhk{tag}', fn, bytes, flops))
            return
        self._timed_row(grp, shape, impl, fn, bytes, flops)

    def _timed_row(self, grp, shape, impl, fn, bytes, flops):
        try:
            ms, p10, p90 = self.time_ms(fn)
        except Exception as e:  # a failing peer must not hide the other rows
            print(f'  {grp:8s} {shape:24s} {impl:14s} FAILED: {e}', flush=True)
            self.rows.append(dict(group=grp, shape=shape, impl=impl, error=str(e)))
            return
        self._add_row(grp, shape, impl, ms, p10, p90, bytes, flops)

    def _add_row(self, grp, shape, impl, ms, p10, p90, bytes, flops):
        r = dict(group=grp, shape=shape, impl=impl, ms=ms, p10_ms=p10, p90_ms=p90)
        if bytes is not None:
            r['bytes'] = bytes
            r['tbs'] = bytes / ms / 1e9
            if self.copy_tbs:
                r['pct_copy'] = 100.0 * r['tbs'] / self.copy_tbs
            text = f"{r['tbs']:.3f} TB/s" + (f" ({r['pct_copy']:.1f}% of copy)" if self.copy_tbs else '')
        else:
            r['flops'] = flops
            r['tflops'] = flops / ms / 1e9
            text = f"{r['tflops']:.1f} TFLOP/s"
        print(f'  {grp:8s} {shape:24s} {impl:14s} {ms * 1e3:9.1f} us  {text}', flush=True)
        self.rows.append(r)

    def alternate(self, grp, shape, contenders, bytes=None, flops=None, burst=1, settle=0):
        """Time contenders [(impl, fn)] in alternation, so that the card's clock, power and memory state weigh on
        each alike (sustained GEMM is power-capped; timed one after the other, the first memory-bound row of a
        shape read 1-2 points low). Rounds of: per contender, `settle` untimed calls, then `burst` timed ones.
        Memory-bound rows want settle > 0: a call right after another contender's reads 1-2 points lower than
        after its own (the L2 state the other left; docs/perf/memory-bound.md). Rows as row() writes them,
        libhk once per --env value."""
        todo, env = [], getattr(self.args, 'env', '')
        for impl, fn in contenders:
            if getattr(self.args, 'libhk_only', False) and impl.startswith('torch'):
                continue
            if impl == 'libhk' and env:
                name, values = env.split('=', 1)
                todo += [(f'libhk {v}', self.with_env(fn, name, v)) for v in values.split(',')]
            else:
                todo.append((impl, fn))
        rounds, warmup = max(1, self.args.reps // burst), self.args.warmup
        for i in range(warmup):
            for _, fn in todo:
                fn(i)
        torch.cuda.synchronize()
        ev = [[(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
               for _ in range(rounds * burst)] for _ in todo]
        call = warmup
        for r in range(rounds):
            for j, (_, fn) in enumerate(todo):
                for _ in range(settle):
                    fn(call)
                    call += 1
                for i in range(burst):
                    ev[j][r * burst + i][0].record()
                    fn(call)
                    call += 1
                    ev[j][r * burst + i][1].record()
        torch.cuda.synchronize()
        for j, (impl, _) in enumerate(todo):
            self._add_row(grp, shape, impl, *spread(s.elapsed_time(e) for s, e in ev[j]), bytes, flops)

    def each_env(self, fn):
        """fn(tag) once per value of --env NAME=v1,v2 on the context created under it (tag ' v1', ...), else fn('')
        once."""
        if not self.args.env:
            fn('')
            return
        name, values = self.args.env.split('=', 1)
        for v in values.split(','):
            self.with_env(lambda _i, v=v: fn(f' {v}'), name, v)()

    def with_env(self, fn, name, value):
        """fn(i) run on a context created with environment variable name = value, one per setting, kept for the
        run (libhk reads its tuning variables once per context, when it is created); returns what fn returns. fn
        reaches the context through self.ctx at each call, so it may have been built before."""
        key = (name, value)
        if key not in self.env_contexts:
            self.env_contexts[key] = self.lib.context('auto', env={name: value})
        ctx = self.env_contexts[key]

        def f(i=0):
            saved, self.ctx = self.ctx, ctx
            try:
                return fn(i)
            finally:
                self.ctx = saved
        return f

    def check(self, grp, shape, what, err, limit):
        ok = err <= limit and not math.isnan(err)
        print(f'  check {grp} {shape} {what}: {err:.3e} (limit {limit:.0e}) {"ok" if ok else "FAIL"}', flush=True)
        self.checks.append(dict(group=grp, shape=shape, what=what, err=err, limit=limit, ok=ok))


def spread(times):
    """Median, 10th and 90th percentile of per-call times (ms)."""
    t = sorted(times)
    return statistics.median(t), t[len(t) // 10], t[-1 - len(t) // 10]


def copy_fn(srcs, dsts):
    """fn(i): the plain device copy of input set i's bytes (half read, half written) on the op's own buffers:
    the ceiling at this size, launch and tail included."""
    return lambda i: dsts[i % len(dsts)].copy_(srcs[i % len(srcs)])


def copy_row(b, grp, shape, srcs, dsts, nbytes):
    b.row(grp, shape, 'copy, same bytes', copy_fn(srcs, dsts), bytes=nbytes)


def rel_err(out, ref):
    out, ref = out.double(), ref.double()
    return ((out - ref).norm() / ref.norm().clamp_min(1e-30)).item()


def compiled(fn):
    return torch.compile(fn, dynamic=False)


# ---------------------------------------------------------------- the memory ceiling

@group('copy')
def bench_copy(b):
    n = 1 << 30  # bytes per buffer; each copy reads and writes n
    src = torch.randint(0, 255, (n,), dtype=torch.uint8, device=b.dev)
    dst = torch.empty_like(src)
    b.row('copy', '1 GiB', 'torch copy_', lambda i: dst.copy_(src), bytes=2 * n)
    b.copy_tbs = b.rows[-1]['tbs']


# ---------------------------------------------------------------- rotary

def rope_tables(n, half, device):
    inv = 1.0 / (10000.0 ** (torch.arange(half, dtype=torch.float64, device=device) / half))
    ang = torch.arange(n, dtype=torch.float64, device=device)[:, None] * inv[None, :]
    return torch.cos(ang).float().contiguous(), torch.sin(ang).float().contiguous()


def rope_args(stream, x, out, cos, sin):
    """hk_rotary's arguments for whole-head rotate-half of x [B, N, H, D] (bf16) on the tables [N, D/2] (fp32, or
    bf16 like x)."""
    B, N, H, D = x.shape
    return hk.RotaryArgs(dtype=hk.DTYPE['bf16'], batch=B, seqlen=N, heads=H, head_dim=D, rotary_dim=D,
                         x=x.data_ptr(), out=out.data_ptr(), cos=cos.data_ptr(), sin=sin.data_ptr(),
                         table_positions=N, style=hk.ROTARY['half'], stream=stream,
                         table_type=hk.DTYPE['bf16' if cos.dtype == torch.bfloat16 else 'f32'])


def hf_tables(cos, sin):
    """libhk's fp32 [N, D/2] tables as the HF form's bf16 [N, D] (each half repeated)."""
    return tuple(torch.cat([t, t], dim=-1).to(torch.bfloat16) for t in (cos, sin))


def rope_hf(x, cos2, sin2):
    """The HF/NeoX form on bf16 tables [positions, D] (each half-table repeated): torch.compile's fastest rotary
    here (docs/perf/memory-bound.md); a different table format from libhk's fp32 [positions, D/2]."""
    h = x.shape[-1] // 2
    rot = torch.cat((-x[..., h:], x[..., :h]), dim=-1)
    return x * cos2[None, :, None, :] + rot * sin2[None, :, None, :]


def rope_torch(x, cos, sin):
    """Rotate-half (GPT-NeoX) in fp32 on libhk's own fp32 tables [positions, D/2]."""
    h = x.shape[-1] // 2
    c, s = cos[None, :, None, :], sin[None, :, None, :]
    x1, x2 = x[..., :h].float(), x[..., h:].float()
    return torch.cat([x1 * c - x2 * s, x2 * c + x1 * s], dim=-1).to(x.dtype)


ROTARY_SHAPES = [(16, 4096, 16, 128), (4, 8192, 32, 128)]  # B, N, H, D: the shapes


@group('rotary')
def bench_rotary(b):
    rope_c, rope_hf_c = compiled(rope_torch), compiled(rope_hf)
    for (B, N, H, D) in ROTARY_SHAPES:
        shape = f'B{B} N{N} H{H} D{D}'
        numel = B * N * H * D
        nbytes = 2 * numel * 2  # bf16 x read once, out written once (the tables stay in L2)
        sets = b.sets_for(nbytes)
        xs = [torch.randn(B, N, H, D, device=b.dev, dtype=torch.bfloat16) for _ in range(sets)]
        outs = [torch.empty_like(x) for x in xs]
        cos, sin = rope_tables(N, D // 2, b.dev)
        cos_h, sin_h = cos.bfloat16(), sin.bfloat16()
        args = [rope_args(b.stream, x, o, cos, sin) for x, o in zip(xs, outs)]
        args_h = [rope_args(b.stream, x, o, cos_h, sin_h) for x, o in zip(xs, outs)]

        def run_hk(i):
            b.lib.check(b.lib.lib.hk_rotary(b.ctx, args[i % sets]), 'hk_rotary')

        def run_hk_h(i):
            b.lib.check(b.lib.lib.hk_rotary(b.ctx, args_h[i % sets]), 'hk_rotary')

        def check_hk(tag):
            for run, c, s, kind in ((run_hk, cos, sin, ''), (run_hk_h, cos_h.float(), sin_h.float(), ', bf16 tables')):
                outs[0].fill_(float('nan'))
                run(0)
                torch.cuda.synchronize()
                b.check('rotary', shape, f'out vs fp32 eager{kind}{tag}', rel_err(outs[0], rope_torch(xs[0], c, s)), 1e-2)

        b.each_env(check_hk)
        cos2, sin2 = hf_tables(cos, sin)
        if not b.args.libhk_only:
            b.check('rotary', shape, 'torch.compile HF form vs fp32 eager',
                    rel_err(rope_hf_c(xs[0], cos2, sin2), rope_torch(xs[0], cos, sin)), 1e-2)
        # the shape's contenders in alternating rounds of 5 timed calls after 3 settling ones; torch eager (16x
        # slower) on its own
        b.alternate('rotary', shape, [
            ('libhk', run_hk),
            ('libhk, bf16 [N,D/2] tables', run_hk_h),
            ('torch.compile', lambda i: rope_c(xs[i % sets], cos, sin)),
            ('torch.compile, bf16 [N,D] tables', lambda i: rope_hf_c(xs[i % sets], cos2, sin2)),
            ('copy, same bytes', copy_fn(xs, outs))], bytes=nbytes, burst=5, settle=3)
        b.row('rotary', shape, 'torch eager', lambda i: rope_torch(xs[i % sets], cos, sin), bytes=nbytes)
        del xs, outs, args
        torch.cuda.empty_cache()


# ---------------------------------------------------------------- dropout + residual + LayerNorm

LN_SHAPES = [(65536, 1024), (65536, 4096), (32768, 8192)]
LN_P = 0.1  # --ln-p


def ln_torch(x, res, w, bias, p):
    z = F.dropout(x, p, training=True) + res
    return F.layer_norm(z, (x.shape[-1],), w, bias, 1e-5), z


class LnInputs:
    def __init__(self, b, T, D, sets):
        mk = lambda: torch.randn(T, D, device=b.dev, dtype=torch.bfloat16)  # noqa: E731
        self.x = [mk() for _ in range(sets)]
        self.res = [mk() for _ in range(sets)]
        self.y = [torch.empty_like(t) for t in self.x]
        self.z = [torch.empty_like(t) for t in self.x]
        self.mean = [torch.empty(T, device=b.dev, dtype=torch.float32) for _ in range(sets)]
        self.rstd = [torch.empty(T, device=b.dev, dtype=torch.float32) for _ in range(sets)]
        # the forward's packed keep mask (hk.h dropout_mask), which the backward reads instead of Philox
        self.words = (D + 31) // 32
        self.mask = [torch.empty(T * self.words, device=b.dev, dtype=torch.int32) for _ in range(sets)]
        self.w = (1.0 + 0.1 * torch.randn(D, device=b.dev)).to(torch.bfloat16)
        self.bias = (0.1 * torch.randn(D, device=b.dev)).to(torch.bfloat16)
        self.fwd = [hk.LnFusedArgs(norm=hk.NORM['layer'], dtype=hk.DTYPE['bf16'], param_type=hk.DTYPE['bf16'],
                                   rows=T, cols=D, x=self.x[s].data_ptr(), residual=self.res[s].data_ptr(),
                                   gamma=self.w.data_ptr(), beta=self.bias.data_ptr(), y=self.y[s].data_ptr(),
                                   residual_out=self.z[s].data_ptr(), mean=self.mean[s].data_ptr(),
                                   rstd=self.rstd[s].data_ptr(), epsilon=1e-5, dropout_p=LN_P, seed=1234,
                                   offset=s, stream=b.stream, dropout_mask=self.mask[s].data_ptr())
                    for s in range(sets)]

    def mask_bytes(self):
        return self.mask[0].numel() * 4

    def kept(self, s):
        """The mask words unpacked to [T, D] booleans."""
        bits = (self.mask[s].view(-1, self.words, 1) >> torch.arange(32, device=self.mask[s].device)) & 1
        return bits.view(self.mask[s].numel() // self.words, -1)[:, :self.x[s].shape[1]].bool()


@group('ln_fwd')
def bench_ln_fwd(b):
    ln_c = compiled(ln_torch)
    for T, D in LN_SHAPES:
        shape = f'T{T} D{D}'
        nbytes = 4 * T * D * 2  # x, residual read; y, residual_out written (bf16)
        sets = b.sets_for(nbytes)
        t = LnInputs(b, T, D, sets)
        nbytes += t.mask_bytes()  # and the packed dropout mask written

        def run_hk(i):
            b.lib.check(b.lib.lib.hk_ln_fused(b.ctx, t.fwd[i % sets]), 'hk_ln_fused')

        run_hk(0)
        torch.cuda.synchronize()
        ref = F.layer_norm(t.z[0].float(), (D,), t.w.float(), t.bias.float(), 1e-5)
        b.check('ln_fwd', shape, 'y vs fp32 LN of residual_out', rel_err(t.y[0], ref), 1e-2)
        kept = ((t.z[0] - t.res[0]) != 0).float().mean().item()
        b.check('ln_fwd', shape, '|kept fraction - (1-p)|', abs(kept - (1 - LN_P)), 2e-3)
        # z == residual can also be a kept x too small to change z in bf16, so only one direction is exact
        mask_kept = t.kept(0)
        b.check('ln_fwd', shape, 'elements with z != residual that dropout_mask drops',
                float((((t.z[0] - t.res[0]) != 0) & ~mask_kept).sum().item()), 0.0)
        b.check('ln_fwd', shape, '|dropout_mask kept fraction - (1-p)|', abs(mask_kept.float().mean().item() - (1 - LN_P)),
                2e-3)
        b.row('ln_fwd', shape, 'libhk', run_hk, bytes=nbytes)
        b.row('ln_fwd', shape, 'torch.compile',
              lambda i: ln_c(t.x[i % sets], t.res[i % sets], t.w, t.bias, LN_P), bytes=nbytes)
        b.row('ln_fwd', shape, 'torch eager',
              lambda i: ln_torch(t.x[i % sets], t.res[i % sets], t.w, t.bias, LN_P), bytes=nbytes)
        copy_row(b, 'ln_fwd', shape, [torch.cat([x, r]) for x, r in zip(t.x, t.res)],
                 [torch.cat([y, z]) for y, z in zip(t.y, t.z)], nbytes)
        del t
        torch.cuda.empty_cache()


@group('ln_bwd')
def bench_ln_bwd(b):
    ln_c = compiled(ln_torch)
    for T, D in LN_SHAPES:
        shape = f'T{T} D{D}'
        nbytes = 4 * T * D * 2  # dy, z read; dx, dresidual written (bf16); dgamma/dbeta are [D]
        sets = b.sets_for(nbytes)
        t = LnInputs(b, T, D, sets)
        for s in range(sets):  # the forward's z, mean, rstd
            b.lib.check(b.lib.lib.hk_ln_fused(b.ctx, t.fwd[s]), 'hk_ln_fused')
        dys = [torch.randn(T, D, device=b.dev, dtype=torch.bfloat16) for _ in range(sets)]
        dxs = [torch.empty_like(d) for d in dys]
        dres = [torch.empty_like(d) for d in dys]
        dgamma = torch.empty(D, device=b.dev, dtype=torch.float32)
        dbeta = torch.empty(D, device=b.dev, dtype=torch.float32)
        bwd = [hk.LnFusedBwdArgs(norm=hk.NORM['layer'], dtype=hk.DTYPE['bf16'], param_type=hk.DTYPE['bf16'],
                                 rows=T, cols=D, dy=dys[s].data_ptr(), z=t.z[s].data_ptr(), gamma=t.w.data_ptr(),
                                 mean=t.mean[s].data_ptr(), rstd=t.rstd[s].data_ptr(), dx=dxs[s].data_ptr(),
                                 dresidual=dres[s].data_ptr(), dgamma=dgamma.data_ptr(), dbeta=dbeta.data_ptr(),
                                 dropout_p=LN_P, seed=1234, offset=s, stream=b.stream,
                                 dropout_mask=t.mask[s].data_ptr())
               for s in range(sets)]
        # the same without the mask: Philox drawn again (seed, offset) instead
        philox = [hk.LnFusedBwdArgs.from_buffer_copy(a) for a in bwd]
        for a in philox:
            a.dropout_mask = None
        sizes = []  # the plan (and its workspace) may differ per --env value

        def ask(tag):
            size = hk.c_size_t()
            b.lib.check(b.lib.lib.hk_ln_fused_bwd_workspace_size(b.ctx, bwd[0], hk.ctypes.byref(size)), 'workspace_size')
            sizes.append(size.value)

        b.each_env(ask)
        ws = torch.empty(max(max(sizes), 1), device=b.dev, dtype=torch.uint8)
        for a in bwd + philox:
            a.workspace, a.workspace_size = ws.data_ptr(), max(sizes)

        def run_hk(i):
            b.lib.check(b.lib.lib.hk_ln_fused_bwd(b.ctx, bwd[i % sets]), 'hk_ln_fused_bwd')

        def run_hk_philox(i):
            b.lib.check(b.lib.lib.hk_ln_fused_bwd(b.ctx, philox[i % sets]), 'hk_ln_fused_bwd')

        # Reference: autograd of LN in fp32 on libhk's own z; the mask is the forward's (z - residual != 0).
        zf = t.z[0].float().requires_grad_(True)
        wf = t.w.float().requires_grad_(True)
        bf = t.bias.float().requires_grad_(True)
        yref = F.layer_norm(zf, (D,), wf, bf, 1e-5)
        dz, dw, db = torch.autograd.grad(yref, (zf, wf, bf), dys[0].float())

        def check_hk(tag):
            for buf in (dxs[0], dres[0], dgamma, dbeta):
                buf.fill_(float('nan'))
            run_hk(0)
            torch.cuda.synchronize()
            # dx is dresidual scaled where the mask keeps, else 0 (the mask bits themselves: tests/test_ln.c)
            kept = dxs[0] != 0
            b.check('ln_bwd', shape, 'dresidual' + tag, rel_err(dres[0], dz), 1e-2)
            b.check('ln_bwd', shape, 'dx vs dresidual / (1-p) where kept' + tag,
                    rel_err(dxs[0], torch.where(kept, dres[0].float() / (1 - LN_P), 0.0)), 1e-2)
            b.check('ln_bwd', shape, '|kept fraction of dx - (1-p)|' + tag, abs(kept.float().mean().item() - (1 - LN_P)), 2e-3)
            b.check('ln_bwd', shape, 'dgamma' + tag, rel_err(dgamma, dw), 1e-3)
            b.check('ln_bwd', shape, 'dbeta' + tag, rel_err(dbeta, db), 1e-3)
            first = dgamma.clone()
            run_hk(0)
            torch.cuda.synchronize()
            b.check('ln_bwd', shape, 'dgamma run-to-run difference' + tag, (dgamma - first).abs().max().item(), 0.0)

        b.each_env(check_hk)
        dx_mask, dres_mask = dxs[0].clone(), dres[0].clone()
        run_hk_philox(0)
        torch.cuda.synchronize()
        b.check('ln_bwd', shape, 'dx, dresidual: given mask vs Philox again (elements differing)',
                float((dxs[0] != dx_mask).sum().item() + (dres[0] != dres_mask).sum().item()), 0.0)
        b.row('ln_bwd', shape, 'libhk', run_hk, bytes=nbytes + t.mask_bytes())
        b.row('ln_bwd', shape, 'libhk, Philox', run_hk_philox, bytes=nbytes)
        del zf, wf, bf, yref, dz, dw, db

        # Peers: the backward of their own forward graph (dx, dresidual, dgamma, dbeta), retained for repeats.
        for impl, fn in () if b.args.libhk_only else (('torch.compile', ln_c), ('torch eager', ln_torch)):
            leaves, outs = [], []
            for s in range(sets):
                x = t.x[s].clone().requires_grad_(True)
                r = t.res[s].clone().requires_grad_(True)
                w = t.w.clone().requires_grad_(True)
                bb = t.bias.clone().requires_grad_(True)
                y, _ = fn(x, r, w, bb, LN_P)
                leaves.append((x, r, w, bb))
                outs.append(y)
            b.row('ln_bwd', shape, impl,
                  lambda i: torch.autograd.grad(outs[i % sets], leaves[i % sets], dys[i % sets], retain_graph=True),
                  bytes=nbytes)
            del leaves, outs
        del t, dys, dxs, dres, ws
        torch.cuda.empty_cache()


# ---------------------------------------------------------------- report

# ---------------------------------------------------------------- attention forward and backward (sm_90a)
ATTN_SHAPES = [  # (batch, heads_q, heads_kv, seqlen_q, seqlen_k, head_dim, causal)
    (16, 16, 16, 4096, 4096, 128, False), (16, 16, 16, 4096, 4096, 128, True), (4, 32, 8, 8192, 8192, 128, True),
    (8, 16, 16, 8192, 8192, 64, True), (1, 16, 16, 16384, 16384, 128, False), (16, 8, 8, 4096, 4096, 256, False),
    (8, 32, 8, 16, 8192, 128, False),  # decode-like; causal shapes keep sq == sk (SDPA's mask is top-left)
]


@group('attn')
def bench_attn(b):
    """hk_attn_fwd beside PyTorch SDPA on its cuDNN backend, called in alternation on the same [B, N, H, D] bf16
    tensors (SDPA sees them as [B, H, N, D] views); TFLOP/s count 4 B Hq Sq Sk D, halved when causal."""
    from torch.nn.attention import SDPBackend, sdpa_kernel
    for bt, hq, hkv, sq, sk, d, causal in ATTN_SHAPES:
        shape = f'B{bt} H{hq}/{hkv} {sq}x{sk} D{d}{" causal" if causal else ""}'
        q = torch.randn(bt, sq, hq, d, device=b.dev, dtype=torch.bfloat16)
        k = torch.randn(bt, sk, hkv, d, device=b.dev, dtype=torch.bfloat16)
        v = torch.randn(bt, sk, hkv, d, device=b.dev, dtype=torch.bfloat16)
        o = torch.empty_like(q)
        lse = torch.empty(bt, hq, sq, device=b.dev)
        st = lambda x: hk.I64x3(x.stride(0), x.stride(1), x.stride(2))  # noqa: E731
        a = hk.AttnFwdArgs(dtype=hk.DTYPE['bf16'], batch=bt, seqlen_q=sq, seqlen_k=sk, heads_q=hq, heads_kv=hkv,
                           head_dim=d, q=q.data_ptr(), q_stride=st(q), k=k.data_ptr(), k_stride=st(k), v=v.data_ptr(),
                           v_stride=st(v), o=o.data_ptr(), o_stride=st(o), lse=lse.data_ptr(), causal=int(causal),
                           stream=b.stream)

        def run_hk(i):
            b.lib.check(b.lib.lib.hk_attn_fwd(b.ctx, ctypes.byref(a)), 'hk_attn_fwd')

        qt, kt, vt = q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)
        if hkv != hq:  # cuDNN through SDPA takes GQA as repeated heads (outside the timed call)
            kt, vt = kt.repeat_interleave(hq // hkv, dim=1), vt.repeat_interleave(hq // hkv, dim=1)

        def run_cudnn(i):
            with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
                return F.scaled_dot_product_attention(qt, kt, vt, is_causal=causal)

        run_hk(0)
        ref = run_cudnn(0).transpose(1, 2)
        b.check('attn', shape, 'O vs cuDNN', rel_err(o, ref), 2e-2)
        flops = 4.0 * bt * hq * sq * sk * d / (2 if causal else 1)
        b.alternate('attn', shape, [('libhk', run_hk), ('torch cudnn', run_cudnn)], flops=flops)
        del q, k, v, o, lse, qt, kt, vt, ref
        torch.cuda.empty_cache()


@group('attn_bwd')
def bench_attn_bwd(b):
    """hk_attn_bwd (default mode, and deterministic) beside the backward of PyTorch SDPA on its cuDNN backend, called
    in alternation on the forward's shapes (O and LSE from hk_attn_fwd); TFLOP/s count 2.5x the forward's FLOPs
    (five products against two), halved when causal."""
    from torch.nn.attention import SDPBackend, sdpa_kernel
    for bt, hq, hkv, sq, sk, d, causal in ATTN_SHAPES:
        if sq < 512 or d > 128:  # past 128 features the backward takes its row kernels (no tiled instance yet)
            continue
        shape = f'B{bt} H{hq}/{hkv} {sq}x{sk} D{d}{" causal" if causal else ""}'
        q = torch.randn(bt, sq, hq, d, device=b.dev, dtype=torch.bfloat16)
        k = torch.randn(bt, sk, hkv, d, device=b.dev, dtype=torch.bfloat16)
        v = torch.randn(bt, sk, hkv, d, device=b.dev, dtype=torch.bfloat16)
        d_o = torch.randn(bt, sq, hq, d, device=b.dev, dtype=torch.bfloat16)
        o = torch.empty_like(q)
        lse = torch.empty(bt, hq, sq, device=b.dev)
        dq, dk, dv = torch.empty_like(q), torch.empty_like(k), torch.empty_like(v)
        st = lambda x: hk.I64x3(x.stride(0), x.stride(1), x.stride(2))  # noqa: E731
        common = dict(dtype=hk.DTYPE['bf16'], batch=bt, seqlen_q=sq, seqlen_k=sk, heads_q=hq, heads_kv=hkv,
                      head_dim=d, q=q.data_ptr(), q_stride=st(q), k=k.data_ptr(), k_stride=st(k), v=v.data_ptr(),
                      v_stride=st(v), o=o.data_ptr(), o_stride=st(o), lse=lse.data_ptr(), causal=int(causal),
                      stream=b.stream)
        fwd = hk.AttnFwdArgs(**common)
        b.lib.check(b.lib.lib.hk_attn_fwd(b.ctx, ctypes.byref(fwd)), 'hk_attn_fwd')
        args, spaces = [], []
        for det in (0, 1):
            a = hk.AttnBwdArgs(**common, d_o=d_o.data_ptr(), do_stride=st(d_o), dq=dq.data_ptr(), dq_stride=st(dq),
                               dk=dk.data_ptr(), dk_stride=st(dk), dv=dv.data_ptr(), dv_stride=st(dv),
                               deterministic=det)
            need = ctypes.c_size_t()
            b.lib.check(b.lib.lib.hk_attn_bwd_workspace_size(b.ctx, ctypes.byref(a), ctypes.byref(need)),
                        'hk_attn_bwd_workspace_size')
            spaces.append(torch.empty(max(need.value, 1), dtype=torch.uint8, device=b.dev))
            a.workspace, a.workspace_size = spaces[-1].data_ptr(), need.value
            args.append(a)

        def run_hk(det):
            return lambda i: b.lib.check(b.lib.lib.hk_attn_bwd(b.ctx, ctypes.byref(args[det])), 'hk_attn_bwd')

        qt, kt, vt = (x.transpose(1, 2).detach().requires_grad_() for x in (q, k, v))
        g = hq // hkv
        with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):  # GQA as repeated heads, as in the forward rows
            ot = F.scaled_dot_product_attention(qt, kt.repeat_interleave(g, dim=1), vt.repeat_interleave(g, dim=1),
                                                is_causal=causal)
        dot = d_o.transpose(1, 2)

        def run_cudnn(i):
            with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
                return torch.autograd.grad(ot, (qt, kt, vt), dot, retain_graph=True)

        run_hk(0)(0)
        ref = run_cudnn(0)
        for name, got, want in (('dQ', dq, ref[0]), ('dK', dk, ref[1]), ('dV', dv, ref[2])):
            b.check('attn_bwd', shape, f'{name} vs cuDNN', rel_err(got, want.transpose(1, 2)), 2e-2)
        flops = 2.5 * 4.0 * bt * hq * sq * sk * d / (2 if causal else 1)
        b.alternate('attn_bwd', shape, [('libhk', run_hk(0)), ('libhk deterministic', run_hk(1)),
                                        ('torch cudnn', run_cudnn)], flops=flops)
        del q, k, v, d_o, o, lse, dq, dk, dv, spaces, qt, kt, vt, ot, dot, ref
        torch.cuda.empty_cache()


def write_report(b, out_dir, device, driver):
    os.makedirs(out_dir, exist_ok=True)
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime('%Y-%m-%d %H:%M UTC')
    raw = dict(date=stamp, device=device, driver=driver, torch=torch.__version__, libhk=b.lib.version(),
               copy_tbs=b.copy_tbs, rows=b.rows, checks=b.checks, reps=b.args.reps)
    with open(os.path.join(out_dir, 'peers.json'), 'w') as f:
        json.dump(raw, f, indent=1)

    lines = [f'## libhk vs peers, {stamp}', '',
             f'Device: {device}, driver {driver}; PyTorch {torch.__version__}; libhk {b.lib.version()}. '
             f'Median of {b.args.reps} calls (CUDA events, after {b.args.warmup} warm-up calls), inputs rotated '
             f'over sets totalling >= 3x L2. Memory-bound rows count each input read once and each output '
             f'written once. Copy ceiling: {b.copy_tbs:.2f} TB/s (torch copy_ of 1 GiB, read + write).', '']
    for grp in dict.fromkeys(r['group'] for r in b.rows if r['group'] != 'copy'):
        rows = [r for r in b.rows if r['group'] == grp]
        lines += [f'### {grp}', '', '| shape | impl | time (us) | TB/s | % of copy | libhk speed-up |',
                  '|---|---|---|---|---|---|']
        for shape in dict.fromkeys(r['shape'] for r in rows):
            mine = next((r for r in rows if r['shape'] == shape and r['impl'] == 'libhk' and 'ms' in r), None)
            for r in (r for r in rows if r['shape'] == shape):
                if 'ms' not in r:
                    lines.append(f"| {shape} | {r['impl']} | failed | | | |")
                    continue
                speed = f"{r['ms'] / mine['ms']:.2f}x" if mine and r is not mine else ''
                rate = f"{r['tbs']:.3f}" if 'tbs' in r else f"{r['tflops']:.1f} TFLOP/s"
                pct = f"{r['pct_copy']:.1f}" if 'pct_copy' in r else ''
                lines.append(f"| {shape} | {r['impl']} | {r['ms'] * 1e3:.1f} | {rate} | {pct} | {speed} |")
        lines.append('')
    bad = [c for c in b.checks if not c['ok']]
    lines += [f"Checks before timing: {len(b.checks) - len(bad)} passed, {len(bad)} failed"
              + ''.join(f"; FAILED {c['group']} {c['shape']} {c['what']} = {c['err']:.3e}" for c in bad), '']
    with open(os.path.join(out_dir, 'RESULTS.md'), 'w') as f:
        f.write('\n'.join(lines))
    print('\n'.join(lines))

    try:
        import matplotlib
        matplotlib.use('Agg')
        import matplotlib.pyplot as plt
    except ImportError:
        print('matplotlib missing: no chart')
        return
    cases = [(r['group'], r['shape']) for r in b.rows if r.get('impl') == 'libhk' and 'pct_copy' in r]
    impls = list(dict.fromkeys(r['impl'] for r in b.rows if r['group'] != 'copy' and 'ms' in r
                               and r['impl'] != 'copy, same bytes' and not r['impl'].startswith('libhk ')))
    fig, ax = plt.subplots(figsize=(max(6, 1.6 * len(cases)), 4.5))
    width = 0.8 / len(impls)
    for k, impl in enumerate(impls):
        vals = [next((r.get('pct_copy', 0) for r in b.rows
                      if (r['group'], r['shape'], r['impl']) == (g, s, impl) and 'ms' in r), 0) for g, s in cases]
        ax.bar([i + k * width for i in range(len(cases))], vals, width, label=impl)
    ax.axhline(100, color='k', lw=0.8, ls='--')
    ax.set_xticks([i + width for i in range(len(cases))])
    ax.set_xticklabels([f'{g}\n{s}' for g, s in cases], fontsize=7)
    ax.set_ylabel(f'% of copy bandwidth ({b.copy_tbs:.2f} TB/s)')
    ax.set_title(f'libhk vs peers, memory-bound ops, {device}')
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(os.path.join(out_dir, 'peers.png'), dpi=120)


def main():
    global LN_P
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--lib', default=None, help='path of libhk.so (default: $HK_LIB, then the loader path)')
    ap.add_argument('--out', default='bench-out')
    ap.add_argument('--only', default='', help='comma-separated groups (copy always runs)')
    ap.add_argument('--reps', type=int, default=100)
    ap.add_argument('--warmup', type=int, default=10)
    ap.add_argument('--libhk-only', action='store_true', help='skip the PyTorch rows (copies still run)')
    ap.add_argument('--ln-p', type=float, default=LN_P, help='dropout probability of the LN rows (0: no mask)')
    ap.add_argument('--env', default='', help='NAME=v1,v2: time libhk once per value of environment variable NAME, '
                    'each on a context created under it (e.g. HK_CUDA_TUNE_GEMM=p144,sk64), two alternating rounds')
    args = ap.parse_args()
    LN_P = args.ln_p
    b = Bench(args)
    device = torch.cuda.get_device_name(0)
    driver = os.popen('nvidia-smi --query-gpu=driver_version --format=csv,noheader 2>/dev/null').read().strip()
    print(f'{device}, driver {driver}, {b.props.multi_processor_count} SMs, L2 {b.l2 >> 20} MiB; '
          f'libhk {b.lib.version()} arch {b.lib.lib.hk_context_arch(b.ctx).decode()}', flush=True)
    only = set(filter(None, args.only.split(',')))
    failed = False
    for name, fn in GROUPS:
        if name == 'copy' or not only or name in only:
            try:
                fn(b)
            except Exception as e:  # report it and go on with the other groups
                import traceback
                traceback.print_exc()
                print(f'group {name} FAILED: {e}', flush=True)
                failed = True
                torch.cuda.empty_cache()
    write_report(b, args.out, device, driver)
    return 1 if failed or any(not c['ok'] for c in b.checks) else 0


if __name__ == '__main__':
    sys.exit(main())
