# Installation: headers, the library static and shared, a CMake package
# (find_package(tpheal) -> tpheal::tpheal static, tpheal::tpheal_shared, and
# off Windows tpheal::check, docs/check.md) and
# pkg-config files named for what they link (tpheal-shared, tpheal-static).
#   Windows: tpheal = core + win32 backend (the library a program ships with;
#   the DLL goes to bin/, the program's directory at run time).
#   Elsewhere: tpheal = core + the *modelled* Windows pool (harness/sim) on
#   native threads, so the library can be developed and its users' code
#   exercised off Windows.  It is the same model the harness runs, free-
#   running with the model's defaults: no real thread pool, and the default
#   pool's stall modelled (harness/sim/sim.h), which the healer repairs.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

if(NOT WIN32 AND TARGET tpheal_simpool)
  tph_add_core(tpheal STATIC LINK tpheal_simpool)
  tph_add_core(tpheal_shared SHARED LINK_PRIVATE tpheal_simpool)
  set_target_properties(tpheal_shared PROPERTIES OUTPUT_NAME tpheal)
  set(TPHEAL_INSTALL_TARGETS tpheal tpheal_shared tpheal_simpool tpheal_rt)
  # The checker of a user's own code (docs/check.md): tpheal::check, over
  # the static library, and its header <tpheal/check.h>.
  if(TARGET tpheal_check)
    list(APPEND TPHEAL_INSTALL_TARGETS tpheal_check)
    install(FILES harness/check/include/tpheal/check.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/tpheal)
  endif()
endif()

if(TPHEAL_INSTALL_TARGETS)
  install(TARGETS ${TPHEAL_INSTALL_TARGETS} EXPORT tphealTargets
          ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
          LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
          RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
  install(DIRECTORY core/include/tpheal DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
          FILES_MATCHING PATTERN "*.h")
  install(FILES ${PROJECT_BINARY_DIR}/include/tpheal/config.h
          DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/tpheal)
  install(EXPORT tphealTargets NAMESPACE tpheal:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/tpheal)
  file(WRITE ${PROJECT_BINARY_DIR}/tphealConfig.cmake.in.in [=[
@PACKAGE_INIT@
include(CMakeFindDependencyMacro)
if(NOT WIN32)
  find_dependency(Threads)
  if(NOT tpheal_FIND_QUIETLY)
    message(STATUS "tpheal @PROJECT_VERSION@: off Windows the library runs on the modelled Windows "
                   "thread pool (native threads), not a real pool; on Windows it is the real pool")
  endif()
endif()
include("${CMAKE_CURRENT_LIST_DIR}/tphealTargets.cmake")
]=])
  configure_file(${PROJECT_BINARY_DIR}/tphealConfig.cmake.in.in ${PROJECT_BINARY_DIR}/tphealConfig.cmake.in @ONLY)
  configure_package_config_file(${PROJECT_BINARY_DIR}/tphealConfig.cmake.in
    ${PROJECT_BINARY_DIR}/tphealConfig.cmake INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/tpheal)
  write_basic_package_version_file(${PROJECT_BINARY_DIR}/tphealConfigVersion.cmake
    VERSION ${PROJECT_VERSION} COMPATIBILITY SameMajorVersion)
  install(FILES ${PROJECT_BINARY_DIR}/tphealConfig.cmake ${PROJECT_BINARY_DIR}/tphealConfigVersion.cmake
          DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/tpheal)
  # Two pkg-config files, each named for what it links, the same on every
  # platform: tpheal-shared (-ltpheal, which the linker resolves to the shared
  # library where both exist: the .so, or mingw-w64's import library
  # libtpheal.dll.a) and tpheal-static (the archives by path, for that reason).
  # Off Windows the shared library carries its backend, so pthreads is all
  # it adds; its static form is three archives.
  set(TPHEAL_PC_STATIC_FILE "${CMAKE_STATIC_LIBRARY_PREFIX}tpheal${CMAKE_STATIC_LIBRARY_SUFFIX}")
  if(WIN32)
    get_target_property(TPHEAL_PC_IMPORT_NAME tpheal_shared ARCHIVE_OUTPUT_NAME)
    if(NOT TPHEAL_PC_IMPORT_NAME)
      set(TPHEAL_PC_IMPORT_NAME tpheal)
    endif()
    set(TPHEAL_PC_DESCRIPTION "A healing library for the Windows thread pool")
    set(TPHEAL_PC_SHARED_LIBS "-L\${libdir} -l${TPHEAL_PC_IMPORT_NAME}")
    set(TPHEAL_PC_SHARED_PRIVATE "")
    set(TPHEAL_PC_STATIC_LIBS "\${libdir}/${TPHEAL_PC_STATIC_FILE}")
    # The DLL is installed to bin/, and a program finds it at run time only
    # beside its .exe or on PATH: `pkg-config --variable=bindir tpheal-shared`.
    set(TPHEAL_PC_SHARED_VARS "bindir=\${prefix}/${CMAKE_INSTALL_BINDIR}\n")
  else()
    set(TPHEAL_PC_DESCRIPTION "A healing library for the Windows thread pool (here: on the modelled Windows pool, native threads)")
    set(TPHEAL_PC_SHARED_LIBS "-L\${libdir} -ltpheal")
    set(TPHEAL_PC_SHARED_PRIVATE "-lpthread")
    set(TPHEAL_PC_STATIC_LIBS "\${libdir}/${TPHEAL_PC_STATIC_FILE} \${libdir}/libtpheal_simpool.a \${libdir}/libtpheal_rt.a -lpthread")
    set(TPHEAL_PC_SHARED_VARS "")
  endif()
  # Relocatable: the prefix is found from the .pc file's own place, so
  # `cmake --install --prefix X` works whatever prefix was configured.
  file(RELATIVE_PATH TPHEAL_PC_UP ${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_LIBDIR}/pkgconfig ${CMAKE_INSTALL_PREFIX})
  string(REGEX REPLACE "/$" "" TPHEAL_PC_UP "${TPHEAL_PC_UP}")
  set(TPHEAL_PC_HEAD "prefix=\${pcfiledir}/${TPHEAL_PC_UP}
libdir=\${prefix}/${CMAKE_INSTALL_LIBDIR}
includedir=\${prefix}/${CMAKE_INSTALL_INCLUDEDIR}
")
  file(WRITE ${PROJECT_BINARY_DIR}/tpheal-shared.pc "${TPHEAL_PC_HEAD}${TPHEAL_PC_SHARED_VARS}
Name: tpheal-shared
Description: ${TPHEAL_PC_DESCRIPTION}, shared library
Version: ${PROJECT_VERSION}
Libs: ${TPHEAL_PC_SHARED_LIBS}
Libs.private: ${TPHEAL_PC_SHARED_PRIVATE}
Cflags: -I\${includedir}
")
  file(WRITE ${PROJECT_BINARY_DIR}/tpheal-static.pc "${TPHEAL_PC_HEAD}
Name: tpheal-static
Description: ${TPHEAL_PC_DESCRIPTION}, static library
Version: ${PROJECT_VERSION}
Libs: ${TPHEAL_PC_STATIC_LIBS}
Cflags: -I\${includedir}
")
  install(FILES ${PROJECT_BINARY_DIR}/tpheal-shared.pc ${PROJECT_BINARY_DIR}/tpheal-static.pc
          DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
endif()
