#!/usr/bin/env bash
# Installs the Debian packages qtensor needs, only when something is missing.
# Idempotent: when every package is present it prints one line and changes nothing.
set -euo pipefail

packages=(
  # LLVM/MLIR 22: libMLIR.so, mlir-tblgen (needed by the exported CMake targets), lit, FileCheck.
  llvm-22-dev libmlir-22-dev mlir-22-tools llvm-22-tools clang-22 lld-22
  # libFuzzer and the ASan/UBSan runtimes for clang-22 (test/fuzz).
  libclang-rt-22-dev
  # Libraries the project links.
  nlohmann-json3-dev libgtest-dev libssl-dev libbenchmark-dev libicu-dev
  # Build tools; clang-format-22 for scripts/check-format.sh.
  cmake ninja-build ccache clang-format-22
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all ${#packages[@]} required packages are installed"
  exit 0
fi

echo "setup: installing ${missing[*]}"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
