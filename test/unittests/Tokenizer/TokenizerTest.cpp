//===- TokenizerTest.cpp - Tokenizers against llama.cpp's vocab tests -----===//
//
// Every case of llama.cpp's ggml-vocab-*.gguf.inp/.out pairs in the shared
// corpus (encoded without BOS/EOS, as test-tokenizer-0 does), the tiny llama
// prompt, and metadata that must be refused with a message naming the key.
//
//===----------------------------------------------------------------------===//

#include "qtensor/Tokenizer/Tokenizer.h"

#include "qtensor/Formats/GGUF.h"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <memory>
#include <random>
#include <set>
#include <sstream>

using namespace qtensor;

namespace {

std::filesystem::path corpusDir() { return QTENSOR_CORPUS_DIR; }

#define REQUIRE_FILE(path)                                                     \
  do {                                                                         \
    if (!std::filesystem::exists(path))                                        \
      GTEST_SKIP() << (path).string() << " not found (the shared corpus is "   \
                   << "expected at ../shared/corpus next to the project)";     \
  } while (0)

std::string readText(const std::filesystem::path &p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

/// test-tokenizer-0's reading: cases separated by "\n__ggml_vocab_test__\n"
/// (so a case's own trailing newline is kept only when it has two), one
/// line of space-separated ids per case.
struct VocabCase {
  std::string text;
  std::vector<int32_t> ids;
};

std::vector<VocabCase> readCases(const std::filesystem::path &inp,
                                 const std::filesystem::path &out) {
  const std::string raw = readText(inp);
  const std::string sep = "\n__ggml_vocab_test__\n";
  std::vector<std::string> inputs;
  for (size_t pos = 0; pos < raw.size();) {
    size_t next = raw.find(sep, pos);
    if (next == std::string::npos) {
      inputs.push_back(raw.substr(pos));
      break;
    }
    inputs.push_back(raw.substr(pos, next - pos));
    pos = next + sep.size();
  }
  std::ifstream outs(out);
  std::vector<VocabCase> cases;
  size_t i = 0;
  for (std::string line; std::getline(outs, line); ++i) {
    VocabCase c;
    c.text = i < inputs.size() ? inputs[i] : std::string();
    std::istringstream ids(line);
    for (int32_t id; ids >> id;)
      c.ids.push_back(id);
    cases.push_back(std::move(c));
  }
  EXPECT_EQ(cases.size(), inputs.size()) << inp;
  return cases;
}

std::string idList(const std::vector<int32_t> &ids) {
  std::string s;
  for (int32_t id : ids)
    s += (s.empty() ? "" : " ") + std::to_string(id);
  return s;
}

Expected<Tokenizer> loadTokenizer(const std::filesystem::path &path,
                                  std::unique_ptr<GGUFFile> &keep) {
  Expected<GGUFFile> file = GGUFFile::open(path.string());
  if (!file)
    return file.error();
  keep = std::make_unique<GGUFFile>(file.take());
  return Tokenizer::fromGGUF(*keep, path.filename().string());
}

class VocabFileTest : public ::testing::TestWithParam<const char *> {};

TEST_P(VocabFileTest, MatchesLlamaCpp) {
  const std::filesystem::path gguf =
      corpusDir() / "gguf" / "vocab" / GetParam();
  REQUIRE_FILE(gguf);
  std::unique_ptr<GGUFFile> file;
  Expected<Tokenizer> tok = loadTokenizer(gguf, file);
  ASSERT_TRUE(tok) << tok.message();
  std::vector<VocabCase> cases =
      readCases(gguf.string() + ".inp", gguf.string() + ".out");
  ASSERT_FALSE(cases.empty());
  size_t passed = 0;
  for (size_t i = 0; i < cases.size(); ++i) {
    std::vector<int32_t> got = tok->encode(cases[i].text, false);
    if (got == cases[i].ids)
      ++passed;
    else
      ADD_FAILURE() << GetParam() << " case " << i << " '" << cases[i].text
                    << "'\n  expected " << idList(cases[i].ids)
                    << "\n  got      " << idList(got);
  }
  EXPECT_EQ(passed, cases.size());
  std::cout << "[          ] " << GetParam() << ": " << passed << "/"
            << cases.size() << " cases match llama.cpp\n";
}

INSTANTIATE_TEST_SUITE_P(Corpus, VocabFileTest,
                         ::testing::Values("ggml-vocab-llama-spm.gguf",
                                           "ggml-vocab-gpt-2.gguf",
                                           "ggml-vocab-deepseek-coder.gguf",
                                           "ggml-vocab-bert-bge.gguf"),
                         [](const auto &info) {
                           std::string n = info.param;
                           n = n.substr(11, n.size() - 16); // ggml-vocab-X.gguf
                           for (char &c : n)
                             if (!isalnum(static_cast<unsigned char>(c)))
                               c = '_';
                           return n;
                         });

TEST(Tokenizer, VocabFilesDescribeThemselves) {
  const std::filesystem::path dir = corpusDir() / "gguf" / "vocab";
  REQUIRE_FILE(dir);
  std::unique_ptr<GGUFFile> f1, f2, f3, f4;
  Expected<Tokenizer> spm =
      loadTokenizer(dir / "ggml-vocab-llama-spm.gguf", f1);
  Expected<Tokenizer> gpt2 = loadTokenizer(dir / "ggml-vocab-gpt-2.gguf", f2);
  Expected<Tokenizer> ds =
      loadTokenizer(dir / "ggml-vocab-deepseek-coder.gguf", f3);
  Expected<Tokenizer> bert =
      loadTokenizer(dir / "ggml-vocab-bert-bge.gguf", f4);
  ASSERT_TRUE(spm && gpt2 && ds && bert);
  EXPECT_EQ(spm->model(), TokenizerModel::Llama);
  EXPECT_EQ(spm->vocabSize(), 32000u);
  EXPECT_EQ(spm->bosId(), 1);
  EXPECT_EQ(spm->eosId(), 2);
  EXPECT_EQ(gpt2->model(), TokenizerModel::GPT2);
  EXPECT_EQ(gpt2->preTokenizer(), PreTokenizer::GPT2);
  EXPECT_EQ(gpt2->mergeCount(), 50000u);
  EXPECT_EQ(gpt2->bosId(), 50256);
  EXPECT_EQ(ds->preTokenizer(), PreTokenizer::DeepSeekCoder);
  EXPECT_EQ(ds->bosId(), 32013);
  EXPECT_TRUE(ds->addsBos());
  EXPECT_EQ(bert->model(), TokenizerModel::Bert);
  EXPECT_EQ(bert->bosId(), 101);
  EXPECT_EQ(bert->separatorId(), 102);

  // The ids generation stops at, as llama.cpp's special_eog_ids: EOS;
  // deepseek-coder's is <｜end▁of▁sentence｜>; BERT has no EOS, but its
  // [PAD] is what llama.cpp takes for the FIM pad token.
  EXPECT_EQ(spm->endOfGeneration(), (std::vector<int32_t>{2}));
  EXPECT_EQ(gpt2->endOfGeneration(), (std::vector<int32_t>{50256}));
  EXPECT_EQ(ds->endOfGeneration(), (std::vector<int32_t>{32014}));
  EXPECT_EQ(bert->eosId(), -1);
  EXPECT_EQ(bert->endOfGeneration(), (std::vector<int32_t>{0}));
  EXPECT_TRUE(spm->endsGeneration(2));
  EXPECT_FALSE(spm->endsGeneration(1));

  // [CLS] ... [SEP] with special tokens, the BOS of deepseek-coder.
  EXPECT_EQ(bert->encode("Hello world", true),
            (std::vector<int32_t>{101, 7592, 2088, 102}));
  EXPECT_EQ(ds->encode("Hello", true).front(), 32013);

  // One digest per tokenizer, 64 hex digits, stable across loads.
  std::set<std::string> digests;
  for (const Expected<Tokenizer> *t : {&spm, &gpt2, &ds, &bert}) {
    EXPECT_EQ((*t)->sha256().size(), 64u);
    digests.insert((*t)->sha256());
  }
  EXPECT_EQ(digests.size(), 4u);
  std::unique_ptr<GGUFFile> again;
  Expected<Tokenizer> spm2 =
      loadTokenizer(dir / "ggml-vocab-llama-spm.gguf", again);
  ASSERT_TRUE(spm2);
  EXPECT_EQ(spm2->sha256(), spm->sha256());
}

TEST(Tokenizer, DecodeInvertsEncode) {
  const std::filesystem::path dir = corpusDir() / "gguf" / "vocab";
  REQUIRE_FILE(dir);
  std::unique_ptr<GGUFFile> f1, f2;
  Expected<Tokenizer> spm =
      loadTokenizer(dir / "ggml-vocab-llama-spm.gguf", f1);
  Expected<Tokenizer> gpt2 = loadTokenizer(dir / "ggml-vocab-gpt-2.gguf", f2);
  ASSERT_TRUE(spm && gpt2);
  const std::string text = "Hello, y'all! How are you \xF0\x9F\x98\x81 ?\n\tok";
  Expected<std::string> back = spm->decode(spm->encode(text, false));
  ASSERT_TRUE(back) << back.message();
  EXPECT_EQ(*back, text);
  back = gpt2->decode(gpt2->encode("Hello world\n  x", false));
  ASSERT_TRUE(back) << back.message();
  EXPECT_EQ(*back, "Hello world\n  x");
  // The BOS renders only when asked to.
  back = spm->decode(spm->encode("hi", true), /*renderSpecial=*/false);
  ASSERT_TRUE(back);
  EXPECT_EQ(*back, " hi");
  back = spm->decode(spm->encode("hi", true));
  ASSERT_TRUE(back);
  EXPECT_EQ(*back, "<s> hi");
  Expected<std::string> bad = spm->decode({5, 32000});
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.message(), "token id 32000 is outside the vocabulary (32000 "
                           "tokens)");
}

TEST(Tokenizer, ArbitraryBytesGiveIdsInRange) {
  // Random bytes (invalid UTF-8 included) through every vocabulary: no
  // crash, every id a token, and the same ids on a second run.
  const std::filesystem::path dir = corpusDir() / "gguf" / "vocab";
  REQUIRE_FILE(dir);
  const char *names[] = {"ggml-vocab-llama-spm.gguf", "ggml-vocab-gpt-2.gguf",
                         "ggml-vocab-deepseek-coder.gguf",
                         "ggml-vocab-bert-bge.gguf"};
  const std::string pool[] = {" ",
                              "  ",
                              "\n",
                              "\t",
                              "a",
                              "Z",
                              "7",
                              "'s",
                              "!",
                              "\xC3\xBC",
                              "\xE2\x96\x81",
                              "\xE4\xB8\xAD",
                              "\xF0\x9F\x98\x81",
                              "\xE3\x80\x80",
                              "\xC2\xA0",
                              "\x80",
                              "\xFF",
                              "\xC3",
                              "\xF7\xBF\xBF\xBF",
                              std::string(1, '\0'),
                              "\xCC\x81",
                              "[CLS]",
                              "<s>",
                              "<|endoftext|>"};
  for (const char *name : names) {
    std::unique_ptr<GGUFFile> file;
    Expected<Tokenizer> tok = loadTokenizer(dir / name, file);
    ASSERT_TRUE(tok) << tok.message();
    std::mt19937 rng(20251201);
    for (int round = 0; round < 200; ++round) {
      std::string text;
      int parts = static_cast<int>(rng() % 24);
      for (int i = 0; i < parts; ++i)
        text += pool[rng() % (sizeof(pool) / sizeof(pool[0]))];
      for (bool special : {false, true}) {
        std::vector<int32_t> ids = tok->encode(text, special);
        for (int32_t id : ids)
          ASSERT_TRUE(id >= 0 && static_cast<size_t>(id) < tok->vocabSize())
              << name << ": id " << id << " for " << idList(ids);
        EXPECT_EQ(ids, tok->encode(text, special));
        EXPECT_TRUE(tok->decode(ids));
      }
    }
  }
}

TEST(Tokenizer, TinyLlamaPrompt) {
  const std::filesystem::path gguf =
      corpusDir() / "gguf" / "tiny_llama" / "tiny-llama-F32.gguf";
  REQUIRE_FILE(gguf);
  std::unique_ptr<GGUFFile> file;
  Expected<Tokenizer> tok = loadTokenizer(gguf, file);
  ASSERT_TRUE(tok) << tok.message();
  EXPECT_EQ(tok->vocabSize(), 384u);
  EXPECT_EQ(tok->encode("hello world, the", true),
            (std::vector<int32_t>{1, 358, 362, 368, 347}));
  EXPECT_EQ(tok->encode("hello world, the", false),
            (std::vector<int32_t>{358, 362, 368, 347}));
  // A character the vocabulary lacks falls back to its UTF-8 bytes.
  std::vector<int32_t> ids = tok->encode("\xC3\xA9", false); // é
  EXPECT_EQ(ids, (std::vector<int32_t>{259, 3 + 0xC3, 3 + 0xA9}));
}

TEST(Tokenizer, OpensAGGUFFileByPath) {
  const std::filesystem::path gguf =
      corpusDir() / "gguf" / "tiny_llama" / "tiny-llama-F32.gguf";
  REQUIRE_FILE(gguf);
  Expected<Tokenizer> tok = Tokenizer::open(gguf.string());
  ASSERT_TRUE(tok) << tok.message();
  EXPECT_EQ(tok->encode("hello world, the", true),
            (std::vector<int32_t>{1, 358, 362, 368, 347}));
  // Not .gguf: read as a Hugging Face tokenizer.json or its directory.
  Expected<Tokenizer> missing = Tokenizer::open("/nonexistent/tokenizer.json");
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.message().find("/nonexistent/tokenizer.json"),
            std::string::npos)
      << missing.message();
  Expected<Tokenizer> noGGUF = Tokenizer::open("/nonexistent/model.gguf");
  ASSERT_FALSE(noGGUF);
  EXPECT_NE(noGGUF.message().find("/nonexistent/model.gguf"), std::string::npos)
      << noGGUF.message();
}

