# Read by cpack (CPACK_PROJECT_CONFIG_FILE, set in cmake/Install.cmake) before
# it builds a package. For the .deb: the Depends of the LD_PRELOAD interposer,
# as dpkg-shlibdeps computes it from the library's symbol versions and
# Debian's symbols files (`libc6 (>= 2.34)` on bookworm). Without
# dpkg-shlibdeps (package dpkg-dev), an unversioned libc6.
if(CPACK_GENERATOR STREQUAL "DEB" AND CPACK_NP_PRELOAD_SO)
  if(NOT EXISTS "${CPACK_NP_PRELOAD_SO}")
    message(FATAL_ERROR "${CPACK_NP_PRELOAD_SO} is not built: build the np-exec-dist target first")
  endif()
  find_program(_np_shlibdeps dpkg-shlibdeps)
  if(_np_shlibdeps)
    # dpkg-shlibdeps wants a debian/control in its working directory.
    set(_np_dir "${CPACK_PACKAGE_DIRECTORY}/np-shlibdeps")
    file(MAKE_DIRECTORY "${_np_dir}/debian")
    file(WRITE "${_np_dir}/debian/control" "")
    execute_process(
      COMMAND ${_np_shlibdeps} -O "${CPACK_NP_PRELOAD_SO}"
      WORKING_DIRECTORY "${_np_dir}"
      OUTPUT_VARIABLE _np_out
      ERROR_VARIABLE _np_err
      RESULT_VARIABLE _np_rc
      OUTPUT_STRIP_TRAILING_WHITESPACE)
    file(REMOVE_RECURSE "${_np_dir}")
    if(NOT _np_rc EQUAL 0 OR NOT _np_out MATCHES "^shlibs:Depends=(.+)$")
      message(FATAL_ERROR "dpkg-shlibdeps on ${CPACK_NP_PRELOAD_SO} failed: ${_np_err}${_np_out}")
    endif()
    set(CPACK_DEBIAN_PACKAGE_DEPENDS "${CMAKE_MATCH_1}")
  else()
    message(STATUS "dpkg-shlibdeps not found: the .deb depends on an unversioned libc6")
    set(CPACK_DEBIAN_PACKAGE_DEPENDS "libc6")
  endif()
endif()
