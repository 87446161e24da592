"""qtensor from Python: compile, verify and run artifacts.

A thin ctypes binding over the C API (include/qtensor-c), so it needs no
compiler toolchain of its own and no struct layout: requests and results
are JSON, with the fields of `qtc ... --json`.

    import qtensor
    result = qtensor.compile("ckpt/", "out/", target="host", quant="keep")
    assert result["verified"]
    qtensor.verify("out/")["ok"]
    with qtensor.Model("out/") as m:
        tokens, logits = m.generate([1, 2, 3], max_tokens=8)

Errors raise qtensor.Error with the library's message (it names the file,
tensor or field).
"""
import ctypes
import json
import os

try:  # the build tree names its library
    from ._library import LIBRARY
except ImportError:  # installed: PREFIX/lib/python3/site-packages/qtensor
    LIBRARY = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                           "..", "..", "..", "libQTensorCAPI.so")

__all__ = ["Error", "Model", "compile", "verify", "version"]


class Error(RuntimeError):
    """What the library refused, and why."""


_lib = ctypes.CDLL(LIBRARY)
_lib.qtensorFree.argtypes = [ctypes.c_void_p]
_lib.qtensorVersion.restype = ctypes.c_char_p
_out = ctypes.POINTER(ctypes.c_void_p)
_lib.qtensorCompileArtifact.argtypes = [ctypes.c_char_p, _out]
_lib.qtensorVerifyArtifact.argtypes = [ctypes.c_char_p, _out]
_lib.qtensorModelLoad.argtypes = [ctypes.c_char_p, _out]
_lib.qtensorModelLoad.restype = ctypes.c_void_p
_lib.qtensorModelDestroy.argtypes = [ctypes.c_void_p]
_lib.qtensorModelVocabSize.argtypes = [ctypes.c_void_p]
_lib.qtensorModelVocabSize.restype = ctypes.c_int64
_lib.qtensorModelGenerate.argtypes = [
    ctypes.c_void_p, ctypes.POINTER(ctypes.c_int32), ctypes.c_size_t,
    ctypes.c_int64, ctypes.POINTER(ctypes.c_int32), ctypes.c_size_t,
    ctypes.POINTER(ctypes.c_size_t), ctypes.POINTER(ctypes.c_float), _out]


def _take(pointer):
    """The library's malloc'd string as str, freed."""
    if not pointer.value:
        return ""
    text = ctypes.string_at(pointer.value).decode("utf-8", "replace")
    _lib.qtensorFree(pointer)
    return text


def version():
    return _lib.qtensorVersion().decode()


def compile(input, output_dir, **options):
    """Compiles a checkpoint (directory, .gguf, or .mlir with weights=...)
    into a verified artifact; options are CompileRequest's fields (target,
    quant, weights, phase, fallback, group_policy, tp, exclude, include).
    Returns the result object; raises Error when nothing was compiled."""
    request = dict(options, input=str(input), output_dir=str(output_dir))
    result = ctypes.c_void_p()
    _lib.qtensorCompileArtifact(json.dumps(request).encode(),
                                ctypes.byref(result))
    out = json.loads(_take(result))
    if not out.get("ok"):
        raise Error(out.get("error", "compile failed"))
    return out


def verify(artifact_dir):
    """The parity ladder's result (`qtc verify --json`'s object)."""
    result = ctypes.c_void_p()
    _lib.qtensorVerifyArtifact(str(artifact_dir).encode(),
                               ctypes.byref(result))
    out = json.loads(_take(result))
    if "error" in out:
        raise Error(out["error"])
    return out


class Model:
    """An artifact's decoder program, loaded with this installation's
    rebuild of its kernels. Use from one thread at a time."""

    def __init__(self, artifact_dir):
        error = ctypes.c_void_p()
        self._handle = _lib.qtensorModelLoad(str(artifact_dir).encode(),
                                             ctypes.byref(error))
        if not self._handle:
            raise Error(_take(error))
        self.vocab_size = _lib.qtensorModelVocabSize(self._handle)

    def generate(self, prompt, max_tokens=16):
        """Greedy tokens after `prompt` (ids), and the logits after its last
        token (a list of vocab_size floats)."""
        ids = (ctypes.c_int32 * len(prompt))(*prompt)
        tokens = (ctypes.c_int32 * max(1, max_tokens))()
        logits = (ctypes.c_float * self.vocab_size)()
        count = ctypes.c_size_t()
        error = ctypes.c_void_p()
        if _lib.qtensorModelGenerate(self._handle, ids, len(prompt),
                                     max_tokens, tokens, max_tokens,
                                     ctypes.byref(count), logits,
                                     ctypes.byref(error)):
            raise Error(_take(error))
        return list(tokens[:count.value]), list(logits)

    def close(self):
        if self._handle:
            _lib.qtensorModelDestroy(self._handle)
            self._handle = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        self.close()
