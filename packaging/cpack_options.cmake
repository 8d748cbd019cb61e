# Read by cpack for each generator (CPACK_PROJECT_CONFIG_FILE): what differs
# between the Debian package and the tarball.
if(CPACK_GENERATOR STREQUAL "TGZ")
  # The tarball holds bin/ and share/ under one top directory, to unpack
  # with --strip-components=1 into /usr/local (or anywhere: nothing in the
  # binary depends on where it lies).
  set(CPACK_PACKAGING_INSTALL_PREFIX "/")
  set(CPACK_INCLUDE_TOPLEVEL_DIRECTORY ON)
  set(CPACK_PACKAGE_FILE_NAME "redlock-${CPACK_PACKAGE_VERSION}-linux-${CPACK_REDLOCK_ARCH}")
endif()
