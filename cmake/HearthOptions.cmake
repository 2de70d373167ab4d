# Compiler flags shared by every Hearth target: warnings, sanitizers, ccache.

find_program(HEARTH_CCACHE ccache)
if(HEARTH_CCACHE)
  set(CMAKE_C_COMPILER_LAUNCHER ${HEARTH_CCACHE})
  set(CMAKE_CXX_COMPILER_LAUNCHER ${HEARTH_CCACHE})
endif()

add_library(hearth_compile_options INTERFACE)
target_compile_options(hearth_compile_options INTERFACE
  -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor -Wcast-align -Wunused
  -Woverloaded-virtual -Wimplicit-fallthrough -Wformat=2)
if(HEARTH_FATAL_WARNINGS)
  target_compile_options(hearth_compile_options INTERFACE -Werror)
endif()

if(HEARTH_SANITIZE)
  set(HEARTH_SANITIZER_FLAGS -fsanitize=address,undefined -fno-sanitize-recover=all
      -fno-omit-frame-pointer)
  add_compile_options(${HEARTH_SANITIZER_FLAGS})
  add_link_options(${HEARTH_SANITIZER_FLAGS})
endif()

# hearth_library(name SOURCES ... DEPS ...): one layer library with the project's options.
function(hearth_library name)
  cmake_parse_arguments(ARG "" "" "SOURCES;PUBLIC_DEPS;PRIVATE_DEPS" ${ARGN})
  add_library(${name} STATIC ${ARG_SOURCES})
  set_property(GLOBAL APPEND PROPERTY HEARTH_LAYER_LIBRARIES ${name})
  target_include_directories(${name} PUBLIC ${PROJECT_SOURCE_DIR}/src ${PROJECT_SOURCE_DIR}/include)
  target_link_libraries(${name} PUBLIC ${ARG_PUBLIC_DEPS} PRIVATE hearth_compile_options ${ARG_PRIVATE_DEPS})
endfunction()

# hearth_header_library(name HEADERS ... PUBLIC_DEPS ...): a layer of plain-data headers
# with no sources of its own (settings structs); recorded for the layering check like any
# library, its dependencies counting as what it links.
function(hearth_header_library name)
  cmake_parse_arguments(ARG "" "" "HEADERS;PUBLIC_DEPS" ${ARGN})
  add_library(${name} INTERFACE ${ARG_HEADERS})
  set_property(GLOBAL APPEND PROPERTY HEARTH_LAYER_LIBRARIES ${name})
  target_include_directories(${name} INTERFACE ${PROJECT_SOURCE_DIR}/src ${PROJECT_SOURCE_DIR}/include)
  target_link_libraries(${name} INTERFACE ${ARG_PUBLIC_DEPS})
endfunction()

# hearth_executable(name SOURCES ... DEPS ...)
function(hearth_executable name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE hearth_compile_options ${ARG_DEPS})
endfunction()
