# tessera_add_tpc_kernels(TARGET <name> SOURCES <file.c>...)
#
# Brings TPC-C kernel files into a kernel library, as Habana's build compiles them with tpc-clang
# and objcopy (spec 000 §2.7.2): each file is compiled as C++ with the TPC-C built-ins
# (tessera/targets/tpc/compat/tpc-c.h) included first, its `void main(...)` becomes the kernel
# named after the file's stem (the function itself keeps a name no kernel file uses, as a file
# may define a helper of its stem's name), and the symbols _binary___<stem>_o_start / _end bracket the kernel's image, so
# Habana-style glue copies it into kernelElf unchanged. The file's program-scope `__local__`
# objects go to a section of their own, which the runtime keeps per core. <name> is created as a MODULE library
# (a plug-in for TESSERA_KERNEL_PATH) unless it exists; add the glue sources to it.

# `__global__ T*` declarations become tessera::tpc::global_ptr<T>, so that every access through
# such a pointer is checked and counted, not only the gen_addr that made it. A program-scope
# `__local__ T name[...];` is followed by a record of its host and modeled sizes and of where it
# is (TESSERA_TPC_MODELED_LOCAL), so it takes its TPC size in local memory and is that memory's
# bytes at its address; a declaration the pattern misses (one with an initializer) counts its
# host bytes.
function(_tessera_tpc_global_pointers text result)
  string(REGEX REPLACE
    "__global__[ \t]+((const[ \t]+)?[A-Za-z_][A-Za-z0-9_]*([ \t]+[A-Za-z_][A-Za-z0-9_]*)?)[ \t]*\\*"
    "::tessera::tpc::global_ptr<\\1> " text "${text}")
  string(REGEX REPLACE
    "(__local__[ \t]+([A-Za-z_][A-Za-z0-9_]*)[ \t]+([A-Za-z_][A-Za-z0-9_]*)[ \t]*(\\[[^];]*\\][ \t]*)*;)"
    "\\1 TESSERA_TPC_MODELED_LOCAL(\\2, \\3)" text "${text}")
  set(${result} "${text}" PARENT_SCOPE)
endfunction()

# Writes `text` to `path` with a #line naming `origin`, unless the file already holds it (an
# unchanged copy does not rebuild); editing `origin` re-runs the configure step.
function(_tessera_tpc_write_copy path origin text)
  set(copy_text "#line 1 \"${origin}\"\n${text}")
  set(old_text "")
  if(EXISTS "${path}")
    file(READ "${path}" old_text)
  endif()
  if(NOT old_text STREQUAL copy_text)
    file(WRITE "${path}" "${copy_text}")
  endif()
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${origin}")
endfunction()

# Kernel files often keep their body in a header (Habana's relu6_fwd.h, gather_fwd_i32.h): the
# quoted includes of `text` found in `dirs` are copied to `copy_dir` with the same rewriting, and
# so are theirs. The global property named `visited` guards against include cycles.
function(_tessera_tpc_copy_headers text dirs copy_dir visited)
  string(REGEX MATCHALL "#[ \t]*include[ \t]*\"[^\"]+\"" includes "${text}")
  foreach(line IN LISTS includes)
    string(REGEX REPLACE ".*\"([^\"]+)\".*" "\\1" name "${line}")
    get_property(seen GLOBAL PROPERTY ${visited})
    if(name IN_LIST seen)
      continue()
    endif()
    foreach(dir IN LISTS dirs)
      if(EXISTS "${dir}/${name}" AND NOT IS_DIRECTORY "${dir}/${name}")
        set_property(GLOBAL APPEND PROPERTY ${visited} "${name}")
        file(READ "${dir}/${name}" header)
        _tessera_tpc_global_pointers("${header}" rewritten)
        _tessera_tpc_write_copy("${copy_dir}/${name}" "${dir}/${name}" "${rewritten}")
        get_filename_component(header_dir "${dir}/${name}" DIRECTORY)
        _tessera_tpc_copy_headers("${header}" "${header_dir};${dirs}" "${copy_dir}" ${visited})
        break()
      endif()
    endforeach()
  endforeach()
