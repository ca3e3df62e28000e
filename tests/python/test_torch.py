#!/usr/bin/env python3
"""hk on torch tensors: every op against a float64 reference on CPU tensors (the CPU backend), autograd through
torch.autograd.gradcheck in float64 (the ops themselves compute in fp32: the library has no f64 kernels) and
bf16 backward against autograd of the reference, bad input raising hk.Error; and, where torch sees a GPU and
libhk can make a CUDA context for it, the same checks on CUDA tensors."""
import math
import unittest

import common

common.require('numpy', 'torch')
import torch  # noqa: E402

import hk  # noqa: E402
from common import TOL, ref_attention, ref_norm, ref_rotary, rel_err  # noqa: E402

common.poison_outputs()


def _tol(dtype):
    return TOL[str(dtype).replace('torch.', '')]


def _tables(positions, half, dtype=torch.float32, device='cpu'):
    inv = 1.0 / (10000 ** (torch.arange(half, dtype=torch.float64) / half))
    ang = torch.arange(positions, dtype=torch.float64)[:, None] * inv[None, :]
    return ang.cos().to(dtype).to(device), ang.sin().to(dtype).to(device)


def _cuda_context():
    if not torch.cuda.is_available():
        return 'torch sees no CUDA device'
    try:
        hk.context('cuda')
    except hk.Error as e:
        return f'libhk has no CUDA context: {e}'
    return None


