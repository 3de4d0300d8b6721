# Installing np-exec and packaging it as a Debian package.
#
#   cmake --install BUILD [--prefix PREFIX]
#     PREFIX/bin/np-exec                                   the launcher (static)
#     PREFIX/share/man/man1/np-exec.1[.gz]                 the man page
#     PREFIX/share/bash-completion/completions/np-exec     bash completion
#     PREFIX/lib/np-exec/libnp-exec-preload.so             the LD_PRELOAD interposer,
#                                                          when shim/preload builds it
#     PREFIX/share/doc/np-exec/                            copyright, changelog.gz,
#                                                          README, ARCHITECTURE, BENCHMARKS,
#                                                          CONTRIBUTING, docs/*.md
#     PREFIX/share/lintian/overrides/np-exec               why np-exec is static
#
#   cpack -G DEB     (or: cmake --build BUILD --target package)
#     np-exec_<version>_<arch>.deb, prefix /usr.
#
# The man page and the changelog are gzipped when gzip is found, as Debian
# policy asks; man(1) reads either form.
#
# packaging/changelog (Debian's changelog format) is the one place for the
# package's version and its maintainer: its first line's version must be the
# project's VERSION, and its last line's signer is the Maintainer field.
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

# np_install_gzipped(SRC TARGET DESTINATION): at build time (target TARGET,
# part of np-exec-dist) gzip -9 -n SRC into BUILD/packaging/<name>.gz (-n: no
# name or timestamp, so the package is reproducible) and install that to
# DESTINATION; without gzip, SRC itself.
find_program(NP_GZIP gzip)
function(np_install_gzipped src target destination)
  if(NOT NP_GZIP)
    install(FILES ${src} DESTINATION ${destination})
    return()
  endif()
  get_filename_component(_name ${src} NAME)
  set(_gz ${CMAKE_CURRENT_BINARY_DIR}/packaging/${_name}.gz)
  add_custom_command(
    OUTPUT ${_gz}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${CMAKE_CURRENT_BINARY_DIR}/packaging
    COMMAND ${NP_GZIP} -9 -n -c ${src} > ${_gz}
    DEPENDS ${src}
    COMMENT "Compressing ${_name}"
    VERBATIM)
  add_custom_target(${target} ALL DEPENDS ${_gz})
  add_dependencies(np-exec-dist ${target})
  install(FILES ${_gz} DESTINATION ${destination})
endfunction()

np_install_gzipped(${_np_pkg_dir}/np-exec.1 np-exec-man ${CMAKE_INSTALL_MANDIR}/man1)

install(FILES ${_np_pkg_dir}/np-exec.bash-completion
        DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions
        RENAME np-exec)

install(FILES ${_np_pkg_dir}/copyright DESTINATION ${CMAKE_INSTALL_DOCDIR})

# The changelog: a native package's is changelog.gz (lintian's
# wrong-name-for-changelog-of-native-package otherwise).
file(STRINGS ${_np_pkg_dir}/changelog _np_changelog_lines)
list(GET _np_changelog_lines 0 _np_changelog_head)
if(NOT _np_changelog_head MATCHES "^np-exec \\(([^)]+)\\) ")
  message(FATAL_ERROR "packaging/changelog: the first line is not `np-exec (VERSION) ...`")
endif()
if(NOT CMAKE_MATCH_1 STREQUAL PROJECT_VERSION)
  message(FATAL_ERROR "packaging/changelog names version ${CMAKE_MATCH_1}, the project is "
                      "${PROJECT_VERSION}: add a changelog entry for the new version")
endif()
set(_np_deb_maintainer "")
foreach(_np_line IN LISTS _np_changelog_lines)
  if(_np_line MATCHES "^ -- (.+ <[^>]+>)  ")
    set(_np_deb_maintainer "${CMAKE_MATCH_1}")
    break()
  endif()
endforeach()
if(NOT _np_deb_maintainer)
  message(FATAL_ERROR "packaging/changelog: no ` -- NAME <ADDRESS>  DATE` line")
endif()
np_install_gzipped(${_np_pkg_dir}/changelog np-exec-changelog ${CMAKE_INSTALL_DOCDIR})

# np-exec is static on purpose (lintian's statically-linked-binary): the
# override says why, where lintian reads it.
install(FILES ${_np_pkg_dir}/lintian-overrides
        DESTINATION ${CMAKE_INSTALL_DATADIR}/lintian/overrides
        RENAME np-exec)
foreach(_np_doc README.md ARCHITECTURE.md BENCHMARKS.md CONTRIBUTING.md)
  if(EXISTS ${PROJECT_SOURCE_DIR}/${_np_doc})
    install(FILES ${PROJECT_SOURCE_DIR}/${_np_doc} DESTINATION ${CMAKE_INSTALL_DOCDIR})
  endif()
endforeach()
# The README's topic files, at the same relative place so its links resolve.
file(GLOB _np_topic_docs ${PROJECT_SOURCE_DIR}/docs/*.md)
install(FILES ${_np_topic_docs} DESTINATION ${CMAKE_INSTALL_DOCDIR}/docs)

# ---- CPack: the Debian package ---------------------------------------------
set(CPACK_PACKAGE_NAME np-exec)
set(CPACK_PACKAGE_VENDOR "nubos-pilot")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "${_np_deb_maintainer}")
# Debian's Description: a synopsis under 80 characters that does not start
# with the package's name, then lines under 80 characters.
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "run AI agents' programs in an isolation tier or a sandbox")
set(CPACK_PACKAGE_DESCRIPTION
    "np-exec runs every program an AI coding agent starts (node, claude, codex,\n\
gemini, ...) through the isolation tier the project or the operator picks:\n\
in place (direct, worktree), or in a hardened docker, podman or bubblewrap\n\
sandbox that sees the project and nothing else, with no network by default.\n\
Agents reach it through PATH shims, or an LD_PRELOAD interposer for hosts\n\
that run node by absolute path. A configured tier is never silently\n\
downgraded: when the sandbox cannot be delivered, np-exec refuses the spawn.\n\
It reads nubos-pilot's project configuration and works without it.")
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
set(CPACK_DEBIAN_PACKAGE_MAINTAINER "${_np_deb_maintainer}")
set(CPACK_DEBIAN_PACKAGE_SECTION utils)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_HOMEPAGE "https://github.com/Nubos-AI/nubos-pilot")
# np-exec is linked statically; the interposer links libc. Depends is what
# dpkg-shlibdeps computes for it (libc6 (>= the oldest version with every
# symbol it uses)), as Debian policy asks even for an Essential package.
# cmake/DebDepends.cmake runs it when cpack builds the .deb (the library
# exists only then); CPack's own CPACK_DEBIAN_PACKAGE_SHLIBDEPS would also add
# ldconfig to postinst and postrm, for a private library ldconfig never sees.
# A container runtime is what the container tier shells out to, and the
# direct tier needs none.
set(CPACK_DEBIAN_PACKAGE_DEPENDS "")
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS OFF)
if(TARGET np-exec-preload)
  set(CPACK_NP_PRELOAD_SO ${CMAKE_BINARY_DIR}/bin/libnp-exec-preload.so)
  set(CPACK_PROJECT_CONFIG_FILE ${PROJECT_SOURCE_DIR}/cmake/DebDepends.cmake)
endif()
# The completion script installed in /usr/share/bash-completion/completions
# is loaded by bash-completion's loader: without it, no completion.
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "bash-completion")
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
