// Sum of scaled embedding rows per bag, in the style of Habana's
// sparse_lengths_sum_bf16_2D_f32_embed: each table row carries its f32 scale and bias after its
// `width` values, read with one half-register load (LD_TNSR_LOW) and broadcast with SHUFFLE and
// MOV_DUAL_GROUP; each index adds its scaled row into its bag's output row with an RMW store,
// so index-space members may share a bag.
//   output[:, bag[k]] += table[0:width, indices[k]] * scale[indices[k]] + bias[indices[k]]
void main(tensor table, tensor indices, tensor bags, tensor output)
{
    const int5 start = get_index_space_offset();
    const int5 end = get_index_space_size() + start;
    const int width = get_dim_size(output, 0);
    // Element 0 (the scale) and element 1 (the bias) to every element of dual group 0.
    const uchar256 first = 0x80;
    const uchar256 second = 0x81;
    int5 at = {0}, k_at = {0}, row_at = {0}, out_at = {0};
    for (int k = start[1]; k < end[1]; k++) {
        k_at[0] = k;
        const int row = s_i32_ld_g(gen_addr(k_at, indices));
        out_at[1] = s_i32_ld_g(gen_addr(k_at, bags));
        row_at[0] = width;
        row_at[1] = row;
        const float64 scale_bias = v_f32_ld_tnsr_low_b(row_at, table);
        float64 scale = v_f32_shuffle_b(scale_bias, first, 0, scale_bias);
        float64 bias = v_f32_shuffle_b(scale_bias, second, 0, scale_bias);
        for (int g = 1; g < 4; g++) {
            scale = v_f32_mov_dual_group_b(scale, 0xFFFFFFFF, 0, g, MkWr(1, 1), scale);
            bias = v_f32_mov_dual_group_b(bias, 0xFFFFFFFF, 0, g, MkWr(1, 1), bias);
        }
        at[1] = row;
        for (int d = start[0] * 64; d < end[0] * 64; d += 64) {
            at[0] = out_at[0] = d;
            const float64 x = v_f32_ld_tnsr_b(at, table);
            const float64 y = v_f32_mac_b(x, scale, bias);  // bias + x * scale
            v_f32_st_tnsr_rmw(out_at, output, y,
                              MkRMW(e_rmw_fp32, e_rmw_add, e_rmw_atomic, e_tnsr_dt_srf));
        }
    }
}
