//===- ManifestTest.cpp - manifest.json: round trip and strict parsing ----===//

#include "ArtifactTestSupport.h"

using namespace arttest;

namespace {

json fullJson() { return toJson(fullManifest()); }

/// Parses `j` and expects an error containing `needle`.
void expectRejected(const json &j, const std::string &needle) {
  auto m = manifestFromJson(j);
  ASSERT_FALSE(m) << "accepted; expected: " << needle;
  EXPECT_NE(m.message().find(needle), std::string::npos)
      << "message: " << m.message() << "\nexpected to contain: " << needle;
}

TEST(Manifest, FullManifestIsValid) {
  Status s = validateManifest(fullManifest());
  EXPECT_TRUE(s) << s.message();
}

TEST(Manifest, RoundTripThroughJson) {
  Manifest m = fullManifest();
  auto back = manifestFromJson(toJson(m));
  ASSERT_TRUE(back) << back.message();
  EXPECT_EQ(*back, m);
  // Equality really compares: a changed field is seen.
  Manifest other = m;
  other.files[0].bytes += 1;
  EXPECT_NE(*back, other);
}

TEST(Manifest, RoundTripThroughText) {
  Manifest m = fullManifest();
  auto text = serializeManifest(m);
  ASSERT_TRUE(text) << text.message();
  EXPECT_EQ(text->back(), '\n');
  auto back = parseManifest(*text);
  ASSERT_TRUE(back) << back.message();
  EXPECT_EQ(*back, m);
  // Optional fields absent also round-trip (and stay absent).
  m.model.tokenizerSha256.reset();
  m.quantization.configSha256.reset();
  m.provenance.calibrationManifestSha256.reset();
  m.kernels.clear();
  std::get<QuantizedTensor>(m.tensors[0].data).zeros.reset();
  auto &d = std::get<QuantizedTensor>(m.tensors[0].data).logical.descriptor;
  d.scheme = QuantScheme::Symmetric;
  d.zeroPoint = ZeroPointKind::None;
  json j = toJson(m);
  EXPECT_FALSE(j["model"].contains("tokenizer_sha256"));
  EXPECT_FALSE(j["tensors"][0].contains("zeros"));
  auto back2 = manifestFromJson(j);
  ASSERT_TRUE(back2) << back2.message();
  EXPECT_EQ(*back2, m);
}

TEST(Manifest, EmitsSeparateVersions) {
  json j = fullJson();
  EXPECT_EQ(j["versions"],
            json({{"container_profile", "qtensor.safetensors.v1"},
                  {"artifact_schema", 2},
                  {"packing_layout", 1},
                  {"graph", 1},
                  {"runtime", 1},
                  {"kernel_abi", 2}}));
}

TEST(Manifest, UnsupportedVersionsAreRejected) {
  for (auto [key, reads] : {std::pair{"artifact_schema", 2},
                            {"packing_layout", 1},
                            {"graph", 1},
                            {"runtime", 1},
                            {"kernel_abi", 2}}) {
    json j = fullJson();
    j["versions"][key] = 9;
    expectRejected(j, std::string("manifest.versions.") + key +
                          ": unsupported version 9 (this build reads " +
                          std::to_string(reads) + ")");
    j["versions"][key] = -1;
    expectRejected(j, std::string("manifest.versions.") + key +
                          ": unsupported version -1");
    j["versions"][key] = "1";
    expectRejected(j, std::string("manifest.versions.") + key +
                          ": expected an integer, got string");
  }
  json j = fullJson();
  j["versions"]["container_profile"] = "qtensor.safetensors.v2";
  expectRejected(j, "manifest.versions.container_profile: unsupported "
                    "container profile \"qtensor.safetensors.v2\" (this "
                    "build reads qtensor.safetensors.v1)");
}

TEST(Manifest, VersionIsCheckedBeforeUnknownFields) {
  // A future schema may add fields; the version is the real reason.
  json j = fullJson();
  j["versions"]["artifact_schema"] = 9;
  j["something_new"] = true;
  expectRejected(j, "manifest.versions.artifact_schema: unsupported version 9");
}

TEST(Manifest, ValidateRejectsUnsupportedVersionsToo) {
  Manifest m = fullManifest();
  m.versions.kernelAbi = 3;
  EXPECT_ERROR_CONTAINS(validateManifest(m),
                        "manifest.versions.kernel_abi: unsupported version 3 "
                        "(this build reads 2)");
}

TEST(Manifest, UnknownFieldsAreRejectedAtEveryLevel) {
  const std::vector<std::pair<json::json_pointer, std::string>> cases = {
      {json::json_pointer(""), "manifest: unknown field \"extra\""},
      {json::json_pointer("/versions"), "manifest.versions: unknown field"},
      {json::json_pointer("/model"), "manifest.model: unknown field"},
      {json::json_pointer("/quantization"),
       "manifest.quantization: unknown field"},
      {json::json_pointer("/topology"), "manifest.topology: unknown field"},
      {json::json_pointer("/files/0"), "manifest.files[0]: unknown field"},
      {json::json_pointer("/tensors/0"), "manifest.tensors[0]: unknown field"},
      {json::json_pointer("/tensors/1"), "manifest.tensors[1]: unknown field"},
      {json::json_pointer("/tensors/0/codes"),
       "manifest.tensors[0].codes: unknown field"},
      {json::json_pointer("/tensors/0/logical"),
       "manifest.tensors[0].logical: unknown field"},
      {json::json_pointer("/tensors/0/logical/descriptor"),
       "manifest.tensors[0].logical.descriptor: unknown field"},
      {json::json_pointer("/kernels/0"), "manifest.kernels[0]: unknown field"},
      {json::json_pointer("/provenance"), "manifest.provenance: unknown field"},
      {json::json_pointer("/provenance/converter"),
       "manifest.provenance.converter: unknown field"},
  };
  for (const auto &[where, needle] : cases) {
    json j = fullJson();
    j[where]["extra"] = 1;
    expectRejected(j, needle);
  }
  // The free-form objects take anything.
  json j = fullJson();
  j["quantization"]["config"]["anything"] = {{"nested", {1, 2}}};
  auto m = manifestFromJson(j);
  ASSERT_TRUE(m) << m.message();
  EXPECT_EQ(m->quantization.config["anything"]["nested"][1], 2);
}

TEST(Manifest, MissingRequiredFieldsNameTheirPath) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"/versions", "manifest.versions: required field is missing"},
      {"/versions/graph", "manifest.versions.graph: required field is missing"},
      {"/model", "manifest.model: required field is missing"},
      {"/model/architecture",
       "manifest.model.architecture: required field is missing"},
      {"/quantization/config",
       "manifest.quantization.config: required field is missing"},
      {"/topology/ep", "manifest.topology.ep: required field is missing"},
      {"/files", "manifest.files: required field is missing"},
      {"/files/2/sha256",
       "manifest.files[2].sha256: required field is missing"},
      {"/tensors/0/scales",
       "manifest.tensors[0].scales: required field is missing"},
      {"/tensors/0/zeros",
       "manifest.tensors[0].zeros: required field is missing (zero_point "
       "\"integer\")"},
      {"/tensors/1/shape", "manifest.tensors[1].shape: required field is "
                           "missing"},
      {"/tensors/0/logical/descriptor/scheme",
       "manifest.tensors[0].logical.descriptor.scheme: required field is "
       "missing"},
      {"/kernels", "manifest.kernels: required field is missing"},
      {"/kernels/0/registry_id",
       "manifest.kernels[0].registry_id: required field is missing"},
      {"/kernels/0/launch/block",
       "manifest.kernels[0].launch.block: required field is missing"},
      {"/provenance/converter/revision",
       "manifest.provenance.converter.revision: required field is missing"},
      {"/provenance/created_by",
       "manifest.provenance.created_by: required field is missing"},
  };
  for (const auto &[pointer, needle] : cases) {
    json j = fullJson();
    json::json_pointer ptr(pointer);
    j[ptr.parent_pointer()].erase(ptr.back());
    expectRejected(j, needle);
  }
}

