// Batch normalisation (inference) over NHWC f32: y = (x - mean) * rsqrt(var + eps) * gamma + beta,
// per channel (dim 0). The per-channel vectors are loaded once per member.
void main(tensor ifm, tensor mean, tensor var, tensor gamma, tensor beta, tensor ofm, float eps)
{
    const int5 start = get_index_space_offset();
    const int5 end = get_index_space_size() + start;
    int5 at, channel;
    for (int d = start[0] * 64; d < end[0] * 64; d += 64) {
        at[0] = channel[0] = d;
        float64 m = v_f32_ld_tnsr_b(channel, mean);
        float64 inv = v_rsqrt_f32(v_f32_add_b(v_f32_ld_tnsr_b(channel, var), eps));
        float64 scale = v_f32_mul_b(inv, v_f32_ld_tnsr_b(channel, gamma));
        float64 shift = v_f32_ld_tnsr_b(channel, beta);
        for (int b = start[3]; b < end[3]; b++) {
            at[3] = b;
            for (int h = start[2]; h < end[2]; h++) {
                at[2] = h;
                for (int w = start[1]; w < end[1]; w++) {
                    at[1] = w;
                    float64 x = v_f32_ld_tnsr_b(at, ifm);
                    float64 y = v_f32_mac_b(v_f32_sub_b(x, m), scale, shift);
                    v_f32_st_tnsr(at, ofm, y);
                }
            }
        }
    }
}
