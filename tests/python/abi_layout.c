/* Prints the size and every field's offset and size of the public argument structs as the C compiler lays
 * them out, one "struct size N", "struct.field OFFSET" or "struct.field.size N" line each; test_abi.py compares
 * the Python package's ctypes structs against this. The field lists follow include/hk.h. */
#include <hk.h>
#include <stdio.h>

#define FIELD(s, f) printf(#s "." #f " %zu\n" #s "." #f ".size %zu\n", offsetof(s, f), sizeof(((s *)0)->f));
#define SIZE(s) printf(#s " size %zu\n", sizeof(s));

int main(void)
{
    SIZE(hk_context_options)
    FIELD(hk_context_options, struct_size) FIELD(hk_context_options, backend)
    FIELD(hk_context_options, device_index) FIELD(hk_context_options, arch)

    SIZE(hk_variant_info)
    FIELD(hk_variant_info, struct_size) FIELD(hk_variant_info, op) FIELD(hk_variant_info, name)
    FIELD(hk_variant_info, description)

    SIZE(hk_gemm_args)
    FIELD(hk_gemm_args, struct_size) FIELD(hk_gemm_args, m) FIELD(hk_gemm_args, n) FIELD(hk_gemm_args, k)
    FIELD(hk_gemm_args, a_type) FIELD(hk_gemm_args, b_type) FIELD(hk_gemm_args, d_type)
    FIELD(hk_gemm_args, trans_a) FIELD(hk_gemm_args, trans_b)
    FIELD(hk_gemm_args, a) FIELD(hk_gemm_args, lda) FIELD(hk_gemm_args, b) FIELD(hk_gemm_args, ldb)
    FIELD(hk_gemm_args, c) FIELD(hk_gemm_args, ldc) FIELD(hk_gemm_args, d) FIELD(hk_gemm_args, ldd)
    FIELD(hk_gemm_args, alpha) FIELD(hk_gemm_args, beta) FIELD(hk_gemm_args, scale_a) FIELD(hk_gemm_args, scale_b)
    FIELD(hk_gemm_args, fp8_fast_accum) FIELD(hk_gemm_args, stream)
    FIELD(hk_gemm_args, workspace) FIELD(hk_gemm_args, workspace_size)

#define ATTN_SHAPE(s)                                                                                                 \
    FIELD(s, struct_size) FIELD(s, dtype) FIELD(s, batch) FIELD(s, seqlen_q) FIELD(s, seqlen_k) FIELD(s, heads_q)      \
    FIELD(s, heads_kv) FIELD(s, head_dim) FIELD(s, q) FIELD(s, q_stride) FIELD(s, k) FIELD(s, k_stride) FIELD(s, v)  \
    FIELD(s, v_stride)
#define ATTN_13(s) FIELD(s, window) FIELD(s, window_left) FIELD(s, window_right) FIELD(s, softcap) FIELD(s, head_dim_v)

    SIZE(hk_attn_fwd_args)
    ATTN_SHAPE(hk_attn_fwd_args)
    FIELD(hk_attn_fwd_args, o) FIELD(hk_attn_fwd_args, o_stride) FIELD(hk_attn_fwd_args, lse)
    FIELD(hk_attn_fwd_args, softmax_scale) FIELD(hk_attn_fwd_args, causal)
    FIELD(hk_attn_fwd_args, cu_seqlens_q) FIELD(hk_attn_fwd_args, cu_seqlens_k) FIELD(hk_attn_fwd_args, stream)
    ATTN_13(hk_attn_fwd_args)

    SIZE(hk_attn_bwd_args)
    ATTN_SHAPE(hk_attn_bwd_args)
    FIELD(hk_attn_bwd_args, o) FIELD(hk_attn_bwd_args, o_stride) FIELD(hk_attn_bwd_args, d_o)
    FIELD(hk_attn_bwd_args, do_stride) FIELD(hk_attn_bwd_args, lse) FIELD(hk_attn_bwd_args, dq)
    FIELD(hk_attn_bwd_args, dq_stride) FIELD(hk_attn_bwd_args, dk) FIELD(hk_attn_bwd_args, dk_stride)
    FIELD(hk_attn_bwd_args, dv) FIELD(hk_attn_bwd_args, dv_stride) FIELD(hk_attn_bwd_args, softmax_scale)
    FIELD(hk_attn_bwd_args, causal) FIELD(hk_attn_bwd_args, deterministic)
    FIELD(hk_attn_bwd_args, cu_seqlens_q) FIELD(hk_attn_bwd_args, cu_seqlens_k)
    FIELD(hk_attn_bwd_args, workspace) FIELD(hk_attn_bwd_args, workspace_size) FIELD(hk_attn_bwd_args, stream)
    ATTN_13(hk_attn_bwd_args)

    SIZE(hk_rotary_args)
    FIELD(hk_rotary_args, struct_size) FIELD(hk_rotary_args, dtype) FIELD(hk_rotary_args, batch)
    FIELD(hk_rotary_args, seqlen) FIELD(hk_rotary_args, heads) FIELD(hk_rotary_args, head_dim)
    FIELD(hk_rotary_args, rotary_dim) FIELD(hk_rotary_args, x) FIELD(hk_rotary_args, x_stride)
    FIELD(hk_rotary_args, out) FIELD(hk_rotary_args, out_stride) FIELD(hk_rotary_args, cos)
    FIELD(hk_rotary_args, sin) FIELD(hk_rotary_args, table_positions) FIELD(hk_rotary_args, position_offset)
    FIELD(hk_rotary_args, position_ids) FIELD(hk_rotary_args, style) FIELD(hk_rotary_args, inverse)
    FIELD(hk_rotary_args, stream) FIELD(hk_rotary_args, table_type)

    SIZE(hk_ln_fused_args)
    FIELD(hk_ln_fused_args, struct_size) FIELD(hk_ln_fused_args, norm) FIELD(hk_ln_fused_args, dtype)
    FIELD(hk_ln_fused_args, param_type) FIELD(hk_ln_fused_args, rows) FIELD(hk_ln_fused_args, cols)
    FIELD(hk_ln_fused_args, x) FIELD(hk_ln_fused_args, x_stride) FIELD(hk_ln_fused_args, residual)
    FIELD(hk_ln_fused_args, residual_stride) FIELD(hk_ln_fused_args, gamma) FIELD(hk_ln_fused_args, beta)
    FIELD(hk_ln_fused_args, y) FIELD(hk_ln_fused_args, y_stride) FIELD(hk_ln_fused_args, residual_out)
    FIELD(hk_ln_fused_args, residual_out_stride) FIELD(hk_ln_fused_args, mean) FIELD(hk_ln_fused_args, rstd)
    FIELD(hk_ln_fused_args, epsilon) FIELD(hk_ln_fused_args, dropout_p) FIELD(hk_ln_fused_args, seed)
    FIELD(hk_ln_fused_args, offset) FIELD(hk_ln_fused_args, stream) FIELD(hk_ln_fused_args, dropout_mask)

    SIZE(hk_ln_fused_bwd_args)
    FIELD(hk_ln_fused_bwd_args, struct_size) FIELD(hk_ln_fused_bwd_args, norm) FIELD(hk_ln_fused_bwd_args, dtype)
    FIELD(hk_ln_fused_bwd_args, param_type) FIELD(hk_ln_fused_bwd_args, rows) FIELD(hk_ln_fused_bwd_args, cols)
    FIELD(hk_ln_fused_bwd_args, dy) FIELD(hk_ln_fused_bwd_args, dy_stride) FIELD(hk_ln_fused_bwd_args, z)
    FIELD(hk_ln_fused_bwd_args, z_stride) FIELD(hk_ln_fused_bwd_args, dz_extra)
    FIELD(hk_ln_fused_bwd_args, dz_extra_stride) FIELD(hk_ln_fused_bwd_args, gamma) FIELD(hk_ln_fused_bwd_args, mean)
    FIELD(hk_ln_fused_bwd_args, rstd) FIELD(hk_ln_fused_bwd_args, dx) FIELD(hk_ln_fused_bwd_args, dx_stride)
    FIELD(hk_ln_fused_bwd_args, dresidual) FIELD(hk_ln_fused_bwd_args, dresidual_stride)
    FIELD(hk_ln_fused_bwd_args, dgamma) FIELD(hk_ln_fused_bwd_args, dbeta) FIELD(hk_ln_fused_bwd_args, dropout_p)
    FIELD(hk_ln_fused_bwd_args, seed) FIELD(hk_ln_fused_bwd_args, offset) FIELD(hk_ln_fused_bwd_args, workspace)
    FIELD(hk_ln_fused_bwd_args, workspace_size) FIELD(hk_ln_fused_bwd_args, stream)
    FIELD(hk_ln_fused_bwd_args, dropout_mask)
    return 0;
}