TEST(Manifest, WrongJsonTypesNameTheirPath) {
  const std::vector<std::tuple<std::string, json, std::string>> cases = {
      {"/files", json::object(),
       "manifest.files: expected an array, got object"},
      {"/files/0/bytes", "12",
       "manifest.files[0].bytes: expected an integer, "
       "got string"},
      {"/files/0/bytes", 1.5,
       "manifest.files[0].bytes: expected an integer, "
       "got number"},
      {"/files/0/bytes", -1, "manifest.files[0].bytes: -1 is outside"},
      {"/model/name", 3, "manifest.model.name: expected a string, got number"},
      {"/topology/tp", 0, "manifest.topology.tp: 0 is outside [1, 65536]"},
      {"/topology/pp", 70000, "manifest.topology.pp: 70000 is outside"},
      {"/tensors/1/shape/0", -2, "manifest.tensors[1].shape[0]: -2 is outside"},
      {"/tensors/1/dtype", "F17",
       "manifest.tensors[1].dtype: unknown dtype "
       "\"F17\""},
      {"/tensors/1/kind", "sparse",
       "manifest.tensors[1].kind: unknown tensor "
       "kind \"sparse\""},
      {"/files/0/role", "weights",
       "manifest.files[0].role: unknown role "
       "\"weights\""},
      {"/quantization/config", json::array(),
       "manifest.quantization.config: expected a JSON object, got array"},
      {"/kernels/0/code", "x",
       "manifest.kernels[0].code: expected a JSON object, got string"},
      {"/kernels/0/n", "8",
       "manifest.kernels[0].n: expected an integer, got string"},
      {"/tensors/0/logical/descriptor/code/bits", "4",
       "manifest.tensors[0].logical.descriptor.code.bits: expected an "
       "integer, got string"},
  };
  for (const auto &[pointer, value, needle] : cases) {
    json j = fullJson();
    j[json::json_pointer(pointer)] = value;
    expectRejected(j, needle);
  }
  expectRejected(json::array(), "manifest: expected a JSON object, got array");
}

