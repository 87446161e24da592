//===- ManifestSchemaTest.cpp - docs/manifest.schema.json vs the parser ---===//
//
// The schema must describe what manifestFromJson accepts. A small validator
// for the keywords the schema uses runs the schema over the writer's output
// and over mutations of it, and must agree with the parser on each; each
// required/optional list is checked against the parser by removing fields.
//
//===----------------------------------------------------------------------===//

#include "ArtifactTestSupport.h"

#include <functional>
#include <regex>

using namespace arttest;

namespace {

json loadSchema() {
  std::ifstream in(std::string(QTENSOR_DOCS_DIR) + "/manifest.schema.json");
  if (!in)
    return json();
  try {
    return json::parse(in);
  } catch (const std::exception &) {
    return json();
  }
}

/// Validates JSON against the subset of draft 2020-12 the schema uses:
/// $ref (local), type, const, enum, properties, required,
/// additionalProperties, items, maxItems, minLength, maxLength, pattern,
/// minimum, maximum, allOf, oneOf, not.
class MiniValidator {
public:
  explicit MiniValidator(const json &root) : root(root) {}

  /// "" when `value` is valid, else the first violation with its location.
  std::string validate(const json &value) const {
    return check(root, value, "manifest");
  }

  /// The schema (after $ref) for the object at a JSON pointer of an instance,
  /// or nullptr where it is not a single object schema.
  const json *resolve(const json &schema) const {
    const json *s = &schema;
    while (s->contains("$ref")) {
      std::string ref = (*s)["$ref"];
      if (ref.rfind("#", 0) != 0)
        return nullptr;
      s = &root.at(json::json_pointer(ref.substr(1)));
    }
    return s;
  }

private:
  static size_t codePoints(const std::string &s) {
    size_t n = 0;
    for (unsigned char c : s)
      n += (c & 0xC0) != 0x80;
    return n;
  }

  static bool hasType(const json &v, const std::string &type) {
    if (type == "object")
      return v.is_object();
    if (type == "array")
      return v.is_array();
    if (type == "string")
      return v.is_string();
    if (type == "integer")
      return v.is_number_integer();
    if (type == "number")
      return v.is_number();
    if (type == "boolean")
      return v.is_boolean();
    if (type == "null")
      return v.is_null();
    return false;
  }

  /// "type" is one name or a list of names.
  static bool matchesType(const json &v, const json &type) {
    if (!type.is_array())
      return hasType(v, type.get<std::string>());
    for (const json &t : type)
      if (hasType(v, t.get<std::string>()))
        return true;
    return false;
  }

  static bool jsonEqual(const json &a, const json &b) {
    // 1 and 1u are the same number.
    if (a.is_number_integer() && b.is_number_integer()) {
      if (a.is_number_unsigned() && b.is_number_unsigned())
        return a.get<uint64_t>() == b.get<uint64_t>();
      if (a.is_number_unsigned() || b.is_number_unsigned()) {
        const json &u = a.is_number_unsigned() ? a : b;
        const json &s = a.is_number_unsigned() ? b : a;
        return s.get<int64_t>() >= 0 &&
               static_cast<uint64_t>(s.get<int64_t>()) == u.get<uint64_t>();
      }
      return a.get<int64_t>() == b.get<int64_t>();
    }
    return a == b;
  }

  static bool lessThan(const json &a, const json &b) {
    // Numbers compared exactly when both are integers.
    if (a.is_number_integer() && b.is_number_integer()) {
      bool aNeg = !a.is_number_unsigned() && a.get<int64_t>() < 0;
      bool bNeg = !b.is_number_unsigned() && b.get<int64_t>() < 0;
      if (aNeg != bNeg)
        return aNeg;
      if (aNeg)
        return a.get<int64_t>() < b.get<int64_t>();
      return a.get<uint64_t>() < b.get<uint64_t>();
    }
    return a.get<double>() < b.get<double>();
  }

