#!/usr/bin/env bash
# Installs the built qtensor into a scratch prefix, then:
#  - runs the installed qtc and qopt (they must find libMLIR.so by themselves);
#  - configures, builds and runs test/package/downstream against the prefix
#    with find_package(QTensor): the dialect, then compileArtifact on the
#    tiny llama followed by a load and run through the installed runtime;
#  - verifies and runs that artifact with the installed qtc.
# Usage: run-downstream.sh BUILD_DIR SCRATCH_DIR CXX_COMPILER
set -euo pipefail
build="$1"; scratch="$2"; cxx="$3"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
rm -rf "$scratch"
cmake --install "$build" --prefix "$scratch/prefix" >/dev/null
prefix="$scratch/prefix"

# The installed tools start (no LD_LIBRARY_PATH).
# (Output goes to files first: grep -q closing a pipe early would fail the
# writer under pipefail.)
env -u LD_LIBRARY_PATH "$prefix/bin/qtc" --help >"$scratch/qtc-help.txt"
grep -q "^usage: qtc COMMAND" "$scratch/qtc-help.txt"
env -u LD_LIBRARY_PATH "$prefix/bin/qopt" --help >"$scratch/qopt-help.txt"
grep -q "qtensor-compile" "$scratch/qopt-help.txt"
env -u LD_LIBRARY_PATH "$prefix/bin/qtc" kernels --json >/dev/null
echo "installed qtc and qopt start"

cmake -G Ninja -S "$here/downstream" -B "$scratch/build" \
  -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_PREFIX_PATH="$prefix" \
  -DCMAKE_CXX_COMPILER_LAUNCHER=ccache >/dev/null
ninja -C "$scratch/build" >/dev/null
"$scratch/build/downstream" | tee "$scratch/out.txt"
grep -q "weight layers.0.q_proj scales tensor<4096x32xf16>" "$scratch/out.txt"

"$build/bin/make-tiny-llama" "$scratch/tiny-llama" >/dev/null
"$scratch/build/compile_and_run" "$scratch/tiny-llama" "$scratch/art" | tee "$scratch/compile.txt"
grep -q "^compiled 14 linears, 6 stages, verified$" "$scratch/compile.txt"
grep -q "^ran 14 linears on host$" "$scratch/compile.txt"
env -u LD_LIBRARY_PATH "$prefix/bin/qtc" verify "$scratch/art" >"$scratch/verify.txt"
grep -q "verdict: verified" "$scratch/verify.txt"
env -u LD_LIBRARY_PATH "$prefix/bin/qtc" run "$scratch/art" \
  --op model.layers.0.mlp.down_proj.weight --check >"$scratch/run.txt"
grep -q "check: ok" "$scratch/run.txt"

# The C API and the Python package from the prefix: a C program built
# against the installed headers and library alone, and `import qtensor`.
cc="${cxx%++}"; [ -x "$cc" ] || cc=cc
"$cc" -I"$prefix/include" -I/usr/lib/llvm-22/include \
  "$here/../capi/capi_test.c" -L"$prefix/lib" -lQTensorCAPI \
  -Wl,-rpath,"$prefix/lib" -o "$scratch/capi-test"
env -u LD_LIBRARY_PATH "$scratch/capi-test" "$scratch/tiny-llama" \
  "$scratch/capi-art" >"$scratch/capi.txt"
! grep -q FAILED "$scratch/capi.txt"
env -u LD_LIBRARY_PATH PYTHONPATH="$prefix/lib/python3/site-packages" \
  python3 -c "import qtensor; print('python', qtensor.version(), qtensor.__file__)" \
  >"$scratch/python.txt"
grep -q "^python .*$prefix/lib/python3/site-packages/qtensor/__init__.py" \
  "$scratch/python.txt"
echo "installed C API and Python package: ok"
echo "downstream package test: ok"
