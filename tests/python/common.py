"""Shared by the Python tests: the package on sys.path, skipping (exit 77) when a dependency is missing or when
libhk is built with a sanitizer the interpreter lacks, outputs poisoned with NaN, and float64 references in torch
(differentiable, so backward references come from autograd)."""
import math
import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'python'))


def skip(why):
    print(f'SKIP: {why}')
    sys.exit(77)


def require(*modules):
    if os.environ.get('HK_SANITIZE', 'none') not in ('', 'none'):
        skip(f'libhk is built with -fsanitize={os.environ["HK_SANITIZE"]}; python is not, so it cannot load it')
    for name in modules:
        try:
            __import__(name)
        except ImportError:
            skip(f'{name} is not installed for {sys.executable}')


def poison_outputs():
    """Every output hk allocates starts as NaN (float) or all ones (integer words), so an element the library
    never writes fails the comparison."""
    from hk import _core, _ops

    def poisoned(like, shape, dtype):
        out = _core.empty(like, shape, dtype)
        if hasattr(out, 'fill_'):
            out.fill_(-1 if dtype in ('u32', 'u8') else math.nan)
        elif dtype in ('u32', 'u8'):
            out.fill(out.dtype.type(-1 & (1 << 8 * out.itemsize) - 1))
        else:
            out[...] = math.nan
        return out

    _ops.empty = poisoned


def run(module_name):
    """unittest.main, ending with the 'N passed, N failed, N skipped' line."""
    suite = unittest.defaultTestLoader.loadTestsFromModule(sys.modules[module_name])
    result = unittest.TextTestRunner(verbosity=2).run(suite)
    bad = len(result.failures) + len(result.errors)
    skipped = len(result.skipped)
    print(f'{result.testsRun - bad - skipped} passed, {bad} failed, {skipped} skipped')
    sys.exit(1 if bad or result.testsRun == 0 else 0)


# ---------------------------------------------------------------- float64 references (torch)

def ref_attention(q, k, v, causal=False, scale=None, window=(-1, -1), softcap=0.0):
    """q [B, Sq, Hq, D], k [B, Sk, Hkv, D], v [B, Sk, Hkv, Dv] -> (out [B, Sq, Hq, Dv], lse [B, Hq, Sq]),
    in float64, with hk.h's masking rules (bottom-right causal, window around i + Sk - Sq)."""
    import torch
    q, k, v = (t.double() for t in (q, k, v))
    sq, sk, hq, hkv = q.shape[1], k.shape[1], q.shape[2], k.shape[2]
    k = k.repeat_interleave(hq // hkv, dim=2)
    v = v.repeat_interleave(hq // hkv, dim=2)
    scale = 1.0 / math.sqrt(q.shape[-1]) if scale is None else scale
    s = torch.einsum('bihd,bjhd->bhij', q, k) * scale
    if softcap > 0:
        s = softcap * torch.tanh(s / softcap)
    i = torch.arange(sq)[:, None] + (sk - sq)
    j = torch.arange(sk)[None, :]
    left, right = window
    if causal:
        right = 0 if right < 0 else min(right, 0)
    visible = torch.ones(sq, sk, dtype=torch.bool)
    if right >= 0:
        visible &= j <= i + right
    if left >= 0:
        visible &= j >= i - left
    s = s.masked_fill(~visible, -math.inf)
    lse = torch.logsumexp(s, dim=-1)
    p = torch.exp(s - lse[..., None]).nan_to_num(0.0)
    return torch.einsum('bhij,bjhd->bihd', p, v), lse


def ref_rotary(x, cos, sin, interleaved=False, positions=None, inverse=False):
    """x [B, S, H, D] rotated by cos/sin [P, R/2] at positions [B, S] (default 0..S-1), in float64."""
    import torch
    x, cos, sin = x.double(), cos.double(), sin.double()
    b, s = x.shape[:2]
    r = 2 * cos.shape[1]
    if positions is None:
        positions = torch.arange(s).expand(b, s)
    c, sn = cos[positions][:, :, None, :], sin[positions][:, :, None, :]
    if inverse:
        sn = -sn
    rot, rest = x[..., :r], x[..., r:]
    if interleaved:
        x1, x2 = rot[..., 0::2], rot[..., 1::2]
        y = torch.stack([x1 * c - x2 * sn, x2 * c + x1 * sn], dim=-1).flatten(-2)
    else:
        x1, x2 = rot[..., :r // 2], rot[..., r // 2:]
        y = torch.cat([x1 * c - x2 * sn, x2 * c + x1 * sn], dim=-1)
    return torch.cat([y, rest], dim=-1)


def ref_norm(x, residual, weight, bias=None, eps=1e-5, rms=False, keep=None, p=0.0):
    """(out, z) of dropout(x) + residual then LayerNorm / RMSNorm, in float64; keep is the boolean mask."""
    import torch
    x = x.double()
    if keep is not None:
        x = torch.where(keep, x / (1 - p), torch.zeros_like(x))
    z = x + residual.double() if residual is not None else x
    if rms:
        y = z * torch.rsqrt((z * z).mean(-1, keepdim=True) + eps)
    else:
        mu = z.mean(-1, keepdim=True)
        y = (z - mu) * torch.rsqrt(((z - mu) ** 2).mean(-1, keepdim=True) + eps)
    y = y * weight.double()
    if bias is not None:
        y = y + bias.double()
    return y, z


def rel_err(got, ref):
    """Largest |got - ref| over the largest |ref| (NaN anywhere in got gives inf)."""
    import torch
    got, ref = torch.as_tensor(got).double(), torch.as_tensor(ref).double()
    if not torch.isfinite(got).all():
        return math.inf
    return float((got - ref).abs().max() / ref.abs().max().clamp_min(1e-30))


TOL = {'float32': 1e-5, 'bfloat16': 1e-2, 'float16': 2e-3}
