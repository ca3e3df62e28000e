"""libhk from Python: fused attention, GEMM, rotary and dropout + residual + norm on torch tensors (CUDA tensors
on the CUDA backend, on the current stream; CPU tensors on the CPU backend) and NumPy arrays (the CPU backend;
bf16/fp8 through ml_dtypes). torch tensors that require grad go through autograd Functions whose backward
also runs in libhk. Every failure raises hk.Error with the library's message."""
from . import _abi, _ops
from ._core import Context, Error, context

__all__ = ['Error', 'Context', 'context', 'version', 'attention', 'attention_varlen', 'matmul', 'rotary',
           'dropout_add_norm']


def version():
    """The loaded libhk's version string, e.g. '1.3.0'."""
    from ._core import lib
    return lib().hk_version_string().decode()


def _needs_grad(*xs):
    for x in xs:
        if getattr(x, 'requires_grad', False):
            import torch
            return torch.is_grad_enabled()
    return False


def _window(window):
    try:
        left, right = window
        return int(left), int(right)
    except (TypeError, ValueError):
        raise Error(f'hk: window {window!r} must be a pair (left, right); -1 leaves a side unbounded') from None


def attention(q, k, v, causal=False, softmax_scale=None, window=(-1, -1), softcap=0.0, return_lse=False,
              deterministic=False):
    """Softmax attention as flash_attn_func: q [batch, seqlen_q, heads_q, head_dim], k [batch, seqlen_k,
    heads_kv, head_dim], v [batch, seqlen_k, heads_kv, head_dim_v] (heads_q a multiple of heads_kv: GQA/MQA).
    causal is bottom-right aligned; window (left, right) is a sliding window (-1: unbounded); softcap > 0 caps the
    scores with softcap * tanh(s / softcap). Returns out [batch, seqlen_q, heads_q, head_dim_v], and with
    return_lse also the fp32 log-sum-exp [batch, heads_q, seqlen_q]. deterministic applies to the backward."""
    return _attention(q, k, v, causal, softmax_scale, window, softcap, return_lse, deterministic,
                      None, None, None, None)


def attention_varlen(q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k, causal=False,
                     softmax_scale=None, window=(-1, -1), softcap=0.0, return_lse=False, deterministic=False):
    """attention() over sequences packed along the token dimension, as flash_attn_varlen_func: q [total_q,
    heads_q, head_dim], k and v [total_k, heads_kv, ...]; cu_seqlens_* are int32 [batch + 1] offsets on the
    tensors' device; max_seqlen_* the longest sequence. The lse is [heads_q, total_q]."""
    return _attention(q, k, v, causal, softmax_scale, window, softcap, return_lse, deterministic,
                      cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k)


def _attention(q, k, v, causal, scale, window, softcap, return_lse, deterministic, cu_q, cu_k, max_q, max_k):
    window = _window(window)
    softcap = float(softcap)
    if _needs_grad(q, k, v):
        from ._autograd import Attention
        out, lse = Attention.apply(q, k, v, bool(causal), scale, window, softcap, bool(deterministic),
                                   cu_q, cu_k, max_q, max_k)
    else:
        out, lse = _ops.attn_fwd(q, k, v, causal, scale, window, softcap, cu_q, cu_k, max_q, max_k)
    return (out, lse) if return_lse else out


_DTYPE_NAMES = {'float32': _abi.F32, 'f32': _abi.F32, 'float16': _abi.F16, 'f16': _abi.F16,
                'bfloat16': _abi.BF16, 'bf16': _abi.BF16}


def _dtype_code(dtype):
    name = str(dtype).replace('torch.', '')
    if name not in _DTYPE_NAMES:
        raise Error(f'hk: out_dtype {dtype}; supported: float32, float16, bfloat16')
    return _DTYPE_NAMES[name]


def matmul(a, b, out=None, alpha=1.0, beta=0.0, c=None, scale_a=None, scale_b=None, out_dtype=None,
           fp8_fast_accum=False):
    """out = alpha * (scale_a * scale_b) * a @ b + beta * c, accumulated in fp32. a is [..., m, k] (leading dims
    that collapse into m), b is [k, n]; either may be a transposed view (x @ w.t() for nn.Linear weights reads w
    in place). fp8 operands (float8_e4m3fn, float8_e4m3fnuz) take scale_a / scale_b and give bf16 (or
    out_dtype float32). out, when given, is written and returned; c has out's dtype."""
    code = _dtype_code(out_dtype) if out_dtype is not None else None
    if out is None and code is None and _needs_grad(a, b, c):
        from ._autograd import Matmul
        if scale_a is not None or scale_b is not None:
            raise Error('hk: fp8 matmul has no autograd; call it on tensors that do not require grad')
        return Matmul.apply(a, b, float(alpha), float(beta), c)
    return _ops.gemm(a, b, out, alpha, beta, c, scale_a, scale_b, code, fp8_fast_accum)


def rotary(x, cos, sin, interleaved=False, inplace=False, position_ids=None, offset=0):
    """Rotary embedding as flash_attn's apply_rotary_emb: x [batch, seqlen, heads, head_dim]; cos, sin
    [positions, rotary_dim / 2] (fp32 or x's dtype); the first rotary_dim features rotate, GPT-NeoX halves by
    default, GPT-J pairs with interleaved. Token t of batch b uses position position_ids[b, t] when given, else
    offset + t."""
    if _needs_grad(x):
        from ._autograd import Rotary
        return Rotary.apply(x, cos, sin, bool(interleaved), bool(inplace), position_ids, int(offset))
    return _ops.rotary(x, cos, sin, interleaved, inplace, position_ids, offset)


def _random_seed(x):
    if hasattr(x, 'data_ptr'):
        import torch
        return int(torch.randint(0, 2 ** 62, (1,)).item())
    import numpy as np
    return int(np.random.default_rng().integers(2 ** 62))


def _unpack_mask(words, shape):
    """The packed keep mask (bit c % 32 of word c / 32, per row) as a boolean array of x's shape."""
    cols = shape[-1]
    if hasattr(words, 'data_ptr'):
        import torch
        bits = torch.arange(32, device=words.device, dtype=torch.int32)
        flat = ((words.unsqueeze(-1) >> bits) & 1).bool()
    else:
        import numpy as np
        flat = ((words[..., None] >> np.arange(32, dtype=np.uint32)) & 1).astype(bool)
    return flat.reshape(words.shape[0], -1)[:, :cols].reshape(shape)


def dropout_add_norm(x, residual, weight, bias=None, p=0.0, eps=1e-5, rms=False, seed=None, return_mask=False):
    """The fused op: z = dropout(x, p) + residual (residual may be None), out = LayerNorm(z) * weight + bias, or
    RMSNorm(z) * weight with rms. Statistics in fp32; weight and bias fp32 or x's dtype. Returns (out, z), z being
    the next residual stream, and with return_mask also the boolean keep mask. seed (an int) fixes the dropout
    mask; None draws one (torch's generator for tensors)."""
    if seed is None:
        seed = _random_seed(x) if p > 0 else 0
    if _needs_grad(x, residual, weight, bias):
        from ._autograd import DropoutAddNorm
        y, z, mask = DropoutAddNorm.apply(x, residual, weight, bias, float(p), float(eps), bool(rms), int(seed),
                                          bool(return_mask))
    else:
        y, z, _, _, mask = _ops.ln_fwd(x, residual, weight, bias, p, eps, rms, seed, want_mask=return_mask)
    if not return_mask:
        return y, z
    return y, z, _unpack_mask(mask, x.shape)
