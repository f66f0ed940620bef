# The kernel library's custom-library example (examples/tpc/custom_library).
add_subdirectory("${CMAKE_CURRENT_SOURCE_DIR}/custom_library")
