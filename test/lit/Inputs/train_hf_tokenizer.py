#!/usr/bin/env python3
"""Trains a small byte-level BPE tokenizer with the `tokenizers` library
(Llama 3's pre-tokenizer, BOS by the post-processor) to sit beside a Hugging
Face checkpoint, as a real model's tokenizer.json does, and sets its BOS and
EOS ids in the checkpoint's config.json. Prints the library's ids of TEXT
with special tokens, as JSON.

usage: train_hf_tokenizer.py CHECKPOINT_DIR TEXT
"""
import json
import os
import sys

from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers
from tokenizers import processors, trainers

LLAMA3 = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|"
          r"\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+")
CORPUS = ["the capital of france is paris", "hello world, the quick brown fox",
          "jumps over the lazy dog", "a model compiler and runtime"] * 20


def main():
    ckpt, text = sys.argv[1], sys.argv[2]
    config = json.load(open(os.path.join(ckpt, "config.json")))
    tok = Tokenizer(models.BPE(ignore_merges=True))
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(LLAMA3), behavior="isolated", invert=False),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])
    tok.decoder = decoders.ByteLevel()
    specials = ["<|begin_of_text|>", "<|end_of_text|>"]
    tok.train_from_iterator(CORPUS, trainers.BpeTrainer(
        vocab_size=config["vocab_size"], special_tokens=specials,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False))
    bos, eos = (tok.token_to_id(s) for s in specials)
    tok.post_processor = processors.TemplateProcessing(
        single="<|begin_of_text|> $A", special_tokens=[(specials[0], bos)])
    assert tok.get_vocab_size() <= config["vocab_size"]
    tok.save(os.path.join(ckpt, "tokenizer.json"))
    config["bos_token_id"], config["eos_token_id"] = bos, eos
    json.dump(config, open(os.path.join(ckpt, "config.json"), "w"), indent=2)
    print(json.dumps(tok.encode(text, add_special_tokens=True).ids))


if __name__ == "__main__":
    main()