  std::string check(const json &schemaIn, const json &v,
                    const std::string &at) const {
    const json *sp = resolve(schemaIn);
    if (!sp)
      return at + ": unsupported $ref";
    const json &s = *sp;
    if (s.contains("type") && !matchesType(v, s["type"]))
      return at + ": not of type " + s["type"].dump();
    if (s.contains("const") && !jsonEqual(s["const"], v))
      return at + ": not the constant " + s["const"].dump();
    if (s.contains("enum")) {
      bool found = false;
      for (const json &e : s["enum"])
        found = found || jsonEqual(e, v);
      if (!found)
        return at + ": not in the enum";
    }
    if (v.is_string()) {
      std::string str = v.get<std::string>();
      if (s.contains("minLength") && codePoints(str) < s["minLength"])
        return at + ": shorter than minLength";
      if (s.contains("maxLength") && codePoints(str) > s["maxLength"])
        return at + ": longer than maxLength";
      if (s.contains("pattern")) {
        std::regex re(s["pattern"].get<std::string>(), std::regex::ECMAScript);
        if (!std::regex_search(str, re))
          return at + ": does not match " + s["pattern"].get<std::string>();
      }
    }
    if (v.is_number()) {
      if (s.contains("minimum") && lessThan(v, s["minimum"]))
        return at + ": below minimum";
      if (s.contains("maximum") && lessThan(s["maximum"], v))
        return at + ": above maximum";
    }
    if (v.is_array()) {
      if (s.contains("maxItems") && v.size() > s["maxItems"])
        return at + ": more than maxItems";
      if (s.contains("minItems") && v.size() < s["minItems"])
        return at + ": fewer than minItems";
      if (s.contains("items"))
        for (size_t i = 0; i < v.size(); ++i)
          if (std::string e =
                  check(s["items"], v[i], at + "[" + std::to_string(i) + "]");
              !e.empty())
            return e;
    }
    if (v.is_object()) {
      if (s.contains("required"))
        for (const json &key : s["required"])
          if (!v.contains(key.get<std::string>()))
            return at + "." + key.get<std::string>() + ": required";
      for (const auto &item : v.items()) {
        if (s.contains("properties") && s["properties"].contains(item.key())) {
          if (std::string e = check(s["properties"][item.key()], item.value(),
                                    at + "." + item.key());
              !e.empty())
            return e;
        } else if (s.contains("additionalProperties") &&
                   s["additionalProperties"] == false) {
          return at + ": additional property " + item.key();
        }
      }
    }
    if (s.contains("allOf"))
      for (const json &sub : s["allOf"])
        if (std::string e = check(sub, v, at); !e.empty())
          return e;
    if (s.contains("oneOf")) {
      int matches = 0;
      std::string last;
      for (const json &sub : s["oneOf"]) {
        std::string e = check(sub, v, at);
        matches += e.empty();
        if (!e.empty())
          last = e;
      }
      if (matches != 1)
        return at + ": matches " + std::to_string(matches) +
               " oneOf branches (" + last + ")";
    }
    if (s.contains("not") && check(s["not"], v, at).empty())
      return at + ": matches a 'not' schema";
    return "";
  }

  const json &root;
};

class ManifestSchema : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_TRUE(schema.is_object())
        << "docs/manifest.schema.json is missing or not valid JSON ("
        << QTENSOR_DOCS_DIR << ")";
  }
  json schema = loadSchema();
};

TEST_F(ManifestSchema, IsDraft202012) {
  EXPECT_EQ(schema["$schema"], "https://json-schema.org/draft/2020-12/schema");
  EXPECT_EQ(schema["type"], "object");
  EXPECT_EQ(schema["additionalProperties"], false);
}

TEST_F(ManifestSchema, AcceptsWhatTheWriterEmits) {
  MiniValidator v(schema);
  EXPECT_EQ(v.validate(toJson(fullManifest())), "");
  // Also a manifest written to disk by the real writer.
  ArtifactFixture fx;
  TempDir dir;
  auto r = fx.writer.write(dir.str());
  ASSERT_TRUE(r) << r.message();
  EXPECT_EQ(v.validate(json::parse(readText(dir / kManifestFileName))), "");
}

