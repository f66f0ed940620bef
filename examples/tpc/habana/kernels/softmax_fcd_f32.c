// Softmax along dim 0 (the fastest-changing dimension) of a 2-D f32 tensor, one row per member.
// The glue pads the input with -inf, so lanes past the row's end add exp(-inf) = 0.
void main(tensor input, tensor output)
{
    const int5 start = get_index_space_offset();
    const int5 end = get_index_space_size() + start;
    const int depth = get_dim_size(input, 0);
    int5 coords = {0};
    for (int row = start[1]; row < end[1]; row++) {
        coords[1] = row;
        float64 maximum = -INFINITY;
        for (int d = 0; d < depth; d += 64) {
            coords[0] = d;
            maximum = v_f32_max_b(maximum, v_f32_ld_tnsr_b(coords, input));
        }
        maximum = v_f32_reduce_max(maximum);
        float64 sum = 0.0f;
        for (int d = 0; d < depth; d += 64) {
            coords[0] = d;
            sum = v_f32_add_b(sum, v_exp_f32(v_f32_ld_tnsr_b(coords, input) - maximum));
        }
        float64 scale = v_reciprocal_f32(v_f32_reduce_add(sum));
        for (int d = 0; d < depth; d += 64) {
            coords[0] = d;
            float64 e = v_exp_f32(v_f32_ld_tnsr_b(coords, input) - maximum);
            v_f32_st_tnsr(coords, output, v_f32_mul_b(e, scale));
        }
    }
}
