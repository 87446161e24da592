//===- Registry.h - The kernel capability registry --------------*- C++ -*-===//
//
// The kernels this build can dispatch to, held as data: one table of
// capability structs in lib/Kernels/Registry.cpp (docs/kernels.md explains
// why a table and not an embedded JSON file). Listed as text and as JSON by
// `qtc kernels [--json]`; the JSON form parses back strictly, so an artifact
// can carry the registry it was compiled against.
//
//===----------------------------------------------------------------------===//
#ifndef QTENSOR_KERNELS_REGISTRY_H
#define QTENSOR_KERNELS_REGISTRY_H

#include "qtensor/Kernels/Capability.h"
#include "qtensor/Support/Expected.h"

#include <nlohmann/json.hpp>

#include <string>

namespace qtensor::kernels {

/// The built-in registry (seed 0x07A): decode GEMV and tensor-core prefill
/// kernels for sm_80+, their host twins for CI parity, and the full-dequant
/// fallback. Ids and layouts are stable; docs/kernels.md lists them.
const KernelRegistry &builtinRegistry();

/// Invariants every registry must hold: unique non-empty ids, known layouts
/// and repack endpoints, non-empty contracts, positive tiles, phases that
/// match the token range, wildcards only on full-dequant kernels.
Status verifyRegistry(const KernelRegistry &registry);

/// The registry as JSON ({"schema": "qtensor.kernels", "version": 1,
/// "layouts", "repack_paths", "kernels"}).
nlohmann::json registryToJson(const KernelRegistry &registry);
/// Strict inverse of registryToJson: unknown or missing fields and unknown
/// spellings are errors naming the JSON path; the result is verified.
Expected<KernelRegistry> registryFromJson(const nlohmann::json &j);

/// A human-readable listing, one block per kernel.
std::string registryToText(const KernelRegistry &registry);

} // namespace qtensor::kernels

#endif // QTENSOR_KERNELS_REGISTRY_H
