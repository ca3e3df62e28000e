"""hk_attn_bwd on the GPU against float64 PyTorch autograd through attn_check.py's reference, at the attention
issue's shapes (N 1 to 4097, seqlen_q < and > seqlen_k, causal, windows, softcap, GQA 1/4/8 and MQA, every
head_dim, bf16 and f16, ragged varlen with empty and one-token sequences, the packed-QKV view): fresh random
inputs, O and LSE from the float64 forward (O rounded to the dtype, as a caller stores it), dQ, dK, dV poisoned
with NaN first, every element checked, NaN never passes. Every case runs in the default mode and deterministic;
the deterministic mode must give the same bytes over 10 runs into freshly poisoned buffers.

usage: attn_bwd_check.py --lib build/libhk.so   (prints one line per case and a count; exit 1 on any failure)
"""
import ctypes
import itertools
import math
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), '..', 'bench'))
sys.path.insert(0, os.path.dirname(__file__))
import hk  # noqa: E402
import attn_check  # noqa: E402
from attn_check import TORCH, reference  # noqa: E402

DET_RUNS = 10
# (atol in units of the reference's rms, rtol): looser than the forward's, since P and dS are rounded to the
# dtype before the products that form dV, dK and dQ
TOL = {'bf16': (3e-2, 2 ** -5), 'f16': (1e-2, 2 ** -7)}


def strides(x, varlen):
    return hk.I64x3(0, x.stride(0), x.stride(1)) if varlen else hk.I64x3(x.stride(0), x.stride(1), x.stride(2))


def run_case(L, ctx, name, dt='bf16', b=2, sq=128, sk=128, h=4, hkv=4, d=128, dv=0, causal=False, window=None,
             softcap=0.0, varlen=None, packed=False, scale=0.0):
    dev, t, dv_ = 'cuda', TORCH[dt], dv or d
    if varlen:
        lq, lk = varlen
        b, tq, tk = len(lq), sum(lq), sum(lk)
        q = torch.randn(tq, h, d, device=dev).to(t)
        k = torch.randn(tk, hkv, d, device=dev).to(t)
        v = torch.randn(tk, hkv, dv_, device=dev).to(t)
        cu_q = [0, *itertools.accumulate(lq)]
        cu_k = [0, *itertools.accumulate(lk)]
        seqs = [(slice(cu_q[s], cu_q[s + 1]), slice(cu_k[s], cu_k[s + 1])) for s in range(b)]
        grads = lambda: [torch.full_like(x, float('nan')) for x in (q, k, v)]  # noqa: E731
    elif packed:  # [B, N, 3, H, D] viewed as three strided tensors, the gradients likewise
        qkv = torch.randn(b, sq, 3, h, d, device=dev).to(t)
        q, k, v = qkv[:, :, 0], qkv[:, :, 1], qkv[:, :, 2]
        sk, hkv, dv_ = sq, h, d
        seqs = [(s, s) for s in range(b)]

        def grads():
            g = torch.full_like(qkv, float('nan'))
            return [g[:, :, 0], g[:, :, 1], g[:, :, 2]]
    else:
        q = torch.randn(b, sq, h, d, device=dev).to(t)
        k = torch.randn(b, sk, hkv, d, device=dev).to(t)
        v = torch.randn(b, sk, hkv, dv_, device=dev).to(t)
        seqs = [(s, s) for s in range(b)]
        grads = lambda: [torch.full_like(x, float('nan')) for x in (q, k, v)]  # noqa: E731
    sc = scale or 1.0 / math.sqrt(d)
    d_o = torch.randn(*q.shape[:-1], dv_, device=dev).to(t)
    o = torch.empty_like(d_o)
    lse = torch.empty((h, q.shape[0]) if varlen else (b, h, sq), device=dev)
    refs = [torch.zeros_like(x, dtype=torch.float64) for x in (q, k, v)]
    for qs, ks in seqs:  # the float64 forward (O, LSE) and autograd's gradients, per sequence
        leaves = [x[s].double().requires_grad_() for x, s in ((q, qs), (k, ks), (v, ks))]
        ro, rl = reference(*leaves, causal, window, softcap, sc)
        o[qs] = ro.detach().to(t)
        if varlen:
            lse[:, qs] = rl.detach().float()
        else:
            lse[qs] = rl.detach().float()
        if ro.numel():
            ro.backward(d_o[qs].double())
        for r, leaf, s in zip(refs, leaves, (qs, ks, ks)):
            if leaf.grad is not None:
                r[s] = leaf.grad
    cu = [torch.tensor(c, dtype=torch.int32, device=dev) for c in (cu_q, cu_k)] if varlen else [None, None]

    def call(deterministic):
        g = grads()
        a = hk.AttnBwdArgs(dtype=hk.DTYPE[dt], batch=b, seqlen_q=max(varlen[0]) if varlen else sq,
                           seqlen_k=max(varlen[1]) if varlen else sk, heads_q=h, heads_kv=hkv, head_dim=d,
                           q=q.data_ptr(), q_stride=strides(q, varlen), k=k.data_ptr(), k_stride=strides(k, varlen),
                           v=v.data_ptr(), v_stride=strides(v, varlen), o=o.data_ptr(), o_stride=strides(o, varlen),
                           d_o=d_o.data_ptr(), do_stride=strides(d_o, varlen), lse=lse.data_ptr(),
                           dq=g[0].data_ptr(), dq_stride=strides(g[0], varlen), dk=g[1].data_ptr(),
                           dk_stride=strides(g[1], varlen), dv=g[2].data_ptr(), dv_stride=strides(g[2], varlen),
                           softmax_scale=scale, causal=int(causal), deterministic=int(deterministic),
                           cu_seqlens_q=cu[0].data_ptr() if varlen else None,
                           cu_seqlens_k=cu[1].data_ptr() if varlen else None,
                           stream=torch.cuda.current_stream().cuda_stream,
                           window=int(window is not None), window_left=window[0] if window else 0,
                           window_right=window[1] if window else 0, softcap=softcap, head_dim_v=dv)
        need = ctypes.c_size_t()
        L.check(L.lib.hk_attn_bwd_workspace_size(ctx, ctypes.byref(a), ctypes.byref(need)), 'workspace_size')
        ws = torch.full((need.value,), 0xAB, dtype=torch.uint8, device=dev)
        a.workspace, a.workspace_size = (ws.data_ptr() if need.value else None), need.value
        L.check(L.lib.hk_attn_bwd(ctx, ctypes.byref(a)), 'hk_attn_bwd')
        torch.cuda.synchronize()
        return g

    atol, rtol = TOL[dt]
    ok, notes = True, []
    for deterministic in (0, 1):
        try:
            g = call(deterministic)
        except hk.HkError as e:
            print(f'FAIL {name}: {e}')
            return False
        for label, got, ref in zip(('dQ', 'dK', 'dV'), g, refs):
            got = got.double()
            rms = ref.pow(2).mean().sqrt().item() if ref.numel() else 0.0
            bad = ~((got - ref).abs() <= atol * rms + rtol * ref.abs())
            err = ((got - ref).norm() / max(ref.norm().item(), 1e-30)).item() if ref.numel() else 0.0
            ok &= not bad.any().item()
            notes.append(f'{label}{"d" if deterministic else ""} {err:.1e}/{int(bad.sum())}')
        if deterministic:
            first = [x.clone() for x in g]
            for _ in range(DET_RUNS - 1):
                again = call(1)
                if not all(torch.equal(x.view(torch.int16), y.view(torch.int16)) for x, y in zip(first, again)):
                    notes.append('deterministic runs differ')
                    ok = False
                    break
    print(f'{"ok  " if ok else "FAIL"} {name}: rel err/bad ' + ', '.join(notes))
    return ok


