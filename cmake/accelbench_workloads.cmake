# Workloads and their backends, found by the build (docs/architecture.md, "Where new things go").
# A workload is a folder workloads/<w> with a CMakeLists.txt; a backend of it built in a library of
# its own is a subfolder with a CMakeLists.txt (workloads/<w>/cuda, added when CUDA is ON). Nothing
# outside the folder names them: the CLI links and registers what the folders declared.

# accelbench_add_workloads(): adds every workloads/*/ folder with a CMakeLists.txt that
# ACCELBENCH_SKIP_MODULES does not name, its cuda/ folder first (the workload links the backends
# its folders declared). A cuda/ folder this build does not add is recorded as not built, with the
# reason (accelbench env and the planner say it). CONFIGURE_DEPENDS: a new folder reconfigures the
# build.
function(accelbench_add_workloads)
  file(GLOB lists CONFIGURE_DEPENDS ${ACCELBENCH_SOURCE_DIR}/workloads/*/CMakeLists.txt)
  if(NOT ACCELBENCH_ENABLE_CUDA)
    set(no_cuda "CUDA was turned off at configure time (ACCELBENCH_ENABLE_CUDA=OFF)")
  else()
    set(no_cuda "nvcc was not found at configure time")
  endif()
  foreach(list_file ${lists})
    get_filename_component(dir ${list_file} DIRECTORY)
    get_filename_component(w ${dir} NAME)
    if(w IN_LIST ACCELBENCH_SKIP_MODULES)
      continue()
    endif()
    if(EXISTS ${dir}/cuda/CMakeLists.txt)
      if(ACCELBENCH_HAVE_CUDA)
        add_subdirectory(${dir}/cuda)
        accelbench_backend_declared(${w} cuda)
      else()
        accelbench_backend_not_built(${w} cuda "${no_cuda}")
      endif()
    endif()
    add_subdirectory(${dir})
  endforeach()
endfunction()

# accelbench_backend_not_built(<workload> <backend> <reason>): the backend folder was found but is
# not built in this configuration, because <reason> (one line, no ';' or '"'): the generated
# <workload>::unbuilt_backends() lists it.
function(accelbench_backend_not_built workload name reason)
  set_property(GLOBAL APPEND PROPERTY ACCELBENCH_UNBUILT_${workload} ${name})
  set_property(GLOBAL APPEND PROPERTY ACCELBENCH_UNBUILT_REASONS_${workload} "${reason}")
endfunction()

# A backend folder that was added declares its backend (accelbench_backend) or why it is not built
# (accelbench_backend_not_built); one that did neither is listed as not built rather than forgotten.
function(accelbench_backend_declared workload name)
  get_property(built GLOBAL PROPERTY ACCELBENCH_BACKENDS_${workload})
  get_property(unbuilt GLOBAL PROPERTY ACCELBENCH_UNBUILT_${workload})
  if(NOT name IN_LIST built AND NOT name IN_LIST unbuilt)
    accelbench_backend_not_built(${workload} ${name}
      "workloads/${workload}/${name} declared no backend in this configuration")
  endif()
endfunction()

# accelbench_cuda_library(<target> <sources>...): a CUDA backend's library (host C++ calling the
# device helper, accelbench::device, which is added here when no one added it before), with its
# accelbench::<name> alias and our defaults.
function(accelbench_cuda_library tgt)
  if(NOT TARGET accelbench_device)
    add_subdirectory(${ACCELBENCH_SOURCE_DIR}/harness/device ${CMAKE_BINARY_DIR}/harness/device)
  endif()
  string(REGEX REPLACE "^accelbench_" "" short ${tgt})
  add_library(${tgt} ${ARGN})
  add_library(accelbench::${short} ALIAS ${tgt})
  accelbench_target_defaults(${tgt})
endfunction()

# accelbench_backend(<workload> <backend> <target>): the backend folder's library <target> holds
# accelbench::<workload>::make_<backend>_backend(); the workload links it and lists it (below).
function(accelbench_backend workload name tgt)
  set_property(GLOBAL APPEND PROPERTY ACCELBENCH_BACKENDS_${workload} ${name})
  set_property(GLOBAL APPEND PROPERTY ACCELBENCH_BACKEND_TARGETS_${workload} ${tgt})
endfunction()

# accelbench_workload(<name> <target> [BACKENDS <b>...] [RANK <n>]): the workload of folder
# workloads/<name>, C++ namespace accelbench::<name>, is built in <target>; BACKENDS are those
# compiled into <target> itself (cpu/). Links the backends its other folders declared and generates
# accelbench::<name>::built_backends(), which makes one of each, and
# accelbench::<name>::unbuilt_backends(), the folders not built with their reasons. With RANK, the CLI registers it
# through accelbench::<name>::register_<name>(registry&), in RANK order (the order of
# `accelbench list`).
function(accelbench_workload name tgt)
  cmake_parse_arguments(W "" "RANK" "BACKENDS" ${ARGN})
  get_property(more GLOBAL PROPERTY ACCELBENCH_BACKENDS_${name})
  get_property(more_targets GLOBAL PROPERTY ACCELBENCH_BACKEND_TARGETS_${name})
  target_link_libraries(${tgt} PRIVATE ${more_targets})
  set(decls "")
  set(calls "")
  foreach(b ${W_BACKENDS} ${more})
    string(APPEND decls "std::unique_ptr<backend> make_${b}_backend();\n")
    string(APPEND calls "  out.push_back(make_${b}_backend());\n")
  endforeach()
  get_property(unbuilt GLOBAL PROPERTY ACCELBENCH_UNBUILT_${name})
  get_property(reasons GLOBAL PROPERTY ACCELBENCH_UNBUILT_REASONS_${name})
  set(unbuilt_entries "")
  foreach(b IN ZIP_LISTS unbuilt reasons)
    string(APPEND unbuilt_entries "{\"${b_0}\", \"${b_1}\"}, ")
  endforeach()
  set(out ${CMAKE_BINARY_DIR}/generated/workloads/${name}_backends.cpp)
  file(CONFIGURE OUTPUT ${out} CONTENT
"// generated by cmake/accelbench_workloads.cmake: the backends built for workloads/@name@, and those
// whose folders were found but not built
#include \"harness/core/backend.hpp\"

namespace accelbench::@name@ {

@decls@
backend_list built_backends() {
  backend_list out;
@calls@  return out;
}

unbuilt_list unbuilt_backends() { return {@unbuilt_entries@}; }

} // namespace accelbench::@name@
" @ONLY)
  target_sources(${tgt} PRIVATE ${out})
  if(DEFINED W_RANK)
    set_property(GLOBAL APPEND PROPERTY ACCELBENCH_WORKLOADS "${W_RANK}|${name}|${tgt}")
  endif()
endfunction()

# accelbench_link_workloads(<target>): links every registered workload into <target> and compiles
# there accelbench::register_workloads(registry&), which registers them in RANK order.
function(accelbench_link_workloads tgt)
  get_property(all GLOBAL PROPERTY ACCELBENCH_WORKLOADS)
  list(SORT all COMPARE NATURAL)
  set(decls "")
  set(calls "")
  foreach(entry ${all})
    string(REPLACE "|" ";" parts ${entry})
    list(GET parts 1 name)
    list(GET parts 2 lib)
    target_link_libraries(${tgt} PUBLIC ${lib})
    string(APPEND decls "namespace ${name} {\nvoid register_${name}(registry& reg);\n}\n")
    string(APPEND calls "  ${name}::register_${name}(reg);\n")
  endforeach()
  set(out ${CMAKE_BINARY_DIR}/generated/registered_workloads.cpp)
  file(CONFIGURE OUTPUT ${out} CONTENT
"// generated by cmake/accelbench_workloads.cmake: the workloads of workloads/*/ that register
#include \"harness/core/workload.hpp\"

namespace accelbench {

@decls@
void register_workloads(registry& reg) {
@calls@}

} // namespace accelbench
" @ONLY)
  target_sources(${tgt} PRIVATE ${out})
endfunction()
