# SPDX-License-Identifier: MIT
# All third-party code comes from Debian 12 packages; nothing is downloaded or vendored.
find_package(PkgConfig REQUIRED)
find_package(nlohmann_json 3.11 REQUIRED)
find_package(CLI11 2.1 REQUIRED)
find_package(fmt 9 REQUIRED)
find_package(CURL REQUIRED)
find_package(SQLite3 REQUIRED)
find_package(OpenSSL 3 REQUIRED COMPONENTS Crypto)
pkg_check_modules(LIBSSH2 REQUIRED IMPORTED_TARGET libssh2)
pkg_check_modules(LIBARCHIVE REQUIRED IMPORTED_TARGET libarchive)
find_package(Threads REQUIRED)
# libcsv (libcsv-dev) reads the market catalogue (providers/market/catalog_csv.cpp). Linked
# statically where the archive exists: one shared library less to load at start-up.
find_path(GPURENT_CSV_INCLUDE csv.h REQUIRED)
find_library(GPURENT_CSV_LIBRARY NAMES libcsv.a csv REQUIRED)
add_library(gpurent_libcsv INTERFACE)
target_include_directories(gpurent_libcsv SYSTEM INTERFACE ${GPURENT_CSV_INCLUDE})
target_link_libraries(gpurent_libcsv INTERFACE ${GPURENT_CSV_LIBRARY})
if(GPURENT_TESTS)
  find_package(Catch2 2.13 REQUIRED)
endif()

# fmt is used header-only: the offline binary must not pay for loading libfmt.so at start-up.
add_library(gpurent_fmt INTERFACE)
target_link_libraries(gpurent_fmt INTERFACE fmt::fmt-header-only)