TEST(Manifest, DigestsMustBeLowercaseHex) {
  for (const std::string &bad :
       {hexOf('A'), hexOf('a').substr(1), hexOf('g'), std::string()}) {
    json j = fullJson();
    j["files"][1]["sha256"] = bad;
    expectRejected(j, "manifest.files[1].sha256: expected 64 lowercase hex "
                      "digits");
    j = fullJson();
    j["provenance"]["source_checkpoint_sha256"] = bad;
    expectRejected(j, "manifest.provenance.source_checkpoint_sha256: expected "
                      "64 lowercase hex digits");
  }
  json j = fullJson();
  j["model"]["tokenizer_sha256"] = "xyz";
  expectRejected(j, "manifest.model.tokenizer_sha256: expected 64 lowercase");
  EXPECT_TRUE(isSha256Hex(hexOf('f')));
  EXPECT_FALSE(isSha256Hex(hexOf('F')));
}

TEST(Manifest, FilePathsFollowThePathRules) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"", "is empty"},
      {"/etc/passwd", "is absolute"},
      {"../model.safetensors", "'..' component"},
      {"a/../../b", "'..' component"},
      {"./model.safetensors", "'.' component"},
      {"a//b", "empty component"},
      {"dir/", "empty component"},
      {"a\\b", "backslash"},
      {std::string("a\0b", 3), "NUL"},
      {"a\nb", "control character"},
      {std::string(300, 'x'), "component of 300 bytes"},
      {"manifest.json", "is the manifest itself"},
      {".qtensor-tmp-1-2-model.safetensors", "names a temporary file"},
      {"sub/.qtensor-tmp-1-2-x", "names a temporary file"},
  };
  for (const auto &[path, needle] : cases) {
    json j = fullJson();
    j["files"][1]["path"] = path;
    expectRejected(j, "manifest.files[1].path: ");
    expectRejected(j, needle);
  }
}

TEST(Manifest, DuplicatesAreRejected) {
  json j = fullJson();
  j["files"][2]["path"] = "graph.mlir";
  j["kernels"] = json::array();
  expectRejected(j, "manifest.files[2].path: duplicate path \"graph.mlir\" "
                    "(also manifest.files[1])");

  j = fullJson();
  j["tensors"][1]["name"] = j["tensors"][0]["name"];
  expectRejected(j, "manifest.tensors[1].name: duplicate tensor "
                    "\"layers.0.mlp.up.weight\" (also manifest.tensors[0])");

  // Two entries claiming the same stored tensor in one file.
  j = fullJson();
  j["tensors"][1]["name"] = "layers.0.mlp.up.weight.scales";
  j["tensors"][1]["dtype"] = "F16";
  j["tensors"][1]["shape"] = {8, 2};
  expectRejected(j, "manifest.tensors[1]: stored tensor "
                    "\"layers.0.mlp.up.weight.scales\" in "
                    "\"model-00001.safetensors\" is also claimed by "
                    "manifest.tensors[0].scales");

  j = fullJson();
  j["kernels"].push_back(j["kernels"][0]);
  expectRejected(j, "manifest.kernels[1].id: duplicate kernel id");
}

