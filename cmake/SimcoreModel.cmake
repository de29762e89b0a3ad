# simcore_add_model(NAME SOURCES ...)
#
# Declares a model as an object library whose objects are linked into every simcore
# front end (CLI, Python module, tests). The model registers itself from a static
# initializer in its own sources; linking objects (not a static archive) keeps that
# initializer from being dropped by the linker.
function(simcore_add_model name)
  cmake_parse_arguments(ARG "" "" "SOURCES;LIBRARIES" ${ARGN})
  set(target simcore_model_${name})
  add_library(${target} OBJECT ${ARG_SOURCES})
  target_link_libraries(${target} PUBLIC simcore_kernel ${ARG_LIBRARIES})
  target_compile_options(${target} PRIVATE ${SIMCORE_WARNINGS})
  set_property(GLOBAL APPEND PROPERTY SIMCORE_MODEL_TARGETS ${target})
endfunction()

# simcore_link_models(TARGET): link every declared model into TARGET.
function(simcore_link_models target)
  get_property(models GLOBAL PROPERTY SIMCORE_MODEL_TARGETS)
  foreach(m IN LISTS models)
    target_sources(${target} PRIVATE $<TARGET_OBJECTS:${m}>)
    target_link_libraries(${target} PRIVATE ${m})
  endforeach()
endfunction()
