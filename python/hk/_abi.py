"""The C ABI of include/hk.h (1.3) in ctypes: enums, argument structs, and the loaded library with its
prototypes. tests/python/test_abi.py compares every struct's size and field offsets with the C compiler's."""
import ctypes
import os
from ctypes import POINTER, c_char_p, c_float, c_int, c_int64, c_size_t, c_uint32, c_uint64, c_void_p

ABI_VERSION = 10300  # HK_VERSION of the header these structs mirror

OK, ERR_INVALID_ARGUMENT, ERR_UNSUPPORTED, ERR_NO_DEVICE, ERR_OUT_OF_MEMORY, ERR_RUNTIME, ERR_INTERNAL = range(7)
F32, F16, BF16, FP8_E4M3, FP8_E4M3FNUZ = 1, 2, 3, 4, 5
BACKEND_AUTO, BACKEND_CPU, BACKEND_HIP, BACKEND_CUDA, BACKEND_EMULATOR = range(5)
NORM_LAYER, NORM_RMS = 0, 1
ROTARY_HALF, ROTARY_INTERLEAVED = 0, 1
COPY_HOST_TO_DEVICE, COPY_DEVICE_TO_HOST, COPY_DEVICE_TO_DEVICE = range(3)

I64x3 = c_int64 * 3


class Args(ctypes.Structure):
    """Every hk argument struct starts with struct_size: construction sets it and zeroes the rest
    (HK_ARGS_INIT), then applies the keyword fields."""

    def __init__(self, **fields):
        super().__init__()
        self.struct_size = ctypes.sizeof(self)
        for name, value in fields.items():
            setattr(self, name, value)


class ContextOptions(Args):
    _fields_ = [('struct_size', c_size_t), ('backend', c_int), ('device_index', c_int), ('arch', c_char_p)]


class VariantInfo(Args):
    _fields_ = [('struct_size', c_size_t), ('op', c_int), ('name', c_char_p), ('description', c_char_p)]


class GemmArgs(Args):
    _fields_ = [('struct_size', c_size_t), ('m', c_int64), ('n', c_int64), ('k', c_int64),
                ('a_type', c_int), ('b_type', c_int), ('d_type', c_int), ('trans_a', c_int), ('trans_b', c_int),
                ('a', c_void_p), ('lda', c_int64), ('b', c_void_p), ('ldb', c_int64),
                ('c', c_void_p), ('ldc', c_int64), ('d', c_void_p), ('ldd', c_int64),
                ('alpha', c_float), ('beta', c_float), ('scale_a', c_float), ('scale_b', c_float),
                ('fp8_fast_accum', c_int), ('stream', c_void_p), ('workspace', c_void_p), ('workspace_size', c_size_t)]


_ATTN_SHAPE = [('struct_size', c_size_t), ('dtype', c_int), ('batch', c_int64), ('seqlen_q', c_int64),
               ('seqlen_k', c_int64), ('heads_q', c_int64), ('heads_kv', c_int64), ('head_dim', c_int64)]
_ATTN_13 = [('window', c_int), ('window_left', c_int64), ('window_right', c_int64), ('softcap', c_float),
            ('head_dim_v', c_int64)]


class AttnFwdArgs(Args):
    _fields_ = _ATTN_SHAPE + [
        ('q', c_void_p), ('q_stride', I64x3), ('k', c_void_p), ('k_stride', I64x3), ('v', c_void_p),
        ('v_stride', I64x3), ('o', c_void_p), ('o_stride', I64x3), ('lse', c_void_p), ('softmax_scale', c_float),
        ('causal', c_int), ('cu_seqlens_q', c_void_p), ('cu_seqlens_k', c_void_p), ('stream', c_void_p)] + _ATTN_13


class AttnBwdArgs(Args):
    _fields_ = _ATTN_SHAPE + [
        ('q', c_void_p), ('q_stride', I64x3), ('k', c_void_p), ('k_stride', I64x3), ('v', c_void_p),
        ('v_stride', I64x3), ('o', c_void_p), ('o_stride', I64x3), ('d_o', c_void_p), ('do_stride', I64x3),
        ('lse', c_void_p), ('dq', c_void_p), ('dq_stride', I64x3), ('dk', c_void_p), ('dk_stride', I64x3),
        ('dv', c_void_p), ('dv_stride', I64x3), ('softmax_scale', c_float), ('causal', c_int),
        ('deterministic', c_int), ('cu_seqlens_q', c_void_p), ('cu_seqlens_k', c_void_p),
        ('workspace', c_void_p), ('workspace_size', c_size_t), ('stream', c_void_p)] + _ATTN_13


class RotaryArgs(Args):
    _fields_ = [('struct_size', c_size_t), ('dtype', c_int), ('batch', c_int64), ('seqlen', c_int64),
                ('heads', c_int64), ('head_dim', c_int64), ('rotary_dim', c_int64),
                ('x', c_void_p), ('x_stride', I64x3), ('out', c_void_p), ('out_stride', I64x3),
                ('cos', c_void_p), ('sin', c_void_p), ('table_positions', c_int64), ('position_offset', c_int64),
                ('position_ids', c_void_p), ('style', c_int), ('inverse', c_int), ('stream', c_void_p),
                ('table_type', c_int)]