/// Walks an instance and its schema together; at every object, checks that
/// every emitted key is a schema property, that the schema's "required" is
/// exactly the set of keys whose removal the parser rejects as a missing
/// field (except `conditional` keys, which the parser requires only in some
/// cases and the schema lists as optional), and that the object forbids
/// additional properties unless it is one of the free-form objects.
void walkObjects(const MiniValidator &v, const json &schemaNode,
                 const json &full, const json::json_pointer &ptr,
                 const std::set<std::string> &freeForm,
                 const std::set<std::string> &conditional,
                 int &objectsChecked) {
  const json &instance = full[ptr];
  const json *s = v.resolve(schemaNode);
  ASSERT_NE(s, nullptr);
  if (s->contains("oneOf")) {
    // The branch whose "const" properties fit the instance ("kind").
    const json *match = nullptr;
    for (const json &branch : (*s)["oneOf"]) {
      const json *b = v.resolve(branch);
      ASSERT_NE(b, nullptr);
      bool fits = true;
      if (instance.is_object() && b->contains("properties"))
        for (const auto &[key, prop] : (*b)["properties"].items())
          if (prop.contains("const") && instance.contains(key) &&
              instance[key] != prop["const"])
            fits = false;
      if (fits) {
        EXPECT_EQ(match, nullptr) << ptr.to_string() << ": two branches fit";
        match = b;
      }
    }
    ASSERT_NE(match, nullptr) << ptr.to_string();
    s = match;
  }
  if (instance.is_array() && s->contains("items")) {
    for (size_t i = 0; i < instance.size(); ++i)
      walkObjects(v, (*s)["items"], full, ptr / i, freeForm, conditional,
                  objectsChecked);
    return;
  }
  if (!instance.is_object())
    return;
  if (!ptr.empty() && freeForm.count(ptr.back())) {
    EXPECT_FALSE(s->contains("additionalProperties")) << ptr.to_string();
    return;
  }
  ++objectsChecked;
  SCOPED_TRACE("object at " +
               (ptr.empty() ? std::string("/") : ptr.to_string()));
  ASSERT_TRUE(s->contains("properties"));
  EXPECT_EQ((*s)["additionalProperties"], false);
  const json &props = (*s)["properties"];
  std::set<std::string> required;
  for (const json &r : s->value("required", json::array()))
    required.insert(r.get<std::string>());
  for (const auto &[key, value] : instance.items()) {
    EXPECT_TRUE(props.contains(key))
        << "emitted key \"" << key << "\" is not in the schema";
    json mutated = full;
    mutated[ptr].erase(key);
    auto parsed = manifestFromJson(mutated);
    bool parserRequires =
        !parsed && parsed.message().find(key + ": required field is missing") !=
                       std::string::npos;
    EXPECT_EQ(parserRequires, required.count(key) + conditional.count(key) > 0)
        << "removing \"" << key << "\": parser says "
        << (parsed ? "fine" : parsed.message());
    if (!parserRequires)
      EXPECT_TRUE(parsed) << "removing optional \"" << key
                          << "\": " << parsed.message();
    EXPECT_EQ(v.validate(mutated).empty(), required.count(key) == 0)
        << "removing \"" << key << "\": schema disagrees";
  }
  for (const std::string &key : required)
    EXPECT_TRUE(instance.contains(key))
        << "required \"" << key << "\" is not emitted";
  for (const auto &[key, sub] : props.items())
    if (instance.contains(key))
      walkObjects(v, sub, full, ptr / key, freeForm, conditional,
                  objectsChecked);
}

TEST_F(ManifestSchema, RequiredAndPropertiesMatchTheParser) {
  MiniValidator v(schema);
  // Every optional field present, and both tensor kinds.
  json full = toJson(fullManifest());
  full["tensors"][0]["logical"]["descriptor"]["permutation"] = json::array();
  for (int i = 0; i < 64; ++i)
    full["tensors"][0]["logical"]["descriptor"]["permutation"].push_back(i);
  ASSERT_TRUE(manifestFromJson(full)) << manifestFromJson(full).message();
  int objects = 0;
  // "zeros" is required exactly when the descriptor has a zero-point.
  // "file" and "launch" are required of a native and of a GPU kernel.
  walkObjects(v, schema, full, json::json_pointer(""), {"config"},
              {"zeros", "file", "launch"}, objects);
  // manifest, versions, model, quantization, topology, 4 files, 2 tensors,
  // 3 stored, logical, descriptor, code, granularity, layout, 1 kernel with
  // its code, launch, 1 entry and 5 args, 1 binding with 1 rank and 1
  // phase, provenance, converter.
  EXPECT_EQ(objects, 33);
}

