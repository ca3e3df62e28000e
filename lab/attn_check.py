"""hk_attn_fwd on the GPU against a float64 PyTorch reference, for the features tests/test_attn.c does not cover
yet (sliding window, softcap, head_dim_v, head_dim 192/256, f16, the packed-QKV view, long ragged sequences):
fresh random inputs, O and LSE poisoned with NaN first, every element checked, NaN never passes.

usage: attn_check.py --lib build/libhk.so   (prints one line per case and a count; exit 1 on any failure)
"""
import argparse
import ctypes
import itertools
import math
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), '..', 'bench'))
import hk  # noqa: E402

TOL = {'bf16': (2e-2, 2 ** -6), 'f16': (4e-3, 2 ** -8)}
TORCH = {'bf16': torch.bfloat16, 'f16': torch.float16}
UNIT_ROUNDOFF = {'bf16': 2 ** -8, 'f16': 2 ** -11}


def reference(q, k, v, causal, window, softcap, scale):
    """q [Sq, H, D], k/v [Sk, Hkv, *] of one sequence in float64 -> O [Sq, H, Dv], LSE [H, Sq], and P|V| [Sq, H, Dv]
    (what bounds the error of rounding P to the MMA's input type)."""
    sq, h, _ = q.shape
    sk, hkv, _ = k.shape
    g = h // hkv
    kk = k.repeat_interleave(g, dim=1)
    vv = v.repeat_interleave(g, dim=1)
    s = torch.einsum('qhd,khd->hqk', q, kk) * scale
    if softcap:
        s = softcap * torch.tanh(s / softcap)
    i = torch.arange(sq, device=q.device)[:, None]
    j = torch.arange(sk, device=q.device)[None, :]
    off = sk - sq
    ok = torch.ones(sq, sk, dtype=torch.bool, device=q.device)
    if window:
        left, right = window
        if left >= 0:
            ok &= j >= i + off - left
        if right >= 0 and not causal:
            ok &= j <= i + off + right
    if causal:
        ok &= j <= i + off
    s = s.masked_fill(~ok, float('-inf'))
    lse = torch.logsumexp(s, dim=-1)
    p = torch.exp(s - lse[..., None]).nan_to_num(0.0)
    o = torch.einsum('hqk,khd->qhd', p, vv)
    return o, lse, torch.einsum('hqk,khd->qhd', p, vv.abs())


