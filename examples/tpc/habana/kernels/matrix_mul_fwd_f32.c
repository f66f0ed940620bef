// C = A x B for 2-D f32 tensors with dim 0 fastest: A is (K, M), B is (N, K), C is (N, M).
// Each member computes 64 columns of one row of C: a broadcast element of A times a row of B,
// accumulated with MAC.
void main(tensor a, tensor b, tensor c)
{
    const int5 start = get_index_space_offset();
    const int5 end = get_index_space_size() + start;
    const int k_size = get_dim_size(a, 0);
    int5 a_at = {0}, b_at = {0}, c_at = {0};
    for (int m = start[1]; m < end[1]; m++) {
        a_at[1] = m;
        c_at[1] = m;
        for (int n = start[0] * 64; n < end[0] * 64; n += 64) {
            b_at[0] = n;
            c_at[0] = n;
            float64 acc = 0.0f;
            for (int k = 0; k < k_size; k++) {
                a_at[0] = k;
                b_at[1] = k;
                float64 row = v_f32_ld_tnsr_b(b_at, b);
                float64 scalar = v_f32_ld_g(gen_addr(a_at, a));
                acc = v_f32_mac_b(scalar, row, acc);
            }
            v_f32_st_tnsr(c_at, c, acc);
        }
    }
}
