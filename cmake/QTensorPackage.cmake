# find_package(QTensor) for embedders: installs the exported targets
# QTensor::QTensorDialect, QTensor::QTensorRegistration, QTensor::QTensorRuntime
# (and the libraries they use) plus QTensorConfig.cmake.
include(CMakePackageConfigHelpers)

set(QTENSOR_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/QTensor)

install(EXPORT QTensorTargets
  NAMESPACE QTensor::
  DESTINATION ${QTENSOR_INSTALL_CMAKEDIR})

configure_package_config_file(
  ${CMAKE_CURRENT_LIST_DIR}/QTensorConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/QTensorConfig.cmake
  INSTALL_DESTINATION ${QTENSOR_INSTALL_CMAKEDIR})
write_basic_package_version_file(
  ${CMAKE_CURRENT_BINARY_DIR}/QTensorConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES
  ${CMAKE_CURRENT_BINARY_DIR}/QTensorConfig.cmake
  ${CMAKE_CURRENT_BINARY_DIR}/QTensorConfigVersion.cmake
  DESTINATION ${QTENSOR_INSTALL_CMAKEDIR})
