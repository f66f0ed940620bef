# Runs `tessera compile` then `tessera run MODEL.tsm --check`, and checks a corrupt file is refused.
file(MAKE_DIRECTORY ${WORK})
execute_process(COMMAND ${TESSERA} compile ${MODEL} -o ${WORK}/m.tsm RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "compile failed (${rc}): ${out}${err}")
endif()
execute_process(COMMAND ${TESSERA} run ${WORK}/m.tsm --check --outputs ${WORK}/out --trace ${WORK}/t.json
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0 OR NOT out MATCHES "cosine similarity 1.0" OR NOT EXISTS ${WORK}/out/logits.npy)
  message(FATAL_ERROR "run failed (${rc}): ${out}${err}")
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