class LnFusedArgs(Args):
    _fields_ = [('struct_size', c_size_t), ('norm', c_int), ('dtype', c_int), ('param_type', c_int),
                ('rows', c_int64), ('cols', c_int64), ('x', c_void_p), ('x_stride', c_int64),
                ('residual', c_void_p), ('residual_stride', c_int64), ('gamma', c_void_p), ('beta', c_void_p),
                ('y', c_void_p), ('y_stride', c_int64), ('residual_out', c_void_p), ('residual_out_stride', c_int64),
                ('mean', c_void_p), ('rstd', c_void_p), ('epsilon', c_float), ('dropout_p', c_float),
                ('seed', c_uint64), ('offset', c_uint64), ('stream', c_void_p), ('dropout_mask', c_void_p)]


class LnFusedBwdArgs(Args):
    _fields_ = [('struct_size', c_size_t), ('norm', c_int), ('dtype', c_int), ('param_type', c_int),
                ('rows', c_int64), ('cols', c_int64), ('dy', c_void_p), ('dy_stride', c_int64),
                ('z', c_void_p), ('z_stride', c_int64), ('dz_extra', c_void_p), ('dz_extra_stride', c_int64),
                ('gamma', c_void_p), ('mean', c_void_p), ('rstd', c_void_p), ('dx', c_void_p), ('dx_stride', c_int64),
                ('dresidual', c_void_p), ('dresidual_stride', c_int64), ('dgamma', c_void_p), ('dbeta', c_void_p),
                ('dropout_p', c_float), ('seed', c_uint64), ('offset', c_uint64),
                ('workspace', c_void_p), ('workspace_size', c_size_t), ('stream', c_void_p),
                ('dropout_mask', c_void_p)]


STRUCTS = {'hk_context_options': ContextOptions, 'hk_variant_info': VariantInfo, 'hk_gemm_args': GemmArgs,
           'hk_attn_fwd_args': AttnFwdArgs, 'hk_attn_bwd_args': AttnBwdArgs, 'hk_rotary_args': RotaryArgs,
           'hk_ln_fused_args': LnFusedArgs, 'hk_ln_fused_bwd_args': LnFusedBwdArgs}

_PROTOTYPES = {
    'hk_version': (c_int, []),
    'hk_version_string': (c_char_p, []),
    'hk_status_string': (c_char_p, [c_int]),
    'hk_last_error': (c_char_p, []),
    'hk_backend_name': (c_char_p, [c_int]),
    'hk_context_create': (c_int, [POINTER(ContextOptions), POINTER(c_void_p)]),
    'hk_context_destroy': (None, [c_void_p]),
    'hk_context_backend': (c_int, [c_void_p]),
    'hk_context_arch': (c_char_p, [c_void_p]),
    'hk_context_device_name': (c_char_p, [c_void_p]),
    'hk_context_variant': (c_int, [c_void_p, c_size_t, POINTER(VariantInfo)]),
    'hk_gemm': (c_int, [c_void_p, POINTER(GemmArgs)]),
    'hk_gemm_workspace_size': (c_int, [c_void_p, POINTER(GemmArgs), POINTER(c_size_t)]),
    'hk_attn_fwd': (c_int, [c_void_p, POINTER(AttnFwdArgs)]),
    'hk_attn_bwd_workspace_size': (c_int, [c_void_p, POINTER(AttnBwdArgs), POINTER(c_size_t)]),
    'hk_attn_bwd': (c_int, [c_void_p, POINTER(AttnBwdArgs)]),
    'hk_rotary': (c_int, [c_void_p, POINTER(RotaryArgs)]),
    'hk_ln_fused': (c_int, [c_void_p, POINTER(LnFusedArgs)]),
    'hk_ln_fused_bwd_workspace_size': (c_int, [c_void_p, POINTER(LnFusedBwdArgs), POINTER(c_size_t)]),
    'hk_ln_fused_bwd': (c_int, [c_void_p, POINTER(LnFusedBwdArgs)]),
    'hk_dropout_threshold': (c_uint32, [c_float]),
}


def _candidates():
    """Where libhk is looked for, in order: $HK_LIBRARY, the libdir of the prefix this package was installed into
    (written by meson install), beside the package, then the system loader's search path."""
    env = os.environ.get('HK_LIBRARY')
    if env:
        return [env]
    here = os.path.dirname(os.path.abspath(__file__))
    found = []
    try:
        from . import _install  # generated by meson install
        found.append(os.path.join(_install.LIBDIR, 'libhk.so.1'))
    except ImportError:
        pass
    found += [os.path.join(here, 'libhk.so.1'), os.path.join(os.path.dirname(here), 'libhk.so.1'), 'libhk.so.1']
    return found


def load():
    """Load libhk and declare its prototypes; raises OSError naming every place tried (hk.Error by lib())."""
    tried = []
    for path in _candidates():
        if os.sep in path and not os.path.exists(path):
            tried.append(f'{path} (absent)')
            continue
        try:
            lib = ctypes.CDLL(path)
        except OSError as e:
            tried.append(f'{path} ({e})')
            continue
        for name, (restype, argtypes) in _PROTOTYPES.items():
            fn = getattr(lib, name)
            fn.restype, fn.argtypes = restype, argtypes
        return lib, path
    raise OSError('hk: libhk.so.1 not found; tried ' + '; '.join(tried) + ' (set HK_LIBRARY to its path)')
