#!/usr/bin/env python3
"""What the varlen offsets check costs hk_attn_fwd on a GPU: the same problem called as a fixed-length batch
[B, N, H, D] and as varlen (the same tensors viewed as [B * N, H, D] with cu_seqlens = 0, N, 2N, ...). The varlen
call waits for its stream and copies the offsets to the host before it launches (src/varlen.c), so it cannot queue
ahead of the GPU; the fixed-length call can.

Two figures per shape, each the median over rounds that alternate the two forms:
  queued: wall time per call of `--calls` back-to-back calls, then one synchronize (what a serving loop sees);
  single: CUDA-event time of one call bracketed alone after a synchronize (the kernel plus what the check adds
          inside the bracket).
Before timing, both forms' O (and LSE) are compared: the kernel is the same, so they must agree to rounding.

usage: attn_varlen_cost.py --lib build/libhk.so.1 [--rounds 5] [--calls 50]   (exit 1 when a form fails or
disagrees)
"""
import argparse
import ctypes
import os
import statistics
import sys
import time

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'bench'))
import hk  # noqa: E402

SHAPES = [  # (batch, seqlen, heads, head_dim, causal): decode-sized and launch-bound first, then kernel-bound
    (8, 128, 16, 128, False), (32, 256, 16, 64, True), (4, 1024, 16, 128, True), (2, 4096, 16, 128, True),
]


def attn_args(q, k, v, o, lse, b, n, h, d, causal, stream, cu=None):
    if cu is None:
        st = lambda x: hk.I64x3(x.stride(0), x.stride(1), x.stride(2))  # noqa: E731
        extra = {}
    else:  # packed tokens: the batch stride is ignored
        st = lambda x: hk.I64x3(0, x.stride(1), x.stride(2))  # noqa: E731
        extra = dict(cu_seqlens_q=cu.data_ptr(), cu_seqlens_k=cu.data_ptr())
    return hk.AttnFwdArgs(dtype=hk.DTYPE['bf16'], batch=b, seqlen_q=n, seqlen_k=n, heads_q=h, heads_kv=h,
                          head_dim=d, q=q.data_ptr(), q_stride=st(q), k=k.data_ptr(), k_stride=st(k),
                          v=v.data_ptr(), v_stride=st(v), o=o.data_ptr(), o_stride=st(o), lse=lse.data_ptr(),
                          causal=int(causal), stream=stream, **extra)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--lib', default=None)
    ap.add_argument('--rounds', type=int, default=5)
    ap.add_argument('--calls', type=int, default=50)
    args = ap.parse_args()
    L = hk.Lib(args.lib)
    ctx = L.context('cuda')
    stream = torch.cuda.current_stream().cuda_stream or None
    torch.manual_seed(0)
    bad = 0
    print(f'device: {torch.cuda.get_device_name(0)}; libhk {L.version()}')
    print(f'{"shape":28s} {"fixed queued":>13s} {"varlen queued":>14s} {"cost":>9s} '
          f'{"fixed single":>13s} {"varlen single":>14s} {"cost":>9s}  (us per call)')
    for b, n, h, d, causal in SHAPES:
        shape = f'B{b} N{n} H{h} D{d}{" causal" if causal else ""}'
        q, k, v = (torch.randn(b, n, h, d, device='cuda', dtype=torch.bfloat16) for _ in range(3))
        o_fix = torch.full_like(q, float('nan'))
        o_var = torch.full_like(q, float('nan'))
        lse_fix = torch.full((b, h, n), float('nan'), device='cuda')
        lse_var = torch.full((h, b * n), float('nan'), device='cuda')
        cu = torch.arange(0, b * n + 1, n, dtype=torch.int32, device='cuda')
        flat = lambda x: x.view(b * n, h, d)  # noqa: E731
        a_fix = attn_args(q, k, v, o_fix, lse_fix, b, n, h, d, causal, stream)
        a_var = attn_args(flat(q), flat(k), flat(v), flat(o_var), lse_var, b, n, h, d, causal, stream, cu)
        forms = {}
        for name, a in (('fixed', a_fix), ('varlen', a_var)):
            forms[name] = lambda a=a: L.check(L.lib.hk_attn_fwd(ctx, ctypes.byref(a)), 'hk_attn_fwd')
        try:
            for f in forms.values():
                f()
            torch.cuda.synchronize()
        except hk.HkError as e:
            print(f'{shape:28s} FAILED: {e}')
            bad += 1
            continue
        lse_var_b = lse_var.view(h, b, n).transpose(0, 1)
        diff = max((o_fix.float() - o_var.float()).abs().max().item(), (lse_fix - lse_var_b).abs().max().item())
        if not diff <= 1e-2:  # NaN fails
            print(f'{shape:28s} DISAGREE: max |fixed - varlen| = {diff}')
            bad += 1
            continue
        queued = {name: [] for name in forms}
        single = {name: [] for name in forms}
        for _ in range(args.rounds):
            for name, f in forms.items():
                torch.cuda.synchronize()
                t0 = time.perf_counter()
                for _ in range(args.calls):
                    f()
                torch.cuda.synchronize()
                queued[name].append((time.perf_counter() - t0) / args.calls * 1e6)
                ev = [torch.cuda.Event(enable_timing=True) for _ in range(2)]
                torch.cuda.synchronize()
                ev[0].record()
                f()
                ev[1].record()
                torch.cuda.synchronize()
                single[name].append(ev[0].elapsed_time(ev[1]) * 1e3)
        qf, qv = statistics.median(queued['fixed']), statistics.median(queued['varlen'])
        sf, sv = statistics.median(single['fixed']), statistics.median(single['varlen'])
        print(f'{shape:28s} {qf:13.1f} {qv:14.1f} {qv - qf:+9.1f} {sf:13.1f} {sv:14.1f} {sv - sf:+9.1f}')
        del q, k, v, o_fix, o_var, lse_fix, lse_var
        torch.cuda.empty_cache()
    print(f'{len(SHAPES) - bad} of {len(SHAPES)} shapes timed; {bad} failed or disagreed')
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
