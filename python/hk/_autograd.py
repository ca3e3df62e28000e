"""torch.autograd.Functions over the raw ops, so that a training step runs forward and backward through libhk."""
import torch

from . import _ops


class Attention(torch.autograd.Function):
    @staticmethod
    def forward(ctx, q, k, v, causal, softmax_scale, window, softcap, deterministic, cu_q, cu_k, max_q, max_k):
        out, lse = _ops.attn_fwd(q, k, v, causal, softmax_scale, window, softcap, cu_q, cu_k, max_q, max_k)
        ctx.save_for_backward(q, k, v, out, lse)
        ctx.params = (causal, softmax_scale, window, softcap, deterministic, cu_q, cu_k, max_q, max_k)
        ctx.mark_non_differentiable(lse)
        return out, lse

    @staticmethod
    def backward(ctx, dout, _dlse):
        q, k, v, out, lse = ctx.saved_tensors
        causal, scale, window, softcap, deterministic, cu_q, cu_k, max_q, max_k = ctx.params
        if dout.stride(-1) != 1:
            dout = dout.contiguous()
        dq, dk, dv = _ops.attn_bwd(dout, q, k, v, out, lse, causal, scale, window, softcap, deterministic,
                                   cu_q, cu_k, max_q, max_k)
        return dq, dk, dv, None, None, None, None, None, None, None, None, None


class Matmul(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a, b, alpha, beta, c):
        ctx.save_for_backward(a, b)
        ctx.alpha, ctx.beta = alpha, beta
        return _ops.gemm(a, b, alpha=alpha, beta=beta, c=c)

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        grad = grad.contiguous()
        g2 = grad.view(-1, grad.shape[-1])
        da = db = dc = None
        if ctx.needs_input_grad[0]:
            da = _ops.gemm(g2, b.t(), alpha=ctx.alpha).view(a.shape)
        if ctx.needs_input_grad[1]:
            db = _ops.gemm(a.reshape(-1, a.shape[-1]).t(), g2, alpha=ctx.alpha)
        if ctx.needs_input_grad[4]:
            dc = grad * ctx.beta
        return da, db, None, None, dc


class Rotary(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, cos, sin, interleaved, inplace, position_ids, offset):
        ctx.save_for_backward(cos, sin)
        ctx.params = (interleaved, position_ids, offset)
        out = _ops.rotary(x, cos, sin, interleaved, inplace, position_ids, offset)
        if inplace:
            ctx.mark_dirty(x)
        return out

    @staticmethod
    def backward(ctx, grad):
        cos, sin = ctx.saved_tensors
        interleaved, position_ids, offset = ctx.params
        if grad.stride(-1) != 1:
            grad = grad.contiguous()
        dx = _ops.rotary(grad, cos, sin, interleaved, False, position_ids, offset, inverse=True)
        return dx, None, None, None, None, None, None


class DropoutAddNorm(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, residual, weight, bias, p, eps, rms, seed, return_mask):
        keep = return_mask or (p > 0 and any(ctx.needs_input_grad[:4]))
        y, z, mean, rstd, mask = _ops.ln_fwd(x, residual, weight, bias, p, eps, rms, seed, want_mask=keep)
        ctx.save_for_backward(z, weight, mean, rstd, mask)
        ctx.params = (p, rms, bias is not None, residual is not None)
        ctx.mark_non_differentiable(*([mask] if mask is not None else []))
        return y, z, mask

    @staticmethod
    def backward(ctx, dy, dz, _dmask):
        z, weight, mean, rstd, mask = ctx.saved_tensors
        p, rms, has_bias, has_residual = ctx.params
        # autograd materialises unused output gradients as zeros, so dy and dz are always tensors
        dx, dres, dw, db = _ops.ln_bwd(dy.contiguous(), z, weight, mean, rstd, dz.contiguous(), p, rms, has_bias,
                                       mask)
        return (dx, dres if has_residual else None, dw.to(weight.dtype),
                db.to(weight.dtype) if db is not None else None, None, None, None, None, None)
