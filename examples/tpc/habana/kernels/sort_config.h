// Type and intrinsic shorthands of the sort kernel, in the style of the kernel_config.h headers
// of Habana's examples: the data vector, its lane count, the (index, data) register pair SEL2
// returns, and the SEL2 forms that move indices along with the data they compare.
#define VECTOR      float64
#define VECTOR_SIZE 64
#define MAX_VECTORS 128  // a row of up to 8192 elements stays in vector local memory

typedef int64_float64_pair_t index_data_pair_t;

// (idx, data) where data <cmp> other, else (otherIdx, other)
#define sel2_leq(data, other, idx, otherIdx) v_i32_sel2_leq_f32_b(data, other, idx, otherIdx)
#define sel2_grt(data, other, idx, otherIdx) v_i32_sel2_grt_f32_b(data, other, idx, otherIdx)
#define sel2_geq_vb(data, other, idx, otherIdx, income, pred) \
    v_i32_sel2_geq_f32_vb(data, other, idx, otherIdx, 0, income, to_bool64(pred))
