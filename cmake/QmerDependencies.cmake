# Finds every dependency among Debian 12's packages and stops at configure time naming the package
# to install when one is missing (scripts/install-deps installs them all).
find_package(PkgConfig QUIET)
if(NOT PkgConfig_FOUND)
    message(FATAL_ERROR "pkg-config not found: install the Debian package 'pkg-config' "
                        "(or run scripts/install-deps)")
endif()

macro(qmer_require_config package debian_package)
    find_package(${package} ${ARGN} QUIET)
    if(NOT ${package}_FOUND)
        message(FATAL_ERROR "${package} not found: install the Debian package '${debian_package}' "
                            "(or run scripts/install-deps)")
    endif()
endmacro()

macro(qmer_require_pkgconfig prefix module debian_package)
    pkg_check_modules(${prefix} QUIET IMPORTED_TARGET ${module})
    if(NOT ${prefix}_FOUND)
        message(FATAL_ERROR "${module} not found: install the Debian package '${debian_package}' "
                            "(or run scripts/install-deps)")
    endif()
endmacro()

set(THREADS_PREFER_PTHREAD_FLAG ON)
find_package(Threads REQUIRED)
qmer_require_config(TBB libtbb-dev)
qmer_require_config(CLI11 libcli11-dev)
qmer_require_pkgconfig(HTSLIB htslib libhts-dev)
qmer_require_pkgconfig(XXHASH libxxhash libxxhash-dev)
# The compressions htslib does not read (zstd, xz, bzip2), decoded by io/ itself, and zstd output.
qmer_require_pkgconfig(ZSTD libzstd libzstd-dev)
qmer_require_pkgconfig(LZMA liblzma liblzma-dev)
qmer_require_config(BZip2 libbz2-dev)
if(QMER_BUILD_TESTS)
    qmer_require_config(GTest libgtest-dev)
    qmer_require_config(seqan3 libseqan3-dev)
endif()
if(QMER_BUILD_BENCH)
    qmer_require_config(benchmark libbenchmark-dev)
endif()
# SeqAn3 is needed by io/ for GenBank and EMBL input even without tests.
if(NOT seqan3_FOUND)
    qmer_require_config(seqan3 libseqan3-dev)
endif()
