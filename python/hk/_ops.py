"""The raw ops: each takes arrays or tensors (no autograd), checks them, allocates its outputs on their device
and makes one libhk call. The public functions in hk/__init__.py and the autograd Functions build on these."""
import ctypes
import math

from . import _abi
from ._core import (FLOATS, FP8, Error, check, data_ptr as _ptr, dtype_name, empty, index_operand, lib, operands,
                    same_dtype, workspace)


def _window_fields(window):
    left, right = window
    if left < 0 and right < 0:
        return {}
    return {'window': 1, 'window_left': int(left), 'window_right': int(right)}


def _scale(softmax_scale, head_dim):
    return 1.0 / math.sqrt(head_dim) if softmax_scale is None else float(softmax_scale)


def _attn_operands(q, k, v, varlen):
    q, k, v = operands((q, 'q'), (k, 'k'), (v, 'v'))
    same_dtype(q, k, v)
    rank, layout = (3, '[total, heads, head_dim]') if varlen else (4, '[batch, seqlen, heads, head_dim]')
    for t in (q, k, v):
        t.need_rank(rank, layout)
        t.need_inner_contiguous()
    lead = 1 if varlen else 2
    if k.shape[:lead] != v.shape[:lead] or k.shape[lead] != v.shape[lead]:
        raise Error(f'hk: k {list(k.shape)} and v {list(v.shape)} differ in their leading dims or heads')
    if not varlen and q.shape[0] != k.shape[0]:
        raise Error(f'hk: q has batch {q.shape[0]} but k has {k.shape[0]}')
    if q.shape[-1] != k.shape[-1]:
        raise Error(f'hk: q has head_dim {q.shape[-1]} but k has {k.shape[-1]}')
    if q.shape[-2] % k.shape[-2]:
        raise Error(f'hk: q has {q.shape[-2]} heads, not a multiple of the {k.shape[-2]} heads of k and v')
    return q, k, v


def _attn_common(q, k, v, causal, softmax_scale, window, softcap, cu):
    """The fields forward and backward share; cu is None or (cu_q, cu_k, max_q, max_k) of operands' pointers."""
    varlen = cu is not None
    dims = 2 if varlen else 3
    qs, ks, vs = (([0] if varlen else []) + t.outer_strides(dims) for t in (q, k, v))
    f = dict(dtype=q.dtype, heads_q=q.shape[-2], heads_kv=k.shape[-2], head_dim=q.shape[-1],
             q=q.ptr, k=k.ptr, v=v.ptr, q_stride=(ctypes.c_int64 * 3)(*qs), k_stride=(ctypes.c_int64 * 3)(*ks),
             v_stride=(ctypes.c_int64 * 3)(*vs), softmax_scale=_scale(softmax_scale, q.shape[-1]),
             causal=int(bool(causal)), softcap=float(softcap), **_window_fields(window))
    if v.shape[-1] != q.shape[-1]:
        f['head_dim_v'] = v.shape[-1]
    if varlen:
        f.update(batch=cu[0], seqlen_q=cu[3], seqlen_k=cu[4], cu_seqlens_q=cu[1], cu_seqlens_k=cu[2])
    else:
        f.update(batch=q.shape[0], seqlen_q=q.shape[1], seqlen_k=k.shape[1])
    return f


def _cu(q, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k):
    if cu_seqlens_q is None:
        return None, ()
    cq = index_operand(cu_seqlens_q, 'cu_seqlens_q', q)
    ck = index_operand(cu_seqlens_k, 'cu_seqlens_k', q)
    if len(cq[0].shape) != 1 or tuple(cq[0].shape) != tuple(ck[0].shape) or cq[0].shape[0] < 1:
        raise Error(f'hk: cu_seqlens_q {list(cq[0].shape)} and cu_seqlens_k {list(ck[0].shape)} must both be '
                    '[batch + 1]')
    return (cq[0].shape[0] - 1, cq[1], ck[1], int(max_seqlen_q), int(max_seqlen_k)), (cq[0], ck[0])


