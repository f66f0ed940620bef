/* The bm headers from C11: every declared function's address has the declared type, and the
 * macros and types spec 002 names are there. Built as C; fails to compile on a mismatch. */
#include <bmkernel/bm1880/bmkernel_1880.h>
#include <bmkernel/bm_kernel.h>
#include <libbmruntime/bmruntime.h>
#include <libbmruntime/bmruntime_bmkernel.h>
#include <libbmruntime/bmruntime_bmnet.h>

#include <stdio.h>

#include "api_list.h"

#define CHECK_TYPE(name, ret, params)                                                  \
  _Static_assert(__builtin_types_compatible_p(__typeof__(&name), ret(*) params),       \
                 #name " has the declared type");
TESSERA_BM_API(CHECK_TYPE)

#define ADDRESS(name, ret, params) (void (*)(void))(&name),
static void (*const addresses[])(void) = {TESSERA_BM_API(ADDRESS)};

_Static_assert(CTRL_NULL == 0, "CTRL_NULL");
_Static_assert(CTRL_AL != 0 && CTRL_NEURON != 0 && CTRL_AL != CTRL_NEURON, "ctrl flags");
_Static_assert(FMT_I8 == 4 && FMT_U8 == 9, "spec 002 'fmt t'");
_Static_assert(BM_SUCCESS == 0 && BM_ERR_NOT_SUPPORTED != 0, "bmerr_t codes");
_Static_assert(sizeof(bmk1880_context_t *) == sizeof(void *), "bmk1880_context_t");

int main(void) {
  for (size_t i = 0; i < sizeof addresses / sizeof addresses[0]; ++i)
    if (!addresses[i]) {
      printf("function %zu has no address\n", i);
      return 1;
    }
  shape_t s = shape_t4(1, 2, 3, 4);
  stride_t st = stride_t2(5, 6);
  bmshape_t bs = BM_TENSOR_INT8(1, 2, 3, 4);
  tensor_lmem t = {0};
  t.shape = s;
  if (s.h != 3 || st.row != 5 || st.col != 6 || bs.dim[3] != 4 || tl_address(&t) != 0) return 1;
  printf("%zu functions checked from C\n", sizeof addresses / sizeof addresses[0]);
  return 0;
}
