# PROF_STATIC's libraries, as the imported targets the normal build gets
# from pkg-config (PkgConfig::CJSON, ...), made of static archives:
# cJSON and a libarchive of tar, zip, gzip and zstd only are built from
# Debian's source packages by .ci/static-deps.sh (pinned, hash-checked);
# SQLite, zlib and zstd are Debian's own .a files.
set(PROF_STATIC_DEPS ${CMAKE_BINARY_DIR}/static-deps)
execute_process(COMMAND sh ${PROJECT_SOURCE_DIR}/.ci/static-deps.sh ${PROF_STATIC_DEPS}
  RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "prof: .ci/static-deps.sh failed (${rc}); see above")
endif()

function(prof_static_lib var name)
  find_library(${var} NAMES lib${name}.a
    HINTS ${PROF_STATIC_DEPS}/lib NO_CMAKE_SYSTEM_PATH NO_DEFAULT_PATH)
  if(NOT ${var})
    find_library(${var} NAMES lib${name}.a)
  endif()
  if(NOT ${var})
    message(FATAL_ERROR "prof: PROF_STATIC needs lib${name}.a (.ci/debian-packages.txt)")
  endif()
endfunction()
prof_static_lib(PROF_A_CJSON cjson)
prof_static_lib(PROF_A_ARCHIVE archive)
prof_static_lib(PROF_A_SQLITE sqlite3)
prof_static_lib(PROF_A_ZSTD zstd)
prof_static_lib(PROF_A_Z z)

foreach(t CJSON LIBARCHIVE SQLITE ZLIB)
  add_library(PkgConfig::${t} INTERFACE IMPORTED)
endforeach()
set_target_properties(PkgConfig::CJSON PROPERTIES
  INTERFACE_INCLUDE_DIRECTORIES ${PROF_STATIC_DEPS}/include
  INTERFACE_LINK_LIBRARIES ${PROF_A_CJSON})
set_target_properties(PkgConfig::LIBARCHIVE PROPERTIES
  INTERFACE_INCLUDE_DIRECTORIES ${PROF_STATIC_DEPS}/include
  INTERFACE_LINK_LIBRARIES "${PROF_A_ARCHIVE};${PROF_A_ZSTD};${PROF_A_Z}")
set_target_properties(PkgConfig::SQLITE PROPERTIES
  INTERFACE_LINK_LIBRARIES "${PROF_A_SQLITE};m;${CMAKE_DL_LIBS};Threads::Threads")
set_target_properties(PkgConfig::ZLIB PROPERTIES INTERFACE_LINK_LIBRARIES ${PROF_A_Z})
set(PROF_STATIC_LIBS "cJSON 1.7.15, libarchive 3.6.2 (tar, zip, gzip, zstd), SQLite, zlib, zstd")