TEST_F(ManifestSchema, AgreesWithTheParserOnMutations) {
  MiniValidator v(schema);
  const json full = toJson(fullManifest());
  struct Case {
    std::string pointer;
    json value;
  };
  // Each mutation: the parser's verdict must equal the schema's.
  const std::vector<Case> cases = {
      {"/versions/artifact_schema", 2},
      {"/versions/artifact_schema", 1},
      {"/versions/container_profile", "qtensor.safetensors.v2"},
      {"/versions/kernel_abi", "1"},
      {"/extra", 1},
      {"/model/architecture", ""},
      {"/model/name", ""},
      {"/model/tokenizer_sha256", hexOf('A')},
      {"/model/tokenizer_sha256", hexOf('e')},
      {"/quantization/config", json::array()},
      {"/quantization/config/x", {{"y", 1}}},
      {"/topology/tp", 0},
      {"/topology/tp", 65536},
      {"/topology/tp", 65537},
      {"/topology/pp", -1},
      {"/files/0/bytes", -1},
      {"/files/0/bytes", 0},
      {"/files/0/bytes", 1.5},
      {"/files/0/role", "weights"},
      {"/files/1/path", "/abs"},
      {"/files/1/path", "a/../b"},
      {"/files/1/path", "a/./b"},
      {"/files/1/path", ".."},
      {"/files/1/path", "a//b"},
      {"/files/1/path", "a/"},
      {"/files/1/path", "a\\b"},
      {"/files/1/path", "a\tb"},
      {"/files/1/path", std::string(256, 'x')},
      {"/files/1/path", std::string(255, 'x')},
      {"/files/1/path", "a/b/c/d/e/f/g/h/i/j/k/l/m/n/o/p"},
      {"/files/1/path", "a/b/c/d/e/f/g/h/i/j/k/l/m/n/o/p/q"},
      {"/files/1/path", ".qtensor-tmp-x"},
      {"/files/1/path", "d/.qtensor-tmp-x"},
      {"/files/1/path", "manifest.json"},
      {"/files/1/path", "sub/manifest.json"},
      {"/files/1/path", "..hidden"},
      {"/files/1/path", ""},
      {"/files/1/sha256", "abc"},
      {"/tensors/1/kind", "quantized"},
      {"/tensors/1/kind", "other"},
      {"/tensors/1/dtype", "F4"},
      {"/tensors/1/dtype", "BF16"},
      {"/tensors/1/shape", json::array()},
      {"/tensors/1/shape/0", -1},
      {"/tensors/1/name", ""},
      {"/tensors/0/codes/tensor", ""},
      {"/tensors/0/codes/extra", 1},
      {"/tensors/0/logical/descriptor/code/bits", 7},
      {"/tensors/0/logical/descriptor/code/signed", "no"},
      {"/tensors/0/logical/descriptor/family", "lut"},
      {"/tensors/0/logical/descriptor/decoder_version", 0},
      {"/tensors/0/logical/descriptor/granularity/kind", "per_tensor"},
      {"/tensors/0/logical/descriptor/granularity/group_size", 0},
      {"/tensors/0/logical/descriptor/granularity/tail", "exact"},
      {"/tensors/0/logical/descriptor/rounding", "stochastic"},
      {"/tensors/0/logical/layout/family", ""},
      {"/tensors/0/logical/layout/version", 0},
      {"/tensors/0/logical/element_type", "f64"},
      {"/kernels/0/id", ""},
      {"/kernels/0/capability", {{"tile", {16, 8}}}},
      {"/kernels/0/format", "so"},
      {"/kernels/0/format", "cubin"},
      {"/kernels/0/target", "sm_75"},
      {"/kernels/0/phase", "both"},
      {"/kernels/0/tokens", {1}},
      {"/kernels/0/tokens", {0, 16}},
      {"/kernels/0/n", 0},
      {"/kernels/0/code/bits", 7},
      {"/kernels/0/code/bits", 9},
      {"/kernels/0/code/zero_point", "float"},
      {"/kernels/0/group_size", 0},
      {"/kernels/0/group_size", "per_row"},
      {"/kernels/0/group_size", "per_channel"},
      {"/kernels/0/scale", "f64"},
      {"/kernels/0/entries", json::array()},
      {"/kernels/0/entries/0/symbol", "bad name"},
      {"/kernels/0/args/0/name", "q"},
      {"/kernels/0/args/0/dtype", "f8"},
      {"/kernels/0/launch/block", "x"},
      {"/kernels/0/launch/block/0", 2048},
      {"/kernels/0/launch/shared_bytes", -1},
      {"/kernels/0/split_k", 0},
      {"/kernels/0/ops", json::array()},
      {"/kernels/0/ops/0", ""},
      {"/bindings/0/op", ""},
      {"/bindings/0/n", 0},
      {"/bindings/0/topology", "diagonal"},
      {"/bindings/0/topology", "replicated"},
      {"/bindings/0/ranks", json::array()},
      {"/bindings/0/ranks/0/n_offset", -1},
      {"/bindings/0/ranks/0/extra", 1},
      {"/bindings/0/accumulator", "f64"},
      {"/bindings/0/epilogue", "relu"},
      {"/bindings/0/phases", json::array()},
      {"/bindings/0/phases/0/kernel", ""},
      {"/bindings/0/phases/0/phase", "both"},
      {"/bindings/0/fallback_policy", "maybe"},
      {"/bindings/0/fallback_policy", "allow"},
      {"/provenance/converter/name", ""},
      {"/provenance/created_by", ""},
      {"/provenance/source_checkpoint_sha256", "x"},
  };
  int disagreements = 0;
  for (const Case &c : cases) {
    json j = full;
    j[json::json_pointer(c.pointer)] = c.value;
    auto parsed = manifestFromJson(j);
    std::string schemaError = v.validate(j);
    bool schemaOk = schemaError.empty();
    if (bool(parsed) != schemaOk) {
      ++disagreements;
      ADD_FAILURE() << c.pointer << " = " << c.value.dump() << ": parser "
                    << (parsed ? "accepts"
                               : "rejects (" + parsed.message() + ")")
                    << ", schema "
                    << (schemaOk ? "accepts" : "rejects (" + schemaError + ")");
    }
  }
  EXPECT_EQ(disagreements, 0);
}

