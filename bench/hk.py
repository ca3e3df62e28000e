"""ctypes binding of libhk for the benchmarks: a context, the public argument structs (field for field as in
include/hk.h) and a call helper that raises with hk_last_error(). Add a struct here when a benchmark needs a
new op."""
import ctypes
import os
from ctypes import POINTER, c_char_p, c_float, c_int, c_int32, c_int64, c_size_t, c_uint64, c_void_p

OK = 0
BACKEND = {'auto': 0, 'cpu': 1, 'hip': 2, 'cuda': 3, 'emulator': 4}
DTYPE = {'f32': 1, 'f16': 2, 'bf16': 3, 'fp8_e4m3': 4, 'fp8_e4m3fnuz': 5}
NORM = {'layer': 0, 'rms': 1}
ROTARY = {'half': 0, 'interleaved': 1}


class _Args(ctypes.Structure):
    """Every hk argument struct starts with struct_size; set it on construction (HK_ARGS_INIT)."""

    def __init__(self, **kw):
        super().__init__()
        self.struct_size = ctypes.sizeof(self)
        for k, v in kw.items():
            setattr(self, k, v)


I64x3 = c_int64 * 3


class ContextOptions(_Args):
    _fields_ = [('struct_size', c_size_t), ('backend', c_int), ('device_index', c_int), ('arch', c_char_p)]


class VariantInfo(_Args):
    _fields_ = [('struct_size', c_size_t), ('op', c_int), ('name', c_char_p), ('description', c_char_p)]


class RotaryArgs(_Args):
    _fields_ = [('struct_size', c_size_t), ('dtype', c_int),
                ('batch', c_int64), ('seqlen', c_int64), ('heads', c_int64), ('head_dim', c_int64),
                ('rotary_dim', c_int64),
                ('x', c_void_p), ('x_stride', I64x3), ('out', c_void_p), ('out_stride', I64x3),
                ('cos', c_void_p), ('sin', c_void_p), ('table_positions', c_int64),
                ('position_offset', c_int64), ('position_ids', c_void_p),
                ('style', c_int), ('inverse', c_int), ('stream', c_void_p), ('table_type', c_int)]


class LnFusedArgs(_Args):
    _fields_ = [('struct_size', c_size_t), ('norm', c_int), ('dtype', c_int), ('param_type', c_int),
                ('rows', c_int64), ('cols', c_int64),
                ('x', c_void_p), ('x_stride', c_int64), ('residual', c_void_p), ('residual_stride', c_int64),
                ('gamma', c_void_p), ('beta', c_void_p), ('y', c_void_p), ('y_stride', c_int64),
                ('residual_out', c_void_p), ('residual_out_stride', c_int64),
                ('mean', c_void_p), ('rstd', c_void_p), ('epsilon', c_float), ('dropout_p', c_float),
                ('seed', c_uint64), ('offset', c_uint64), ('stream', c_void_p), ('dropout_mask', c_void_p)]


class LnFusedBwdArgs(_Args):
    _fields_ = [('struct_size', c_size_t), ('norm', c_int), ('dtype', c_int), ('param_type', c_int),
                ('rows', c_int64), ('cols', c_int64),
                ('dy', c_void_p), ('dy_stride', c_int64), ('z', c_void_p), ('z_stride', c_int64),
                ('dz_extra', c_void_p), ('dz_extra_stride', c_int64), ('gamma', c_void_p),
                ('mean', c_void_p), ('rstd', c_void_p), ('dx', c_void_p), ('dx_stride', c_int64),
                ('dresidual', c_void_p), ('dresidual_stride', c_int64), ('dgamma', c_void_p), ('dbeta', c_void_p),
                ('dropout_p', c_float), ('seed', c_uint64), ('offset', c_uint64),
                ('workspace', c_void_p), ('workspace_size', c_size_t), ('stream', c_void_p),
                ('dropout_mask', c_void_p)]


class AttnFwdArgs(_Args):
    _fields_ = [('struct_size', c_size_t), ('dtype', c_int),
                ('batch', c_int64), ('seqlen_q', c_int64), ('seqlen_k', c_int64), ('heads_q', c_int64),
                ('heads_kv', c_int64), ('head_dim', c_int64),
                ('q', c_void_p), ('q_stride', I64x3), ('k', c_void_p), ('k_stride', I64x3),
                ('v', c_void_p), ('v_stride', I64x3), ('o', c_void_p), ('o_stride', I64x3),
                ('lse', c_void_p), ('softmax_scale', c_float), ('causal', c_int),
                ('cu_seqlens_q', c_void_p), ('cu_seqlens_k', c_void_p), ('stream', c_void_p),
                ('window', c_int), ('window_left', c_int64), ('window_right', c_int64), ('softcap', c_float),
                ('head_dim_v', c_int64)]


