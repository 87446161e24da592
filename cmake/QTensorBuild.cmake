# Helpers shared by every qtensor library and tool.
#
#   qtensor_add_library(Name SOURCES ... [MLIR] [DEPENDS tgt...] [LINK lib...])
#
# Plain static PIC libraries (not add_mlir_library: that one exports into MLIR's own
# package). MLIR libraries link the shared libMLIR.so / libLLVM.so, which keeps
# executables small and links fast (BUILD-NOTES: 0.2 s per tool).

set_property(GLOBAL PROPERTY QTENSOR_EXPORTED_TARGETS "")

function(qtensor_add_library name)
  cmake_parse_arguments(ARG "MLIR" "" "SOURCES;DEPENDS;LINK" ${ARGN})
  add_library(${name} STATIC ${ARG_SOURCES})
  add_library(QTensor::${name} ALIAS ${name})
  target_include_directories(${name} PUBLIC
    $<BUILD_INTERFACE:${QTENSOR_SOURCE_DIR}/include>
    $<BUILD_INTERFACE:${QTENSOR_BINARY_DIR}/include>
    $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
  if(ARG_MLIR)
    qtensor_use_mlir(${name})
  endif()
  if(ARG_DEPENDS)
    add_dependencies(${name} ${ARG_DEPENDS})
  endif()
  if(ARG_LINK)
    target_link_libraries(${name} PUBLIC ${ARG_LINK})
  endif()
  set_target_properties(${name} PROPERTIES EXPORT_NAME ${name})
  qtensor_warnings(${name})
  install(TARGETS ${name} EXPORT QTensorTargets
    ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
endfunction()

# MLIR/LLVM headers, definitions and the shared libMLIR.so.
function(qtensor_use_mlir target)
  target_include_directories(${target} SYSTEM PUBLIC ${LLVM_INCLUDE_DIRS} ${MLIR_INCLUDE_DIRS})
  target_compile_definitions(${target} PUBLIC ${QTENSOR_LLVM_DEFINITIONS})
  target_link_libraries(${target} PUBLIC MLIR LLVM)
endfunction()

function(qtensor_warnings target)
  if(CMAKE_CXX_COMPILER_ID MATCHES "Clang|GNU")
    target_compile_options(${target} PRIVATE -Wall -Wextra -Wno-unused-parameter)
  endif()
endfunction()

# ccache, when present (CI clones elsewhere on the same machine: CCACHE_BASEDIR in
# scripts/build.sh makes those hits count).
find_program(QTENSOR_CCACHE ccache)
if(QTENSOR_CCACHE AND NOT CMAKE_CXX_COMPILER_LAUNCHER)
  set(CMAKE_C_COMPILER_LAUNCHER "${QTENSOR_CCACHE}" CACHE STRING "")
  set(CMAKE_CXX_COMPILER_LAUNCHER "${QTENSOR_CCACHE}" CACHE STRING "")
endif()

# lld links in a fraction of ld.bfd's time.
find_program(QTENSOR_LLD NAMES ld.lld-22 ld.lld PATHS /usr/lib/llvm-22/bin)
if(QTENSOR_LLD AND NOT QTENSOR_NO_LLD)
  add_link_options("-fuse-ld=lld")
endif()