// Nested qparams: the schema accepts what the parser accepts, and both
// refuse the same broken second levels.
TEST_F(ManifestSchema, AgreesWithTheParserOnNestedQParams) {
  MiniValidator v(schema);
  const json nested = withNestedQ4K(toJson(fullManifest()));
  ASSERT_TRUE(manifestFromJson(nested)) << manifestFromJson(nested).message();
  EXPECT_EQ(v.validate(nested), "");
  const std::string d = "/tensors/0/logical/descriptor/nested";
  const std::vector<std::pair<std::string, json>> cases = {
      {d + "/super_dtype", "f32"},
      {d + "/scale_code/bits", 9},
      {d + "/min_code/bits", 1},
      {d + "/scale_code/encoding", "offset_binary"},
      {d + "/super_group_size", 0},
      {"/tensors/0/super_scales/extra", 1},
  };
  for (const auto &[pointer, value] : cases) {
    json j = nested;
    j[json::json_pointer(pointer)] = value;
    EXPECT_FALSE(manifestFromJson(j)) << pointer;
    EXPECT_NE(v.validate(j), "") << pointer;
  }
}

// A mixed_2416 tensor: the schema accepts what the parser accepts, requires
// what it requires, and both refuse the same broken records.
TEST_F(ManifestSchema, AgreesWithTheParserOnMixed2416) {
  MiniValidator v(schema);
  Manifest m = baseManifest();
  m.files = {{"model-00001.safetensors", 1000, hexOf('1'), FileRole::Shard}};
  m.tensors = {mixedTensorEntry("w", "model-00001.safetensors")};
  const json mixed = toJson(m);
  ASSERT_TRUE(manifestFromJson(mixed)) << manifestFromJson(mixed).message();
  EXPECT_EQ(v.validate(mixed), "");
  // Every key of the tensor, its descriptor and its sections is required
  // by both.
  for (const std::string &ptr :
       {std::string("/tensors/0"), std::string("/tensors/0/logical"),
        std::string("/tensors/0/logical/descriptor"),
        std::string("/tensors/0/logical/descriptor/first_level"),
        std::string("/tensors/0/logical/descriptor/first_level/scale_code"),
        std::string("/tensors/0/logical/descriptor/second_level"),
        std::string("/tensors/0/logical/descriptor/sparse")}) {
    const json &object = mixed[json::json_pointer(ptr)];
    for (const auto &[key, value] : object.items()) {
      json j = mixed;
      j[json::json_pointer(ptr)].erase(key);
      EXPECT_FALSE(manifestFromJson(j)) << ptr << "/" << key;
      EXPECT_NE(v.validate(j), "") << ptr << "/" << key;
    }
  }
  const std::string d = "/tensors/0/logical/descriptor";
  const std::vector<std::pair<std::string, json>> cases = {
      {"/tensors/0/kind", "mixed"},
      {"/tensors/0/extra", 1},
      {d + "/family", "affine"},
      {d + "/decoder_version", 0},
      {d + "/qparam_packing", "nibbles"},
      {d + "/sparse/semantics", "replace"},
      {d + "/precision_map/granularity", "row"},
      {d + "/second_level/dtype", "f8"},
      {d + "/first_level/axis", 2},
      {"/tensors/0/w2_codes/extra", 1},
  };
  for (const auto &[pointer, value] : cases) {
    json j = mixed;
    j[json::json_pointer(pointer)] = value;
    EXPECT_FALSE(manifestFromJson(j)) << pointer;
    EXPECT_NE(v.validate(j), "") << pointer;
  }
}

