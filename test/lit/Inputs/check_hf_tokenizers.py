#!/usr/bin/env python3
"""Builds Hugging Face tokenizer.json files with the `tokenizers` library
from the corpus vocabularies, and checks that `qtc tokenize` gives the
library's own ids on every corpus case (qtc-tokenize-hf.test).

usage: check_hf_tokenizers.py QTC CORPUS_VOCAB_DIR OUT_DIR

Tokenizers built (each OUT_DIR/KIND/tokenizer.json):
  gpt2    byte-level BPE, ByteLevel pre-tokenizer (GPT-2's pattern), from
          ggml-vocab-gpt-2.gguf's tokens and merges
  llama3  the same vocabulary behind Llama 3's Split pattern and
          ignore_merges, BOS by a TemplateProcessing post-processor
  qwen2   the same behind Qwen2's pattern
  spm     SentencePiece BPE (byte fallback, "▁" for spaces) from
          ggml-vocab-llama-spm.gguf: merges made from its scores the way
          transformers' SentencePiece converter makes them
  bert    WordPiece (BertNormalizer lowercasing, BertPreTokenizer,
          [CLS] $A [SEP]) from ggml-vocab-bert-bge.gguf, its "phantom
          space" tokens spelled back as BERT's ("▁x" -> "x", "x" -> "##x")
For each, every .inp case of the vocabulary is tokenized by the library
(the oracle) and by qtc; so is a text with special tokens written in it
(qtc --parse-special, as the library parses them; without it they must
stay text); prints one line per tokenizer and exits 1 on the first
difference. For gpt2, spm and bert it also counts the cases equal to
llama.cpp's own ids (.out).
"""
import json
import os
import subprocess
import sys

import gguf
from tokenizers import Regex, Tokenizer, decoders, models, normalizers
from tokenizers import pre_tokenizers, processors

LLAMA3 = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|"
          r"\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+")
QWEN2 = LLAMA3.replace(r"\p{N}{1,3}", r"\p{N}")


def field(reader, key):
    f = reader.fields[key]
    if len(f.types) > 1 or f.types[0] == gguf.GGUFValueType.ARRAY:
        if f.types[-1] == gguf.GGUFValueType.STRING:
            return [bytes(f.parts[i]).decode("utf-8") for i in f.data]
        return [f.parts[i][0] for i in f.data]
    if f.types[0] == gguf.GGUFValueType.STRING:
        return bytes(f.parts[f.data[0]]).decode("utf-8")
    return f.parts[f.data[0]][0]


def cases(path):
    raw = open(path + ".inp", encoding="utf-8", newline="").read()
    texts = raw.split("\n__ggml_vocab_test__\n")
    outs = open(path + ".out").read().split("\n")
    ids = [[int(t) for t in line.split()] for line in outs[:len(texts)]]
    return list(zip(texts, ids))


def byte_level(vocab_dir, kind):
    r = gguf.GGUFReader(os.path.join(vocab_dir, "ggml-vocab-gpt-2.gguf"))
    tokens = field(r, "tokenizer.ggml.tokens")
    merges = [tuple(m.split(" ")) for m in field(r, "tokenizer.ggml.merges")]
    vocab = {t: i for i, t in enumerate(tokens)}
    tok = Tokenizer(models.BPE(vocab=vocab, merges=merges,
                               ignore_merges=(kind == "llama3")))
    if kind == "gpt2":
        tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    else:
        tok.pre_tokenizer = pre_tokenizers.Sequence([
            pre_tokenizers.Split(Regex(LLAMA3 if kind == "llama3" else QWEN2),
                                 behavior="isolated", invert=False),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])
    tok.decoder = decoders.ByteLevel()
    if kind == "llama3":
        tok.post_processor = processors.TemplateProcessing(
            single="<|endoftext|> $A",
            special_tokens=[("<|endoftext|>", vocab["<|endoftext|>"])])
    tok.add_special_tokens(["<|endoftext|>"])
    return tok, cases(os.path.join(vocab_dir, "ggml-vocab-gpt-2.gguf"))


def spm(vocab_dir):
    r = gguf.GGUFReader(os.path.join(vocab_dir, "ggml-vocab-llama-spm.gguf"))
    tokens = field(r, "tokenizer.ggml.tokens")
    scores = [float(s) for s in field(r, "tokenizer.ggml.scores")]
    vocab = {t: i for i, t in enumerate(tokens)}
    # Every split of a piece into two pieces is a merge, ordered by the
    # piece's score (then the parts' lengths), highest first.
    merges = []
    for piece, score in zip(tokens, scores):
        local = [(piece[:i], piece[i:], score) for i in range(1, len(piece))
                 if piece[:i] in vocab and piece[i:] in vocab]
        local.sort(key=lambda m: (vocab[m[0]], vocab[m[1]]))
        merges.extend(local)
    merges.sort(key=lambda m: (m[2], len(m[0]), len(m[1])), reverse=True)
    tok = Tokenizer(models.BPE(vocab=vocab, merges=[(a, b) for a, b, _ in merges],
                               unk_token="<unk>", byte_fallback=True,
                               fuse_unk=True))
    tok.normalizer = normalizers.Sequence([normalizers.Prepend("▁"),
                                           normalizers.Replace(" ", "▁")])
    tok.decoder = decoders.Sequence([decoders.Replace("▁", " "),
                                     decoders.ByteFallback(), decoders.Fuse(),
                                     decoders.Strip(" ", 1, 0)])
    tok.add_special_tokens(["<unk>", "<s>", "</s>"])
    tok.post_processor = processors.TemplateProcessing(
        single="<s> $A", special_tokens=[("<s>", vocab["<s>"])])
    return tok, cases(os.path.join(vocab_dir, "ggml-vocab-llama-spm.gguf"))