class AttnBwdArgs(_Args):
    _fields_ = [('struct_size', c_size_t), ('dtype', c_int),
                ('batch', c_int64), ('seqlen_q', c_int64), ('seqlen_k', c_int64), ('heads_q', c_int64),
                ('heads_kv', c_int64), ('head_dim', c_int64),
                ('q', c_void_p), ('q_stride', I64x3), ('k', c_void_p), ('k_stride', I64x3),
                ('v', c_void_p), ('v_stride', I64x3), ('o', c_void_p), ('o_stride', I64x3),
                ('d_o', c_void_p), ('do_stride', I64x3), ('lse', c_void_p),
                ('dq', c_void_p), ('dq_stride', I64x3), ('dk', c_void_p), ('dk_stride', I64x3),
                ('dv', c_void_p), ('dv_stride', I64x3),
                ('softmax_scale', c_float), ('causal', c_int), ('deterministic', c_int),
                ('cu_seqlens_q', c_void_p), ('cu_seqlens_k', c_void_p),
                ('workspace', c_void_p), ('workspace_size', c_size_t), ('stream', c_void_p),
                ('window', c_int), ('window_left', c_int64), ('window_right', c_int64), ('softcap', c_float),
                ('head_dim_v', c_int64)]


class HkError(RuntimeError):
    pass


class Lib:
    def __init__(self, path=None):
        path = path or os.environ.get('HK_LIB', 'libhk.so.1')
        self.lib = ctypes.CDLL(path)
        L = self.lib
        L.hk_last_error.restype = c_char_p
        L.hk_version_string.restype = c_char_p
        L.hk_context_arch.restype = c_char_p
        L.hk_context_device_name.restype = c_char_p
        L.hk_context_create.argtypes = [POINTER(ContextOptions), POINTER(c_void_p)]
        for name in ('hk_context_arch', 'hk_context_device_name'):
            getattr(L, name).argtypes = [c_void_p]
        L.hk_context_variant.argtypes = [c_void_p, c_size_t, POINTER(VariantInfo)]
        L.hk_rotary.argtypes = [c_void_p, POINTER(RotaryArgs)]
        L.hk_ln_fused.argtypes = [c_void_p, POINTER(LnFusedArgs)]
        L.hk_ln_fused_bwd.argtypes = [c_void_p, POINTER(LnFusedBwdArgs)]
        L.hk_ln_fused_bwd_workspace_size.argtypes = [c_void_p, POINTER(LnFusedBwdArgs), POINTER(c_size_t)]
        L.hk_attn_fwd.argtypes = [c_void_p, POINTER(AttnFwdArgs)]
        L.hk_attn_bwd.argtypes = [c_void_p, POINTER(AttnBwdArgs)]
        L.hk_attn_bwd_workspace_size.argtypes = [c_void_p, POINTER(AttnBwdArgs), POINTER(c_size_t)]
        L.hk_synchronize.argtypes = [c_void_p, c_void_p]

    def check(self, status, what):
        if status != OK:
            raise HkError(f'{what}: status {status}: {self.lib.hk_last_error().decode()}')

    def context(self, backend='cuda', device=0, env=None):
        """A new context. env {NAME: value}: set in the process environment while the context is created, then
        restored. libhk reads its tuning overrides (docs/perf/tuning.md) once per context, at its creation, so each
        setting to time needs a context of its own."""
        saved = {name: os.environ.get(name) for name in env or {}}
        os.environ.update(env or {})
        try:
            ctx = c_void_p()
            opts = ContextOptions(backend=BACKEND[backend], device_index=device)
            self.check(self.lib.hk_context_create(ctypes.byref(opts), ctypes.byref(ctx)), 'hk_context_create')
            return ctx
        finally:
            for name, value in saved.items():
                if value is None:
                    os.environ.pop(name)
                else:
                    os.environ[name] = value

    def variants(self, ctx):
        out, i = [], 0
        while True:
            info = VariantInfo()
            if self.lib.hk_context_variant(ctx, i, ctypes.byref(info)) != OK:
                return out
            out.append((info.op, info.name.decode()))
            i += 1

    def version(self):
        return self.lib.hk_version_string().decode()
