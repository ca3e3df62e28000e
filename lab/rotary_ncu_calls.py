"""The rotary contenders for lab/rotary_ncu.sh: libhk, the torch.compile HF form (bf16 [N, D] tables) and a copy
of the same bytes, on both issue shapes, each launched twice in a row between cudaProfilerStart and Stop (after
an unprofiled warm-up that compiles the peer), so that ncu sees only these kernels."""
import os
import sys

import torch

sys.path[:0] = [os.path.dirname(os.path.abspath(__file__)), os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'bench')]  # lab/, bench/
import hk  # noqa: E402
import peers  # noqa: E402
import rotary_protocols  # noqa: E402


def main():
    lib = hk.Lib(os.environ.get('HK_LIB'))
    ctx = lib.context('auto')
    stream = torch.cuda.current_stream().cuda_stream or None
    hf = torch.compile(peers.rope_hf, dynamic=False)
    calls = []
    for (B, N, H, D) in peers.ROTARY_SHAPES:
        x = torch.randn(B, N, H, D, device='cuda', dtype=torch.bfloat16)
        out = torch.empty_like(x)
        cos, sin = peers.rope_tables(N, D // 2, 'cuda')
        calls += [fn for _, fn in rotary_protocols.contenders(lib, ctx, stream, x, out, cos, sin, hf)]
    for phase in ('warm-up', 'profiled'):
        if phase == 'profiled':
            torch.cuda.profiler.start()
        for f in calls:
            f()
            f()
        torch.cuda.synchronize()
    torch.cuda.profiler.stop()
    return 0


if __name__ == '__main__':
    sys.exit(main())
