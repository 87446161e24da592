//===- InspectTest.cpp - Every corpus file, inspected ---------------------===//
//
// inspectPath on the shared corpus: each file's verdict is the manifest's
// (accept/reject; a reject marked lenient_ok may be accepted), and an
// accepted file lists exactly the manifest's tensors with their types,
// shapes, absolute offsets and byte sizes, measured by the corpus's own
// producers (llama.cpp, the safetensors reference), not by this reader.
//
//===----------------------------------------------------------------------===//

#include "qtensor/Inspect/Inspect.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstring>
#include <filesystem>
#include <fstream>

using namespace qtensor::inspect;
using json = nlohmann::json;
namespace fs = std::filesystem;

namespace {

const fs::path kCorpus = QTENSOR_CORPUS_DIR;

/// The corpus manifest, or null (the test skips) when the corpus is absent.
const json *corpusManifest() {
  static const json manifest = [] {
    std::ifstream in(kCorpus / "manifest.json");
    return in ? json::parse(in, nullptr, /*allow_exceptions=*/false)
              : json(nullptr);
  }();
  return manifest.is_object() ? &manifest : nullptr;
}

#define REQUIRE_CORPUS()                                                       \
  const json *manifest = corpusManifest();                                     \
  if (!manifest)                                                               \
    GTEST_SKIP() << "corpus absent: " << kCorpus.string();

/// The shape the report lists: GGUF in ne order (as the corpus spells it),
/// safetensors in C order (as the corpus spells it).
std::vector<int64_t> shapeOf(const json &tensor) {
  return tensor.at("shape").get<std::vector<int64_t>>();
}

TEST(InspectTest, EveryCorpusFileGetsTheManifestsVerdict) {
  REQUIRE_CORPUS();
  int checked = 0;
  for (const json &file : manifest->at("files")) {
    const std::string format = file.at("format");
    if (format != "gguf" && format != "safetensors")
      continue;
    const std::string rel = file.at("path");
    InspectReport r = inspectPath((kCorpus / rel).string());
    const bool accept = file.at("expect") == "accept";
    const bool lenient = file.value("lenient_ok", false);
    ++checked;
    if (!accept) {
      if (!lenient)
        EXPECT_FALSE(r.ok()) << rel << " was accepted: " << file.at("reason");
      if (!r.ok())
        EXPECT_FALSE(r.error->empty()) << rel;
      continue;
    }
    ASSERT_TRUE(r.ok()) << rel << ": " << r.error.value_or("");
    EXPECT_EQ(r.format, format) << rel;
    const json &want = file.at("tensors");
    ASSERT_EQ(r.tensors.size(), want.size()) << rel;
    for (size_t i = 0; i < want.size(); ++i) {
      // Both list tensors in file order.
      const InspectedTensor &got = r.tensors[i];
      const json &w = want[i];
      EXPECT_EQ(got.name, w.at("name")) << rel;
      EXPECT_EQ(got.shape, shapeOf(w)) << rel << " " << got.name;
      EXPECT_EQ(got.absoluteOffset, w.at("abs_offset").get<uint64_t>())
          << rel << " " << got.name;
      EXPECT_EQ(got.bytes, w.at("nbytes").get<uint64_t>())
          << rel << " " << got.name;
      EXPECT_EQ(got.type, w.at(format == "gguf" ? "type" : "dtype"))
          << rel << " " << got.name;
    }
    if (format == "gguf") {
      EXPECT_EQ(r.summary.at("version"), file.at("gguf_version")) << rel;
      EXPECT_EQ(r.summary.at("alignment"), file.at("alignment")) << rel;
      EXPECT_EQ(r.metadata.size(), file.at("n_kv").get<size_t>()) << rel;
    }
  }
  EXPECT_GE(checked, 60) << "the corpus lists fewer files than expected";
}

TEST(InspectTest, AnUnknownPathIsAnInvalidReportNotAFailure) {
  InspectReport r = inspectPath("/nonexistent/qtensor/model.gguf");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error->find("/nonexistent/qtensor/model.gguf"), std::string::npos)
      << *r.error;
  EXPECT_EQ(r.toJson().at("ok"), false);
  EXPECT_NE(r.toText().find("verdict:  INVALID: "), std::string::npos);
}

TEST(InspectTest, DecodesEveryReferencedTensorAsLlamaCppDoes) {
  REQUIRE_CORPUS();
  // Each dequant_refs entry: llama.cpp's own dequantization of a tensor,
  // raw float32 in ggml element order; decodeTensorToF32 must give the
  // same values, bit for bit.
  int compared = 0;
  for (const json &file : manifest->at("files")) {
    if (file.at("format") != "gguf" || !file.contains("dequant_refs"))
      continue;
    const fs::path path = kCorpus / file.at("path").get<std::string>();
    for (const json &ref : file.at("dequant_refs")) {
      const std::string name = ref.at("tensor");
      const fs::path refPath = kCorpus / ref.at("ref_path").get<std::string>();
      if (!fs::exists(refPath)) // the manifest lists some it does not ship
        continue;
      std::ifstream in(refPath, std::ios::binary);
      ASSERT_TRUE(in) << refPath;
      std::vector<float> want(ref.at("n_values").get<size_t>());
      in.read(reinterpret_cast<char *>(want.data()),
              std::streamsize(want.size() * sizeof(float)));
      ASSERT_TRUE(in) << ref.at("ref_path");
      auto got = decodeTensorToF32(path.string(), name);
      ASSERT_TRUE(bool(got)) << got.message();
      ASSERT_EQ(got->size(), want.size()) << path << " " << name;
      EXPECT_EQ(
          std::memcmp(got->data(), want.data(), want.size() * sizeof(float)), 0)
          << path << " " << name;
      ++compared;
    }
  }
  EXPECT_GE(compared, 5) << "the corpus ships fewer dequantization "
                            "references than expected";

  const fs::path f32 = kCorpus / "gguf/tiny_llama/tiny-llama-F32.gguf";
  auto missing = decodeTensorToF32(f32.string(), "no.such.tensor");
  ASSERT_FALSE(bool(missing));
  EXPECT_NE(missing.message().find("no tensor named \"no.such.tensor\""),
            std::string::npos)
      << missing.message();
}

} // namespace