//===----------------------------------------------------------------------===//
// Crafted metadata
//===----------------------------------------------------------------------===//

/// A GGUF v3 file with metadata only.
class MetadataWriter {
public:
  MetadataWriter &str(const std::string &key, const std::string &v) {
    begin(key, 8);
    putString(v);
    return *this;
  }
  MetadataWriter &u32(const std::string &key, uint32_t v) {
    begin(key, 4);
    put(v);
    return *this;
  }
  MetadataWriter &i32(const std::string &key, int32_t v) {
    begin(key, 5);
    put(v);
    return *this;
  }
  MetadataWriter &boolean(const std::string &key, bool v) {
    begin(key, 7);
    bytes.push_back(v ? 1 : 0);
    return *this;
  }
  MetadataWriter &strings(const std::string &key,
                          const std::vector<std::string> &v) {
    begin(key, 9);
    put(uint32_t(8));
    put(uint64_t(v.size()));
    for (const std::string &s : v)
      putString(s);
    return *this;
  }
  MetadataWriter &floats(const std::string &key, const std::vector<float> &v) {
    begin(key, 9);
    put(uint32_t(6));
    put(uint64_t(v.size()));
    for (float f : v)
      put(f);
    return *this;
  }
  MetadataWriter &ints(const std::string &key, const std::vector<int32_t> &v) {
    begin(key, 9);
    put(uint32_t(5));
    put(uint64_t(v.size()));
    for (int32_t i : v)
      put(i);
    return *this;
  }

