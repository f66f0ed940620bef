// A TPC-C kernel file as a user's library has it: out = in * factor.
void main(tensor input, tensor output, float factor)
{
    const int5 start = get_index_space_offset();
    const int5 end = get_index_space_size() + start;
    int5 coords;
    for (int i = start[0]; i < end[0]; i++) {
        coords[0] = i * 64;
        v_f32_st_tnsr(coords, output, v_f32_mul_b(v_f32_ld_tnsr_b(coords, input), factor));
    }
}
