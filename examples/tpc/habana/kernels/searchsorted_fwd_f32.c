// searchsorted (left): for each value, the number of elements of the sorted 1-D tensor that are
// less than it. The sorted elements are read one by one through gen_addr / s_f32_ld_g.
void main(tensor sorted, tensor values, tensor indices)
{
    const int5 start = get_index_space_offset();
    const int5 end = get_index_space_size() + start;
    const int count = get_dim_size(sorted, 0);
    int5 coords = {0};
    int5 at = {0};
    for (int i = start[0]; i < end[0]; i++) {
        coords[0] = i * 64;
        float64 v = v_f32_ld_tnsr_b(coords, values);
        int64 position = 0;
        for (int k = 0; k < count; k++) {
            at[0] = k;
            float s = s_f32_ld_g(gen_addr(at, sorted));
            bool64 less = v_f32_cmp_less_b(s, v);
            position = v_i32_add_vb(position, 1, 0, position, less);
        }
        v_i32_st_tnsr(coords, indices, position);
    }
}