  /// Parses the file and builds its tokenizer.
  Expected<Tokenizer> tokenizer() {
    std::vector<uint8_t> file;
    auto append = [&](const void *p, size_t n) {
      const auto *c = static_cast<const uint8_t *>(p);
      file.insert(file.end(), c, c + n);
    };
    append("GGUF", 4);
    uint32_t version = 3;
    uint64_t tensors = 0;
    append(&version, 4);
    append(&tensors, 8);
    append(&count, 8);
    file.insert(file.end(), bytes.begin(), bytes.end());
    storage = std::move(file);
    Expected<GGUFFile> parsed =
        GGUFFile::fromBuffer(storage.data(), storage.size(), "crafted.gguf");
    if (!parsed)
      return parsed.error();
    gguf = std::make_unique<GGUFFile>(parsed.take());
    return Tokenizer::fromGGUF(*gguf, "crafted.gguf");
  }

private:
  template <typename T> void put(T v) {
    uint8_t b[sizeof(T)];
    std::memcpy(b, &v, sizeof(T));
    bytes.insert(bytes.end(), b, b + sizeof(T));
  }
  void putString(const std::string &s) {
    put(uint64_t(s.size()));
    bytes.insert(bytes.end(), s.begin(), s.end());
  }
  void begin(const std::string &key, uint32_t type) {
    putString(key);
    put(type);
    ++count;
  }
  std::vector<uint8_t> bytes, storage;
  uint64_t count = 0;
  std::unique_ptr<GGUFFile> gguf;
};

