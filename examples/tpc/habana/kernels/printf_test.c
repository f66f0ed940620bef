// printf from a kernel (spec 000 §2.7.3): each member prints its index and the first element of
// its vector, then copies the vector through.
#pragma tpc_printf(enable)
void main(tensor input, tensor output)
{
    const int5 start = get_index_space_offset();
    const int5 end = get_index_space_size() + start;
    int5 coords = {0};
    for (int i = start[0]; i < end[0]; i++) {
        coords[0] = i * 64;
        float64 x = v_f32_ld_tnsr_b(coords, input);
        printf("member %d\n", i);
        printf("first value is %f\n", x[0]);
        v_f32_st_tnsr(coords, output, x);
    }
}