def attn_fwd(q, k, v, causal=False, softmax_scale=None, window=(-1, -1), softcap=0.0,
             cu_seqlens_q=None, cu_seqlens_k=None, max_seqlen_q=None, max_seqlen_k=None):
    """(out, lse): out like q with v's head_dim, lse fp32 [batch, heads, seqlen_q] ([heads, total_q] varlen)."""
    varlen = cu_seqlens_q is not None
    if varlen != (cu_seqlens_k is not None):
        raise Error('hk: cu_seqlens_q and cu_seqlens_k must be given together')
    q, k, v = _attn_operands(q, k, v, varlen)
    cu, keep = _cu(q, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k)
    out = empty(q, q.shape[:-1] + (v.shape[-1],), q.dtype)
    lse_shape = (q.shape[1], q.shape[0]) if varlen else (q.shape[0], q.shape[2], q.shape[1])
    lse = empty(q, lse_shape, _abi.F32)
    ctx, stream = q.ctx_stream()
    o = operands((out, 'out'))[0]
    args = _abi.AttnFwdArgs(**_attn_common(q, k, v, causal, softmax_scale, window, softcap, cu),
                            o=o.ptr, o_stride=(ctypes.c_int64 * 3)(*(([0] if varlen else []) +
                                                                     o.outer_strides(2 if varlen else 3))),
                            lse=_ptr(lse), stream=stream)
    check(lib().hk_attn_fwd(ctx.handle, ctypes.byref(args)), 'hk_attn_fwd')
    del keep
    return out, lse


def attn_bwd(dout, q, k, v, out, lse, causal=False, softmax_scale=None, window=(-1, -1), softcap=0.0,
             deterministic=False, cu_seqlens_q=None, cu_seqlens_k=None, max_seqlen_q=None, max_seqlen_k=None):
    """(dq, dk, dv), each shaped and typed like its input."""
    varlen = cu_seqlens_q is not None
    q, k, v = _attn_operands(q, k, v, varlen)
    o, do = operands((out, 'out'), (dout, 'dout'))
    same_dtype(q, o, do)
    for t in (o, do):
        if t.shape != q.shape[:-1] + (v.shape[-1],):
            raise Error(f'hk: {t.name} has shape {list(t.shape)}; expected {list(q.shape[:-1] + (v.shape[-1],))}')
        t.need_inner_contiguous()
    cu, keep = _cu(q, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k)
    dq, dk, dv = (empty(q, t.shape, q.dtype) for t in (q, k, v))
    dims = 2 if varlen else 3
    pre = [0] if varlen else []
    st = {name: (ctypes.c_int64 * 3)(*(pre + operands((t, name))[0].outer_strides(dims)))
          for name, t in (('o_stride', out), ('do_stride', dout), ('dq_stride', dq), ('dk_stride', dk),
                          ('dv_stride', dv))}
    ctx, stream = q.ctx_stream()
    args = _abi.AttnBwdArgs(**_attn_common(q, k, v, causal, softmax_scale, window, softcap, cu), **st,
                            o=o.ptr, d_o=do.ptr, lse=_ptr(lse), dq=_ptr(dq), dk=_ptr(dk), dv=_ptr(dv),
                            deterministic=int(bool(deterministic)), stream=stream)
    need = ctypes.c_size_t()
    L = lib()
    check(L.hk_attn_bwd_workspace_size(ctx.handle, ctypes.byref(args), ctypes.byref(need)),
          'hk_attn_bwd_workspace_size')
    buf, args.workspace = workspace(q, need.value)
    args.workspace_size = need.value
    check(L.hk_attn_bwd(ctx.handle, ctypes.byref(args)), 'hk_attn_bwd')
    del keep, buf
    return dq, dk, dv


# ---------------------------------------------------------------- GEMM

def _as_matrix(t):
    """(trans, ld) of a 2-D operand from its strides: row-major (last stride 1) or a transposed view (first 1)."""
    rows, cols = t.shape
    rs, cs = t.strides
    if cols <= 1 or cs == 1:
        return 0, max(rs if rows > 1 else cols, cols, 1)
    if rows <= 1 or rs == 1:
        return 1, max(cs if cols > 1 else rows, rows, 1)
    raise Error(f'hk: {t.name} (shape {list(t.shape)}, strides {list(t.strides)}) is neither row-major nor a '
                'transposed view: one of its strides must be 1')