def run_case(L, ctx, name, dt='bf16', b=2, sq=128, sk=128, h=4, hkv=4, d=128, dv=0, causal=False, window=None,
             softcap=0.0, varlen=None, packed=False, scale=0.0):
    dev = 'cuda'
    dv_ = dv or d
    t = TORCH[dt]
    if varlen:
        lq, lk = varlen
        b = len(lq)
        tq, tk = sum(lq), sum(lk)
        q = torch.randn(tq, h, d, device=dev).to(t)
        k = torch.randn(tk, hkv, d, device=dev).to(t)
        v = torch.randn(tk, hkv, dv_, device=dev).to(t)
        o = torch.full((tq, h, dv_), float('nan'), device=dev, dtype=t)
        cu_q = torch.tensor([0, *itertools.accumulate(lq)], dtype=torch.int32, device=dev)
        cu_k = torch.tensor([0, *itertools.accumulate(lk)], dtype=torch.int32, device=dev)
        lse = torch.full((h, tq), float('nan'), device=dev)
        strides = lambda x: (0, x.stride(0), x.stride(1))  # noqa: E731
    else:
        if packed:  # [B, N, 3, H, D] viewed as three strided tensors
            qkv = torch.randn(b, sq, 3, h, d, device=dev).to(t)
            q, k, v = qkv[:, :, 0], qkv[:, :, 1], qkv[:, :, 2]
            sk, hkv, dv_ = sq, h, d
        else:
            q = torch.randn(b, sq, h, d, device=dev).to(t)
            k = torch.randn(b, sk, hkv, d, device=dev).to(t)
            v = torch.randn(b, sk, hkv, dv_, device=dev).to(t)
        o = torch.full((b, sq, h, dv_), float('nan'), device=dev, dtype=t)
        lse = torch.full((b, h, sq), float('nan'), device=dev)
        strides = lambda x: (x.stride(0), x.stride(1), x.stride(2))  # noqa: E731
    a = hk.AttnFwdArgs(dtype=hk.DTYPE[dt], batch=b, seqlen_q=max(varlen[0]) if varlen else sq,
                       seqlen_k=max(varlen[1]) if varlen else sk, heads_q=h, heads_kv=hkv, head_dim=d,
                       q=q.data_ptr(), q_stride=hk.I64x3(*strides(q)), k=k.data_ptr(), k_stride=hk.I64x3(*strides(k)),
                       v=v.data_ptr(), v_stride=hk.I64x3(*strides(v)), o=o.data_ptr(), o_stride=hk.I64x3(*strides(o)),
                       lse=lse.data_ptr(), softmax_scale=scale, causal=int(causal),
                       cu_seqlens_q=cu_q.data_ptr() if varlen else None,
                       cu_seqlens_k=cu_k.data_ptr() if varlen else None,
                       stream=torch.cuda.current_stream().cuda_stream,
                       window=int(window is not None), window_left=window[0] if window else 0,
                       window_right=window[1] if window else 0, softcap=softcap, head_dim_v=dv)
    st = L.lib.hk_attn_fwd(ctx, ctypes.byref(a))
    if st != hk.OK:
        print(f'FAIL {name}: status {st}: {L.lib.hk_last_error().decode()}')
        return False
    torch.cuda.synchronize()
    sc = scale or 1.0 / math.sqrt(d)
    outs, lses, refs, rlses, pvs = [], [], [], [], []
    for s in range(b):
        if varlen:
            qs, ks = slice(int(cu_q[s]), int(cu_q[s + 1])), slice(int(cu_k[s]), int(cu_k[s + 1]))
            ro, rl, pv = reference(q[qs].double(), k[ks].double(), v[ks].double(), causal, window, softcap, sc)
            outs.append(o[qs].double())
            lses.append(lse[:, qs].double())
        else:
            ro, rl, pv = reference(q[s].double(), k[s].double(), v[s].double(), causal, window, softcap, sc)
            outs.append(o[s].double())
            lses.append(lse[s].double())
        refs.append(ro)
        rlses.append(rl)
        pvs.append(pv)
    out, ref, pv = torch.cat(outs), torch.cat(refs), torch.cat(pvs)
    lo, rlo = torch.cat(lses, dim=-1), torch.cat(rlses, dim=-1)
    atol, rtol = TOL[dt]
    rms = ref.pow(2).mean().sqrt().item() if ref.numel() else 0.0
    # P enters the PV product rounded to the input type (unit roundoff u), so O_ij may be off by u * sum_k P_ik |V_kj|
    # on top of the output's own rounding: large against the tensor's rms where a few keys' values cancel.
    u = UNIT_ROUNDOFF[dt]
    allowed = atol * rms + rtol * ref.abs() + 2 * u * pv
    bad_o = ~((out - ref).abs() <= allowed)
    beyond_rms_bound = int((~((out - ref).abs() <= atol * rms + rtol * ref.abs())).sum())
    fin = torch.isfinite(rlo)
    bad_l = (fin & ~((lo - rlo).abs() <= 1e-4 * torch.clamp(rlo.abs(), min=1.0))) | (~fin & (lo != rlo))
    ok = not bad_o.any().item() and not bad_l.any().item()
    for i in bad_o.flatten().nonzero()[:3].flatten().tolist():  # where and by how much, for judging the bound
        row, rest = divmod(i, out[0].numel())
        print(f'  {name}: O row {row} [{rest}]: got {out.flatten()[i].item():.6g}, want {ref.flatten()[i].item():.6g}, '
              f'allowed {allowed.flatten()[i].item():.3g}, P|V| {pv.flatten()[i].item():.3g}')
    err = ((out - ref).norm() / max(ref.norm().item(), 1e-30)).item() if ref.numel() else 0.0
    print(f'{"ok  " if ok else "FAIL"} {name}: rel {err:.2e}, bad O {int(bad_o.sum())}/{out.numel()}, '
          f'bad LSE {int(bad_l.sum())}/{lo.numel()} (O beyond the rms-only bound: {beyond_rms_bound})')
    return ok


