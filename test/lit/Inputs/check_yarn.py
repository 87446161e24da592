#!/usr/bin/env python3
"""Checks an artifact's YaRN RoPE against transformers' formula.

usage: check_yarn.py CONFIG_JSON PROGRAM_JSON

Recomputes, from the config.json, what transformers'
_compute_yarn_parameters gives (inverse frequencies and the attention
factor that scales cos and sin), independently of qtc, and compares the
program's rope_freq_factors (divisors of base^(-2i/d)) and attention_scale
(attention_factor^2 / sqrt(head_dim); 0 means 1 / sqrt(head_dim)) with it. Prints one line; exits 1 on
a difference above 1e-9 relative.
"""
import json
import math
import sys


def yarn(cfg):
    rs = cfg["rope_scaling"]
    base = cfg.get("rope_theta", 10000.0)
    head_dim = cfg.get("head_dim") or cfg["hidden_size"] // cfg["num_attention_heads"]
    dim = head_dim
    factor = rs["factor"]
    original = rs.get("original_max_position_embeddings") or cfg["max_position_embeddings"]
    attention_factor = rs.get("attention_factor")
    mscale, mscale_all_dim = rs.get("mscale"), rs.get("mscale_all_dim")

    def get_mscale(scale, m=1):
        return 1.0 if scale <= 1 else 0.1 * m * math.log(scale) + 1.0

    if attention_factor is None:
        if mscale and mscale_all_dim:
            attention_factor = get_mscale(factor, mscale) / get_mscale(factor, mscale_all_dim)
        else:
            attention_factor = get_mscale(factor)
    beta_fast = rs.get("beta_fast") or 32
    beta_slow = rs.get("beta_slow") or 1

    def correction_dim(rot):
        return (dim * math.log(original / (rot * 2 * math.pi))) / (2 * math.log(base))

    low, high = correction_dim(beta_fast), correction_dim(beta_slow)
    if rs.get("truncate", True):
        low, high = math.floor(low), math.ceil(high)
    low, high = max(low, 0), min(high, dim - 1)
    if low == high:
        high += 0.001
    inv = []
    for i in range(dim // 2):
        pos = base ** (2 * i / dim)
        extrapolation = 1 - min(max((i - low) / (high - low), 0.0), 1.0)
        inv.append((1 / (factor * pos)) * (1 - extrapolation) + (1 / pos) * extrapolation)
    return inv, attention_factor, head_dim


def main():
    cfg = json.load(open(sys.argv[1]))
    program = json.load(open(sys.argv[2]))["config"]
    inv, attention_factor, head_dim = yarn(cfg)
    base = cfg.get("rope_theta", 10000.0)
    divisors = program["rope_freq_factors"]
    if len(divisors) != len(inv):
        sys.exit("%d divisors, transformers has %d frequencies" % (len(divisors), len(inv)))
    worst = 0.0
    for i, (f, want) in enumerate(zip(divisors, inv)):
        got = base ** (-2 * i / head_dim) / f
        worst = max(worst, abs(got - want) / want)
    scale = attention_factor ** 2 / math.sqrt(head_dim)
    # attention_scale 0 is the default, 1 / sqrt(head_dim).
    got_scale = program["attention_scale"] or 1 / math.sqrt(head_dim)
    scale_err = abs(got_scale - scale) / scale
    print("yarn: %d frequencies, worst relative difference %.1e; attention factor %.6f, scale difference %.1e"
          % (len(inv), worst, attention_factor, scale_err))
    if worst > 1e-9 or scale_err > 1e-9:
        sys.exit(1)


if __name__ == "__main__":
    main()