def _flatten_rows(obj, name):
    """A view of obj as [rows, last dim] when its leading dims collapse; obj itself when it is 2-D."""
    if obj is None or len(obj.shape) == 2:
        return obj
    if len(obj.shape) < 2:
        raise Error(f'hk: {name} has shape {list(obj.shape)}; expected at least 2 dims')
    try:
        if hasattr(obj, 'data_ptr'):
            return obj.view(-1, obj.shape[-1])
        view = obj.view()
        view.shape = (-1, obj.shape[-1])
        return view
    except (RuntimeError, AttributeError, ValueError):
        raise Error(f'hk: {name} (shape {list(obj.shape)}) cannot be viewed as a matrix without a copy') from None


def gemm(a, b, out=None, alpha=1.0, beta=0.0, c=None, scale_a=None, scale_b=None, out_dtype=None,
         fp8_fast_accum=False):
    """out[..., m, n] = alpha * scale_a * scale_b * a @ b + beta * c; a may have leading batch dims that
    collapse into m."""
    lead = tuple(a.shape[:-1])
    a2, out2, c2 = _flatten_rows(a, 'a'), _flatten_rows(out, 'out'), _flatten_rows(c, 'c')
    A, B = operands((a2, 'a'), (b, 'b'), dtypes=FLOATS + FP8)
    same_dtype(A, B)
    B.need_rank(2, '[k, n]')
    m, k = A.shape
    if B.shape[0] != k:
        raise Error(f'hk: a is [{m}, {k}] but b is {list(B.shape)}; b must be [{k}, n]')
    n = B.shape[1]
    fp8 = A.dtype in FP8
    if out is None:
        d_type = out_dtype if out_dtype is not None else (_abi.BF16 if fp8 else A.dtype)
        out2 = empty(A, (m, n), d_type)
        out = out2.view(lead + (n,)) if hasattr(out2, 'data_ptr') else out2.reshape(lead + (n,))
    D, C = operands((out2, 'out'), (c2, 'c'))
    operands((a2, 'a'), (out2, 'out'), dtypes=FLOATS + FP8)  # one device
    D.need_writable()
    if D.shape != (m, n):
        raise Error(f'hk: out has shape {list(out.shape)}; expected {list(lead + (n,))}')
    if D.strides[1] != 1 and n > 1:
        raise Error(f'hk: out must be row-major with a contiguous last dimension (strides {list(D.strides)})')
    if not fp8 and (scale_a is not None or scale_b is not None):
        raise Error(f'hk: scale_a/scale_b apply to fp8 operands only (a is {dtype_name(A.dtype)})')
    ta, lda = _as_matrix(A)
    tb, ldb = _as_matrix(B)
    args = _abi.GemmArgs(m=m, n=n, k=k, a_type=A.dtype, b_type=B.dtype, d_type=D.dtype, trans_a=ta, trans_b=tb,
                         a=A.ptr, lda=lda, b=B.ptr, ldb=ldb, d=D.ptr, ldd=D.strides[0] if m > 1 else n,
                         alpha=float(alpha), beta=float(beta), scale_a=_scalar(scale_a), scale_b=_scalar(scale_b),
                         fp8_fast_accum=int(bool(fp8_fast_accum)))
    if beta != 0.0:
        if C is None:
            raise Error(f'hk: beta is {beta} but c is None')
        if C.shape != (m, n) or (C.strides[1] != 1 and n > 1) or C.dtype != D.dtype:
            raise Error(f'hk: c must be a row-major {dtype_name(D.dtype)} [{m}, {n}] like out (got '
                        f'{dtype_name(C.dtype)} {list(C.shape)}, strides {list(C.strides)})')
        args.c, args.ldc = C.ptr, C.strides[0] if m > 1 else n
    ctx, args.stream = A.ctx_stream()
    L = lib()
    need = ctypes.c_size_t()
    check(L.hk_gemm_workspace_size(ctx.handle, ctypes.byref(args), ctypes.byref(need)), 'hk_gemm_workspace_size')
    buf, args.workspace = workspace(A, need.value)
    args.workspace_size = need.value
    check(L.hk_gemm(ctx.handle, ctypes.byref(args)), 'hk_gemm')
    del buf
    return out


