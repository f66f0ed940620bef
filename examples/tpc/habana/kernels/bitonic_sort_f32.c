// Bitonic sort of each row (dimension 0, up to 8192 elements) with the original position of
// every element, in the style of Habana's bitonic_sort_datain_dataout: the row lives in a
// program-scope __local__ array of (index, data) register pairs, SEL2 compares data and moves
// indices with it, lanes are numbered with read_lane_id_4b_b, and partners inside a vector come
// from SHUFFLE tables (an auxiliary tensor the glue fills), MOV_GROUP and MOV_DUAL_GROUP.
// Lanes past the row read the pad value the glue chose (+inf ascending, -inf descending), so
// any row length sorts; their stores are dropped.
#include "sort_config.h"

__local__ index_data_pair_t rowVlm[MAX_VECTORS];

// The pair of each lane's partner at distance `dist` (1 .. 32) inside the vector.
index_data_pair_t partner(index_data_pair_t p, int dist, uchar256 swap1, uchar256 swap2,
                          uchar256 swap4)
{
    index_data_pair_t r = p;
    if (dist < 8) {
        uchar256 table = dist == 1 ? swap1 : (dist == 2 ? swap2 : swap4);
        r.v2 = v_f32_shuffle_b(p.v2, table, 0, p.v2);
        r.v1 = v_i32_shuffle_b(p.v1, table, 0, p.v1);
    } else if (dist == 8) {
        // the two groups of every dual group trade places
        const int all = SW_GROUP0_EN | SW_GROUP1_EN | SW_DUAL_GROUP0_EN | SW_DUAL_GROUP1_EN |
                        SW_DUAL_GROUP2_EN | SW_DUAL_GROUP3_EN;
        r.v2 = v_f32_mov_group_b(p.v2, 0xFFFFFFFF, all, p.v2);
        r.v1 = v_i32_mov_group_b(p.v1, 0xFFFFFFFF, all, p.v1);
    } else {
        // dual groups dg and dg ^ (dist / 16) trade places
        const int other = dist >> 4;
        for (int dg = 0; dg < 4; dg++) {
            r.v2 = v_f32_mov_dual_group_b(p.v2, 0xFFFFFFFF, dg, dg ^ other, MkWr(1, 1), r.v2);
            r.v1 = v_i32_mov_dual_group_b(p.v1, 0xFFFFFFFF, dg, dg ^ other, MkWr(1, 1), r.v1);
        }
    }
    return r;
}

void main(tensor ifm, tensor ofmData, tensor ofmIdx, tensor aux, int sortDir, int rowExp)
{
    const int5 start = get_index_space_offset();
    const int5 end = get_index_space_size() + start;
    const int rowLen = 1 << rowExp;  // the row rounded up to a power of two, at least 64
    const int nVec = rowLen >> 6;

    int5 auxCoords = {0};
    uchar256 swap1 = v_u8_ld_tnsr_b(auxCoords, aux);
    auxCoords[0] = 256;
    uchar256 swap2 = v_u8_ld_tnsr_b(auxCoords, aux);
    auxCoords[0] = 512;
    uchar256 swap4 = v_u8_ld_tnsr_b(auxCoords, aux);
    const int64 lane = (int64)read_lane_id_4b_b();

    int5 coords = {0};
    for (int f = start[4]; f < end[4]; f++) {
        coords[4] = f;
        for (int b = start[3]; b < end[3]; b++) {
            coords[3] = b;
            for (int h = start[2]; h < end[2]; h++) {
                coords[2] = h;
                for (int w = start[1]; w < end[1]; w++) {
                    coords[1] = w;
                    for (int v = 0; v < nVec; v++) {
                        coords[0] = v * VECTOR_SIZE;
                        rowVlm[v].v2 = v_f32_ld_tnsr_b(coords, ifm);
                        rowVlm[v].v1 = v_i32_add_b(lane, coords[0]);
                    }
                    for (int size = 2; size <= rowLen; size <<= 1) {
                        for (int dist = size >> 1; dist > 0; dist >>= 1) {
                            if (dist >= VECTOR_SIZE) {
                                // whole vectors against whole vectors
                                const int vd = dist >> 6;
                                for (int v = 0; v < nVec; v++) {
                                    if (v & vd)
                                        continue;
                                    index_data_pair_t a = rowVlm[v];
                                    index_data_pair_t c = rowVlm[v + vd];
                                    bool up = (((v << 6) & size) == 0) != (sortDir != 0);
                                    index_data_pair_t lo = sel2_leq(a.v2, c.v2, a.v1, c.v1);
                                    index_data_pair_t hi = sel2_grt(a.v2, c.v2, a.v1, c.v1);
                                    rowVlm[v] = up ? lo : hi;
                                    rowVlm[v + vd] = up ? hi : lo;
                                }
                            } else {
                                for (int v = 0; v < nVec; v++) {
                                    index_data_pair_t p = rowVlm[v];
                                    index_data_pair_t q = partner(p, dist, swap1, swap2, swap4);
                                    // A lane keeps the larger of its pair when it is the upper
                                    // one in an ascending block or the lower in a descending one.
                                    int64 pos = v_i32_add_b(lane, v << 6);
                                    bool256 upper = from_bool64(
                                        v_i32_cmp_neq_b(v_i32_and_b(pos, dist), 0));
                                    bool256 down = from_bool64(
                                        v_i32_cmp_neq_b(v_i32_and_b(pos, size), 0));
                                    bool256 takeMax = v_i1_xor_b(upper, down);
                                    takeMax = v_i1_not_b(takeMax, 0, takeMax, sortDir != 0);
                                    index_data_pair_t r = sel2_leq(p.v2, q.v2, p.v1, q.v1);
                                    rowVlm[v] = sel2_geq_vb(p.v2, q.v2, p.v1, q.v1, r, takeMax);
                                }
                            }
                        }
                    }
                    for (int v = 0; v < nVec; v++) {
                        coords[0] = v * VECTOR_SIZE;
                        v_f32_st_tnsr(coords, ofmData, rowVlm[v].v2);
                        v_i32_st_tnsr(coords, ofmIdx, rowVlm[v].v1);
                    }
                }
            }
        }
    }
}
