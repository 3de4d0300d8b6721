# Debian's libabsl-dev exports its CMake targets against the shared libraries,
# but also ships the static archives. A dynamically linked C++ launcher spends
# more time in the loader than in its whole job (design.md section 6), so every
# absl:: target is pointed at its .a instead. The tests and benchmarks then link
# the same archives, which keeps one build of the code under test.
get_directory_property(_np_imported IMPORTED_TARGETS)
foreach(_t IN LISTS _np_imported)
  if(NOT _t MATCHES "^absl::")
    continue()
  endif()
  get_target_property(_type ${_t} TYPE)
  if(NOT _type STREQUAL "SHARED_LIBRARY")
    continue()
  endif()
  get_target_property(_loc ${_t} IMPORTED_LOCATION_NONE)
  if(NOT _loc)
    continue()
  endif()
  string(REGEX REPLACE "\\.so(\\.[0-9.]+)?$" ".a" _static "${_loc}")
  if(EXISTS "${_static}")
    set_target_properties(${_t} PROPERTIES
      IMPORTED_LOCATION_NONE "${_static}"
      IMPORTED_LOCATION "${_static}"
      IMPORTED_SONAME_NONE ""
      IMPORTED_NO_SONAME TRUE)
  endif()
endforeach()