def _scalar(x):
    if x is None:
        return 0.0
    return float(x.item() if hasattr(x, 'item') else x)


# ---------------------------------------------------------------- rotary

def rotary(x, cos, sin, interleaved=False, inplace=False, position_ids=None, offset=0, inverse=False):
    """x [batch, seqlen, heads, head_dim] rotated by the tables cos, sin [positions, rotary_dim / 2]."""
    X, COS, SIN = operands((x, 'x'), (cos, 'cos'), (sin, 'sin'))
    X.need_rank(4, '[batch, seqlen, heads, head_dim]')
    X.need_inner_contiguous()
    for t in (COS, SIN):
        t.need_rank(2, '[positions, rotary_dim / 2]')
        t.need_contiguous()
    same_dtype(COS, SIN)
    if COS.shape != SIN.shape:
        raise Error(f'hk: cos {list(COS.shape)} and sin {list(SIN.shape)} differ')
    if COS.dtype not in (_abi.F32, X.dtype):
        raise Error(f'hk: cos/sin are {dtype_name(COS.dtype)}; supported: f32 or x\'s {dtype_name(X.dtype)}')
    batch, seqlen, heads, head_dim = X.shape
    pos = index_operand(position_ids, 'position_ids', X, (batch, seqlen))
    out = x if inplace else empty(X, X.shape, X.dtype)
    O = operands((out, 'out' if not inplace else 'x'))[0]
    O.need_writable()
    ctx, stream = X.ctx_stream()
    args = _abi.RotaryArgs(dtype=X.dtype, batch=batch, seqlen=seqlen, heads=heads, head_dim=head_dim,
                           rotary_dim=2 * COS.shape[1], x=X.ptr, x_stride=(ctypes.c_int64 * 3)(*X.outer_strides(3)),
                           out=O.ptr, out_stride=(ctypes.c_int64 * 3)(*O.outer_strides(3)), cos=COS.ptr, sin=SIN.ptr,
                           table_positions=COS.shape[0], position_offset=int(offset),
                           position_ids=pos[1] if pos else None,
                           style=_abi.ROTARY_INTERLEAVED if interleaved else _abi.ROTARY_HALF,
                           inverse=int(bool(inverse)), stream=stream, table_type=COS.dtype)
    check(lib().hk_rotary(ctx.handle, ctypes.byref(args)), 'hk_rotary')
    del pos
    return out


# ---------------------------------------------------------------- dropout + residual + norm

def _rows(t):
    """(rows, row stride) of an operand [..., cols] whose leading dims collapse into rows of one stride."""
    t.need_inner_contiguous()
    dims = [(n, s) for n, s in zip(t.shape[:-1], t.strides[:-1]) if n != 1]
    rows = math.prod(n for n, _ in dims)
    if not dims:
        return rows, t.shape[-1]
    stride = dims[-1][1]
    expect = stride * dims[-1][0]
    for n, s in reversed(dims[:-1]):
        if s != expect:
            raise Error(f'hk: {t.name} (shape {list(t.shape)}, strides {list(t.strides)}) does not collapse into '
                        'rows of one stride')
        expect *= n
    return rows, stride


