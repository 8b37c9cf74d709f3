include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

# Two components, which `make package` turns into two Debian packages
# (cmake/Package.cmake): dev (the library, its headers, CMake and pkg-config
# files) and cli (the weft command and its plotter).
install(TARGETS weft EXPORT weftTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT dev
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT dev
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT dev
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY include/weft DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} COMPONENT dev)
install(EXPORT weftTargets NAMESPACE weft:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/weft COMPONENT dev)

configure_package_config_file(cmake/weftConfig.cmake.in
  ${PROJECT_BINARY_DIR}/weftConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/weft)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/weftConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/weftConfig.cmake ${PROJECT_BINARY_DIR}/weftConfigVersion.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/weft COMPONENT dev)

# A static libweft needs hwloc and liburing on the consumer's link line even without
# `pkg-config --static`; a shared one carries it by itself.
if(BUILD_SHARED_LIBS)
  set(WEFT_PC_STATIC_LIBS "")
else()
  set(WEFT_PC_STATIC_LIBS " -lhwloc -luring")
endif()
file(RELATIVE_PATH WEFT_PC_TO_PREFIX "/p/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/p")
configure_file(cmake/weft.pc.in ${PROJECT_BINARY_DIR}/weft.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/weft.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig COMPONENT dev)
if(WEFT_BUILD_TOOLS)
  install(TARGETS weft-cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT cli)
  install(PROGRAMS tools/plot/plot.py DESTINATION share/weft COMPONENT cli)
endif()
include(cmake/Package.cmake)
