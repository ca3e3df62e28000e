"""Errors, contexts, and the adaptation of NumPy arrays and torch tensors to the C API: dtype codes, data
pointers, element strides, devices, streams and output allocation. Every rule the Python layer checks raises
hk.Error before libhk is called; every failing libhk call raises hk.Error carrying hk_last_error()."""
import ctypes
import threading

from . import _abi

_lib_lock = threading.Lock()
_lib = None
_contexts = {}


class Error(RuntimeError):
    """A libhk failure (status is the hk_status code; None for a rule the Python layer checked) or bad input."""

    def __init__(self, message, status=None):
        super().__init__(message)
        self.status = status


def lib():
    global _lib
    with _lib_lock:
        if _lib is None:
            try:
                loaded, _ = _abi.load()
            except OSError as e:
                raise Error(str(e)) from None
            if loaded.hk_version() // 100 != _abi.ABI_VERSION // 100:
                raise Error(f'hk: libhk {loaded.hk_version_string().decode()} is loaded, but this package mirrors '
                            f'hk.h {_abi.ABI_VERSION // 10000}.{_abi.ABI_VERSION // 100 % 100}')
            _lib = loaded
        return _lib


def check(status, what):
    """Raise hk.Error for a non-zero hk_status, with the thread's hk_last_error()."""
    if status != _abi.OK:
        L = lib()
        raise Error(f'{what}: {L.hk_status_string(status).decode()}: {L.hk_last_error().decode()}', status)


class Context:
    """One libhk context: the CPU backend for host memory, or the CUDA backend of one GPU ordinal."""

    def __init__(self, backend, device_index=0):
        L = lib()
        opts = _abi.ContextOptions(backend=backend, device_index=device_index)
        handle = ctypes.c_void_p()
        check(L.hk_context_create(ctypes.byref(opts), ctypes.byref(handle)), 'hk_context_create')
        self.handle = handle
        self.backend = L.hk_backend_name(L.hk_context_backend(handle)).decode()
        self.arch = L.hk_context_arch(handle).decode()
        self.device_name = L.hk_context_device_name(handle).decode()

    def variants(self):
        """(op, name, description) of every kernel variant this context can run."""
        out, i, info = [], 0, _abi.VariantInfo()
        while lib().hk_context_variant(self.handle, i, ctypes.byref(info)) == _abi.OK:
            out.append((info.op, info.name.decode(), info.description.decode()))
            i += 1
        return out

    def __repr__(self):
        return f'hk.Context({self.backend}, {self.arch}, {self.device_name!r})'


def context(device='cpu'):
    """The shared context of a device: 'cpu' (also NumPy arrays and torch CPU tensors), 'cuda' or 'cuda:N'
    (torch CUDA tensors), or a torch.device. Created on first use and kept for the process."""
    key = _device_key(device)
    with _lib_lock:
        ctx = _contexts.get(key)
    if ctx is None:
        ctx = Context(_abi.BACKEND_CPU) if key[0] == 'cpu' else Context(_abi.BACKEND_CUDA, key[1])
        with _lib_lock:
            kept = _contexts.setdefault(key, ctx)
        if kept is not ctx:  # another thread created this device's context meanwhile
            lib().hk_context_destroy(ctx.handle)
        ctx = kept
    return ctx


def _device_key(device):
    text = str(device)
    if text == 'cpu':
        return ('cpu', 0)
    if text == 'cuda':
        import torch
        return ('cuda', torch.cuda.current_device())
    if text.startswith('cuda:'):
        return ('cuda', int(text[5:]))
    raise Error(f'hk: device {text!r} is not supported (cpu or cuda[:N])')


# ---------------------------------------------------------------- operands

def _numpy_dtypes():
    import numpy as np
    table = {np.dtype(np.float32): _abi.F32, np.dtype(np.float16): _abi.F16}
    try:
        import ml_dtypes
        table[np.dtype(ml_dtypes.bfloat16)] = _abi.BF16
        table[np.dtype(ml_dtypes.float8_e4m3fn)] = _abi.FP8_E4M3
        table[np.dtype(ml_dtypes.float8_e4m3fnuz)] = _abi.FP8_E4M3FNUZ
    except ImportError:
        pass
    return table


