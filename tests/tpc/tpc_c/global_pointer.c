// Scalar accesses through __global__ pointers (spec 000 §2.5.2). A pointer made for an element
// past the tensor is only an address; reading through it faults, when `probe` is set. An
// intrinsic that takes an address takes the pointer too (Habana's matrix_mul: v_f32_ld_g(p)).
void main(tensor input, tensor output, int probe)
{
    int5 first = {0};
    __global__ int* in = gen_addr(first, input);
    __global__ int* out = gen_addr(first, output);
    int5 past = {64, 0, 0, 0, 0};
    __global__ int* beyond = gen_addr(past, input);
    int sum = *in + in[1] + in[2];
    *out = sum;
    out[1] = in[0] * 2;
    out[3] = s_i32_ld_g(in);  // the pointer passes as the address the intrinsic takes
    __global__ void* untyped = gen_addr(first, input);  // Habana's avg_pool: a void pointer too
    out[4] = s_i32_ld_g(untyped) + 1;
    if (probe) {
        out[2] = *beyond;
    }
}