/// A four-token SentencePiece vocabulary with everything consistent.
MetadataWriter llamaVocab() {
  MetadataWriter w;
  w.str("tokenizer.ggml.model", "llama")
      .strings("tokenizer.ggml.tokens", {"<unk>", "<s>", "</s>",
                                         "\xE2\x96\x81"
                                         "a"})
      .floats("tokenizer.ggml.scores", {0, 0, 0, -1})
      .ints("tokenizer.ggml.token_type", {2, 3, 3, 1});
  return w;
}

/// A byte-level BPE vocabulary over "a", "b", "ab".
MetadataWriter gpt2Vocab(const std::string &pre = "gpt-2") {
  MetadataWriter w;
  w.str("tokenizer.ggml.model", "gpt2")
      .str("tokenizer.ggml.pre", pre)
      .strings("tokenizer.ggml.tokens", {"a", "b", "ab", "<|endoftext|>"})
      .ints("tokenizer.ggml.token_type", {1, 1, 1, 3})
      .strings("tokenizer.ggml.merges", {"a b"})
      .u32("tokenizer.ggml.bos_token_id", 3)
      .u32("tokenizer.ggml.eos_token_id", 3);
  return w;
}

std::string failure(MetadataWriter &w) {
  Expected<Tokenizer> t = w.tokenizer();
  return t ? std::string("(accepted)") : t.message();
}
std::string failure(MetadataWriter &&w) { return failure(w); }

