#!/usr/bin/env python3
"""hk on NumPy arrays (the CPU backend): f32, f16, bf16 and fp8 through ml_dtypes, against the float64
references (computed in torch from the same values), and bad input raising hk.Error."""
import unittest

import common

common.require('numpy', 'ml_dtypes', 'torch')
import ml_dtypes  # noqa: E402
import numpy as np  # noqa: E402
import torch  # noqa: E402

import hk  # noqa: E402
from common import ref_attention, ref_norm, ref_rotary, rel_err  # noqa: E402

common.poison_outputs()
BF16 = ml_dtypes.bfloat16
TOL = {np.dtype(np.float32): 1e-5, np.dtype(np.float16): 2e-3, np.dtype(BF16): 1e-2}
rng = np.random.default_rng()


def randn(*shape, dtype=np.float32):
    return rng.standard_normal(shape).astype(np.float32).astype(dtype)


def t64(a):
    """The values of an array (any ml_dtypes type) as a float64 torch tensor."""
    return torch.from_numpy(np.asarray(a).astype(np.float64))


class NumpyOps(unittest.TestCase):
    def test_matmul(self):
        for dtype in (np.float32, np.float16, BF16):
            x, w = randn(37, 70, dtype=dtype), randn(45, 70, dtype=dtype)
            y = hk.matmul(x, w.T)
            self.assertEqual(y.dtype, np.dtype(dtype))
            self.assertLess(rel_err(t64(y), t64(x) @ t64(w).T), TOL[np.dtype(dtype)])
            c = randn(37, 45, dtype=dtype)
            out = np.full((37, 45), np.nan, dtype=np.float32)
            hk.matmul(x, w.T, out=out, alpha=2.0, beta=1.0, c=c.astype(np.float32))
            self.assertLess(rel_err(t64(out), 2 * t64(x) @ t64(w).T + t64(c)), 1e-5)

    def test_matmul_fp8(self):
        for fp8 in (ml_dtypes.float8_e4m3fn, ml_dtypes.float8_e4m3fnuz):
            a, b = randn(24, 64, dtype=fp8), randn(64, 40, dtype=fp8)
            for out_dtype, tol in ((None, 1e-2), ('float32', 1e-5)):
                y = hk.matmul(a, b, scale_a=0.25, scale_b=2.0, out_dtype=out_dtype)
                self.assertEqual(y.dtype, np.dtype(BF16) if out_dtype is None else np.dtype(np.float32))
                self.assertLess(rel_err(t64(y), 0.5 * t64(a) @ t64(b)), tol, (fp8, out_dtype))

    def test_attention(self):
        for dtype in (np.float32, BF16):
            q, k, v = randn(2, 5, 4, 16, dtype=dtype), randn(2, 9, 2, 16, dtype=dtype), randn(2, 9, 2, 16, dtype=dtype)
            o, lse = hk.attention(q, k, v, causal=True, return_lse=True)
            ro, rl = ref_attention(t64(q), t64(k), t64(v), True)
            self.assertEqual(o.dtype, np.dtype(dtype))
            self.assertLess(rel_err(t64(o), ro), TOL[np.dtype(dtype)])
            self.assertLess(rel_err(t64(lse), rl), TOL[np.dtype(dtype)])
        cu = np.array([0, 3, 7], dtype=np.int64)  # other integer types are converted to int32
        q, k, v = randn(7, 2, 8), randn(7, 1, 8), randn(7, 1, 8)
        o = hk.attention_varlen(q, k, v, cu, cu, 4, 4)
        for a, b in ((0, 3), (3, 7)):
            ref = ref_attention(t64(q[a:b][None]), t64(k[a:b][None]), t64(v[a:b][None]))[0][0]
            self.assertLess(rel_err(t64(o[a:b]), ref), 1e-5)

    def test_rotary(self):
        x = randn(2, 6, 3, 8, dtype=BF16)
        ang = np.arange(10)[:, None] * (1.0 / 10000 ** (np.arange(4) / 4))[None, :]
        cos, sin = np.cos(ang).astype(np.float32), np.sin(ang).astype(np.float32)
        for interleaved in (False, True):
            y = hk.rotary(x, cos, sin, interleaved=interleaved, offset=3)
            ref = ref_rotary(t64(x), t64(cos[3:]), t64(sin[3:]), interleaved)
            self.assertLess(rel_err(t64(y), ref), 1e-2)
        pos = rng.integers(0, 10, (2, 6))
        y = hk.rotary(x, cos.astype(BF16), sin.astype(BF16), position_ids=pos)
        ref = ref_rotary(t64(x), t64(cos.astype(BF16)), t64(sin.astype(BF16)), False, torch.from_numpy(pos))
        self.assertLess(rel_err(t64(y), ref), 1e-2)

    def test_dropout_add_norm(self):
        for dtype in (np.float32, BF16):
            x, r, w, b = randn(3, 4, 48, dtype=dtype), randn(3, 4, 48, dtype=dtype), randn(48), randn(48)
            y, z = hk.dropout_add_norm(x, r, w, b)
            ry, rz = ref_norm(t64(x), t64(r), t64(w), t64(b))
            self.assertLess(rel_err(t64(y), ry), 2 * TOL[np.dtype(dtype)])
            self.assertLess(rel_err(t64(z), rz), TOL[np.dtype(dtype)])
        x, w = randn(5, 70), randn(70, dtype=BF16).astype(np.float32)
        y, z, keep = hk.dropout_add_norm(x, None, w, rms=True, p=0.5, seed=3, return_mask=True)
        self.assertEqual((keep.dtype, keep.shape), (np.dtype(bool), x.shape))
        self.assertTrue(0.3 < keep.mean() < 0.7)
        ry, rz = ref_norm(t64(x), None, t64(w), rms=True, keep=torch.from_numpy(keep), p=0.5)
        self.assertLess(rel_err(t64(y), ry), 1e-5)

    def test_context(self):
        ctx = hk.context()
        self.assertIs(ctx, hk.context('cpu'))
        self.assertEqual((ctx.backend, ctx.arch), ('cpu', 'cpu'))
        names = [name for _, name, _ in ctx.variants()]
        self.assertIn('cpu.attn_fwd', names)
        self.assertEqual(hk.version(), '1.3.0')

    def test_bad_input(self):
        q = randn(1, 4, 2, 8)
        with self.assertRaisesRegex(hk.Error, 'q has dtype float64; supported: f32, f16, bf16'):
            hk.attention(q.astype(np.float64), q, q)
        with self.assertRaisesRegex(hk.Error, 'v has stride 2 in its last dimension'):
            hk.attention(q, q, randn(1, 4, 2, 16)[..., ::2])
        with self.assertRaisesRegex(hk.Error, 'x is a list; expected a torch.Tensor or a numpy.ndarray'):
            hk.rotary([1.0], q, q)
        with self.assertRaisesRegex(hk.Error, 'out must be row-major'):
            hk.matmul(randn(4, 4), randn(4, 4), out=np.empty((4, 4), np.float32).T)
        ro = randn(1, 4, 2, 8)
        ro.flags.writeable = False
        with self.assertRaisesRegex(hk.Error, 'x is a read-only array; it is written'):
            hk.rotary(ro, np.ones((4, 4), np.float32), np.zeros((4, 4), np.float32), inplace=True)
        with self.assertRaisesRegex(hk.Error, 'cu_seqlens_q has dtype float32; expected an integer array'):
            hk.attention_varlen(q[0], q[0], q[0], np.zeros(2, np.float32), np.zeros(2, np.int32), 4, 4)
        with self.assertRaisesRegex(hk.Error, 'hk_ln_fused: invalid argument: ln_fused: epsilon -1 must be '
                                    'positive and finite') as caught:
            hk.dropout_add_norm(randn(2, 8), None, randn(8), eps=-1.0)
        self.assertEqual(caught.exception.status, 1)


if __name__ == '__main__':
    common.run(__name__)