TEST(Manifest, TensorsMustReferenceListedShards) {
  json j = fullJson();
  j["tensors"][1]["file"] = "model-00002.safetensors";
  expectRejected(j, "manifest.tensors[1].file: \"model-00002.safetensors\" is "
                    "not listed in manifest.files");
  j = fullJson();
  j["tensors"][1]["file"] = "graph.mlir";
  expectRejected(j, "manifest.tensors[1].file: \"graph.mlir\" has role "
                    "\"graph\"; tensors live in files with role \"shard\"");
  j = fullJson();
  j["kernels"][0]["file"] = "trace.json";
  expectRejected(j, "manifest.kernels[0].file: \"trace.json\" has role "
                    "\"trace\"; expected \"kernel\"");
  j = fullJson();
  j["kernels"][0]["file"] = "missing.ptx";
  expectRejected(j, "manifest.kernels[0].file: \"missing.ptx\" is not listed");
}

TEST(Manifest, QuantizedPartsMustMatchTheDescriptor) {
  json j = fullJson();
  j["tensors"][0]["scales"]["shape"] = {8, 3};
  expectRejected(j, "manifest.tensors[0].scales.shape: expected [8, 2] (the "
                    "descriptor's qparam shape for [8, 64]), got [8, 3]");

  j = fullJson();
  j["tensors"][0]["zeros"]["shape"] = {2, 8};
  expectRejected(j, "manifest.tensors[0].zeros.shape: expected [8, 2]");

  j = fullJson();
  j["tensors"][0]["scales"]["dtype"] = "BF16";
  expectRejected(j, "manifest.tensors[0].scales.dtype: the descriptor's "
                    "scale_dtype is f16 (F16), got BF16");

  j = fullJson();
  j["tensors"][0]["zeros"]["dtype"] = "F16";
  expectRejected(j, "manifest.tensors[0].zeros.dtype: integer zero-points "
                    "need an integer dtype, got F16");

  j = fullJson();
  j["tensors"][0]["codes"]["shape"] = {8, 64};
  expectRejected(j, "manifest.tensors[0].codes.shape: the logical layout "
                    "stores [8, 64] 4-bit codes in rows of ceil(cols * bits / "
                    "8) bytes: expected [8, 32], got [8, 64]");

  j = fullJson();
  j["tensors"][0]["codes"]["dtype"] = "I8";
  expectRejected(j, "manifest.tensors[0].codes.dtype: codes are stored as "
                    "packed bytes (U8), got I8");

  // A symmetric descriptor has no zero-point: declaring one is an error.
  j = fullJson();
  j["tensors"][0]["logical"]["descriptor"]["scheme"] = "symmetric";
  j["tensors"][0]["logical"]["descriptor"]["zero_point"] = "none";
  expectRejected(j, "manifest.tensors[0].zeros: the descriptor has no "
                    "zero-point");
  j["tensors"][0].erase("zeros");
  EXPECT_TRUE(manifestFromJson(j));

  // The descriptor itself is verified (errors re-rooted under the entry).
  j = fullJson();
  j["tensors"][0]["logical"]["descriptor"]["granularity"]["axis"] = 5;
  expectRejected(j, "manifest.tensors[0].logical: axis 5 is out of range for "
                    "a rank-2 tensor");
}

// ggml Q4_K kept as stored: first-level scale and min codes (U8) in the
// qparam shape, f16 d and dmin per super-block of 256.
TEST(Manifest, NestedQParamsStoreBothLevels) {
  json j = withNestedQ4K(fullJson());
  auto m = manifestFromJson(j);
  ASSERT_TRUE(m) << m.message();
  EXPECT_EQ(toJson(*m), j);
  auto roles = m->tensors[0].storedTensors();
  ASSERT_EQ(roles.size(), 5u);
  EXPECT_STREQ(roles[3].first, "super_scales");
  EXPECT_STREQ(roles[4].first, "super_zeros");

  json bad = j;
  bad["tensors"][0]["scales"]["dtype"] = "F32";
  expectRejected(bad, "manifest.tensors[0].scales.dtype: scale codes are "
                      "stored as U8, got F32");
  bad = j;
  bad["tensors"][0]["super_zeros"]["shape"] = {8, 16};
  expectRejected(bad, "manifest.tensors[0].super_zeros.shape: expected "
                      "[8, 2], got [8, 16]");
  bad = j;
  bad["tensors"][0].erase("super_scales");
  expectRejected(bad, "manifest.tensors[0].super_scales: required field is "
                      "missing (second-level scales of the nested "
                      "descriptor)");
  // A plain (one-level) descriptor declares no second level.
  bad = fullJson();
  bad["tensors"][0]["super_scales"] = j["tensors"][0]["super_scales"];
  expectRejected(bad, "manifest.tensors[0].super_scales: the descriptor has "
                      "no nested qparams");
}

