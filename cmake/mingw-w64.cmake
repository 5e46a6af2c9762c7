# Cross-compiling for 64-bit Windows with mingw-w64 (Debian: gcc-mingw-w64-x86-64).
# Tests run through Wine: ctest prefixes each test command with the emulator.
#   cmake -S . -B build-win -DCMAKE_TOOLCHAIN_FILE=cmake/mingw-w64.cmake
# cmocka for the target is found through cmocka_DIR / CMOCKA_ROOT (ci/windows/build-cmocka-mingw.sh).
set(CMAKE_SYSTEM_NAME Windows)
set(CMAKE_SYSTEM_PROCESSOR x86_64)

set(TPHEAL_MINGW_TRIPLE x86_64-w64-mingw32 CACHE STRING "mingw-w64 target triple")
set(CMAKE_C_COMPILER ${TPHEAL_MINGW_TRIPLE}-gcc)
set(CMAKE_CXX_COMPILER ${TPHEAL_MINGW_TRIPLE}-g++)
set(CMAKE_RC_COMPILER ${TPHEAL_MINGW_TRIPLE}-windres)

set(CMAKE_FIND_ROOT_PATH /usr/${TPHEAL_MINGW_TRIPLE})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
# BOTH: cmocka_DIR points outside the root path (the build directory).
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE BOTH)

# Static libgcc: an .exe that needs libgcc_s_seh-1.dll does not start under a
# bare Wine prefix (the DLL is not on Wine's search path).
set(CMAKE_EXE_LINKER_FLAGS_INIT "-static-libgcc")
set(CMAKE_SHARED_LINKER_FLAGS_INIT "-static-libgcc")

# Debian ships `wine` (a launcher choosing wine64 for 64-bit images); older
# layouts ship `wine64` alone.
find_program(TPHEAL_WINE NAMES wine wine64 wine-stable)
if(TPHEAL_WINE)
  set(CMAKE_CROSSCOMPILING_EMULATOR ${TPHEAL_WINE})
endif()
