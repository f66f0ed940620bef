// Elementwise add of two 1-D f32 tensors; the last vector is cut by the tensor's end.
void main(tensor a, tensor b, tensor c)
{
    const int5 start = get_index_space_offset();
    const int5 end = get_index_space_size() + start;
    int5 coords = {0};
    for (int i = start[0]; i < end[0]; i++) {
        coords[0] = i * 64;
        float64 x = v_f32_ld_tnsr_b(coords, a);
        float64 y = v_f32_ld_tnsr_b(coords, b);
        v_f32_st_tnsr(coords, c, v_f32_add_b(x, y));
    }
}