TEST(TokenizerMetadata, CraftedVocabulariesWork) {
  Expected<Tokenizer> spm = llamaVocab().tokenizer();
  ASSERT_TRUE(spm) << spm.message();
  EXPECT_EQ(spm->encode("a", true), (std::vector<int32_t>{1, 3}));
  Expected<Tokenizer> bpe = gpt2Vocab().tokenizer();
  ASSERT_TRUE(bpe) << bpe.message();
  EXPECT_EQ(bpe->encode("abab", false), (std::vector<int32_t>{2, 2}));
  EXPECT_EQ(bpe->encode("ab", true), (std::vector<int32_t>{2}));
  // A missing pre-tokenizer is llama.cpp's "default".
  MetadataWriter noPre;
  noPre.str("tokenizer.ggml.model", "gpt2")
      .strings("tokenizer.ggml.tokens", {"a", "b", "ab"})
      .strings("tokenizer.ggml.merges", {"a b"});
  Expected<Tokenizer> dflt = noPre.tokenizer();
  ASSERT_TRUE(dflt) << dflt.message();
  EXPECT_EQ(dflt->preTokenizer(), PreTokenizer::Default);
  EXPECT_EQ(dflt->encode("ab", false), (std::vector<int32_t>{2}));
}

/// llama.cpp's end-of-generation set: EOS, the EOT and EOM ids the
/// metadata names, end-of-turn texts, the FIM pad/repo/separator tokens,
/// and its two exceptions.
TEST(TokenizerMetadata, EndOfGenerationIsLlamaCppsSet) {
  auto vocab = [](std::vector<std::string> extra) {
    std::vector<std::string> tokens = {"a", "b", "ab", "<|endoftext|>"};
    tokens.insert(tokens.end(), extra.begin(), extra.end());
    MetadataWriter w;
    w.str("tokenizer.ggml.model", "gpt2")
        .str("tokenizer.ggml.pre", "gpt-2")
        .strings("tokenizer.ggml.tokens", tokens)
        .strings("tokenizer.ggml.merges", {"a b"})
        .u32("tokenizer.ggml.eos_token_id", 3);
    return w;
  };
  // Llama 3 Instruct: <|end_of_text|>, <|eom_id|> and <|eot_id|> all stop,
  // whichever one EOS names; plain tokens do not.
  {
    auto t = vocab({"<|end_of_text|>", "<|eom_id|>", "<|eot_id|>", "<x>"})
                 .tokenizer();
    ASSERT_TRUE(t) << t.message();
    EXPECT_EQ(t->endOfGeneration(), (std::vector<int32_t>{3, 4, 5, 6}));
    EXPECT_FALSE(t->endsGeneration(7));
  }
  // EOT and EOM named by the metadata; the FIM pad and file separator by
  // their texts, a FIM repo id by the metadata (not its text).
  {
    auto w = vocab({"<|fim_pad|>", "<|file_sep|>", "<|fim_repo|>", "<t>"});
    w.u32("tokenizer.ggml.eot_token_id", 1)
        .u32("tokenizer.ggml.eom_token_id", 2)
        .u32("tokenizer.ggml.fim_rep_token_id", 7);
    auto t = w.tokenizer();
    ASSERT_TRUE(t) << t.message();
    EXPECT_EQ(t->endOfGeneration(), (std::vector<int32_t>{1, 2, 3, 4, 5, 7}));
  }
  // gpt-oss: <|end|> ends a message, not the generation, with <|return|>
  // and <|call|> in the vocabulary; it is then user-defined text, parsed
  // out of plain text as a token.
  {
    auto t = vocab({"<|end|>", "<|return|>", "<|call|>"}).tokenizer();
    ASSERT_TRUE(t) << t.message();
    EXPECT_EQ(t->endOfGeneration(), (std::vector<int32_t>{3, 5, 6}));
    EXPECT_EQ(t->encode("a<|end|>b", false), (std::vector<int32_t>{0, 4, 1}));
    auto alone = vocab({"<|end|>"}).tokenizer();
    ASSERT_TRUE(alone) << alone.message();
    EXPECT_EQ(alone->endOfGeneration(), (std::vector<int32_t>{3, 4}));
  }
  // gemma4: with <|tool_response>, </s> is text.
  {
    auto t = vocab({"</s>", "<|tool_response>"}).tokenizer();
    ASSERT_TRUE(t) << t.message();
    EXPECT_EQ(t->endOfGeneration(), (std::vector<int32_t>{3, 5}));
  }
}

