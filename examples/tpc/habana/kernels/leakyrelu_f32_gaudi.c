// Leaky ReLU over an NHWC f32 tensor, in the current TPC-C API (the style of Habana's
// leakyrelu_f32_gaudi example): one index-space member per 64 channels x 1 column x 1 row x 1 image.
void main(tensor input, tensor output, float alpha)
{
    const int5 start = get_index_space_offset();
    const int5 end = get_index_space_size() + start;
    int5 coords;  // zero: TPC-C's int5 starts at 0

    for (int b = start[3]; b < end[3]; b++) {
        coords[3] = b;
        for (int h = start[2]; h < end[2]; h++) {
            coords[2] = h;
            for (int w = start[1]; w < end[1]; w++) {
                coords[1] = w;
                #pragma loop_unroll(4)
                for (int d = start[0] * 64; d < end[0] * 64; d += 64) {
                    coords[0] = d;
                    float64 x = v_f32_ld_tnsr_b(coords, input, 0, 0, 1, 0);
                    bool256 positive =
                        from_bool64(v_f32_cmp_grt_b(x, 0.0f, 0, to_bool64((bool256){0}), 1, 0));
                    // Where x <= 0 (polarity 1 inverts the predicate) multiply by alpha.
                    float64 y = v_f32_mul_vb(x, alpha, 0, x, to_bool64(positive), 1);
                    v_f32_st_tnsr(coords, output, y, 0, 1, 0);
                }
            }
        }
    }
}
