# The command line end to end: `tessera compile` for gaudi, then `tessera run MODEL.tsm --check`
# (gaudi against the reference backend, within the conformance tolerances); a corrupt file is
# refused; `tessera conformance` ends with its totals line and holds a target to --expect.
file(MAKE_DIRECTORY ${WORK})
execute_process(COMMAND ${TESSERA} compile ${MODEL} --target gaudi -o ${WORK}/m.tsm RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "compile failed (${rc}): ${out}${err}")
endif()
execute_process(COMMAND ${TESSERA} run ${WORK}/m.tsm --check --outputs ${WORK}/out --trace ${WORK}/t.json
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0 OR NOT out MATCHES "target: gaudi on device gaudi"
   OR NOT out MATCHES "logits: max abs error [0-9.e+-]+, max rel error [0-9.e+-]+ \\(tolerance rtol 0.001, atol 1e-05\\), worst element [0-9]+ at \\([0-9, ]+\\): [-0-9.e+]+ vs [-0-9.e+]+, cosine similarity [0-9.]+ ok"
   OR NOT EXISTS ${WORK}/out/logits.npy)
  message(FATAL_ERROR "gaudi run --check failed (${rc}): ${out}${err}")
endif()
file(WRITE ${WORK}/bad.tsm "TESSMDL garbage")
execute_process(COMMAND ${TESSERA} run ${WORK}/bad.tsm RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 2 OR NOT err MATCHES "bad.tsm")
  message(FATAL_ERROR "a corrupt model file must be a user error naming the file (${rc}): ${err}")
endif()
# Results and cycle counts do not depend on the number of host threads (ARCHITECTURE rule 2).
foreach(threads 1 3)
  execute_process(COMMAND ${CMAKE_COMMAND} -E env TESSERA_THREADS=${threads}
                          ${TESSERA} run ${MODEL} --target gaudi --outputs ${WORK}/t${threads}
                          --profile ${WORK}/p${threads}.json
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "gaudi run with ${threads} threads failed (${rc}): ${out}${err}")
  endif()
  file(READ ${WORK}/p${threads}.json profile)
  string(REGEX MATCH "\"total_cycles\": *[0-9]+" cycles${threads} "${profile}")
endforeach()
execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files ${WORK}/t1/logits.npy ${WORK}/t3/logits.npy
                RESULT_VARIABLE same)
if(NOT same EQUAL 0 OR NOT cycles1 STREQUAL cycles3 OR cycles1 STREQUAL "")
  message(FATAL_ERROR "gaudi results differ between 1 and 3 host threads: ${cycles1} vs ${cycles3}")
endif()
# Conformance (on the template target, whose library lacks broadcasting): the last line is the
# totals, counting the cases that ran every node on the device.
if(TEMPLATE AND EXISTS "${NODE_DIR}/test_add_bcast")
  set(cases ${NODE_DIR}/test_add ${NODE_DIR}/test_add_bcast ${NODE_DIR}/test_relu)
  execute_process(COMMAND ${TESSERA} conformance ${cases} --target template --record ${WORK}/exp.txt
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0 OR NOT out MATCHES "\ntotals for target template: 3 pass \\(2 on the device\\), 0 fail, 0 unsupported\n$")
    message(FATAL_ERROR "conformance totals line (${rc}): ${out}${err}")
  endif()
  # A case recorded as running on the device that now needs a fallback is an error.
  file(WRITE ${WORK}/exp_device.txt "test_add device\ntest_add_bcast device\n")
  execute_process(COMMAND ${TESSERA} conformance ${cases} --target template --expect ${WORK}/exp_device.txt
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 2 OR NOT err MATCHES "test_add_bcast \\(passes only with 1 node\\(s\\) falling back to reference")
    message(FATAL_ERROR "a device case needing a fallback must fail --expect (${rc}): ${out}${err}")
  endif()
  execute_process(COMMAND ${TESSERA} conformance ${cases} --target template --expect ${WORK}/exp.txt
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "the recorded expectations must hold (${rc}): ${out}${err}")
  endif()
endif()
