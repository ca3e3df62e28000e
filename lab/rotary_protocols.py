"""The rotary rows of bench/peers.py under two other timing protocols, since the memory-bound percentages move by
2-4 points with the L2 state a call starts from (git history of bench/NOTES.md, rotary run 31):
  flush       triton.testing.do_bench, as the peers are commonly measured: L2 flushed (a 256 MB zero fill)
              before every timed call; % of a 2 GiB copy timed the same way;
  after_gemm  each timed call right after the GEMM that writes its input (an attention block's QKV projection);
              median of CUDA events around the rotary call alone.
Contenders: libhk, torch.compile of the HF form on bf16 [N, D] tables (the fastest peer form) and a copy of the
same bytes.
    HK_LIB=build/libhk.so.1 python3 lab/rotary_protocols.py [--rounds 2]"""
import argparse
import os
import statistics
import sys

import torch

sys.path[:0] = [os.path.dirname(os.path.abspath(__file__)), os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'bench')]  # lab/, bench/
import hk  # noqa: E402
import peers  # noqa: E402

def contenders(lib, ctx, stream, x, out, cos, sin, hf):
    a = peers.rope_args(stream, x, out, cos, sin)
    cos2, sin2 = peers.hf_tables(cos, sin)
    return [('libhk', lambda: lib.check(lib.lib.hk_rotary(ctx, a), 'hk_rotary')),
            ('torch.compile, bf16 [N,D] tables', lambda: hf(x, cos2, sin2)),
            ('copy, same bytes', lambda: out.copy_(x))]


def main():
    p = argparse.ArgumentParser()
    p.add_argument('--lib', default=None)
    p.add_argument('--rounds', type=int, default=2)
    args = p.parse_args()
    import triton.testing
    lib = hk.Lib(args.lib)
    ctx = lib.context('auto')
    stream = torch.cuda.current_stream().cuda_stream or None
    hf = torch.compile(peers.rope_hf, dynamic=False)

    src = torch.empty(1 << 31, dtype=torch.uint8, device='cuda')
    dst = torch.empty_like(src)
    for r in range(args.rounds):
        ms = triton.testing.do_bench(lambda: dst.copy_(src), warmup=30, rep=200, return_mode='median')
        copy = 2 * src.numel() / ms / 1e9
        print(f'flush, round {r}: copy 2 GiB {copy:.3f} TB/s')
        for (B, N, H, D) in peers.ROTARY_SHAPES:
            x = torch.randn(B, N, H, D, device='cuda', dtype=torch.bfloat16)
            out = torch.empty_like(x)
            cos, sin = peers.rope_tables(N, D // 2, 'cuda')
            for name, fn in contenders(lib, ctx, stream, x, out, cos, sin, hf):
                ms = triton.testing.do_bench(fn, warmup=30, rep=200, return_mode='median')
                tbs = 4 * x.numel() / ms / 1e9
                print(f'  B{B} N{N} H{H} D{D}  {name:34s} {ms * 1e3:7.1f} us {tbs:.3f} TB/s '
                      f'({100 * tbs / copy:.1f}% of copy)')
    del src, dst

    for (B, N, H, D) in peers.ROTARY_SHAPES:
        hidden = torch.randn(B * N, 2048, device='cuda', dtype=torch.bfloat16)
        w = torch.randn(H * D, 2048, device='cuda', dtype=torch.bfloat16) * 0.02
        x = torch.empty(B, N, H, D, device='cuda', dtype=torch.bfloat16)
        out = torch.empty_like(x)
        cos, sin = peers.rope_tables(N, D // 2, 'cuda')
        todo = contenders(lib, ctx, stream, x, out, cos, sin, hf)
        events = {name: [] for name, _ in todo}
        for r in range(40 * args.rounds):
            for name, fn in todo:
                torch.matmul(hidden, w.t(), out=x.view(B * N, H * D))
                e = (torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
                e[0].record()
                fn()
                e[1].record()
                if r >= 5:
                    events[name].append(e)
        torch.cuda.synchronize()
        for name, _ in todo:
            ms = statistics.median(s.elapsed_time(e) for s, e in events[name])
            print(f'after_gemm  B{B} N{N} H{H} D{D}  {name:34s} {ms * 1e3:7.1f} us {4 * x.numel() / ms / 1e9:.3f} TB/s')
    return 0


if __name__ == '__main__':
    sys.exit(main())
