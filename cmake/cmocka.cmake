# cmocka: Debian's libcmocka-dev on Linux; on Windows a cmocka built for the
# target (vcpkg, MSYS2, or build/cmocka-mingw from Debian's source package),
# found through cmocka_DIR / CMOCKA_ROOT.
find_package(cmocka CONFIG QUIET)
if(TARGET cmocka::cmocka)
  set(TPHEAL_CMOCKA cmocka::cmocka)
elseif(TARGET cmocka)
  set(TPHEAL_CMOCKA cmocka)
else()
  find_path(CMOCKA_INCLUDE_DIR cmocka.h HINTS ${CMOCKA_ROOT}/include)
  find_library(CMOCKA_LIBRARY NAMES cmocka libcmocka cmocka-static HINTS ${CMOCKA_ROOT}/lib)
  if(NOT CMOCKA_INCLUDE_DIR OR NOT CMOCKA_LIBRARY)
    message(FATAL_ERROR "cmocka not found: apt-get install -y libcmocka-dev (or set CMOCKA_ROOT)")
  endif()
  add_library(tpheal_cmocka INTERFACE)
  target_include_directories(tpheal_cmocka INTERFACE ${CMOCKA_INCLUDE_DIR})
  target_link_libraries(tpheal_cmocka INTERFACE ${CMOCKA_LIBRARY})
  set(TPHEAL_CMOCKA tpheal_cmocka)
endif()
