/* The name Bitmain's public bmkernel_1880.h includes its definitions by (the tensor_lmem /
 * shape_t interface of the BM1880); they are the ones of bm_kernel.h. */
#ifndef __BM_KERNEL_LEGACY_H__
#define __BM_KERNEL_LEGACY_H__
#include <bmkernel/bm_kernel.h>
#endif /* __BM_KERNEL_LEGACY_H__ */