class Ops:
    """The op checks, parameterised by device (CPU tensors here, CUDA tensors in GpuOps)."""
    device = 'cpu'

    def randn(self, *shape, dtype=torch.float32):
        return torch.randn(*shape, dtype=torch.float32, device=self.device).to(dtype)

    def gpu_unsupported(self, fn):
        """fn(), or None where a GPU context has no kernel for it: hk.Error with status UNSUPPORTED, carrying the
        library's message, is the correct answer there (the CPU backend covers everything, so not on the CPU)."""
        try:
            return fn()
        except hk.Error as e:
            if self.device == 'cpu' or e.status != 2:
                raise
            self.assertTrue(str(e))
            print(f'  unsupported on {self.device}: {e}')
            return None

    def attention_or_unsupported(self, fn):
        out = self.gpu_unsupported(fn)
        if out is None:
            self.skipTest('attention is unsupported on this GPU context')
        return out

    def test_attention_forward(self):
        for dtype in (torch.float32, torch.bfloat16):
            for causal, (sq, sk) in ((False, (7, 7)), (True, (5, 9)), (True, (9, 5))):
                q, k, v = self.randn(2, sq, 4, 16, dtype=dtype), self.randn(2, sk, 2, 16, dtype=dtype), \
                    self.randn(2, sk, 2, 16, dtype=dtype)
                o, lse = self.attention_or_unsupported(lambda: hk.attention(q, k, v, causal=causal, return_lse=True))
                ro, rl = ref_attention(q.cpu(), k.cpu(), v.cpu(), causal)
                self.assertEqual(o.dtype, dtype)
                self.assertEqual(o.device, q.device)
                self.assertLess(rel_err(o.cpu(), ro), _tol(dtype), (dtype, causal, sq, sk))
                fin = torch.isfinite(rl)
                self.assertTrue(torch.equal(torch.isfinite(lse.cpu()), fin))
                self.assertLess(rel_err(lse.cpu()[fin], rl[fin]), _tol(dtype))

    def test_attention_strided(self):
        """q, k, v as views into one packed qkv tensor: their strides are passed through."""
        qkv = self.randn(2, 6, 3, 4, 8)
        q, k, v = qkv.unbind(2)
        o = self.attention_or_unsupported(lambda: hk.attention(q, k, v, causal=True, softmax_scale=0.3))
        self.assertLess(rel_err(o.cpu(), ref_attention(q.cpu(), k.cpu(), v.cpu(), True, 0.3)[0]), 1e-5)

    def test_attention_head_dim_v(self):
        q, k, v = self.randn(1, 5, 2, 12), self.randn(1, 5, 2, 12), self.randn(1, 5, 2, 8)
        o = self.attention_or_unsupported(lambda: hk.attention(q, k, v))
        self.assertEqual(tuple(o.shape), (1, 5, 2, 8))
        self.assertLess(rel_err(o.cpu(), ref_attention(q.cpu(), k.cpu(), v.cpu())[0]), 1e-5)

    def test_attention_window_softcap(self):
        q, k, v = self.randn(1, 8, 2, 16), self.randn(1, 11, 1, 16), self.randn(1, 11, 1, 16)
        for window, softcap, causal in (((3, 1), 0.0, False), ((2, -1), 0.0, True), ((-1, -1), 2.0, True),
                                        ((4, 0), 1.5, False)):
            o = self.attention_or_unsupported(
                lambda: hk.attention(q, k, v, causal=causal, window=window, softcap=softcap))
            ref = ref_attention(q.cpu(), k.cpu(), v.cpu(), causal, None, window, softcap)[0]
            self.assertLess(rel_err(o.cpu(), ref), 1e-5, (window, softcap, causal))

    def test_attention_varlen(self):
        lens_q, lens_k = [3, 6, 1], [5, 6, 4]
        cu_q = torch.tensor([0] + list(torch.tensor(lens_q).cumsum(0)), dtype=torch.int32, device=self.device)
        cu_k = torch.tensor([0] + list(torch.tensor(lens_k).cumsum(0)), dtype=torch.int32, device=self.device)
        q, k, v = self.randn(sum(lens_q), 4, 8), self.randn(sum(lens_k), 2, 8), self.randn(sum(lens_k), 2, 8)
        o, lse = self.attention_or_unsupported(lambda: hk.attention_varlen(
            q, k, v, cu_q, cu_k, max(lens_q), max(lens_k), causal=True, return_lse=True))
        self.assertEqual(tuple(lse.shape), (4, sum(lens_q)))
        for i in range(3):
            a, b, c, d = cu_q[i], cu_q[i + 1], cu_k[i], cu_k[i + 1]
            ro, rl = ref_attention(q[a:b][None].cpu(), k[c:d][None].cpu(), v[c:d][None].cpu(), True)
            self.assertLess(rel_err(o[a:b].cpu(), ro[0]), 1e-5)
            self.assertLess(rel_err(lse[:, a:b].cpu(), rl[0]), 1e-5)

    def test_matmul(self):
        for dtype in (torch.float32, torch.bfloat16, torch.float16):
            x, w = self.randn(3, 7, 40, dtype=dtype), self.randn(24, 40, dtype=dtype)
            y = self.gpu_unsupported(lambda: hk.matmul(x, w.t()))  # nn.Linear: w read in place as B transposed
            if y is None:
                continue
            self.assertEqual(tuple(y.shape), (3, 7, 24))
            self.assertLess(rel_err(y.cpu(), x.cpu().double() @ w.cpu().double().t()), _tol(dtype))
            a, b = self.randn(40, 9, dtype=dtype).t(), self.randn(40, 13, dtype=dtype)  # A transposed view
            c = self.randn(9, 13, dtype=dtype)
            out = torch.full((9, 13), math.nan, dtype=dtype, device=self.device)
            got = hk.matmul(a, b, out=out, alpha=0.5, beta=-2.0, c=c)
            self.assertIs(got, out)
            ref = 0.5 * a.cpu().double() @ b.cpu().double() - 2.0 * c.cpu().double()
            self.assertLess(rel_err(out.cpu(), ref), _tol(dtype))
        x, w = self.randn(3, 7, 40, dtype=torch.bfloat16), self.randn(24, 40, dtype=torch.bfloat16)
        y = hk.matmul(x, w.t(), out_dtype=torch.float32)
        self.assertEqual(y.dtype, torch.float32)
        self.assertLess(rel_err(y.cpu(), x.cpu().double() @ w.cpu().double().t()), 1e-5)

    def test_matmul_fp8(self):
        if not hasattr(torch, 'float8_e4m3fn'):
            self.skipTest(f'torch {torch.__version__} has no float8_e4m3fn')
        a = self.randn(16, 64).to(torch.float8_e4m3fn)
        b = self.randn(32, 64).to(torch.float8_e4m3fn)
        y = hk.matmul(a, b.t(), scale_a=0.5, scale_b=3.0)
        self.assertEqual(y.dtype, torch.bfloat16)
        ref = 1.5 * a.cpu().double() @ b.cpu().double().t()
        self.assertLess(rel_err(y.cpu(), ref), 1e-2)

    def test_rotary(self):
        for dtype in (torch.float32, torch.bfloat16):
            for interleaved in (False, True):
                x = self.randn(2, 5, 3, 16, dtype=dtype)
                cos, sin = _tables(12, 6, device=self.device)  # rotary_dim 12 of 16
                y = hk.rotary(x, cos, sin, interleaved=interleaved, offset=4)
                ref = ref_rotary(x.cpu(), cos.cpu()[4:], sin.cpu()[4:], interleaved)
                self.assertLess(rel_err(y.cpu(), ref), _tol(dtype))
        pos = torch.randint(0, 12, (2, 5), device=self.device)
        cos, sin = _tables(12, 8, dtype=torch.bfloat16, device=self.device)
        y = hk.rotary(x, cos, sin, position_ids=pos)
        self.assertLess(rel_err(y.cpu(), ref_rotary(x.cpu(), cos.cpu(), sin.cpu(), False, pos.cpu())), 1e-2)
        x2 = x.clone()
        self.assertIs(hk.rotary(x2, cos, sin, position_ids=pos, inplace=True), x2)
        self.assertTrue(torch.equal(x2, y))

    def test_strided_views(self):
        """rotary on the q part of a packed qkv tensor and the norm on a column block of a wider tensor: their
        strides go to the library, no copies."""
        qkv = self.randn(2, 5, 3, 4, 16)
        cos, sin = _tables(5, 8, device=self.device)
        y = hk.rotary(qkv[:, :, 0], cos, sin)
        self.assertLess(rel_err(y.cpu(), ref_rotary(qkv[:, :, 0].cpu(), cos.cpu(), sin.cpu())), 1e-5)
        before = qkv.clone()
        hk.rotary(qkv[:, :, 1], cos, sin, inplace=True)
        self.assertTrue(torch.equal(qkv[:, :, 0], before[:, :, 0]) and torch.equal(qkv[:, :, 2], before[:, :, 2]))
        self.assertLess(rel_err(qkv[:, :, 1].cpu(), ref_rotary(before[:, :, 1].cpu(), cos.cpu(), sin.cpu())), 1e-5)
        wide, res = self.randn(8, 3, 100), self.randn(8, 64)
        x = wide[:, 1, 10:74]
        w = self.randn(64)
        with self.assertRaisesRegex(hk.Error, 'does not collapse into rows of one stride'):
            hk.dropout_add_norm(wide[::2, :, 10:74], None, w)
        y, z = hk.dropout_add_norm(x, res, w, rms=True)
        ry, rz = ref_norm(x.cpu(), res.cpu(), w.cpu(), rms=True)
        self.assertLess(rel_err(y.cpu(), ry), 1e-5)
        self.assertLess(rel_err(z.cpu(), rz), 1e-5)

    def test_dropout_add_norm(self):
        for dtype in (torch.float32, torch.bfloat16):
            for rms in (False, True):
                x, res = self.randn(4, 3, 72, dtype=dtype), self.randn(4, 3, 72, dtype=dtype)
                w, b = self.randn(72), None if rms else self.randn(72)
                y, z = hk.dropout_add_norm(x, res, w, b, rms=rms)
                ry, rz = ref_norm(x.cpu(), res.cpu(), w.cpu(), None if b is None else b.cpu(), rms=rms)
                self.assertLess(rel_err(y.cpu(), ry), 2 * _tol(dtype))
                self.assertLess(rel_err(z.cpu(), rz), _tol(dtype))
        x = self.randn(6, 100)
        y, z, keep = hk.dropout_add_norm(x, None, w[:1].expand(100).contiguous(), None, p=0.25, seed=7,
                                         return_mask=True)
        self.assertEqual(keep.dtype, torch.bool)
        frac = keep.float().mean().item()
        self.assertTrue(0.6 < frac < 0.9, frac)
        ry, rz = ref_norm(x.cpu(), None, w[:1].expand(100).cpu(), keep=keep.cpu(), p=0.25)
        self.assertLess(rel_err(y.cpu(), ry), 1e-5)
        self.assertLess(rel_err(z.cpu(), rz), 1e-5)
        y2, _, keep2 = hk.dropout_add_norm(x, None, w[:1].expand(100).contiguous(), None, p=0.25, seed=7,
                                           return_mask=True)
        self.assertTrue(torch.equal(keep, keep2) and torch.equal(y, y2))

    def test_backward_bf16(self):
        """bf16 gradients of every autograd Function against autograd of the float64 reference."""
        def check(fn, ref_fn, inputs):
            leaves = [t.detach().requires_grad_() for t in inputs]
            out = fn(*leaves)
            g = torch.randn_like(out)
            out.backward(g)
            ref_leaves = [t.detach().cpu().double().requires_grad_() for t in inputs]
            ref_fn(*ref_leaves).backward(g.cpu().double())
            for got, ref in zip(leaves, ref_leaves):
                self.assertEqual(got.grad.dtype, got.dtype)
                self.assertLess(rel_err(got.grad.cpu(), ref.grad), 3e-2)

        bf = torch.bfloat16
        q = self.randn(1, 6, 4, 16, dtype=bf)
        k, v = self.randn(1, 8, 2, 16, dtype=bf), self.randn(1, 8, 2, 16, dtype=bf)
        if self.gpu_unsupported(lambda: hk.attention(q, k, v)) is not None:
            check(lambda *t: hk.attention(*t, causal=True), lambda *t: ref_attention(*t, causal=True)[0], [q, k, v])
        cos, sin = _tables(8, 8, device=self.device)
        check(lambda x: hk.rotary(x, cos, sin), lambda x: ref_rotary(x, cos.cpu(), sin.cpu()),
              [self.randn(2, 8, 2, 16, dtype=bf)])
        check(lambda x, r, w, b: hk.dropout_add_norm(x, r, w, b)[0], lambda x, r, w, b: ref_norm(x, r, w, b)[0],
              [self.randn(5, 64, dtype=bf), self.randn(5, 64, dtype=bf), self.randn(64, dtype=bf),
               self.randn(64, dtype=bf)])
        check(lambda a, b: hk.matmul(a, b.t()), lambda a, b: a @ b.t(),
              [self.randn(2, 5, 48, dtype=bf), self.randn(24, 48, dtype=bf)])

    def test_bad_input(self):
        q = self.randn(1, 4, 2, 8)
        with self.assertRaisesRegex(hk.Error, 'q has dtype torch.float64; supported: f32, f16, bf16'):
            hk.attention(q.double(), q, q)
        with self.assertRaisesRegex(hk.Error, 'k has stride 2 in its last dimension'):
            hk.attention(q, self.randn(1, 4, 2, 16)[..., ::2], q)
        with self.assertRaisesRegex(hk.Error, 'k is bf16 but q is f32'):
            hk.attention(q, q.bfloat16(), q)
        with self.assertRaisesRegex(hk.Error, 'expected 4 dims'):
            hk.attention(q[0], q, q)
        with self.assertRaisesRegex(hk.Error, 'not a multiple'):
            hk.attention(self.randn(1, 4, 3, 8), q, q)
        with self.assertRaisesRegex(hk.Error, 'neither row-major nor a transposed view'):
            hk.matmul(self.randn(6, 8)[::2, ::2], self.randn(4, 3))
        with self.assertRaisesRegex(hk.Error, "a is \\[4, 6\\] but b is \\[5, 3\\]"):
            hk.matmul(self.randn(4, 6), self.randn(5, 3))
        with self.assertRaisesRegex(hk.Error, 'weight has shape \\[7\\]; expected \\[8\\]'):
            hk.dropout_add_norm(self.randn(3, 8), None, self.randn(7))
        with self.assertRaisesRegex(hk.Error, 'broadcast view'):
            hk.attention(q, self.randn(1, 1, 2, 8).expand(1, 4, 2, 8), q)
        # rules only the library knows come back with its message and status
        cos, sin = _tables(3, 4, device=self.device)
        with self.assertRaisesRegex(hk.Error, 'hk_rotary: invalid argument: rotary: positions up to position_offset '
                                    '0 \\+ seqlen 4 exceed table_positions 3') as caught:
            hk.rotary(q, cos, sin)
        self.assertEqual(caught.exception.status, 1)
        with self.assertRaisesRegex(hk.Error, 'dropout_p 1.5 must be in \\[0, 1\\)'):
            hk.dropout_add_norm(self.randn(3, 8), None, self.randn(8), p=1.5, seed=1)
        with self.assertRaisesRegex(hk.Error, 'is on device meta; supported: cpu, cuda'):
            hk.matmul(torch.empty(4, 4, device='meta'), self.randn(4, 4))


