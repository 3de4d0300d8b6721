# Installing np-exec and packaging it as a Debian package.
#
#   cmake --install BUILD [--prefix PREFIX]
#     PREFIX/bin/np-exec                                   the launcher (static)
#     PREFIX/share/man/man1/np-exec.1[.gz]                 the man page
#     PREFIX/share/bash-completion/completions/np-exec     bash completion
#     PREFIX/lib/np-exec/libnp-exec-preload.so             the LD_PRELOAD interposer,
#                                                          when shim/preload builds it
#     PREFIX/share/doc/np-exec/                            copyright, README, recipes
#
#   cpack -G DEB     (or: cmake --build BUILD --target package)
#     np-exec_<version>_<arch>.deb, prefix /usr.
#
# The man page is gzipped when gzip is found, as Debian policy asks; man(1)
# reads either form.
include(GNUInstallDirs)

# `make install` and `cpack` install what is built; they do not first build
# every target (the tests and benchmarks take minutes on two cores and never
# ship). Build what ships first:
#   cmake --build BUILD --target np-exec-dist && (cd BUILD && cpack -G DEB)
set(CMAKE_SKIP_INSTALL_ALL_DEPENDENCY ON)

set(_np_pkg_dir ${PROJECT_SOURCE_DIR}/packaging)

add_custom_target(np-exec-dist)
add_dependencies(np-exec-dist np-exec)
if(TARGET np-exec-preload)
  add_dependencies(np-exec-dist np-exec-preload)
endif()

install(TARGETS np-exec RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})

# The interposer's own CMakeLists.txt (shim/preload) installs it to
# lib/np-exec, the place `np-exec shims install --preload` and doctor look
# (../lib/np-exec next to the binary). Only when that rule is missing is it
# added here, so the library is never installed twice.
if(TARGET np-exec-preload)
  file(READ ${PROJECT_SOURCE_DIR}/shim/preload/CMakeLists.txt _np_preload_cmake)
  if(NOT _np_preload_cmake MATCHES "install\\(TARGETS np-exec-preload")
    install(TARGETS np-exec-preload LIBRARY DESTINATION lib/np-exec)
  endif()
endif()

# Man page: gzip -n (no name or timestamp) keeps the package reproducible.
find_program(NP_GZIP gzip)
set(_np_man_src ${_np_pkg_dir}/np-exec.1)
if(NP_GZIP)
  set(_np_man_gz ${CMAKE_CURRENT_BINARY_DIR}/packaging/np-exec.1.gz)
  add_custom_command(
    OUTPUT ${_np_man_gz}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${CMAKE_CURRENT_BINARY_DIR}/packaging
    COMMAND ${NP_GZIP} -9 -n -c ${_np_man_src} > ${_np_man_gz}
    DEPENDS ${_np_man_src}
    COMMENT "Compressing the man page"
    VERBATIM)
  add_custom_target(np-exec-man ALL DEPENDS ${_np_man_gz})
  add_dependencies(np-exec-dist np-exec-man)
  install(FILES ${_np_man_gz} DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
else()
  install(FILES ${_np_man_src} DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
endif()

install(FILES ${_np_pkg_dir}/np-exec.bash-completion
        DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions
        RENAME np-exec)

install(FILES ${_np_pkg_dir}/copyright DESTINATION ${CMAKE_INSTALL_DOCDIR})
foreach(_np_doc README.md ARCHITECTURE.md BENCHMARKS.md)
  if(EXISTS ${PROJECT_SOURCE_DIR}/${_np_doc})
    install(FILES ${PROJECT_SOURCE_DIR}/${_np_doc} DESTINATION ${CMAKE_INSTALL_DOCDIR})
  endif()
endforeach()

# ---- CPack: the Debian package ---------------------------------------------
set(CPACK_PACKAGE_NAME np-exec)
set(CPACK_PACKAGE_VENDOR "nubos-pilot")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "np-exec maintainers <maintainers@users.noreply.a-seed-b6ae9f4b.example>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "run agent spawns through nubos-pilot's configured isolation tier")
set(CPACK_PACKAGE_DESCRIPTION
    "np-exec is the executor entry point of nubos-pilot's isolation tiers (ADR-0029).\n\
Host CLIs run np-exec where they ran node (or find it through a directory of\n\
shims named node, claude, codex, gemini on PATH), and every agent spawn is\n\
re-executed through the configured tier: direct, worktree, or a hardened\n\
container (docker, podman or bubblewrap). A configured tier is never silently\n\
downgraded: when the container tier cannot be delivered, np-exec refuses.")
set(CPACK_PACKAGE_INSTALL_DIRECTORY np-exec)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_GENERATOR DEB)
set(CPACK_SOURCE_GENERATOR TGZ)
set(CPACK_SOURCE_IGNORE_FILES "/\\\\.git/" "/build/" "/build-.*/" "/\\\\.cache/")

# Stripped: the RelWithDebInfo binary is ~28 MB with its debug info, ~3 MB
# without, and compressing the former takes minutes.
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_PACKAGE_NAME np-exec)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_MAINTAINER "np-exec maintainers <maintainers@users.noreply.a-seed-b6ae9f4b.example>")
set(CPACK_DEBIAN_PACKAGE_SECTION utils)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_HOMEPAGE "https://github.com/Nubos-AI/nubos-pilot")
# np-exec is linked statically; the interposer needs only libc, which is
# Essential on Debian. So: no Depends. A container runtime is what the
# container tier shells out to, and the direct tier needs none.
set(CPACK_DEBIAN_PACKAGE_DEPENDS "")
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS OFF)
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "docker.io | podman | bubblewrap")
set(CPACK_DEBIAN_PACKAGE_ENHANCES "nodejs")
find_program(NP_DPKG dpkg)
if(NP_DPKG)
  execute_process(COMMAND ${NP_DPKG} --print-architecture
                  OUTPUT_VARIABLE _np_deb_arch OUTPUT_STRIP_TRAILING_WHITESPACE
                  RESULT_VARIABLE _np_deb_arch_rc)
  if(_np_deb_arch_rc EQUAL 0 AND _np_deb_arch)
    set(CPACK_DEBIAN_PACKAGE_ARCHITECTURE ${_np_deb_arch})
  endif()
endif()
include(CPack)