def bert(vocab_dir):
    r = gguf.GGUFReader(os.path.join(vocab_dir, "ggml-vocab-bert-bge.gguf"))
    tokens = field(r, "tokenizer.ggml.tokens")

    def bert_spelling(t):
        if t.startswith("[") and t.endswith("]"):
            return t
        return t[1:] if t.startswith("▁") else "##" + t
    vocab = {bert_spelling(t): i for i, t in enumerate(tokens)}
    assert len(vocab) == len(tokens)
    tok = Tokenizer(models.WordPiece(vocab=vocab, unk_token="[UNK]"))
    tok.normalizer = normalizers.BertNormalizer(lowercase=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.decoder = decoders.WordPiece()
    tok.add_special_tokens(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"])
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]",
        special_tokens=[("[CLS]", vocab["[CLS]"]), ("[SEP]", vocab["[SEP]"])])
    return tok, cases(os.path.join(vocab_dir, "ggml-vocab-bert-bge.gguf"))


# A text with the tokenizer's special tokens written in it.
SPECIAL_TEXT = {
    "gpt2": "Hello<|endoftext|>world <|endoftext|><|endoftext|>!",
    "llama3": "Hello<|endoftext|>world <|endoftext|><|endoftext|>!",
    "qwen2": "Hello<|endoftext|>world <|endoftext|><|endoftext|>!",
    "spm": "Hello</s>world <s>!",
    "bert": "hello [SEP] world[MASK]!",
}


def qtc_ids(qtc, path, texts, out_dir):
    """qtc's ids of every text, in one run (--texts)."""
    batch = os.path.join(out_dir, "texts.json")
    with open(batch, "w", encoding="utf-8") as f:
        json.dump(texts, f)
    p = subprocess.run([qtc, "tokenize", path, "--texts", batch, "--json"],
                       capture_output=True, text=True)
    out = json.loads(p.stdout)
    if not out.get("ok"):
        sys.exit("%s: %s" % (path, out.get("error")))
    return out["tokens"]


def main():
    qtc, vocab_dir, out_dir = sys.argv[1:4]
    for kind in ("gpt2", "llama3", "qwen2", "spm", "bert"):
        tok, tests = (spm(vocab_dir) if kind == "spm" else
                      bert(vocab_dir) if kind == "bert" else
                      byte_level(vocab_dir, kind))
        os.makedirs(os.path.join(out_dir, kind), exist_ok=True)
        path = os.path.join(out_dir, kind, "tokenizer.json")
        tok.save(path)
        same_cpp = 0
        all_got = qtc_ids(qtc, path, [t for t, _ in tests], out_dir)
        for i, ((text, cpp), got) in enumerate(zip(tests, all_got)):
            want = tok.encode(text, add_special_tokens=False).ids
            if got != want:
                sys.exit("%s case %d %r: qtc %s, tokenizers %s" %
                         (kind, i, text, got, want))
            same_cpp += got == cpp
        # BOS from the post-processor's template.
        with_bos = tok.encode("Hello", add_special_tokens=True).ids
        p = subprocess.run([qtc, "tokenize", path, "--text", "Hello",
                            "--add-special", "--json"],
                           capture_output=True, text=True)
        if json.loads(p.stdout)["tokens"] != with_bos:
            sys.exit("%s: with special tokens qtc %s, tokenizers %s" %
                     (kind, p.stdout, with_bos))
        # Special tokens written in the text are tokens with
        # --parse-special (the library's default), text without it.
        special = SPECIAL_TEXT[kind]
        want = tok.encode(special, add_special_tokens=False).ids
        p = subprocess.run([qtc, "tokenize", path, "--text", special,
                            "--parse-special", "--json"],
                           capture_output=True, text=True)
        if json.loads(p.stdout)["tokens"] != want:
            sys.exit("%s: %r with --parse-special: qtc %s, tokenizers %s" %
                     (kind, special, json.loads(p.stdout)["tokens"], want))
        plain = qtc_ids(qtc, path, [special], out_dir)[0]
        if plain == want:
            sys.exit("%s: %r without --parse-special gave the special "
                     "tokens %s" % (kind, special, want))
        line = "%s: %d/%d cases equal to tokenizers" % (kind, len(tests),
                                                         len(tests))
        if kind in ("gpt2", "spm", "bert"):
            line += ", %d/%d to llama.cpp" % (same_cpp, len(tests))
        print(line)


if __name__ == "__main__":
    main()
