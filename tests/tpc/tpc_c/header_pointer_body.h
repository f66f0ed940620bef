// The body of header_pointer.c. A pointer made past the tensor is only an address (no fault); a
// predicated-off load through it does not access memory.
void main(tensor input, tensor output)
{
    int5 first = {0};
    int5 past = {64, 0, 0, 0, 0};
    __global__ int* in = (__global__ int*)gen_addr(first, input);
    __global__ int* beyond = (__global__ int*)gen_addr(past, input);
    __global__ int* out;
    out = (__global__ int*)gen_addr(first, output);
    *out = s_i32_ld_g(in) + OFFSET;
    out[1] = s_i32_ld_g(beyond, 0, 7, 0);
}
