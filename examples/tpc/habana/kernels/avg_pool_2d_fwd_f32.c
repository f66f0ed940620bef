// 2-D average pooling over NHWC f32 (dim 0 channels, dim 1 width, dim 2 height, dim 3 batch),
// window and stride from the glue's scalars; padding reads 0 and is counted, as count_include_pad.
void main(tensor ifm, tensor ofm, int kernel_w, int kernel_h, int stride_w, int stride_h)
{
    const int5 start = get_index_space_offset();
    const int5 end = get_index_space_size() + start;
    const float scale = 1.0f / (float)(kernel_w * kernel_h);
    int5 in_at, out_at;
    for (int b = start[3]; b < end[3]; b++) {
        in_at[3] = out_at[3] = b;
        for (int h = start[2]; h < end[2]; h++) {
            out_at[2] = h;
            for (int w = start[1]; w < end[1]; w++) {
                out_at[1] = w;
                for (int d = start[0] * 64; d < end[0] * 64; d += 64) {
                    in_at[0] = out_at[0] = d;
                    float64 sum = 0.0f;
                    for (int kh = 0; kh < kernel_h; kh++) {
                        in_at[2] = h * stride_h + kh;
                        for (int kw = 0; kw < kernel_w; kw++) {
                            in_at[1] = w * stride_w + kw;
                            sum = v_f32_add_b(sum, v_f32_ld_tnsr_b(in_at, ifm));
                        }
                    }
                    v_f32_st_tnsr(out_at, ofm, v_f32_mul_b(sum, scale));
                }
            }
        }
    }
}
