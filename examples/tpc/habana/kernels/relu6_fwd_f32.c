// ReLU6 over an NHWC f32 tensor: min(max(x, 0), 6) with predicated selects.
void main(tensor input, tensor output)
{
    const int5 start = get_index_space_offset();
    const int5 end = get_index_space_size() + start;
    int5 coords = {0};
    for (int b = start[3]; b < end[3]; b++) {
        coords[3] = b;
        for (int h = start[2]; h < end[2]; h++) {
            coords[2] = h;
            for (int w = start[1]; w < end[1]; w++) {
                coords[1] = w;
                for (int d = start[0] * 64; d < end[0] * 64; d += 64) {
                    coords[0] = d;
                    float64 x = v_f32_ld_tnsr_b(coords, input);
                    float64 y = v_f32_sel_less_f32_b(x, 0.0f, 0.0f, x);
                    y = v_f32_sel_grt_f32_b(y, 6.0f, 6.0f, y);
                    v_f32_st_tnsr(coords, output, y);
                }
            }
        }
    }
}
