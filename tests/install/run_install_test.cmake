# Installs the build tree into a scratch prefix, then configures, builds and runs a consumer
# project that uses find_package(Tessera): the install(EXPORT ...) contract of the project.
set(prefix "${WORK}/prefix")
file(REMOVE_RECURSE "${WORK}")
execute_process(COMMAND "${CMAKE_COMMAND}" --install "${BUILD}" --prefix "${prefix}"
                RESULT_VARIABLE rc OUTPUT_QUIET)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "cmake --install failed (${rc})")
endif()
execute_process(COMMAND "${CMAKE_COMMAND}" -S "${SOURCE}" -B "${WORK}/consumer"
                        -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_BUILD_TYPE=Release
                        "-DCMAKE_CXX_FLAGS=${CONSUMER_FLAGS}"
                        "-DCMAKE_EXE_LINKER_FLAGS=${CONSUMER_FLAGS}"
                RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "configuring the consumer with find_package(Tessera) failed (${rc})")
endif()
execute_process(COMMAND "${CMAKE_COMMAND}" --build "${WORK}/consumer" RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "building the consumer failed (${rc})")
endif()
execute_process(COMMAND "${WORK}/consumer/consumer" RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the consumer ran with exit code ${rc}")
endif()
# The Poplar consumer compiles its codelet against the installed headers; a private cache keeps
# it from reusing an object compiled from the source tree.
execute_process(COMMAND "${CMAKE_COMMAND}" -E env "TESSERA_CODELET_CACHE=${WORK}/codelets"
                        "${WORK}/consumer/poplar_consumer" RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the Poplar consumer ran with exit code ${rc}")
endif()
execute_process(COMMAND "${WORK}/consumer/bm_consumer" RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the BMNNSDK consumer ran with exit code ${rc}")
endif()
execute_process(COMMAND "${WORK}/consumer/bm_spec_consumer" RESULT_VARIABLE rc OUTPUT_QUIET)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the spec 002 programs ran with exit code ${rc}")
endif()
execute_process(COMMAND "${WORK}/consumer/acl_consumer" RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the AscendCL consumer ran with exit code ${rc}")
endif()
