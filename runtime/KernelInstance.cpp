//===- KernelInstance.cpp - One compiled kernel of an artifact ------------===//

#include "qtensor/Runtime/KernelInstance.h"

using namespace qtensor;
using namespace qtensor::runtime;

std::string KernelInstance::where() const {
  return "manifest.kernels[" + std::to_string(index) + "] (" + id + ")";
}

KernelInstance qtensor::runtime::kernelInstanceOf(const artifact::Manifest &m,
                                                  size_t index) {
  KernelInstance k;
  static_cast<artifact::KernelEntry &>(k) = m.kernels.at(index);
  k.index = index;
  return k;
}
