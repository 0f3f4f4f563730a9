# What `cmake --install` puts under the prefix, and the Debian packages `cpack -G DEB` makes of it.
#   runtime (package qmer):     bin/qmer, share/man/man1/qmer.1.gz,
#                               share/bash-completion/completions/qmer, share/doc/qmer/ (copyright,
#                               changelog.gz, README.md, examples/: the Snakemake workflow)
#   dev     (package qmer-dev): include/qmer/core/**.hpp and share/cmake/qmer/, the header-only
#                               CMake package (find_package(qmer) gives qmer::core),
#                               share/doc/qmer-dev/ (copyright, changelog.gz)
# Every path is relative to the prefix, so `--prefix` and CMAKE_INSTALL_PREFIX are respected.
include(CMakePackageConfigHelpers)

# Writes the Debian machine-readable copyright file (copyright-format 1.0) to `path`: the licence
# named QMER_LICENSE, its text from QMER_LICENSE_FILE indented as the format wants (an empty line
# becomes " ."). A source tree without a licence file gets a copyright file that says so, and a
# warning: the package then grants no licence.
function(qmer_write_copyright path)
    if(EXISTS ${QMER_LICENSE_FILE} AND NOT QMER_LICENSE STREQUAL "")
        set(name ${QMER_LICENSE})
        file(READ ${QMER_LICENSE_FILE} text)
        set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${QMER_LICENSE_FILE})
    else()
        message(STATUS "No licence: set QMER_LICENSE_FILE (default LICENSE in the source tree) "
                        "and QMER_LICENSE (its SPDX name); the package's copyright file says "
                        "that none is granted")
        set(name "LicenseRef-none")
        string(CONCAT text "The qmer source tree this package was built from states no licence:\n"
               "no permission is granted beyond what copyright law allows.")
    endif()
    string(REGEX REPLACE "\n+$" "" text "${text}")
    string(REPLACE "\n" "\n " text "${text}")
    string(REGEX REPLACE "\n \n" "\n .\n" text "${text}")
    string(REGEX REPLACE "\n \n" "\n .\n" text "${text}")
    file(WRITE ${path}
         "Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/\n"
         "Upstream-Name: qmer\n"
         "\n"
         "Files: *\n"
         "Copyright: ${QMER_COPYRIGHT}\n"
         "License: ${name}\n"
         " ${text}\n")
endfunction()

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

# share/doc/qmer: what Debian policy asks of every package (copyright, and the upstream changelog
# compressed with `gzip -9n` as changelog.gz: NEWS.md), the README, and the Snakemake workflow as
# an example.
set(QMER_LICENSE_FILE ${PROJECT_SOURCE_DIR}/LICENSE
    CACHE FILEPATH "The licence text the package's copyright file quotes")
set(QMER_LICENSE "" CACHE STRING "The SPDX name of that licence (e.g. MIT), for the copyright file")
set(QMER_COPYRIGHT "2026 qmer developers" CACHE STRING "Copyright line of the copyright file")
qmer_write_copyright(${PROJECT_BINARY_DIR}/copyright)
install(FILES ${PROJECT_BINARY_DIR}/copyright ${PROJECT_SOURCE_DIR}/README.md
        DESTINATION ${CMAKE_INSTALL_DOCDIR}
        COMPONENT runtime)

set(QMER_CHANGELOG ${PROJECT_BINARY_DIR}/changelog.gz)
add_custom_command(
    OUTPUT ${QMER_CHANGELOG}
    COMMAND gzip -9n -c ${PROJECT_SOURCE_DIR}/NEWS.md > ${QMER_CHANGELOG}
    DEPENDS ${PROJECT_SOURCE_DIR}/NEWS.md
    COMMENT "Compressing the changelog")
add_custom_target(qmer_changelog ALL DEPENDS ${QMER_CHANGELOG})
install(FILES ${QMER_CHANGELOG} DESTINATION ${CMAKE_INSTALL_DOCDIR} COMPONENT runtime)
# Debian wants both in every package's own doc folder, qmer-dev's too.
install(FILES ${PROJECT_BINARY_DIR}/copyright ${QMER_CHANGELOG}
        DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/qmer-dev
        COMPONENT dev)

# Taken when installing, so a file added to workflows/ needs no new configure.
install(DIRECTORY ${PROJECT_SOURCE_DIR}/workflows/
        DESTINATION ${CMAKE_INSTALL_DOCDIR}/examples
        COMPONENT runtime
        FILES_MATCHING PATTERN "Snakefile" PATTERN "config.yaml" PATTERN "README.md"
        PATTERN "*.py" PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE
                                   GROUP_READ GROUP_EXECUTE WORLD_READ WORLD_EXECUTE)

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
# The long description `apt show qmer` prints under the summary (PROJECT_DESCRIPTION), in lines
# of under 80 columns, as Debian's control files want.
string(JOIN "\n" CPACK_COMPONENT_RUNTIME_DESCRIPTION
       "qmer screens sequencing reads against the k-mers of reference genomes, for"
       "contamination, host and pathogen screening from the shell and in workflows."
       "qmer index builds an index of the references' k-mers in a concurrent expandable"
       "quotient filter, qmer query screens reads (FASTA, FASTQ, SAM, BAM or CRAM)"
       "against one index or a panel of indexes, qmer merge joins the per-read tables"
       "of panel queries run on separate machines, and qmer info describes an index."
       "A Snakemake workflow is in /usr/share/doc/qmer/examples.")
set(CPACK_COMPONENT_DEV_DESCRIPTION
    "qmer's k-mer scanner and filters as a header-only CMake package (qmer::core)")
include(CPack)
