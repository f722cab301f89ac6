# cmake/dsmm_install.cmake: install rules, the exported dsmm::dsmm package and dsmm.pc.
include(CMakePackageConfigHelpers)
install(TARGETS dsmm EXPORT dsmmTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(TARGETS dsmm_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(FILES include/dsmm.h ${PROJECT_BINARY_DIR}/include/dsmm_config.h
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT dsmmTargets NAMESPACE dsmm:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/dsmm)
configure_package_config_file(cmake/dsmmConfig.cmake.in
  ${PROJECT_BINARY_DIR}/dsmmConfig.cmake INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/dsmm)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/dsmmConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMajorVersion)
install(FILES ${PROJECT_BINARY_DIR}/dsmmConfig.cmake ${PROJECT_BINARY_DIR}/dsmmConfigVersion.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/dsmm)
set(DSMM_PC_REQUIRES "zlib")
set(DSMM_PC_LIBS_PRIVATE "-ldl -lpthread -lm")
if(DSMM_USE_MPI)
  string(APPEND DSMM_PC_REQUIRES " ompi-c")
endif()
if(DSMM_USE_OPENMP)
  string(APPEND DSMM_PC_LIBS_PRIVATE " ${OpenMP_C_FLAGS}")
endif()
configure_file(cmake/dsmm.pc.in ${PROJECT_BINARY_DIR}/dsmm.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/dsmm.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
