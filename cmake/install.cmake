# Installation: headers, the library, a CMake package (find_package(tpheal) ->
# tpheal::tpheal) and a pkg-config file.
#   Windows: tpheal = core + win32 backend (the library a program ships with).
#   Elsewhere: tpheal = core + the simulated pool on native threads, so the
#   library can be developed and its users' code exercised off Windows.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

if(NOT WIN32 AND TARGET tpheal_simpool)
  tph_add_core(tpheal STATIC LINK tpheal_simpool)
  tph_add_core(tpheal_shared SHARED LINK tpheal_simpool)
  set_target_properties(tpheal_shared PROPERTIES OUTPUT_NAME tpheal)
  set(TPHEAL_INSTALL_TARGETS tpheal tpheal_shared tpheal_simpool tpheal_rt)
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
  file(WRITE ${PROJECT_BINARY_DIR}/tphealConfig.cmake.in [=[
@PACKAGE_INIT@
include(CMakeFindDependencyMacro)
if(NOT WIN32)
  find_dependency(Threads)
endif()
include("${CMAKE_CURRENT_LIST_DIR}/tphealTargets.cmake")
]=])
  configure_package_config_file(${PROJECT_BINARY_DIR}/tphealConfig.cmake.in
    ${PROJECT_BINARY_DIR}/tphealConfig.cmake INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/tpheal)
  write_basic_package_version_file(${PROJECT_BINARY_DIR}/tphealConfigVersion.cmake
    VERSION ${PROJECT_VERSION} COMPATIBILITY SameMajorVersion)
  install(FILES ${PROJECT_BINARY_DIR}/tphealConfig.cmake ${PROJECT_BINARY_DIR}/tphealConfigVersion.cmake
          DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/tpheal)
  if(WIN32)
    set(TPHEAL_PC_LIBS "-ltpheal")
  else()
    set(TPHEAL_PC_LIBS "-ltpheal -ltpheal_simpool -ltpheal_rt -lpthread")
  endif()
  # Relocatable: the prefix is found from the .pc file's own place, so
  # `cmake --install --prefix X` works whatever prefix was configured.
  file(RELATIVE_PATH TPHEAL_PC_UP ${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_LIBDIR}/pkgconfig ${CMAKE_INSTALL_PREFIX})
  string(REGEX REPLACE "/$" "" TPHEAL_PC_UP "${TPHEAL_PC_UP}")
  file(WRITE ${PROJECT_BINARY_DIR}/tpheal.pc
"prefix=\${pcfiledir}/${TPHEAL_PC_UP}
libdir=\${prefix}/${CMAKE_INSTALL_LIBDIR}
includedir=\${prefix}/${CMAKE_INSTALL_INCLUDEDIR}

Name: tpheal
Description: A healing library for the Windows thread pool
Version: ${PROJECT_VERSION}
Libs: -L\${libdir} ${TPHEAL_PC_LIBS}
Cflags: -I\${includedir}
")
  install(FILES ${PROJECT_BINARY_DIR}/tpheal.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
endif()
