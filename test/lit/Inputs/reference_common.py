"""The pieces the float64 reference forwards share (qwen3_reference.py,
phi3_reference.py, gemma_reference.py): numpy formulas written from the
models' definitions, and the file formats they read and write, without
qtensor's code.
"""
import json
import struct

import numpy as np


def rms_norm(x, w, eps):
    return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps) * w


def rope_neox(x, pos, base, scale=1.0, rot=None, attn=1.0):
    """RoPE over [T, heads, d], dimension i paired with i + rot/2 (NeoX;
    transformers' rotate_half) for the first `rot` dimensions (all when
    None; the rest pass), angles pos base^(-2i/rot) / scale (a number, or
    one divisor per frequency), cos and sin times `attn`."""
    d = x.shape[-1] if rot is None else rot
    theta = np.outer(pos, base ** (-np.arange(0, d, 2, dtype=np.float64) / d))
    theta = theta / scale
    cos, sin = np.cos(theta)[:, None, :] * attn, np.sin(theta)[:, None, :] * attn
    a, b = x[..., :d // 2], x[..., d // 2:d]
    return np.concatenate([a * cos - b * sin, a * sin + b * cos, x[..., d:]], -1)


def write_logits(logits, path):
    """As `qtc run --logits-out` writes them: little-endian float32."""
    logits.astype("<f4").tofile(path)
    print("reference top-1", int(np.argmax(logits)))


def finish_gguf(writer):
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()


def save_f32_safetensors(tensors, path):
    """safetensors as its format note spells it: an 8-byte header length,
    the JSON header, then the F32 data in order."""
    header, offset = {}, 0
    for name, t in tensors.items():
        header[name] = {"dtype": "F32", "shape": list(t.shape),
                        "data_offsets": [offset, offset + t.nbytes]}
        offset += t.nbytes
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text)
        for t in tensors.values():
            f.write(t.astype("<f4").tobytes())


def load_f32_safetensors(path):
    """Every tensor of an F32 safetensors file, as float64."""
    raw = open(path, "rb").read()
    (n,) = struct.unpack("<Q", raw[:8])
    header, data = json.loads(raw[8:8 + n]), raw[8 + n:]
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        assert info["dtype"] == "F32", (name, info["dtype"])
        lo, hi = info["data_offsets"]
        out[name] = np.frombuffer(data[lo:hi], "<f4").reshape(
            info["shape"]).astype(np.float64)
    return out
