// Program-scope __local__ vectors and pairs that fit a core's vector local memory at their TPC
// size (300 x 256 bytes + 8 x 512 + 4 x 32 = 81,024 of 81,920) though their host objects, which
// also carry each vector's ready cycle, take more.
__local__ float64 rows[300];
__local__ int64_float64_pair_t pairs[8];
__local__ bool256 masks[4];

void main(tensor output)
{
    int5 coords = {0};
    rows[299] = v_f32_mov_s(2.0f);
    pairs[7].v2 = rows[299];
    v_f32_st_tnsr(coords, output, pairs[7].v2);
}
