// Program-scope __local__ arrays are the core's local memory at their addresses: they lie from
// address 0 in declaration order, vectors in vector local memory and scalars in scalar local
// memory, so the kernel reaches them by address too.
__local__ float64 staged[4];
__local__ int counts[4];

void main(tensor input, tensor output)
{
    int5 coords = {0};
    for (int i = 0; i < 4; i++) {
        coords[0] = i * 64;
        v_f32_st_l_v(i * 256, v_f32_ld_tnsr_b(coords, input));  // staged[i]
        s_i32_st_l(i * 4, i + 10);                              // counts[i]
    }
    for (int i = 0; i < 4; i++) {
        coords[0] = i * 64;
        float64 x = staged[3 - i];
        x = v_f32_add_b(x, v_f32_mov_s((float)counts[i]));
        v_f32_st_tnsr(coords, output, x);
    }
}