CASES = [
    ('d64_full', dict(d=64)),
    ('d128_causal', dict(d=128, causal=True, sq=300, sk=300)),
    ('d256_full', dict(d=256, sq=200, sk=333)),
    ('d256_causal_f16', dict(d=256, causal=True, dt='f16', sq=257, sk=257)),
    ('d192_dv128_causal', dict(d=192, dv=128, causal=True, sq=400, sk=400, h=2, hkv=1)),
    ('d192_dv128_full_f16', dict(d=192, dv=128, dt='f16', sq=129, sk=1000)),
    ('d96_padded', dict(d=96, sq=100, sk=150, causal=True)),
    ('d40_dv72_padded', dict(d=40, dv=72, sq=77, sk=130)),
    ('window_left', dict(window=(64, -1), sq=500, sk=500)),
    ('window_both', dict(window=(100, 30), sq=500, sk=600)),
    ('window_causal', dict(window=(50, 20), causal=True, sq=700, sk=700, h=8, hkv=2)),
    ('window_tiny', dict(window=(0, 0), sq=129, sk=129)),
    ('softcap', dict(softcap=30.0, sq=256, sk=256, scale=0.5)),
    ('softcap_causal_gqa8', dict(softcap=20.0, causal=True, sq=300, sk=300, h=8, hkv=1)),
    ('neg_scale', dict(scale=-0.1, sq=100, sk=100)),
    ('q_gt_k_causal', dict(causal=True, sq=1000, sk=127)),
    ('q_lt_k_causal', dict(causal=True, sq=7, sk=4097, d=64)),
    ('decode_gqa', dict(sq=1, sk=8192, h=32, hkv=8, b=4, causal=True)),
    ('mqa_4097', dict(sq=4097, sk=4097, h=4, hkv=1, b=1, causal=True, d=64)),
    ('packed_qkv', dict(packed=True, sq=333, h=4, d=128, causal=True)),
    ('varlen_ragged', dict(varlen=([1, 0, 700, 129, 3000], [5, 9, 700, 1, 3000]), causal=True, h=4, hkv=2)),
    ('varlen_window_f16', dict(varlen=([64, 300, 1], [64, 900, 1]), window=(40, 10), dt='f16', d=64)),
    ('varlen_d256', dict(varlen=([100, 257], [300, 257]), d=256, causal=True)),
]


def main(run=run_case, cases=CASES, label='attn_check'):
    """Shared by attn_bwd_check.py: run(L, ctx, name, **kw) -> bool over (name, kw) cases."""
    ap = argparse.ArgumentParser()
    ap.add_argument('--lib', default='build/libhk.so')
    ap.add_argument('--seed', type=int, default=0)
    ap.add_argument('--only', default='', help='comma-separated case names')
    args = ap.parse_args()
    torch.manual_seed(args.seed or int.from_bytes(os.urandom(4), 'little'))
    L = hk.Lib(args.lib)
    ctx = L.context('cuda')
    cases = [c for c in cases if not args.only or c[0] in args.only.split(',')]
    passed = sum(run(L, ctx, name, **kw) for name, kw in cases)
    print(f'{label}: {passed} passed, {len(cases) - passed} failed')
    return 0 if passed == len(cases) else 1


if __name__ == '__main__':
    sys.exit(main())