TEST(Manifest, QuantizedCodesForOtherLayoutsNeedEnoughBytes) {
  Manifest m = fullManifest();
  auto &q = std::get<QuantizedTensor>(m.tensors[0].data);
  q.logical.layout.family = "marlin";
  q.logical.layout.tile = {8, 64};
  q.codes.shape = {256}; // 8 * 64 * 4 bits = 256 bytes
  EXPECT_TRUE(validateManifest(m)) << validateManifest(m).message();
  q.codes.shape = {255};
  EXPECT_ERROR_CONTAINS(validateManifest(m),
                        "manifest.tensors[0].codes.shape: [255] holds 255 "
                        "bytes but layout \"marlin\" needs at least 256");
}

TEST(Manifest, PaddedShapesMustNotOverflow) {
  Manifest m = fullManifest();
  auto &q = std::get<QuantizedTensor>(m.tensors[0].data);
  q.logical.shape = {INT64_MAX - 1};
  q.logical.descriptor.granularity = Granularity::PerTensor;
  q.logical.descriptor.axis = -1;
  q.logical.descriptor.groupSize = 0;
  q.logical.layout.family = "tiled";
  q.logical.layout.tile = {int64_t(1) << 62};
  q.logical.layout.padding = {2};
  q.codes.shape = {16};
  q.scales.shape = {};
  q.zeros->shape = {};
  EXPECT_FALSE(validateManifest(m));
}

TEST(Manifest, NulBytesAreRejected) {
  auto text = serializeManifest(fullManifest());
  ASSERT_TRUE(text) << text.message();
  std::string withNul = *text;
  withNul.insert(withNul.size() - 2, std::string("\0garbage", 8));
  EXPECT_ERROR_CONTAINS(parseManifest(withNul),
                        "manifest.json: NUL byte at offset ");
}

TEST(Manifest, ThreeBitRowsRoundUp) {
  Manifest m = fullManifest();
  auto &q = std::get<QuantizedTensor>(m.tensors[0].data);
  q.logical.shape = {8, 65};
  q.logical.descriptor.code.bits = 3;
  q.codes.shape = {8, 25}; // ceil(65 * 3 / 8) = 25
  q.scales.shape = {8, 3};
  q.zeros->shape = {8, 3};
  EXPECT_TRUE(validateManifest(m)) << validateManifest(m).message();
  q.codes.shape = {8, 24};
  EXPECT_ERROR_CONTAINS(validateManifest(m), "expected [8, 25], got [8, 24]");
}

TEST(Manifest, EmptyIdentifiersAreRejected) {
  Manifest m = fullManifest();
  m.model.architecture.clear();
  EXPECT_ERROR_CONTAINS(validateManifest(m),
                        "manifest.model.architecture: must not be empty");
  m = fullManifest();
  m.tensors[1].name.clear();
  EXPECT_ERROR_CONTAINS(validateManifest(m),
                        "manifest.tensors[1].name: must not be empty");
  m = fullManifest();
  m.provenance.converterName.clear();
  EXPECT_ERROR_CONTAINS(validateManifest(m),
                        "manifest.provenance.converter.name: must not be "
                        "empty");
}

TEST(Manifest, PlainShapesMustNotOverflow) {
  Manifest m = fullManifest();
  m.tensors[1].data = PlainTensor{DType::F64, {INT64_MAX, 4}};
  EXPECT_ERROR_CONTAINS(validateManifest(m),
                        "manifest.tensors[1].shape: [9223372036854775807, 4] "
                        "overflows 64-bit byte arithmetic");
}

TEST(ManifestText, RejectsDuplicateKeys) {
  std::string text = *serializeManifest(fullManifest());
  // Duplicate "name" inside the model object.
  size_t at = text.find("\"name\": \"tiny-llama\"");
  ASSERT_NE(at, std::string::npos);
  text.insert(at, "\"name\": \"other\", ");
  auto m = parseManifest(text, "dir/manifest.json");
  ASSERT_FALSE(m);
  EXPECT_EQ(m.message(),
            "dir/manifest.json: duplicate key \"name\" in one JSON object");
  // The same key in two different objects is fine (tested by the full
  // manifest: "name" appears in model, converter and tensors).
  EXPECT_TRUE(parseManifest(*serializeManifest(fullManifest())));
}