endfunction()

function(tessera_add_tpc_kernels)
  cmake_parse_arguments(ARG "" "TARGET" "SOURCES" ${ARGN})
  if(NOT ARG_TARGET OR NOT ARG_SOURCES)
    message(FATAL_ERROR "tessera_add_tpc_kernels: give TARGET <name> and SOURCES <file.c>...")
  endif()
  if(NOT TARGET ${ARG_TARGET})
    add_library(${ARG_TARGET} MODULE)
  endif()
  if(TARGET tessera::tessera_tpc)
    target_link_libraries(${ARG_TARGET} PRIVATE tessera::tessera_tpc)
  else()
    target_link_libraries(${ARG_TARGET} PRIVATE tessera_tpc)
  endif()
  get_target_property(target_includes ${ARG_TARGET} INCLUDE_DIRECTORIES)
  if(NOT target_includes)
    set(target_includes "")
  endif()
  foreach(source IN LISTS ARG_SOURCES)
    get_filename_component(path "${source}" ABSOLUTE)
    get_filename_component(stem "${source}" NAME_WE)
    if(NOT stem MATCHES "^[A-Za-z_][A-Za-z0-9_]*$")
      message(FATAL_ERROR "tessera_add_tpc_kernels: ${source}: the file's stem '${stem}' names "
                          "the kernel and its _binary___<stem>_o_start symbol; rename the file "
                          "to a C identifier")
    endif()
    # The file is compiled from a copy in which `__global__ T*` is a checked pointer, keeping the
    # file's lines (#line) and its directory for its own includes. Its quoted includes found in
    # its directory or on the target's include path (set before this call) are copied the same
    # way, ahead of the originals on the path.
    file(READ "${path}" source_text)
    _tessera_tpc_global_pointers("${source_text}" text)
    set(copy "${CMAKE_CURRENT_BINARY_DIR}/tessera_tpc_kernels/${stem}.tpc.c")
    _tessera_tpc_write_copy("${copy}" "${path}" "${text}")
    get_filename_component(source_dir "${path}" DIRECTORY)
    set(header_copies "${CMAKE_CURRENT_BINARY_DIR}/tessera_tpc_kernels/${stem}_include")
    file(MAKE_DIRECTORY "${header_copies}")
    set_property(GLOBAL PROPERTY TESSERA_TPC_VISITED_${stem} "")
    _tessera_tpc_copy_headers("${source_text}" "${source_dir};${target_includes}"
                              "${header_copies}" TESSERA_TPC_VISITED_${stem})
    set(unit "${CMAKE_CURRENT_BINARY_DIR}/tessera_tpc_kernels/${stem}.cpp")
    file(CONFIGURE OUTPUT "${unit}" CONTENT
"// Generated by tessera_add_tpc_kernels from ${path}: the TPC-C file as C++.
#define TESSERA_TPC_LOCAL_SECTION \"tessera_tpc_local_${stem}\"
#define TESSERA_TPC_LOCAL_SIZE_SECTION \"tessera_tpc_localsize_${stem}\"
#include \"tessera/targets/tpc/compat/tpc-c.h\"
#define main tessera_tpc_main
namespace tessera_tpc_kernel_${stem} {
#include \"${copy}\"
}  // namespace tessera_tpc_kernel_${stem}
#undef main
TESSERA_TPC_KERNEL_BINARY(tessera_tpc_kernel_${stem}, tessera_tpc_main, ${stem});
" @ONLY)
    target_sources(${ARG_TARGET} PRIVATE "${unit}")
    # TPC-C idioms that are extensions in C++: compound literals, unknown pragmas
    # (loop_unroll, tpc_printf), unused loop bounds.
    set_source_files_properties("${unit}" PROPERTIES
      INCLUDE_DIRECTORIES "${header_copies};${source_dir}"
      COMPILE_OPTIONS "-Wno-pedantic;-Wno-unknown-pragmas;-Wno-unused-variable;-Wno-unused-but-set-variable;-Wno-unused-parameter;-Wno-shadow")
  endforeach()
endfunction()
