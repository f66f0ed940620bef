/* BMNet runtime (spec 002, "BM Runtime Library", bmnet_*): registers a compiled network (its
 * command buffer, weights and neuron layout) with a BM context and runs it. A network comes as
 * a bmnet_info_t or as a bmodel file in Tessera's format (docs/targets/bm.md, "bmodel files";
 * written with tessera::bm::save_bmodel). The struct layouts follow Bitmain's public header
 * libbmruntime/bmruntime_bmnet.h (github.com/BM1880-BIRD/bm1880-bmnnsdk-usb). */
#ifndef _BMRUNTIME_BMNET_H_
#define _BMRUNTIME_BMNET_H_
#pragma GCC system_header

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <libbmruntime/bmruntime.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct bmnet_info_s {
  uint32_t batch_size;   /* batch size */
  uint8_t *weight;       /* weights, placed at the start of the weight device memory */
  size_t weight_size;    /* bytes of weight */
  uint8_t *cmdbuf;       /* command buffer from bmk1880_acquire_cmdbuf */
  size_t cmdbuf_size;    /* bytes of cmdbuf */
  size_t neuron_size;    /* bytes of neuron device memory the network uses */
  size_t input_size;     /* input bytes, at neuron offset 0 */
  uint64_t output_offset; /* output's offset in the neuron memory */
  size_t output_size;    /* output bytes */
} bmnet_info_t;

typedef struct bmnet_output_info_s {
  size_t output_size;      /* output size in bytes */
  size_t output_num;       /* number of outputs */
  char **name_array;       /* output names */
  shape_t *shape_array;    /* output shapes */
  float *threshold_array;  /* output thresholds (int8 scale: real = q * threshold / 127) */
} bmnet_output_info_t;

struct bmnet_context;
typedef struct bmnet_context *bmnet_t;

bmerr_t bmnet_register(bmctx_t ctx, bmnet_info_t *info, bmnet_t *net);
/* spec 002 prints `char *bmodel`; Bitmain's public header and its sample pass a string literal,
 * so the path is `const char *` (a `char *` argument converts). */
bmerr_t bmnet_register_bmodel(bmctx_t ctx, const char *bmodel, bmnet_t *net);
bmerr_t bmnet_register_noalloc(bmctx_t ctx, bmnet_info_t *info, bmnet_t *net);
bmerr_t bmnet_set_input_shape(bmnet_t net, shape_t input_shape);
bmerr_t bmnet_get_output_info(bmnet_t net, bmnet_output_info_t *output_info);
void bmnet_cleanup(bmnet_t net);
bmerr_t bmnet_run(bmnet_t net);
bmmem_device_t bmnet_weight_devmem(bmnet_t net);
bmmem_device_t bmnet_neuron_devmem(bmnet_t net);
bmmem_device_t bmnet_input_devmem(bmnet_t net);
bmmem_device_t bmnet_output_devmem(bmnet_t net);
bmerr_t bmnet_import_weight_devmem(bmnet_t net, bmmem_device_t weight_mem);
bmerr_t bmnet_import_neuron_devmem(bmnet_t net, bmmem_device_t neuron_mem);
bmerr_t bmnet_load_input(bmnet_t net, uint8_t *input);
bmerr_t bmnet_load_neuron(bmnet_t net, uint64_t neuron_offset, int neuron_size, uint8_t *neuron);
bmerr_t bmnet_store_output(bmnet_t net, uint8_t *output);
bmerr_t bmnet_store_neuron(bmnet_t net, uint64_t neuron_offset, int neuron_size, uint8_t *neuron);
bmerr_t bmnet_inference(bmnet_t net, uint8_t *input, uint8_t *output);

/* From Bitmain's public bmruntime_bmnet.h (not in spec 002). A bmodel held in memory. */
bmerr_t bmnet_register_bmodel_data(bmctx_t ctx, uint8_t *bmodel_data, size_t size, bmnet_t *net);
/* The input shapes of a network's inputs; Tessera's networks have one input, so num is 1. */
bmerr_t bmnet_set_input_shape2(bmnet_t net, shape_t *shape, int num);
/* Replaces the command buffer of the network's current input shape (after importing memories
 * with bmnet_import_*_devmem, as Bitmain's runtime wants it). */
bmerr_t bmnet_load_cmdbuf(bmnet_t net, const uint8_t *cmdbuf, int cmdbuf_size);
/* bmnet_register with these fields of bmnet_info_t, bmnet_inference, bmnet_cleanup. */
bmerr_t bmnet_inference_once(bmctx_t ctx, uint8_t *input, uint8_t *output, uint32_t batch_size,
                             uint8_t *weight, size_t weight_size, uint8_t *cmdbuf,
                             size_t cmdbuf_size, size_t neuron_size, size_t input_size,
                             uint64_t output_offset, size_t output_size);

#ifdef __cplusplus
}
#endif

#endif /* _BMRUNTIME_BMNET_H_ */