CASES = [
    ('n1', dict(sq=1, sk=1, d=64, b=1, h=1, hkv=1)),
    ('n7_causal', dict(sq=7, sk=7, d=64, causal=True)),
    ('n127_d64', dict(sq=127, sk=127, d=64)),
    ('n128_causal_d128', dict(sq=128, sk=128, causal=True)),
    ('n129_gqa4_d64', dict(sq=129, sk=129, h=8, hkv=2, d=64)),
    ('n1000_causal_gqa8', dict(sq=1000, sk=1000, h=8, hkv=1, causal=True)),
    ('n4097_causal_d64', dict(sq=4097, sk=4097, h=2, hkv=1, b=1, d=64, causal=True)),
    ('q_lt_k_causal', dict(sq=100, sk=1000, causal=True)),
    ('q_gt_k_causal', dict(sq=1000, sk=127, causal=True, d=64)),
    ('mqa_full', dict(sq=300, sk=500, h=8, hkv=1)),
    ('d256_causal', dict(d=256, sq=200, sk=200, causal=True)),
    ('d192_dv128_causal', dict(d=192, dv=128, sq=300, sk=300, h=2, hkv=1, causal=True)),
    ('d96_padded_f16', dict(d=96, sq=100, sk=150, dt='f16', causal=True)),
    ('d40_dv72', dict(d=40, dv=72, sq=77, sk=130)),
    ('f16_d128', dict(dt='f16', sq=256, sk=256)),
    ('window_left', dict(window=(64, -1), sq=500, sk=500, d=64)),
    ('window_both', dict(window=(100, 30), sq=500, sk=600)),
    ('window_causal_gqa4', dict(window=(50, 20), causal=True, sq=700, sk=700, h=8, hkv=2)),
    ('softcap', dict(softcap=30.0, sq=256, sk=256, scale=0.5)),
    ('softcap_causal_f16', dict(softcap=20.0, causal=True, sq=300, sk=300, dt='f16', d=64)),
    ('neg_scale', dict(scale=-0.1, sq=100, sk=100, d=64)),
    ('packed_qkv', dict(packed=True, sq=333, h=4, d=128, causal=True)),
    ('varlen_ragged', dict(varlen=([1, 0, 700, 129, 3000], [5, 9, 700, 1, 3000]), causal=True, h=4, hkv=2)),
    ('varlen_window_f16', dict(varlen=([64, 300, 1], [64, 900, 1]), window=(40, 10), dt='f16', d=64)),
    ('varlen_d256', dict(varlen=([100, 257], [300, 257]), d=256, causal=True)),
]


if __name__ == '__main__':
    sys.exit(attn_check.main(run_case, CASES, 'attn_bwd_check'))