// A codebook descriptor (ggml IQ4_NL): both accept the table and refuse
// the same broken ones.
TEST_F(ManifestSchema, AgreesWithTheParserOnCodebooks) {
  MiniValidator v(schema);
  json codebook = toJson(fullManifest());
  json &t = codebook["tensors"][0];
  json &d = t["logical"]["descriptor"];
  d["scheme"] = "symmetric";
  d["zero_point"] = "none";
  d["granularity"]["tail"] = "exact";
  d["codebook"] = {{"name", "iq4_nl"},
                   {"values", codebookValues(Codebook::IQ4NL)}};
  t.erase("zeros");
  ASSERT_TRUE(manifestFromJson(codebook))
      << manifestFromJson(codebook).message();
  EXPECT_EQ(v.validate(codebook), "");
  const std::string c = "/tensors/0/logical/descriptor/codebook";
  const std::vector<std::pair<std::string, json>> cases = {
      {c + "/name", "nf5"},
      {c + "/values", json::array({1, 2, 3})},
      {c + "/extra", 1},
  };
  for (const auto &[pointer, value] : cases) {
    json j = codebook;
    j[json::json_pointer(pointer)] = value;
    EXPECT_FALSE(manifestFromJson(j)) << pointer;
    EXPECT_NE(v.validate(j), "") << pointer;
  }
}

// MXFP4 (e2m1 codes, e8m0 scales stored as U8 codes): both accept it and
// refuse a plain dtype for the codes and unknown formats.
TEST_F(ManifestSchema, AgreesWithTheParserOnScaleFormats) {
  MiniValidator v(schema);
  json mx = toJson(fullManifest());
  json &t = mx["tensors"][0];
  json &d = t["logical"]["descriptor"];
  d["scheme"] = "symmetric";
  d["zero_point"] = "none";
  d["granularity"]["tail"] = "exact";
  d["scale_dtype"] = "f32";
  d["codebook"] = {{"name", "e2m1"},
                   {"values", codebookValues(Codebook::E2M1)}};
  d["scale_format"] = "e8m0";
  t["scales"]["dtype"] = "U8";
  t.erase("zeros");
  ASSERT_TRUE(manifestFromJson(mx)) << manifestFromJson(mx).message();
  EXPECT_EQ(v.validate(mx), "");
  json f32 = mx;
  f32["tensors"][0]["scales"]["dtype"] = "F32";
  auto parsed = manifestFromJson(f32);
  ASSERT_FALSE(parsed);
  EXPECT_NE(parsed.message().find(
                "scales.dtype: the descriptor's scale_format e8m0 stores one "
                "code per scale (U8), got F32"),
            std::string::npos)
      << parsed.message();
  json e5m2 = mx;
  e5m2["tensors"][0]["logical"]["descriptor"]["scale_format"] = "e5m2";
  EXPECT_FALSE(manifestFromJson(e5m2));
  EXPECT_NE(v.validate(e5m2), "");
}

