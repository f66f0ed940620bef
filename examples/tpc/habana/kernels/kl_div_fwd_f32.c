// KL-divergence terms, target * (log(target) - input), 0 where target <= 0 (input holds log
// probabilities, as PyTorch's kl_div). Uses the log special function.
void main(tensor input, tensor target, tensor output)
{
    const int5 start = get_index_space_offset();
    const int5 end = get_index_space_size() + start;
    int5 coords = {0};
    for (int w = start[1]; w < end[1]; w++) {
        coords[1] = w;
        for (int d = start[0] * 64; d < end[0] * 64; d += 64) {
            coords[0] = d;
            float64 x = v_f32_ld_tnsr_b(coords, input);
            float64 t = v_f32_ld_tnsr_b(coords, target);
            float64 term = t * (v_log_f32(t) - x);
            term = v_f32_sel_leq_f32_b(t, 0.0f, 0.0f, term);
            v_f32_st_tnsr(coords, output, term);
        }
    }
}