class CpuOps(Ops, unittest.TestCase):
    def test_gradcheck(self):
        """The libhk backward of each Function against finite differences of its libhk forward. Inputs are
        float64 as gradcheck expects; each op runs in fp32, so eps and the tolerances suit fp32 arithmetic."""
        def f32(fn):
            return lambda *t: fn(*(x.float() for x in t)).double()

        def check(fn, *shapes):
            inputs = [torch.randn(*s, dtype=torch.float64, requires_grad=True) for s in shapes]
            self.assertTrue(torch.autograd.gradcheck(f32(fn), inputs, eps=1e-3, atol=2e-3, rtol=2e-3))

        for causal in (False, True):
            check(lambda q, k, v: hk.attention(q, k, v, causal=causal), (2, 3, 2, 4), (2, 5, 1, 4), (2, 5, 1, 4))
        cu = torch.tensor([0, 2, 5], dtype=torch.int32)
        check(lambda q, k, v: hk.attention_varlen(q, k, v, cu, cu, 3, 3, causal=True), (5, 2, 4), (5, 1, 4),
              (5, 1, 4))
        cos, sin = _tables(6, 3)
        for interleaved in (False, True):
            check(lambda x: hk.rotary(x, cos, sin, interleaved=interleaved, offset=2), (2, 3, 2, 8))
        for rms in (False, True):
            check(lambda x, r, w: hk.dropout_add_norm(x, r, w, rms=rms, p=0.2, seed=11)[0], (3, 40), (3, 40), (40,))
        check(lambda x, r, w, b: sum(hk.dropout_add_norm(x, r, w, b)), (2, 3, 10), (2, 3, 10), (10,), (10,))
        check(lambda a, b: hk.matmul(a, b.t()), (2, 3, 5), (4, 5))
        check(lambda a, b, c: hk.matmul(a, b, alpha=2.0, beta=0.5, c=c), (3, 5), (5, 4), (3, 4))

    def test_gradcheck_13(self):
        """gradcheck of attention with a window, a softcap and head_dim_v != head_dim (hk.h 1.3)."""
        q, k, v = (torch.randn(1, 5, 2, 4, dtype=torch.float64, requires_grad=True) for _ in range(3))
        v6 = torch.randn(1, 5, 2, 6, dtype=torch.float64, requires_grad=True)
        f = lambda **kw: lambda q, k, v: hk.attention(q.float(), k.float(), v.float(), **kw).double()  # noqa: E731
        for kw in ({'window': (1, 1)}, {'window': (2, 0), 'causal': True}, {'softcap': 3.0},
                   {'window': (3, -1), 'softcap': 2.0}):
            self.assertTrue(torch.autograd.gradcheck(f(**kw), (q, k, v), eps=1e-3, atol=2e-3, rtol=2e-3), kw)
        self.assertTrue(torch.autograd.gradcheck(f(), (q, k, v6), eps=1e-3, atol=2e-3, rtol=2e-3))

    def test_numpy_and_torch_not_mixed(self):
        import numpy as np
        with self.assertRaisesRegex(hk.Error, 'mix NumPy arrays and torch tensors'):
            hk.matmul(torch.randn(2, 2), np.ones((2, 2), np.float32))


@unittest.skipIf(_cuda_context(), _cuda_context())
class GpuOps(Ops, unittest.TestCase):
    device = 'cuda'

    def test_two_devices(self):
        with self.assertRaisesRegex(hk.Error, 'q is on cuda:0 but k is on cpu'):
            hk.attention(self.randn(1, 4, 2, 8), torch.randn(1, 4, 2, 8), self.randn(1, 4, 2, 8))

    def test_current_stream(self):
        """The call runs on torch's current stream: work queued before it on a side stream is seen."""
        side = torch.cuda.Stream()
        x, w = self.randn(256, 256, dtype=torch.bfloat16), self.randn(256, 256, dtype=torch.bfloat16)
        with torch.cuda.stream(side):
            x.mul_(2.0)
            y = hk.matmul(x, w, out_dtype=torch.float32)
        side.synchronize()
        self.assertLess(rel_err(y.cpu(), x.cpu().double() @ w.cpu().double()), 1e-5)


if __name__ == '__main__':
    common.run(__name__)