def _torch_dtypes():
    import torch
    table = {torch.float32: _abi.F32, torch.float16: _abi.F16, torch.bfloat16: _abi.BF16}
    for name, code in (('float8_e4m3fn', _abi.FP8_E4M3), ('float8_e4m3fnuz', _abi.FP8_E4M3FNUZ)):
        if hasattr(torch, name):
            table[getattr(torch, name)] = code
    return table


_NAMES = {_abi.F32: 'f32', _abi.F16: 'f16', _abi.BF16: 'bf16', _abi.FP8_E4M3: 'fp8_e4m3',
          _abi.FP8_E4M3FNUZ: 'fp8_e4m3fnuz'}
FLOATS = (_abi.F32, _abi.F16, _abi.BF16)
FP8 = (_abi.FP8_E4M3, _abi.FP8_E4M3FNUZ)


def _is_torch(x):
    mod = type(x).__module__
    return mod.startswith('torch') and hasattr(x, 'data_ptr')


class Operand:
    """An array or tensor as the C API sees it: dtype code, shape, strides in elements, pointer, device."""

    __slots__ = ('obj', 'name', 'torch', 'dtype', 'shape', 'strides', 'ptr', 'device')

    def __init__(self, obj, name, dtypes=FLOATS):
        self.obj, self.name = obj, name
        if _is_torch(obj):
            self.torch = True
            table = _torch_dtypes()
            self.shape, self.strides = tuple(obj.shape), tuple(obj.stride())
            self.ptr = obj.data_ptr()
            dev = obj.device
            self.device = ('cpu', 0) if dev.type == 'cpu' else (dev.type, dev.index)
            if dev.type not in ('cpu', 'cuda'):
                raise Error(f'hk: {name} is on device {dev}; supported: cpu, cuda')
            key = obj.dtype
        else:
            try:
                import numpy as np
            except ImportError:
                np = None
            if np is None or not isinstance(obj, np.ndarray):
                raise Error(f'hk: {name} is a {type(obj).__name__}; expected a torch.Tensor or a numpy.ndarray')
            self.torch = False
            table = _numpy_dtypes()
            item = obj.itemsize
            if any(s % item for s in obj.strides):
                raise Error(f'hk: {name} has byte strides {obj.strides} that are not multiples of its element size')
            self.shape, self.strides = obj.shape, tuple(s // item for s in obj.strides)
            self.ptr = obj.ctypes.data
            self.device = ('cpu', 0)
            key = obj.dtype
        self.dtype = table.get(key)
        if self.dtype not in dtypes:
            raise Error(f'hk: {name} has dtype {key}; supported: ' + ', '.join(_NAMES[d] for d in dtypes))
        if any(s < 0 for s in self.strides):
            raise Error(f'hk: {name} has negative strides {self.strides}')

    @property
    def ndim(self):
        return len(self.shape)

    def need_rank(self, rank, layout):
        if self.ndim != rank:
            raise Error(f'hk: {self.name} has shape {list(self.shape)}; expected {rank} dims {layout}')

    def need_inner_contiguous(self):
        if self.shape and self.shape[-1] > 1 and self.strides[-1] != 1:
            raise Error(f'hk: {self.name} has stride {self.strides[-1]} in its last dimension (strides '
                        f'{list(self.strides)}); the last dimension must be contiguous')

    def need_writable(self):
        if not self.torch and not self.obj.flags.writeable:
            raise Error(f'hk: {self.name} is a read-only array; it is written')

    def need_contiguous(self):
        expect, contiguous = 1, True
        for size, stride in zip(reversed(self.shape), reversed(self.strides)):
            if size > 1 and stride != expect:
                contiguous = False
            expect *= size
        if not contiguous:
            raise Error(f'hk: {self.name} (shape {list(self.shape)}, strides {list(self.strides)}) must be contiguous')

    def outer_strides(self, dims):
        """The strides of the leading `dims` dimensions as the C API takes them. A dimension of size 1 gets stride
        1 (the library ignores it), so that a triple never reads as 'all zero: contiguous' by accident."""
        for size, stride in zip(self.shape, self.strides):
            if size > 1 and stride == 0:
                raise Error(f'hk: {self.name} is a broadcast view (strides {list(self.strides)}); its dimensions '
                            'must not alias (make it contiguous)')
        return [s if n > 1 else 1 for n, s in zip(self.shape[:dims], self.strides[:dims])]

    def ctx_stream(self):
        """The context of this operand's device and the stream to launch on (the current torch stream)."""
        ctx = context(f'{self.device[0]}:{self.device[1]}' if self.device[0] == 'cuda' else 'cpu')
        stream = None
        if self.device[0] == 'cuda':
            import torch
            stream = torch.cuda.current_stream(self.obj.device).cuda_stream
        return ctx, stream


def operands(*pairs, dtypes=FLOATS):
    """Wrap (obj, name) pairs (obj None is skipped as None) and require one device and one kind of array."""
    out = [None if obj is None else Operand(obj, name, dtypes) for obj, name in pairs]
    live = [o for o in out if o is not None]
    for o in live[1:]:
        if o.device != live[0].device:
            raise Error(f'hk: {live[0].name} is on {_dev(live[0])} but {o.name} is on {_dev(o)}; all tensors of one '
                        'call must be on one device')
        if o.torch != live[0].torch:
            raise Error(f'hk: {live[0].name} and {o.name} mix NumPy arrays and torch tensors')
    return out


def same_dtype(*ops):
    first = ops[0]
    for o in ops[1:]:
        if o is not None and o.dtype != first.dtype:
            raise Error(f'hk: {o.name} is {_NAMES[o.dtype]} but {first.name} is {_NAMES[first.dtype]}; they must match')


def _dev(o):
    return 'cpu' if o.device[0] == 'cpu' else f'{o.device[0]}:{o.device[1]}'


def index_operand(obj, name, like, count=None):
    """An int32 index vector (cu_seqlens, position_ids) on like's device; other integer dtypes are converted."""
    if obj is None:
        return None
    if like.torch:
        import torch
        if not _is_torch(obj):
            obj = torch.as_tensor(obj)
        if obj.dtype.is_floating_point or obj.dtype == torch.bool:
            raise Error(f'hk: {name} has dtype {obj.dtype}; expected an integer tensor')
        if str(obj.device) != _dev(like):
            raise Error(f'hk: {name} is on {obj.device} but {like.name} is on {_dev(like)}')
        obj = obj.to(torch.int32).contiguous()
        ptr, shape = obj.data_ptr(), tuple(obj.shape)
    else:
        import numpy as np
        obj = np.asarray(obj)
        if obj.dtype.kind not in 'iu':
            raise Error(f'hk: {name} has dtype {obj.dtype}; expected an integer array')
        obj = np.ascontiguousarray(obj, dtype=np.int32)
        ptr, shape = obj.ctypes.data, obj.shape
    if count is not None and shape != count:
        raise Error(f'hk: {name} has shape {list(shape)}; expected {list(count)}')
    return obj, ptr


def empty(like, shape, dtype):
    """A new uninitialised array on like's device: dtype is an hk dtype code, 'u32' (32-bit words: int32 in torch)
    or 'u8'."""
    if like.torch:
        import torch
        if dtype == 'u32':
            td = torch.int32
        elif dtype == 'u8':
            td = torch.uint8
        else:
            td = {v: k for k, v in _torch_dtypes().items()}[dtype]
        return torch.empty(shape, dtype=td, device=like.obj.device)
    import numpy as np
    if dtype in ('u32', 'u8'):
        return np.empty(shape, dtype=np.uint32 if dtype == 'u32' else np.uint8)
    return np.empty(shape, dtype={v: k for k, v in _numpy_dtypes().items()}[dtype])


def data_ptr(obj):
    return obj.data_ptr() if _is_torch(obj) else obj.ctypes.data


def workspace(like, nbytes):
    """A device buffer of nbytes, 256-byte aligned (None for 0), and the object that keeps it alive."""
    if nbytes == 0:
        return None, None
    buf = empty(like, (nbytes + 256,), 'u8')
    ptr = data_ptr(buf)
    return buf, ptr + (-ptr) % 256


def dtype_name(code):
    return _NAMES[code]
