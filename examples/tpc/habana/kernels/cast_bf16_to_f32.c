// bf16 -> f32 over dim 0, 128 elements per member: unpack each group to every second lane, put
// the dual groups in order with mov_dual_group, then convert all lanes (Habana's cast kernel).
void main(tensor ifm, tensor ofm)
{
    const int5 start = get_index_space_offset();
    const int5 end = get_index_space_size() + start;
    int5 in_coords, out0, out1;
    for (int w = start[1]; w < end[1]; w++) {
        in_coords[1] = out0[1] = out1[1] = w;
        for (int d = start[0] * 128; d < end[0] * 128; d += 128) {
            in_coords[0] = out0[0] = d;
            out1[0] = d + 64;
            bfloat128 in = v_bf16_ld_tnsr_b(in_coords, ifm);
            bfloat128_pair_t y;
            // lanes 0..15, 32..47, 64..79, 96..111 to the even lanes of y.v1's dual groups
            y.v1 = v_bf16_unpack_b(in, (e_group_0 << 8) | (e_every_second_element << 9) |
                                           (e_lower_half_group << 10), y.v1);
            // lanes 16..31, 48..63, 80..95, 112..127 to y.v2
            y.v2 = v_bf16_unpack_b(in, (e_group_1 << 8) | (e_every_second_element << 9) |
                                           (e_lower_half_group << 10), y.v2);
            bfloat128 first = y.v1;
            y.v1 = v_bf16_mov_dual_group_b(y.v2, 0xFFFFFFFF, 0, 1, MkWr(1, 1), y.v1);
            y.v1 = v_bf16_mov_dual_group_b(first, 0xFFFFFFFF, 1, 2, MkWr(1, 1), y.v1);
            y.v1 = v_bf16_mov_dual_group_b(y.v2, 0xFFFFFFFF, 1, 3, MkWr(1, 1), y.v1);
            y.v2 = v_bf16_mov_dual_group_b(first, 0xFFFFFFFF, 2, 0, MkWr(1, 1), y.v2);
            y.v2 = v_bf16_mov_dual_group_b(y.v2, 0xFFFFFFFF, 2, 1, MkWr(1, 1), y.v2);
            y.v2 = v_bf16_mov_dual_group_b(first, 0xFFFFFFFF, 3, 2, MkWr(1, 1), y.v2);
            float128 lo = v_convert_bf16_to_f32_all_b(y.v1);
            float128 hi = v_convert_bf16_to_f32_all_b(y.v2);
            v_f32_st_tnsr(out0, ofm, lo.v1);
            v_f32_st_tnsr(out1, ofm, hi.v1);
        }
    }
}
