// Counts, in a program-scope __local__ variable, the program instances its core has run in
// this launch, and writes that count over the instance's members.
__local__ int instances_on_core;

void main(tensor output)
{
    const int5 start = get_index_space_offset();
    const int5 end = get_index_space_size() + start;
    instances_on_core += 1;
    int5 coords = {0};
    for (int m = start[0]; m < end[0]; m++) {
        coords[0] = m * 64;
        v_i32_st_tnsr(coords, output, v_i32_mov_s(instances_on_core));
    }
}
