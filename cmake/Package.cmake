# Debian packages of the install components (cmake/Install.cmake), built by
# `make package` (cpack -G DEB in build/release):
#   libweft-dev  the static library, its headers, CMake and pkg-config files;
#                depends on libhwloc-dev and liburing-dev, which a static
#                libweft links against
#   weft         the weft command and its plotter; its library dependencies
#                come from dpkg-shlibdeps, matplotlib (for the report's
#                figures) is recommended
# Both install under /usr. tests/package/run.sh installs them with apt-get,
# builds tests/install's consumer against them and removes them.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME weft)
set(CPACK_PACKAGE_VENDOR "weft")
set(CPACK_PACKAGE_CONTACT "weft maintainers <weft@invalid>")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "${PROJECT_DESCRIPTION}")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_PACKAGE_DIRECTORY ${PROJECT_BINARY_DIR}/packages)

set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_ALL dev)
if(WEFT_BUILD_TOOLS)
  list(APPEND CPACK_COMPONENTS_ALL cli)
endif()
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_RELEASE 1)

set(CPACK_DEBIAN_DEV_PACKAGE_NAME libweft-dev)
set(CPACK_DEBIAN_DEV_PACKAGE_SECTION libdevel)
set(CPACK_DEBIAN_DEV_PACKAGE_DEPENDS "libhwloc-dev, liburing-dev")
set(CPACK_COMPONENT_DEV_DESCRIPTION
    "C++20 multithreading for Linux: work-stealing pool, futures, task groups, parallel algorithms, hwloc placement (static library, headers, CMake and pkg-config files)")

set(CPACK_DEBIAN_CLI_PACKAGE_NAME weft)
set(CPACK_DEBIAN_CLI_PACKAGE_SECTION utils)
set(CPACK_DEBIAN_CLI_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_CLI_PACKAGE_RECOMMENDS "python3, python3-matplotlib")
set(CPACK_COMPONENT_CLI_DESCRIPTION
    "The weft command: topology, inter-thread latency, pool, allocator, I/O and parallel-algorithm experiments against peers, and weft report")

include(CPack)
