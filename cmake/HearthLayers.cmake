# The layering check: every file under src/ may include only headers of its own library and
# of the libraries it links (and what those pass on). hearth_library() records each library;
# hearth_check_layers() writes the map and runs scripts/check_layers.py as part of the
# build, so an upward include fails `cmake --build` with the file and the header named.

# "[a, b]" from a CMake list of names or paths (none holds a quote or a backslash).
function(hearth_json_list out)
  set(items "")
  foreach(item ${ARGN})
    list(APPEND items "\"${item}\"")
  endforeach()
  list(JOIN items ", " joined)
  set(${out} "[${joined}]" PARENT_SCOPE)
endfunction()

function(hearth_check_layers)
  get_property(libraries GLOBAL PROPERTY HEARTH_LAYER_LIBRARIES)
  set(entries "")
  foreach(lib ${libraries})
    get_target_property(dir ${lib} SOURCE_DIR)
    get_target_property(sources ${lib} SOURCES)
    get_target_property(link ${lib} LINK_LIBRARIES)
    get_target_property(interface ${lib} INTERFACE_LINK_LIBRARIES)
    foreach(var link interface)
      if(NOT ${var})
        set(${var} "")
      endif()
      # Only the project's own libraries matter; generator expressions (link-only private
      # dependencies of a static library) are not usable for includes.
      list(FILTER ${var} INCLUDE REGEX "^hearth_")
    endforeach()
    # A header-only library links nothing itself: its headers may include what it passes on.
    get_target_property(type ${lib} TYPE)
    if(type STREQUAL "INTERFACE_LIBRARY")
      set(link ${interface})
    endif()
    hearth_json_list(sources_json ${sources})
    hearth_json_list(link_json ${link})
    hearth_json_list(interface_json ${interface})
    list(APPEND entries "  {\"name\": \"${lib}\", \"dir\": \"${dir}\", \"sources\": ${sources_json},\n   \"link\": ${link_json}, \"interface\": ${interface_json}}")
  endforeach()
  list(JOIN entries ",\n" body)
  set(map ${PROJECT_BINARY_DIR}/layers.json)
  file(CONFIGURE OUTPUT ${map} CONTENT "[\n${body}\n]\n" @ONLY)

  find_package(Python3 COMPONENTS Interpreter REQUIRED)
  file(GLOB_RECURSE layered_files CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/src/*.h
       ${PROJECT_SOURCE_DIR}/src/*.cpp)
  set(script ${PROJECT_SOURCE_DIR}/scripts/check_layers.py)
  set(stamp ${PROJECT_BINARY_DIR}/layers.stamp)
  add_custom_command(
    OUTPUT ${stamp}
    COMMAND Python3::Interpreter ${script} ${map} ${PROJECT_SOURCE_DIR} ${stamp}
    DEPENDS ${layered_files} ${map} ${script}
    COMMENT "Checking that each library includes only the layers it links"
    VERBATIM)
  add_custom_target(hearth_check_layers ALL DEPENDS ${stamp})
endfunction()
