/* Every function the bm headers declare, with its declared type (spec 002), for the C and C++
 * header tests: X(name, return type, (parameter types)). */
#define TESSERA_BM_API(X)                                                                     \
  X(bm_init, bmerr_t, (int, bmctx_t *))                                                       \
  X(bm_exit, void, (bmctx_t))                                                                 \
  X(bm_enum_devices, void, (int *, bm_devinfo_t *))                                           \
  X(bm_device_open, bmerr_t, (int, bmdev_t *))                                                \
  X(bm_device_close, void, (bmdev_t))                                                         \
  X(bm_device_query, bmerr_t, (bmdev_t, int, void *))                                         \
  X(bm_device_config, bmerr_t, (bmdev_t, int, void *))                                        \
  X(bm_device_get_info, bm_devinfo_t, (bmdev_t))                                              \
  X(bm_device_get_chip_ver, int, (bmdev_t))                                                   \
  X(bm_device_get_gmem_size, u64, (bmdev_t))                                                  \
  X(bm_context_create, bmerr_t, (bmctx_t *))                                                  \
  X(bm_context_destroy, void, (bmctx_t))                                                      \
  X(bm_bind_device, bmerr_t, (bmctx_t, bmdev_t))                                              \
  X(bm_unbind_device, void, (bmctx_t))                                                        \
  X(bm_get_device, bmdev_t, (bmctx_t))                                                        \
  X(bmruntime_bmkernel_create, bmerr_t, (bmctx_t, bmkernel_handle_t **))                      \
  X(bmruntime_bmkernel_submit, void, (bmctx_t))                                               \
  X(bmruntime_bmkernel_destroy, void, (bmctx_t))                                              \
  X(bmmem_device_alloc_raw, bmmem_device_t, (bmctx_t, size_t))                                \
  X(bmmem_device_prealloc_raw, bmmem_device_t, (bmctx_t, bmmem_device_t, uint64_t, size_t))   \
  X(bmmem_device_alloc, bmmem_device_t, (bmctx_t, bmshape_t *))                               \
  X(bmmem_device_prealloc, bmmem_device_t, (bmctx_t, bmmem_device_t, uint64_t, bmshape_t *))  \
  X(bmmem_device_free, void, (bmctx_t, bmmem_device_t))                                       \
  X(bmmem_host_alloc, bmmem_host_t, (bmctx_t, bmshape_t *))                                   \
  X(bmmem_host_free, void, (bmctx_t, bmmem_host_t))                                           \
  X(bmmem_device_size, size_t, (bmctx_t, bmmem_device_t))                                     \
  X(bmmem_device_addr, uint64_t, (bmctx_t, bmmem_device_t))                                   \
  X(bmmem_host_v_addr, void *, (bmctx_t, bmmem_host_t))                                       \
  X(bmmem_host_p_addr, uint64_t, (bmctx_t, bmmem_host_t))                                     \
  X(bm_memcpy_s2d, bmerr_t, (bmctx_t, bmmem_device_t, uint8_t *))                             \
  X(bm_memcpy_d2s, bmerr_t, (bmctx_t, uint8_t *, bmmem_device_t))                             \
  X(bm_memcpy_s2d_ex, bmerr_t, (bmctx_t, bmmem_device_t, uint8_t *, uint64_t, size_t))       \
  X(bm_memcpy_d2s_ex, bmerr_t, (bmctx_t, uint8_t *, bmmem_device_t, uint64_t, size_t))       \
  X(bm_send_cmdbuf, bmerr_t, (bmctx_t, uint8_t *, size_t, uint16_t *))                        \
  X(bmnet_register, bmerr_t, (bmctx_t, bmnet_info_t *, bmnet_t *))                             \
  X(bmnet_register_bmodel, bmerr_t, (bmctx_t, const char *, bmnet_t *))                        \
  X(bmnet_register_noalloc, bmerr_t, (bmctx_t, bmnet_info_t *, bmnet_t *))                     \
  X(bmnet_set_input_shape, bmerr_t, (bmnet_t, shape_t))                                        \
  X(bmnet_get_output_info, bmerr_t, (bmnet_t, bmnet_output_info_t *))                          \
  X(bmnet_cleanup, void, (bmnet_t))                                                            \
  X(bmnet_run, bmerr_t, (bmnet_t))                                                             \
  X(bmnet_weight_devmem, bmmem_device_t, (bmnet_t))                                            \
  X(bmnet_neuron_devmem, bmmem_device_t, (bmnet_t))                                            \
  X(bmnet_input_devmem, bmmem_device_t, (bmnet_t))                                             \
  X(bmnet_output_devmem, bmmem_device_t, (bmnet_t))                                            \
  X(bmnet_import_weight_devmem, bmerr_t, (bmnet_t, bmmem_device_t))                            \
  X(bmnet_import_neuron_devmem, bmerr_t, (bmnet_t, bmmem_device_t))                            \
  X(bmnet_load_input, bmerr_t, (bmnet_t, uint8_t *))                                           \
  X(bmnet_load_neuron, bmerr_t, (bmnet_t, uint64_t, int, uint8_t *))                           \
  X(bmnet_store_output, bmerr_t, (bmnet_t, uint8_t *))                                         \
  X(bmnet_store_neuron, bmerr_t, (bmnet_t, uint64_t, int, uint8_t *))                          \
  X(bmnet_inference, bmerr_t, (bmnet_t, uint8_t *, uint8_t *))                                 \
  X(bmnet_register_bmodel_data, bmerr_t, (bmctx_t, uint8_t *, size_t, bmnet_t *))               \
  X(bmnet_set_input_shape2, bmerr_t, (bmnet_t, shape_t *, int))                                 \
  X(bmnet_load_cmdbuf, bmerr_t, (bmnet_t, const uint8_t *, int))                                \
  X(bmnet_inference_once, bmerr_t, (bmctx_t, uint8_t *, uint8_t *, uint32_t, uint8_t *, size_t, \
                                    uint8_t *, size_t, size_t, size_t, uint64_t, size_t))       \
  X(tessera_bm_last_error, const char *, (void))                                              \
  X(tessera_bm_last_error_kind, tessera_bm_error_kind_t, (void))                              \
  X(tessera_bm_clear_error, void, (void))                                                     \
  X(shape_t4, shape_t, (int, int, int, int))                                                  \
  X(shape_t2, shape_t, (int, int))                                                            \
  X(shape_equal, bool, (shape_t, shape_t))                                                    \
  X(stride_t4, stride_t, (int, int, int, int))                                                \
  X(stride_t2, stride_t, (int, int))                                                          \
  X(bmk1880_register, bmk1880_context_t *, (bmk1880_info_t *))                                             \
  X(bmk1880_cleanup, void, (void *))                                                          \
  X(bmk1880_acquire_cmdbuf, u8 *, (void *, u32 *))                                            \
  X(bmk1880_reset, void, (void *))                                                            \
  X(bmk1880_parallel_enable, void, (void *))                                                  \
  X(bmk1880_parallel_disable, void, (void *))                                                 \
  X(bmk1880_create_streams, void, (void *, int))                                              \
  X(bmk1880_destroy_streams, void, (void *))                                                  \
  X(bmk1880_set_stream, void, (void *, int))                                                  \
  X(bmk1880_add_dependency, void, (void *, void *, void *))                                   \
  X(bmk1880_chip_info, bmk1880_chip_info_t, (void))                                           \
  X(bmk1880_tl_prealloc, tensor_lmem *, (void *, laddr_t, shape_t, fmt_t))                    \
  X(bmk1880_tl_prealloc_align, tensor_lmem *, (void *, laddr_t, shape_t, fmt_t))              \
  X(bmk1880_tl_alloc, tensor_lmem *, (void *, shape_t, fmt_t, u32))                           \
  X(bmk1880_tl_alloc_bank, tensor_lmem *, (void *, u32, shape_t, fmt_t, u32))                 \
  X(bmk1880_tl_free, void, (void *, tensor_lmem *))                                           \
  X(bmk1880_tl_shape_to_size, int, (void *, shape_t, bool, fmt_t))                            \
  X(bmk1880_tl_shape_to_nchw, void, (const void *, shape_t, int *, int *, int *, int *))      \
  X(bmk1880_tl_size, int, (const void *, tensor_lmem *))                                      \
  X(bmk1880_tg_shape_to_size, size_t, (shape_t, fmt_t))                                       \
  X(bmk1880_gdma_copy_gmem, bmk1880_op_t *, (void *, tensor_gmem *, tensor_gmem *, ctrl_t))           \
  X(bmk1880_gdma_copy_lmem, bmk1880_op_t *, (void *, tensor_lmem *, tensor_lmem *))                   \
  X(bmk1880_gdma_load, bmk1880_op_t *, (void *, tensor_lmem *, u64, ctrl_t))                          \
  X(bmk1880_gdma_store, bmk1880_op_t *, (void *, tensor_lmem *, u64, ctrl_t))                         \
  X(bmk1880_gdma_load_stride, bmk1880_op_t *, (void *, tensor_lmem *, u64, stride_t, ctrl_t))         \
  X(bmk1880_gdma_store_stride, bmk1880_op_t *, (void *, tensor_lmem *, u64, stride_t, ctrl_t))        \
  X(bmk1880_gdma_lrn_shift, bmk1880_op_t *, (void *, tensor_lmem *, tensor_lmem *, bool, int))        \
  X(bmk1880_tpu_mul, bmk1880_op_t *, (void *, const bmk1880_mul_param_t *))                           \
  X(bmk1880_tpu_mul_const, bmk1880_op_t *, (void *, const bmk1880_mul_const_param_t *))               \
  X(bmk1880_tpu_mac, bmk1880_op_t *, (void *, const bmk1880_mac_param_t *))                           \
  X(bmk1880_tpu_mac_const, bmk1880_op_t *, (void *, const bmk1880_mac_const_param_t *))               \
  X(bmk1880_tpu_add, bmk1880_op_t *, (void *, const bmk1880_add_param_t *))                           \
  X(bmk1880_tpu_add_const, bmk1880_op_t *, (void *, const bmk1880_add_const_param_t *))               \
  X(bmk1880_tpu_sub, bmk1880_op_t *, (void *, const bmk1880_sub_param_t *))                           \
  X(bmk1880_tpu_max, bmk1880_op_t *, (void *, const bmk1880_max_param_t *))                           \
  X(bmk1880_tpu_max_const, bmk1880_op_t *, (void *, const bmk1880_max_const_param_t *))               \
  X(bmk1880_tpu_min, bmk1880_op_t *, (void *, const bmk1880_min_param_t *))                           \
  X(bmk1880_tpu_min_const, bmk1880_op_t *, (void *, const bmk1880_min_const_param_t *))               \
  X(bmk1880_tpu_arith_shift, bmk1880_op_t *, (void *, const bmk1880_arith_shift_param_t *))           \
  X(bmk1880_tpu_and_int8, bmk1880_op_t *, (void *, const bmk1880_and_int8_param_t *))                 \
  X(bmk1880_tpu_and_int16, bmk1880_op_t *, (void *, const bmk1880_and_int16_param_t *))               \
  X(bmk1880_tpu_or_int8, bmk1880_op_t *, (void *, const bmk1880_or_int8_param_t *))                   \
  X(bmk1880_tpu_or_int16, bmk1880_op_t *, (void *, const bmk1880_or_int16_param_t *))                 \
  X(bmk1880_tpu_xor_int8, bmk1880_op_t *, (void *, const bmk1880_xor_int8_param_t *))                 \
  X(bmk1880_tpu_xor_int16, bmk1880_op_t *, (void *, const bmk1880_xor_int16_param_t *))               \
  X(bmk1880_tpu_copy, bmk1880_op_t *, (void *, const bmk1880_copy_param_t *))                         \
  X(bmk1880_tpu_copy_with_stride, bmk1880_op_t *, (void *, const bmk1880_copy_with_stride_param_t *)) \
  X(bmk1880_tpu_mdsum, bmk1880_op_t *, (void *, const bmk1880_mdsum_param_t *))                       \
  X(bmk1880_tpu_lut, bmk1880_op_t *, (void *, const bmk1880_lut_param_t *))                           \
  X(bmk1880_tpu_relu, bmk1880_op_t *, (void *, const bmk1880_relu_param_t *))                         \
  X(bmk1880_tpu_conv, bmk1880_op_t *, (void *, const bmk1880_conv_param_t *))                         \
  X(bmk1880_tpu_winograd, bmk1880_op_t *, (void *, const bmk1880_winograd_param_t *))                 \
  X(bmk1880_tpu_depthwise, bmk1880_op_t *, (void *, const bmk1880_depthwise_param_t *))               \
  X(bmk1880_tpu_max_pooling, bmk1880_op_t *, (void *, const bmk1880_max_pooling_param_t *))           \
  X(bmk1880_tpu_avg_pooling, bmk1880_op_t *, (void *, const bmk1880_avg_pooling_param_t *))           \
  X(bmk1880_tpu_matrix_mac, bmk1880_op_t *, (void *, const bmk1880_matrix_mac_param_t *))             \
  X(bmk1880_tpu_matrix_mac_2, bmk1880_op_t *, (void *, const bmk1880_matrix_mac_2_param_t *))
