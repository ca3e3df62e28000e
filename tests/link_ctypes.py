#!/usr/bin/env python3
"""Load libhk.so with ctypes (the structs of python/hk/_abi.py, the calls by hand), run hk_gemm (bf16, nn.Linear
layout) and hk_attn_fwd (f32, causal, GQA) on the CPU and compare with numpy in float64.
Usage: link_ctypes.py LIBHK_SO [SANITIZE]"""
import ctypes as C
import os
import shutil
import subprocess
import sys

try:
    import numpy as np
except ImportError:
    # meson may have found a python3 (pyenv, venv) without numpy while the system one has it
    if not os.environ.get("HK_CTYPES_REEXEC"):
        for cand in ["/usr/bin/python3", shutil.which("python3")]:
            if cand and os.path.realpath(cand) != os.path.realpath(sys.executable) and subprocess.run(
                    [cand, "-c", "import numpy"], capture_output=True).returncode == 0:
                os.environ["HK_CTYPES_REEXEC"] = "1"
                os.execv(cand, [cand] + sys.argv)
    print("SKIP: numpy is not installed")
    sys.exit(77)

# the argument structs come from the Python package (tests/python/test_abi.py checks them against the compiler)
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'python'))
from hk._abi import BACKEND_CPU as HK_BACKEND_CPU, BF16 as HK_DTYPE_BF16, F32 as HK_DTYPE_F32  # noqa: E402
from hk._abi import AttnFwdArgs, ContextOptions as Options, GemmArgs  # noqa: E402

vp = C.c_void_p


def to_bf16(x):
    """float64 -> bf16 bits (round to nearest even through float32) and the values they hold."""
    u = np.asarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    bits = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)
    return bits, (bits.astype(np.uint32) << 16).view(np.float32).astype(np.float64)


def ptr(a):
    return a.ctypes.data_as(vp)


def main():
    if len(sys.argv) > 2 and sys.argv[2] not in ("", "none"):
        print(f"SKIP: python is not built with -fsanitize={sys.argv[2]}, so it cannot load this libhk")
        return 77
    lib = C.CDLL(sys.argv[1])
    lib.hk_version.restype = C.c_int
    lib.hk_last_error.restype = C.c_char_p
    lib.hk_context_create.argtypes = [C.POINTER(Options), C.POINTER(vp)]
    lib.hk_context_destroy.argtypes = [vp]
    lib.hk_gemm.argtypes = [vp, C.POINTER(GemmArgs)]
    lib.hk_attn_fwd.argtypes = [vp, C.POINTER(AttnFwdArgs)]
    if lib.hk_version() != 10300:
        print("FAIL: hk_version", lib.hk_version())
        return 1

    opts = Options(backend=HK_BACKEND_CPU)
    ctx = vp()
    if lib.hk_context_create(C.byref(opts), C.byref(ctx)) != 0:
        print("FAIL: hk_context_create:", lib.hk_last_error().decode())
        return 1
    rng = np.random.default_rng()
    failures = 0

    # GEMM: x[m, k] @ w[n, k]^T in bf16 with fp32 output
    m, n, k = 37, 45, 70
    xb, x = to_bf16(rng.standard_normal((m, k)))
    wb, w = to_bf16(rng.standard_normal((n, k)))
    d = np.full((m, n), np.nan, dtype=np.float32)
    g = GemmArgs(struct_size=C.sizeof(GemmArgs), m=m, n=n, k=k, a_type=HK_DTYPE_BF16, b_type=HK_DTYPE_BF16,
                 d_type=HK_DTYPE_F32, trans_b=1, a=ptr(xb), lda=k, b=ptr(wb), ldb=k, d=ptr(d), ldd=n, alpha=1.0)
    st = lib.hk_gemm(ctx, C.byref(g))
    ref = x @ w.T
    err = np.linalg.norm(d - ref) / np.linalg.norm(ref)
    print(f"hk_gemm: status {st}, relative error {err:.3g}")
    if st != 0 or not np.isfinite(d).all() or err > 1e-5:
        print("FAIL: hk_gemm", lib.hk_last_error().decode())
        failures += 1

    # attention: [batch, seq, heads, dim], causal with seqlen_q < seqlen_k, 4 query heads on 2 kv heads
    b, sq, sk, hq, hkv, dim = 2, 5, 9, 4, 2, 16
    q = rng.standard_normal((b, sq, hq, dim)).astype(np.float32)
    kk = rng.standard_normal((b, sk, hkv, dim)).astype(np.float32)
    v = rng.standard_normal((b, sk, hkv, dim)).astype(np.float32)
    o = np.full((b, sq, hq, dim), np.nan, dtype=np.float32)
    lse = np.full((b, hq, sq), np.nan, dtype=np.float32)
    a = AttnFwdArgs(struct_size=C.sizeof(AttnFwdArgs), dtype=HK_DTYPE_F32, batch=b, seqlen_q=sq, seqlen_k=sk,
                    heads_q=hq, heads_kv=hkv, head_dim=dim, q=ptr(q), k=ptr(kk), v=ptr(v), o=ptr(o), lse=ptr(lse),
                    causal=1)
    st = lib.hk_attn_fwd(ctx, C.byref(a))
    kr = np.repeat(kk.astype(np.float64), hq // hkv, axis=2)
    vr = np.repeat(v.astype(np.float64), hq // hkv, axis=2)
    s = np.einsum("bihd,bjhd->bhij", q.astype(np.float64), kr) / np.sqrt(dim)
    visible = np.arange(sk)[None, :] <= np.arange(sq)[:, None] + sk - sq
    s = np.where(visible, s, -np.inf)
    ref_lse = np.log(np.exp(s - s.max(-1, keepdims=True)).sum(-1)) + s.max(-1)
    p = np.exp(s - ref_lse[..., None])
    ref_o = np.einsum("bhij,bjhd->bihd", p, vr)
    err_o = np.abs(o - ref_o).max()
    err_l = np.abs(lse - ref_lse).max()
    print(f"hk_attn_fwd: status {st}, max error O {err_o:.3g}, LSE {err_l:.3g}")
    if st != 0 or not np.isfinite(o).all() or err_o > 1e-5 or err_l > 1e-5:
        print("FAIL: hk_attn_fwd", lib.hk_last_error().decode())
        failures += 1

    lib.hk_context_destroy(ctx)
    print(f"{2 - failures} passed, {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
