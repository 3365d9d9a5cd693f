# The layers of the engine (common/<folder>) and what may use them.
#
# Each folder of common/ is a layer: a library zarrd_<folder> that links only the layers it names,
# each defined before it, so the link graph is a DAG in the order of common/CMakeLists.txt. A
# layer, and whatever links it, compiles against an include root of its own that holds (as links
# into the source tree) only its folder and the folders of the layers below it: an include of a
# layer above, or of one it does not name, fails to compile ("No such file or directory").

# Gives <target> an include root holding only <dirs> (paths below the source root), PUBLIC for a
# library (INTERFACE for an interface library), so that what links <target> sees them too.
function(zarrd_include_root target)
  set(root ${PROJECT_BINARY_DIR}/include_roots/${target})
  file(REMOVE_RECURSE ${root})
  foreach(dir ${ARGN})
    get_filename_component(parent ${root}/${dir} DIRECTORY)
    file(MAKE_DIRECTORY ${parent})
    file(CREATE_LINK ${PROJECT_SOURCE_DIR}/${dir} ${root}/${dir} SYMBOLIC)
  endforeach()
  get_target_property(type ${target} TYPE)
  if(type STREQUAL "INTERFACE_LIBRARY")
    target_include_directories(${target} INTERFACE ${root})
  else()
    target_include_directories(${target} PUBLIC ${root})
  endif()
endfunction()

# zarrd_use_layers(<target> DIRS <dirs>... LAYERS <layers>...): links <target> to the layers named
# and gives it an include root with <dirs> and what those layers see.
function(zarrd_use_layers target)
  cmake_parse_arguments(ARG "" "" "DIRS;LAYERS" ${ARGN})
  set(visible ${ARG_DIRS})
  get_target_property(type ${target} TYPE)
  set(scope PUBLIC)
  if(type STREQUAL "INTERFACE_LIBRARY")
    set(scope INTERFACE)
  endif()
  foreach(layer ${ARG_LAYERS})
    get_property(below GLOBAL PROPERTY ZARRD_SEES_zarrd_${layer})
    if(NOT below)
      message(FATAL_ERROR "${target} uses layer ${layer}, which is not defined before it")
    endif()
    list(APPEND visible ${below})
    target_link_libraries(${target} ${scope} zarrd_${layer})
  endforeach()
  list(REMOVE_DUPLICATES visible)
  zarrd_include_root(${target} ${visible})
  set_property(GLOBAL PROPERTY ZARRD_SEES_${target} ${visible})
endfunction()

# zarrd_layer(<name> [SOURCES <files>...] [LAYERS <layers below>...]): the library zarrd_<name>
# of the folder it is called from (an interface library when there are no sources).
function(zarrd_layer name)
  cmake_parse_arguments(ARG "" "" "SOURCES;LAYERS" ${ARGN})
  if(ARG_SOURCES)
    add_library(zarrd_${name} STATIC ${ARG_SOURCES})
    if(ZARRD_FUZZ)  # coverage for libFuzzer
      target_compile_options(zarrd_${name} PRIVATE
                             $<$<COMPILE_LANGUAGE:CXX>:-fsanitize=fuzzer-no-link>)
    endif()
  else()
    add_library(zarrd_${name} INTERFACE)
  endif()
  file(RELATIVE_PATH dir ${PROJECT_SOURCE_DIR} ${CMAKE_CURRENT_SOURCE_DIR})
  zarrd_use_layers(zarrd_${name} DIRS ${dir} LAYERS ${ARG_LAYERS})
endfunction()
