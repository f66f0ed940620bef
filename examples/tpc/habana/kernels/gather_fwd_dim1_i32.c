// Gather along dim 1: output[:, i] = data[:, indices[i]] for i32 rows; the index is read as a
// scalar through gen_addr / s_i32_ld_g.
void main(tensor data, tensor indices, tensor output)
{
    const int5 start = get_index_space_offset();
    const int5 end = get_index_space_size() + start;
    int5 in_at = {0}, out_at = {0}, index_at = {0};
    for (int i = start[1]; i < end[1]; i++) {
        index_at[0] = i;
        in_at[1] = s_i32_ld_g(gen_addr(index_at, indices));
        out_at[1] = i;
        for (int d = start[0] * 64; d < end[0] * 64; d += 64) {
            in_at[0] = out_at[0] = d;
            v_i32_st_tnsr(out_at, output, v_i32_ld_tnsr_b(in_at, data));
        }
    }
}
