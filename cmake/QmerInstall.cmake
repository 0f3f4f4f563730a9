# What `cmake --install` puts under the prefix, and the Debian packages `cpack -G DEB` makes of it.
#   runtime (package qmer):     bin/qmer, share/man/man1/qmer.1.gz,
#                               share/bash-completion/completions/qmer
#   dev     (package qmer-dev): include/qmer/core/**.hpp and share/cmake/qmer/, the header-only
#                               CMake package (find_package(qmer) gives qmer::core)
# Every path is relative to the prefix, so `--prefix` and CMAKE_INSTALL_PREFIX are respected.
include(CMakePackageConfigHelpers)

install(TARGETS qmer RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT runtime)

# Debian policy wants man pages compressed with `gzip -9n` (no timestamp, so the package is
# reproducible); man reads them so from any prefix.
set(QMER_MAN_PAGE ${PROJECT_BINARY_DIR}/qmer.1.gz)
add_custom_command(
    OUTPUT ${QMER_MAN_PAGE}
    COMMAND gzip -9n -c ${PROJECT_SOURCE_DIR}/doc/qmer.1 > ${QMER_MAN_PAGE}
    DEPENDS ${PROJECT_SOURCE_DIR}/doc/qmer.1
    COMMENT "Compressing the man page")
add_custom_target(qmer_man_page ALL DEPENDS ${QMER_MAN_PAGE})
install(FILES ${QMER_MAN_PAGE} DESTINATION ${CMAKE_INSTALL_MANDIR}/man1 COMPONENT runtime)

# bash-completion loads completions/<command> on first use, from every share/ in XDG_DATA_DIRS
# (default /usr/local/share:/usr/share).
install(FILES ${PROJECT_SOURCE_DIR}/completions/qmer.bash
        DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions
        RENAME qmer
        COMPONENT runtime)

# Header-only, so the package is architecture-independent: share/cmake, not lib/cmake.
set(QMER_CMAKE_DIR ${CMAKE_INSTALL_DATADIR}/cmake/qmer)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/core/
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/qmer/core
        COMPONENT dev
        FILES_MATCHING PATTERN "*.hpp")
install(TARGETS qmer_core EXPORT qmerTargets COMPONENT dev)
install(EXPORT qmerTargets NAMESPACE qmer:: DESTINATION ${QMER_CMAKE_DIR} COMPONENT dev)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/qmerConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/qmerConfig.cmake
                              INSTALL_DESTINATION ${QMER_CMAKE_DIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/qmerConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion ARCH_INDEPENDENT)
install(FILES ${PROJECT_BINARY_DIR}/qmerConfig.cmake ${PROJECT_BINARY_DIR}/qmerConfigVersion.cmake
        DESTINATION ${QMER_CMAKE_DIR}
        COMPONENT dev)

# cpack -G DEB: two packages, as Debian splits a tool from its headers.
set(QMER_PACKAGE_MAINTAINER "qmer developers" CACHE STRING "Maintainer field of the .deb packages")
set(CPACK_PACKAGE_NAME qmer)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY ${PROJECT_DESCRIPTION})
set(CPACK_PACKAGE_CONTACT ${QMER_PACKAGE_MAINTAINER})
set(CPACK_STRIP_FILES ON)
set(CPACK_COMPONENTS_ALL runtime dev)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION science)
set(CPACK_DEBIAN_RUNTIME_PACKAGE_NAME qmer)
# dpkg-shlibdeps turns the binary's shared libraries (htslib, oneTBB, ...) into Depends.
set(CPACK_DEBIAN_RUNTIME_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_RUNTIME_PACKAGE_SUGGESTS "snakemake, multiqc")
set(CPACK_DEBIAN_DEV_PACKAGE_NAME qmer-dev)
set(CPACK_DEBIAN_DEV_PACKAGE_ARCHITECTURE all)
set(CPACK_DEBIAN_DEV_PACKAGE_DEPENDS "libxxhash-dev")
set(CPACK_COMPONENT_RUNTIME_DESCRIPTION
    "Screens sequencing reads against the k-mers of reference genomes (qmer index, query, info)")
set(CPACK_COMPONENT_DEV_DESCRIPTION
    "qmer's k-mer scanner and filters as a header-only CMake package (qmer::core)")
include(CPack)
