#!/usr/bin/env python3
"""A small pre-norm transformer block (RMSNorm, GQA causal attention with rotary embeddings, a SiLU MLP) trained
for a few steps twice from the same initial weights: once through libhk (hk.matmul, hk.rotary, hk.attention,
hk.dropout_add_norm, their backwards included) and once in plain PyTorch. bf16 compute, fp32 master weights.
The losses of the two runs must agree within bf16 tolerance, and training must lower the loss.
Usage: train_step.py [--steps N] [--device cpu|cuda]"""
import argparse
import math
import os
import sys

try:
    import torch
    import torch.nn.functional as F
except ImportError:
    print('SKIP: torch is not installed')
    sys.exit(77)
if os.environ.get('HK_SANITIZE', 'none') not in ('', 'none'):
    print('SKIP: libhk is built with a sanitizer that python lacks')
    sys.exit(77)
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'python'))
import hk  # noqa: E402

B, S, D, H, G, DH, FF = 2, 32, 64, 4, 2, 16, 128  # batch, seqlen, model dim, heads, kv heads, head dim, MLP
BF16 = torch.bfloat16


def init_weights(device):
    g = torch.Generator().manual_seed(0)

    def w(*shape, scale):
        return (torch.randn(*shape, generator=g) * scale).to(device).requires_grad_()

    return {'norm1': (1 + w(D, scale=0.1)).detach().requires_grad_(), 'wqkv': w((H + 2 * G) * DH, D, scale=D ** -0.5),
            'wo': w(D, H * DH, scale=(H * DH) ** -0.5), 'norm2': (1 + w(D, scale=0.1)).detach().requires_grad_(),
            'w1': w(FF, D, scale=D ** -0.5), 'w2': w(D, FF, scale=FF ** -0.5)}


def tables(device):
    inv = 1.0 / 10000 ** (torch.arange(DH // 2, dtype=torch.float64) / (DH // 2))
    ang = torch.arange(S, dtype=torch.float64)[:, None] * inv
    return ang.cos().float().to(device), ang.sin().float().to(device)


def block_hk(p, x, cos, sin):
    y1, z1 = hk.dropout_add_norm(x, None, p['norm1'], rms=True)
    qkv = hk.matmul(y1, p['wqkv'].to(BF16).t())
    q = qkv[..., :H * DH].view(B, S, H, DH)
    k = qkv[..., H * DH:(H + G) * DH].view(B, S, G, DH)
    v = qkv[..., (H + G) * DH:].view(B, S, G, DH)
    o = hk.attention(hk.rotary(q, cos, sin), hk.rotary(k, cos, sin), v, causal=True)
    a = hk.matmul(o.reshape(B, S, H * DH), p['wo'].to(BF16).t())
    y2, z2 = hk.dropout_add_norm(a, z1, p['norm2'], rms=True)
    h = F.silu(hk.matmul(y2, p['w1'].to(BF16).t()))
    return hk.matmul(h, p['w2'].to(BF16).t()) + z2


def rms_norm(z, w):
    z32 = z.float()
    return (z32 * torch.rsqrt(z32.pow(2).mean(-1, keepdim=True) + 1e-5) * w).to(BF16)


def rotate(x, cos, sin):
    x1, x2 = x.float().chunk(2, dim=-1)
    c, s = cos[None, :, None, :], sin[None, :, None, :]
    return torch.cat([x1 * c - x2 * s, x2 * c + x1 * s], dim=-1).to(BF16)


def block_torch(p, x, cos, sin):
    z1 = x
    qkv = F.linear(rms_norm(z1, p['norm1']), p['wqkv'].to(BF16))
    q, k, v = qkv.split([H * DH, G * DH, G * DH], dim=-1)
    q, k = rotate(q.view(B, S, H, DH), cos, sin), rotate(k.view(B, S, G, DH), cos, sin)
    k, v = (t.reshape(B, S, G, DH).repeat_interleave(H // G, dim=2).float() for t in (k, v))
    s = torch.einsum('bihd,bjhd->bhij', q.float(), k) / math.sqrt(DH)
    s = s.masked_fill(torch.ones(S, S, dtype=torch.bool, device=x.device).triu(1), -math.inf)
    o = torch.einsum('bhij,bjhd->bihd', s.softmax(-1), v).to(BF16)
    z2 = (F.linear(o.reshape(B, S, H * DH), p['wo'].to(BF16)).float() + z1.float()).to(BF16)
    h = F.silu(F.linear(rms_norm(z2, p['norm2']), p['w1'].to(BF16)))
    return F.linear(h, p['w2'].to(BF16)) + z2


def train(block, device, steps):
    p = init_weights(device)
    opt = torch.optim.SGD(p.values(), lr=0.5)
    cos, sin = tables(device)
    g = torch.Generator().manual_seed(1)
    x = torch.randn(B, S, D, generator=g).to(device, BF16)
    target = torch.randn(B, S, D, generator=g).to(device, BF16)
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        loss = F.mse_loss(block(p, x, cos, sin).float(), target.float())
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--steps', type=int, default=10)
    ap.add_argument('--device', default='cuda' if torch.cuda.is_available() else 'cpu')
    args = ap.parse_args()
    try:
        ours = train(block_hk, args.device, args.steps)
    except hk.Error as e:
        if e.status == 2:  # this backend has no kernel for one of the ops: the library says which
            print(f'SKIP: {e}')
            return 77
        raise
    ref = train(block_torch, args.device, args.steps)
    worst = 0.0
    for step, (a, b) in enumerate(zip(ours, ref)):
        worst = max(worst, abs(a - b) / abs(b))
        print(f'step {step}: loss libhk {a:.5f}  torch {b:.5f}')
    ok = worst < 2e-2 and ours[-1] < ours[0]
    print(f'{args.device}: largest relative loss difference {worst:.3g} (limit 2e-2); loss {ours[0]:.4f} -> '
          f'{ours[-1]:.4f}: {"ok" if ok else "FAIL"}')
    return 0 if ok else 1


if __name__ == '__main__':
    sys.exit(main())
