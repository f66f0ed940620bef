/* BM runtime <-> BMKernel (spec 002, "bmruntime_bmkernel_create/submit/destroy"): a BMKernel
 * context bound to a BM context, whose command buffer runs on that context's device. */
#ifndef _BM_RUNTIME_BMKERNEL_H_
#define _BM_RUNTIME_BMKERNEL_H_

#include <libbmruntime/bmruntime.h>

#ifdef __cplusplus
extern "C" {
#endif

/* spec 002 prints `bmkernel_handle_t **p_bk_ctx`; SDK programs pass `(void **)&bk_ctx`. */
typedef void bmkernel_handle_t;

bmerr_t bmruntime_bmkernel_create(bmctx_t ctx, bmkernel_handle_t **p_bk_ctx);
/* Runs the commands recorded so far on the device and empties the command buffer. */
void bmruntime_bmkernel_submit(bmctx_t ctx);
void bmruntime_bmkernel_destroy(bmctx_t ctx);

#ifdef __cplusplus
}
#endif

#endif /* _BM_RUNTIME_BMKERNEL_H_ */
