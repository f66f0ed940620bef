// A 2-D per-channel filter (depthwise convolution) over NHWC f32, in the style of Habana's
// filter_fwd_2d: ofm[c, w, h, b] = sum over the window of ifm[c, w*sw - pw + kw*dw,
// h*sh - ph + kh*dh, b] * filter[c, kw, kh]. Window positions outside the input read the pad
// value (0), as the load unit returns for coordinates outside a tensor (spec 000 §2.4.2).
void main(tensor ifm, tensor filter, tensor ofm, int pad_w, int pad_h, int kernel_w,
          int kernel_h, int stride_w, int stride_h, int dilation_w, int dilation_h)
{
    const int5 start = get_index_space_offset();
    const int5 end = get_index_space_size() + start;
    int5 in_at = {0}, out_at = {0}, filter_at = {0};
    for (int d = start[0] * 64; d < end[0] * 64; d += 64) {
        in_at[0] = out_at[0] = filter_at[0] = d;
        for (int b = start[3]; b < end[3]; b++) {
            in_at[3] = out_at[3] = b;
            for (int h = start[2]; h < end[2]; h++) {
                out_at[2] = h;
                for (int w = start[1]; w < end[1]; w++) {
                    out_at[1] = w;
                    float64 acc = 0.0f;
                    for (int kh = 0; kh < kernel_h; kh++) {
                        in_at[2] = h * stride_h - pad_h + kh * dilation_h;
                        filter_at[2] = kh;
                        for (int kw = 0; kw < kernel_w; kw++) {
                            in_at[1] = w * stride_w - pad_w + kw * dilation_w;
                            filter_at[1] = kw;
                            float64 x = v_f32_ld_tnsr_b(in_at, ifm);
                            float64 k = v_f32_ld_tnsr_b(filter_at, filter);
                            acc = v_f32_mac_b(x, k, acc, 0);
                        }
                    }
                    v_f32_st_tnsr(out_at, ofm, acc);
                }
            }
        }
    }
}