TEST(ManifestText, RejectsDeepNesting) {
  json j = fullJson();
  std::string text = j.dump();
  std::string deep(40, '[');
  deep += std::string(40, ']');
  size_t at = text.find("\"config\":{");
  ASSERT_NE(at, std::string::npos);
  text.insert(at + std::string("\"config\":{").size(),
              "\"deep\":" + deep + ",");
  auto m = parseManifest(text);
  ASSERT_FALSE(m);
  EXPECT_NE(m.message().find("JSON nesting deeper than 32 levels"),
            std::string::npos)
      << m.message();
  // Pathological depth is rejected without trouble.
  std::string huge(200000, '[');
  auto h = parseManifest(huge);
  EXPECT_FALSE(h);
}

TEST(ManifestText, RejectsSyntaxErrorsAndOversize) {
  auto m = parseManifest("{\"versions\": ", "x/manifest.json");
  ASSERT_FALSE(m);
  EXPECT_EQ(m.message().rfind("x/manifest.json: not valid JSON: ", 0), 0u)
      << m.message();
  auto bad = parseManifest("{\"a\": \"\xff\"}");
  EXPECT_FALSE(bad);
  std::string big(kMaxManifestBytes + 1, ' ');
  auto b = parseManifest(big);
  ASSERT_FALSE(b);
  EXPECT_NE(b.message().find("exceed the limit of 67108864"), std::string::npos)
      << b.message();
}

TEST(ManifestText, SerializeRejectsInvalidUtf8) {
  Manifest m = fullManifest();
  m.model.name = "bad\xff";
  auto text = serializeManifest(m);
  ASSERT_FALSE(text);
  EXPECT_NE(text.message().find("manifest: cannot serialize"),
            std::string::npos);
}

TEST(Manifest, StoredTensorsListRoles) {
  Manifest m = fullManifest();
  auto q = m.tensors[0].storedTensors();
  ASSERT_EQ(q.size(), 3u);
  EXPECT_STREQ(q[0].first, "codes");
  EXPECT_EQ(q[1].second.tensor, "layers.0.mlp.up.weight.scales");
  EXPECT_STREQ(q[2].first, "zeros");
  auto p = m.tensors[1].storedTensors();
  ASSERT_EQ(p.size(), 1u);
  EXPECT_STREQ(p[0].first, "data");
  EXPECT_EQ(p[0].second.tensor, "norm.weight");
  EXPECT_EQ(m.findFile("graph.mlir"), &m.files[1]);
  EXPECT_EQ(m.findTensor("nope"), nullptr);
}

TEST(Manifest, EmbeddingTablesAreReadByTheProgramNotBound) {
  // A quantized tensor says what reads it: "use" is absent for a linear's
  // weight (manifests before it stay the same bytes) and "embedding" for
  // the decoder program's table, which round-trips.
  Manifest m = fullManifest();
  EXPECT_FALSE(toJson(m)["tensors"][0].contains("use"));
  TensorEntry table;
  table.name = "token_embd.weight";
  table.file = m.tensors[0].file;
  table.data = quantizedParts(table.name, 8, 64);
  std::get<QuantizedTensor>(table.data).use = TensorUse::Embedding;
  m.tensors.push_back(table);
  json j = toJson(m);
  EXPECT_EQ(j["tensors"][2]["use"], "embedding");
  auto back = manifestFromJson(j);
  ASSERT_TRUE(back) << back.message();
  EXPECT_EQ(*back, m);
  EXPECT_TRUE(validateManifest(m)) << validateManifest(m).message();

  j["tensors"][2]["use"] = "head";
  expectRejected(j, "manifest.tensors[2].use: unknown tensor use \"head\"");
  j["tensors"][2]["use"] = 1;
  expectRejected(j, "manifest.tensors[2].use");

  // No op may bind the table: it is not a linear weight.
  Manifest bound = m;
  bound.bindings[0].op = table.name;
  Status s = validateManifest(bound);
  ASSERT_FALSE(s);
  EXPECT_NE(s.message().find("\"token_embd.weight\" is the embedding table, "
                             "not a linear weight an op may bind"),
            std::string::npos)
      << s.message();
}

} // namespace