TEST(TokenizerMetadata, UnknownModelOrPreTokenizer) {
  MetadataWriter w;
  w.str("tokenizer.ggml.model", "t5").strings("tokenizer.ggml.tokens", {"a"});
  EXPECT_EQ(failure(w), "crafted.gguf: tokenizer.ggml.model = 't5' is not "
                        "supported (supported: llama, gpt2, bert)");
  EXPECT_EQ(failure(gpt2Vocab("falcon")),
            "crafted.gguf: tokenizer.ggml.pre = 'falcon' is not supported for "
            "tokenizer.ggml.model = gpt2 (supported: default, gpt-2, "
            "deepseek-coder, llama-bpe, qwen2)");
  MetadataWriter none;
  none.strings("tokenizer.ggml.tokens", {"a"});
  EXPECT_EQ(failure(none), "crafted.gguf: tokenizer.ggml.model is missing "
                           "(supported: llama, gpt2, bert)");
  MetadataWriter wrongType;
  wrongType.u32("tokenizer.ggml.model", 1);
  EXPECT_EQ(failure(wrongType), "crafted.gguf: tokenizer.ggml.model: expected "
                                "a STRING, found UINT32");
}

TEST(TokenizerMetadata, ArraysMustAgree) {
  MetadataWriter w;
  w.str("tokenizer.ggml.model", "llama")
      .strings("tokenizer.ggml.tokens", {"<unk>", "<s>", "</s>"})
      .floats("tokenizer.ggml.scores", {0, 0});
  EXPECT_EQ(failure(w), "crafted.gguf: tokenizer.ggml.scores has 2 entries "
                        "but tokenizer.ggml.tokens has 3");
  MetadataWriter types;
  types.str("tokenizer.ggml.model", "llama")
      .strings("tokenizer.ggml.tokens", {"<unk>", "<s>", "</s>"})
      .ints("tokenizer.ggml.token_type", {2, 3, 3, 1});
  EXPECT_EQ(failure(types), "crafted.gguf: tokenizer.ggml.token_type has 4 "
                            "entries but tokenizer.ggml.tokens has 3");
  MetadataWriter badType;
  badType.str("tokenizer.ggml.model", "llama")
      .strings("tokenizer.ggml.tokens", {"<unk>", "<s>", "</s>"})
      .ints("tokenizer.ggml.token_type", {2, 3, 9});
  EXPECT_EQ(failure(badType), "crafted.gguf: tokenizer.ggml.token_type[2] = "
                              "9 is not a token type (0 undefined .. 6 byte)");
  MetadataWriter byteType;
  byteType.str("tokenizer.ggml.model", "llama")
      .strings("tokenizer.ggml.tokens", {"<unk>", "<s>", "</s>", "x"})
      .ints("tokenizer.ggml.token_type", {2, 3, 3, 6});
  EXPECT_EQ(failure(byteType), "crafted.gguf: tokenizer.ggml.token_type[3] is "
                               "BYTE but token 3 is 'x', not <0xHH>");
  MetadataWriter scoreType;
  scoreType.str("tokenizer.ggml.model", "llama")
      .strings("tokenizer.ggml.tokens", {"<unk>", "<s>", "</s>"})
      .strings("tokenizer.ggml.scores", {"0", "0", "0"});
  EXPECT_EQ(failure(scoreType), "crafted.gguf: tokenizer.ggml.scores: "
                                "expected an ARRAY of FLOAT32, found an ARRAY "
                                "of STRING");
  MetadataWriter tokensType;
  tokensType.str("tokenizer.ggml.model", "llama")
      .ints("tokenizer.ggml.tokens", {1, 2});
  EXPECT_EQ(failure(tokensType), "crafted.gguf: tokenizer.ggml.tokens: "
                                 "expected an ARRAY of STRING, found an ARRAY "
                                 "of INT32");
  MetadataWriter dup;
  dup.str("tokenizer.ggml.model", "llama")
      .strings("tokenizer.ggml.tokens", {"<unk>", "<s>", "</s>", "<s>"});
  EXPECT_EQ(failure(dup), "crafted.gguf: tokenizer.ggml.tokens: token '<s>' "
                          "appears twice (ids 1 and 3)");
  MetadataWriter missing;
  missing.str("tokenizer.ggml.model", "llama");
  EXPECT_EQ(failure(missing), "crafted.gguf: tokenizer.ggml.tokens is missing");
}