TEST_F(ManifestSchema, ValidatorItselfRejects) {
  // The validator is not vacuous: it rejects a broken manifest.
  MiniValidator v(schema);
  json j = toJson(fullManifest());
  j["files"][0].erase("sha256");
  EXPECT_EQ(v.validate(j), "manifest.files[0].sha256: required");
  j = toJson(fullManifest());
  j["tensors"][0]["logical"]["descriptor"]["granularity"]["kind"] = "blocks";
  EXPECT_NE(v.validate(j).find("matches 0 oneOf branches"), std::string::npos);
}

} // namespace

// A mixed 2/4/16 kernel record over that tensor: the schema's mixedKernel
// accepts what kernelEntryFromJson accepts and refuses what it refuses.
TEST_F(ManifestSchema, AgreesWithTheParserOnMixed2416Kernels) {
  MiniValidator v(schema);
  Manifest m = baseManifest();
  m.files = {{"model-00001.safetensors", 1000, hexOf('1'), FileRole::Shard},
             {"kernels-host.so", 1000, hexOf('2'), FileRole::Kernel}};
  m.tensors = {mixedTensorEntry("w", "model-00001.safetensors")};
  KernelEntry k;
  k.id = "mixed_0";
  k.file = "kernels-host.so";
  k.registryId = "mixed2416_decode_gemv";
  k.tokens = {1, 2};
  k.n = 16;
  k.k = 128;
  k.layout = kMixed2416Layout;
  k.mixed = KernelEntry::MixedStreams{64, 8, FloatType::F16, FloatType::F16,
                                      SparseSemantics::Replacement};
  for (int64_t t : {1, 2})
    k.entries.push_back({"_mlir_ciface_mixed_t" + std::to_string(t), {t, t}});
  auto arg = [](ArgRole role, ArgType type, std::vector<int64_t> shape) {
    return KernelArg{role, type, std::move(shape)};
  };
  k.args = {arg(ArgRole::X, ArgType::F16, {kDynamic, 128}),
            arg(ArgRole::Map, ArgType::U8, {4}),
            arg(ArgRole::W2, ArgType::I32, {kDynamic}),
            arg(ArgRole::W4, ArgType::I32, {kDynamic}),
            arg(ArgRole::RW4, ArgType::I32, {17}),
            arg(ArgRole::QS, ArgType::U8, {16, 2}),
            arg(ArgRole::Z1, ArgType::U8, {16, 2}),
            arg(ArgRole::S2, ArgType::F16, {2, 2}),
            arg(ArgRole::Z2, ArgType::F16, {2, 2}),
            arg(ArgRole::SV, ArgType::F16, {kDynamic}),
            arg(ArgRole::SC, ArgType::I32, {kDynamic}),
            arg(ArgRole::SR, ArgType::I32, {17}),
            arg(ArgRole::Y, ArgType::F16, {kDynamic, 16})};
  k.ops = {"w"};
  m.kernels = {k};
  const json j = toJson(m);
  ASSERT_TRUE(manifestFromJson(j)) << manifestFromJson(j).message();
  EXPECT_EQ(v.validate(j), "");
  const std::vector<std::pair<std::string, json>> cases = {
      {"/kernels/0/mixed/sparse", "replace"},
      {"/kernels/0/mixed/second_type", "f32"},
      {"/kernels/0/mixed/extra", 1},
      {"/kernels/0/layout", "decode_gemv"},
      {"/kernels/0/phase", "prefill"},
      {"/kernels/0/code", {{"bits", 4}, {"signed", true}}},
      {"/kernels/0/args/1/name", "q"},
  };
  for (const auto &[pointer, value] : cases) {
    json bad = j;
    bad[json::json_pointer(pointer)] = value;
    EXPECT_FALSE(manifestFromJson(bad)) << pointer;
    EXPECT_NE(v.validate(bad), "") << pointer;
  }
  // A mixed kernel runs mixed tensors only.
  Manifest affineOp = m;
  TensorEntry plain;
  plain.name = "p";
  plain.file = "model-00001.safetensors";
  plain.data = PlainTensor{DType::F16, {64}};
  affineOp.tensors.push_back(plain);
  affineOp.kernels[0].ops = {"p"};
  auto refused = manifestFromJson(toJson(affineOp));
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.message(),
            "manifest.kernels[0].ops[0]: \"p\" is not a mixed_2416 tensor");
}