def ln_fwd(x, residual, weight, bias=None, p=0.0, eps=1e-5, rms=False, seed=0, offset=0, want_mask=False):
    """(y, z, mean, rstd, mask words): z = dropout(x) + residual, y = norm(z) * weight + bias."""
    X, R, W, Bi = operands((x, 'x'), (residual, 'residual'), (weight, 'weight'), (bias, 'bias'))
    same_dtype(X, R)
    cols = X.shape[-1]
    if R is not None and R.shape != X.shape:
        raise Error(f'hk: residual {list(R.shape)} and x {list(X.shape)} differ')
    for t in (W, Bi):
        if t is not None and t.shape != (cols,):
            raise Error(f'hk: {t.name} has shape {list(t.shape)}; expected [{cols}]')
    same_dtype(W, Bi)
    if W.dtype not in (_abi.F32, X.dtype):
        raise Error(f'hk: weight is {dtype_name(W.dtype)}; supported: f32 or x\'s {dtype_name(X.dtype)}')
    if rms and bias is not None:
        raise Error('hk: bias must be None for RMSNorm')
    rows, xs = _rows(X)
    rs = _rows(R)[1] if R is not None else 0
    y, z = empty(X, X.shape, X.dtype), empty(X, X.shape, X.dtype)
    mean = None if rms else empty(X, (rows,), _abi.F32)
    rstd = empty(X, (rows,), _abi.F32)
    mask = empty(X, (rows, (cols + 31) // 32), 'u32') if want_mask else None
    ctx, stream = X.ctx_stream()
    args = _abi.LnFusedArgs(norm=_abi.NORM_RMS if rms else _abi.NORM_LAYER, dtype=X.dtype, param_type=W.dtype,
                            rows=rows, cols=cols, x=X.ptr, x_stride=xs, residual=R.ptr if R else None,
                            residual_stride=rs, gamma=W.ptr, beta=Bi.ptr if Bi else None, y=_ptr(y), y_stride=cols,
                            residual_out=_ptr(z), residual_out_stride=cols,
                            mean=_ptr(mean) if mean is not None else None, rstd=_ptr(rstd), epsilon=float(eps),
                            dropout_p=float(p), seed=int(seed), offset=int(offset), stream=stream,
                            dropout_mask=_ptr(mask) if mask is not None else None)
    check(lib().hk_ln_fused(ctx.handle, ctypes.byref(args)), 'hk_ln_fused')
    return y, z, mean, rstd, mask


def ln_bwd(dy, z, weight, mean, rstd, dz_extra=None, p=0.0, rms=False, has_bias=False, mask=None, seed=0,
           offset=0):
    """(dx, dresidual, dweight fp32, dbias fp32 or None) of ln_fwd."""
    DY, Z, DZ, W = operands((dy, 'dy'), (z, 'z'), (dz_extra, 'dz_extra'), (weight, 'weight'))
    same_dtype(DY, Z, DZ)
    cols = Z.shape[-1]
    rows, zs = _rows(Z)
    dys = _rows(DY)[1]
    dzs = _rows(DZ)[1] if DZ is not None else 0
    dx, dres = empty(Z, Z.shape, Z.dtype), empty(Z, Z.shape, Z.dtype)
    dw = empty(Z, (cols,), _abi.F32)
    db = empty(Z, (cols,), _abi.F32) if has_bias and not rms else None
    ctx, stream = Z.ctx_stream()
    args = _abi.LnFusedBwdArgs(norm=_abi.NORM_RMS if rms else _abi.NORM_LAYER, dtype=Z.dtype, param_type=W.dtype,
                               rows=rows, cols=cols, dy=DY.ptr, dy_stride=dys, z=Z.ptr, z_stride=zs,
                               dz_extra=DZ.ptr if DZ else None, dz_extra_stride=dzs, gamma=W.ptr,
                               mean=_ptr(mean) if mean is not None else None, rstd=_ptr(rstd), dx=_ptr(dx),
                               dx_stride=cols, dresidual=_ptr(dres), dresidual_stride=cols, dgamma=_ptr(dw),
                               dbeta=_ptr(db) if db is not None else None, dropout_p=float(p), seed=int(seed),
                               offset=int(offset), stream=stream, dropout_mask=_ptr(mask) if mask is not None else None)
    L = lib()
    need = ctypes.c_size_t()
    check(L.hk_ln_fused_bwd_workspace_size(ctx.handle, ctypes.byref(args), ctypes.byref(need)),
          'hk_ln_fused_bwd_workspace_size')
    buf, args.workspace = workspace(Z, need.value)
    args.workspace_size = need.value
    check(L.hk_ln_fused_bwd(ctx.handle, ctypes.byref(args)), 'hk_ln_fused_bwd')
    del buf
    return dx, dres, dw, db