TEST(TokenizerMetadata, MergesAndIdsAreChecked) {
  MetadataWriter noMerges;
  noMerges.str("tokenizer.ggml.model", "gpt2")
      .str("tokenizer.ggml.pre", "gpt-2")
      .strings("tokenizer.ggml.tokens", {"a", "b"});
  EXPECT_EQ(failure(noMerges), "crafted.gguf: tokenizer.ggml.merges is "
                               "missing (a gpt2 tokenizer needs its BPE "
                               "merges)");
  MetadataWriter badMerge;
  badMerge.str("tokenizer.ggml.model", "gpt2")
      .str("tokenizer.ggml.pre", "gpt-2")
      .strings("tokenizer.ggml.tokens", {"a", "b", "ab"})
      .strings("tokenizer.ggml.merges", {"a b", "ab"});
  EXPECT_EQ(failure(badMerge), "crafted.gguf: tokenizer.ggml.merges[1] = 'ab' "
                               "is not two parts separated by one space");
  MetadataWriter threeParts;
  threeParts.str("tokenizer.ggml.model", "gpt2")
      .strings("tokenizer.ggml.tokens", {"a", "b", "ab"})
      .strings("tokenizer.ggml.merges", {"a b c"});
  EXPECT_EQ(failure(threeParts), "crafted.gguf: tokenizer.ggml.merges[0] = "
                                 "'a b c' is not two parts separated by one "
                                 "space");

  MetadataWriter bos = llamaVocab();
  bos.u32("tokenizer.ggml.bos_token_id", 4);
  EXPECT_EQ(failure(bos), "crafted.gguf: tokenizer.ggml.bos_token_id = 4 is "
                          "not a token id (4 tokens)");
  MetadataWriter negative = llamaVocab();
  negative.i32("tokenizer.ggml.eos_token_id", -1);
  EXPECT_EQ(failure(negative), "crafted.gguf: tokenizer.ggml.eos_token_id = "
                               "-1 is not a token id (4 tokens)");
  MetadataWriter strId = llamaVocab();
  strId.str("tokenizer.ggml.unknown_token_id", "0");
  EXPECT_EQ(failure(strId), "crafted.gguf: tokenizer.ggml.unknown_token_id: "
                            "expected an integer token id, found STRING");
  MetadataWriter flag = llamaVocab();
  flag.u32("tokenizer.ggml.add_bos_token", 1);
  EXPECT_EQ(failure(flag), "crafted.gguf: tokenizer.ggml.add_bos_token: "
                           "expected a BOOL, found UINT32");

  // add_bos_token without a BOS: the gpt2 default (11) is not a token here.
  MetadataWriter noBos;
  noBos.str("tokenizer.ggml.model", "gpt2")
      .strings("tokenizer.ggml.tokens", {"a", "b", "ab"})
      .strings("tokenizer.ggml.merges", {"a b"})
      .boolean("tokenizer.ggml.add_bos_token", true);
  EXPECT_EQ(failure(noBos), "crafted.gguf: tokenizer.ggml.add_bos_token is "
                            "true but there is no tokenizer.ggml.bos_token_id");
  MetadataWriter bert;
  bert.str("tokenizer.ggml.model", "bert")
      .strings("tokenizer.ggml.tokens", {"[PAD]", "\xE2\x96\x81"
                                                  "a"});
  EXPECT_EQ(failure(bert), "crafted.gguf: a bert tokenizer needs [CLS], "
                           "[SEP] and [UNK] ids (tokenizer.ggml.cls_token_id "
                           "or bos_token_id, seperator_token_id, "
                           "unknown_token_id)");
}

} // namespace
