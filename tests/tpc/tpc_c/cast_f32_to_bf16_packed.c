// f32 -> bf16 along dim 0, 128 elements per member, written the way Habana's cast_f32_to_bf16
// is: convert both halves over all lanes (which interleaves them) and let the store pipe put the
// elements back in memory order with SW_PACK.
void main(tensor ifm, tensor ofm)
{
    const int5 start = get_index_space_offset();
    const int5 end = get_index_space_size() + start;
    int5 lo, hi, out;
    for (int w = start[1]; w < end[1]; w++) {
        lo[1] = hi[1] = out[1] = w;
        for (int d = start[0] * 128; d < end[0] * 128; d += 128) {
            lo[0] = out[0] = d;
            hi[0] = d + 64;
            float128 x;
            x.v1 = v_f32_ld_tnsr_b(lo, ifm);
            x.v2 = v_f32_ld_tnsr_b(hi, ifm);
            bfloat128 y = v_convert_f32_to_bf16_all_b(x, SW_RHNE);
            v_bf16_st_tnsr(out, ofm, y, SW_PACK);
        }
    }
}
