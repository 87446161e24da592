//===- SafetensorsReaderTest.cpp - Reader, validation rules, conversions --===//
//
// 1. Every safetensors file in the shared corpus manifest gets its verdict,
//    inventory, payload hashes and decoded values checked (new corpus files
//    are picked up automatically).
// 2. Hand-made files, one per validation rule.
// 3. No allocation is ever sized from an unchecked field: operator new is
//    replaced in this binary to record the largest request while armed.
// 4. Bit-exact element conversions.
//
//===----------------------------------------------------------------------===//

#include "SafetensorsTestSupport.h"

#include <gmock/gmock.h>

#include <atomic>
#include <cmath>
#include <cstring>
#include <limits>
#include <new>
#include <sys/stat.h>

using namespace qtensor;
using namespace qtensor::safetensors;
using namespace sttest;
using ::testing::HasSubstr;

// GCC flags every inlined new/delete pair once operator delete is replaced
// with free(): a known false positive for a malloc-backed replacement.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
              "the tests decode raw payloads with host loads");

//===----------------------------------------------------------------------===//
// Allocation tracking
//===----------------------------------------------------------------------===//

namespace {
std::atomic<bool> gTrackAllocations{false};
std::atomic<size_t> gLargestAllocation{0};

void noteAllocation(size_t n) {
  if (!gTrackAllocations.load(std::memory_order_relaxed))
    return;
  size_t prev = gLargestAllocation.load(std::memory_order_relaxed);
  while (n > prev && !gLargestAllocation.compare_exchange_weak(prev, n))
    ;
}

/// Records the largest single allocation made while in scope.
struct AllocationProbe {
  AllocationProbe() {
    gLargestAllocation = 0;
    gTrackAllocations = true;
  }
  ~AllocationProbe() { gTrackAllocations = false; }
  size_t largest() const { return gLargestAllocation.load(); }
};
} // namespace

void *operator new(std::size_t n) {
  noteAllocation(n);
  if (void *p = std::malloc(n ? n : 1))
    return p;
  throw std::bad_alloc();
}
void *operator new[](std::size_t n) {
  noteAllocation(n);
  if (void *p = std::malloc(n ? n : 1))
    return p;
  throw std::bad_alloc();
}
void operator delete(void *p) noexcept { std::free(p); }
void operator delete[](void *p) noexcept { std::free(p); }
void operator delete(void *p, std::size_t) noexcept { std::free(p); }
void operator delete[](void *p, std::size_t) noexcept { std::free(p); }

namespace {

//===----------------------------------------------------------------------===//
// Corpus-driven verdicts
//===----------------------------------------------------------------------===//

std::vector<json> safetensorsCases() { return manifestEntries("safetensors"); }

class CorpusSafetensors : public ::testing::TestWithParam<json> {};

/// Raw integer element `i` of an integer/BOOL view, decoded independently of
/// the library.
bool rawInteger(const TensorView &v, size_t i, int64_t &s, uint64_t &u) {
  const uint8_t *p = v.data + i * dtypeSize(v.dtype);
  switch (v.dtype) {
  case DType::BOOL:
  case DType::U8:
    u = p[0];
    s = static_cast<int64_t>(u);
    return true;
  case DType::I8:
    s = static_cast<int8_t>(p[0]);
    return true;
  case DType::I16: {
    int16_t x;
    std::memcpy(&x, p, 2);
    s = x;
    return true;
  }
  case DType::U16: {
    uint16_t x;
    std::memcpy(&x, p, 2);
    u = x;
    s = x;
    return true;
  }
  case DType::I32: {
    int32_t x;
    std::memcpy(&x, p, 4);
    s = x;
    return true;
  }
  case DType::U32: {
    uint32_t x;
    std::memcpy(&x, p, 4);
    u = x;
    s = x;
    return true;
  }
  case DType::I64:
    std::memcpy(&s, p, 8);
    return true;
  case DType::U64:
    std::memcpy(&u, p, 8);
    s = static_cast<int64_t>(u);
    return true;
  default:
    return false;
  }
}

/// Compares every decoded element with the manifest's reference values.
void expectValues(const TensorView &v, const json &values) {
  auto f32 = toFloat32(v);
  auto f64 = toFloat64(v);
  ASSERT_TRUE(f32) << f32.message();
  ASSERT_TRUE(f64) << f64.message();
  ASSERT_EQ(f32->size(), values.size());
  ASSERT_EQ(f64->size(), values.size());
  // floatAt, one element at a time, decodes float dtypes as toFloat32.
  for (size_t i = 0; i < f32->size(); ++i) {
    float one = floatAt(v, i);
    if (!isFloatDType(v.dtype) || std::isnan((*f32)[i]))
      EXPECT_TRUE(std::isnan(one)) << "element " << i;
    else
      EXPECT_EQ(one, (*f32)[i]) << "element " << i;
  }
  for (size_t i = 0; i < values.size(); ++i) {
    const json &x = values[i];
    SCOPED_TRACE("element " + std::to_string(i) + " expected " + x.dump());
    if (x.is_string()) {
      std::string s = x.get<std::string>();
      if (s == "nan") {
        EXPECT_TRUE(std::isnan((*f32)[i]));
        EXPECT_TRUE(std::isnan((*f64)[i]));
      } else {
        double inf = s == "inf" ? INFINITY : -INFINITY;
        ASSERT_TRUE(s == "inf" || s == "-inf");
        EXPECT_EQ((*f32)[i], static_cast<float>(inf));
        EXPECT_EQ((*f64)[i], inf);
      }
    } else if (x.is_boolean()) {
      ASSERT_EQ(v.dtype, DType::BOOL);
      EXPECT_EQ(v.data[i], x.get<bool>() ? 1 : 0);
      EXPECT_EQ((*f32)[i], x.get<bool>() ? 1.0f : 0.0f);
    } else if (x.is_number_integer()) {
      int64_t s = 0;
      uint64_t u = 0;
      ASSERT_TRUE(rawInteger(v, i, s, u)) << dtypeName(v.dtype);
      if (x.is_number_unsigned() && v.dtype == DType::U64)
        EXPECT_EQ(u, x.get<uint64_t>());
      else
        EXPECT_EQ(s, x.get<int64_t>());
      double d = x.is_number_unsigned() ? static_cast<double>(x.get<uint64_t>())
                                        : static_cast<double>(x.get<int64_t>());
      EXPECT_EQ((*f64)[i], d);
      EXPECT_EQ((*f32)[i], static_cast<float>(d));
    } else {
      ASSERT_TRUE(x.is_number_float());
      ASSERT_TRUE(isFloatDType(v.dtype)) << dtypeName(v.dtype);
      double d = x.get<double>();
      if (v.dtype == DType::F64) {
        double raw;
        std::memcpy(&raw, v.data + 8 * i, 8);
        EXPECT_EQ(raw, d);
        EXPECT_EQ((*f64)[i], d);
        EXPECT_EQ((*f32)[i], static_cast<float>(d));
      } else {
        // Narrow float formats: the reference value is exactly representable
        // in binary32, so the conversion must hit it exactly.
        EXPECT_EQ(static_cast<double>((*f32)[i]), d);
        EXPECT_EQ((*f64)[i], d);
      }
    }
  }
}

TEST_P(CorpusSafetensors, Verdict) {
  const json &entry = GetParam();
  const std::string rel = entry["path"];
  const fs::path full = corpusDir() / rel;
  const std::string expect = entry["expect"];
  auto file = SafetensorsFile::open(full.string());

  if (expect == "reject") {
    if (file && entry.value("lenient_ok", false))
      GTEST_SKIP() << rel << ": accepted; tolerated (lenient_ok)";
    ASSERT_FALSE(file) << rel
                       << " must be rejected: " << entry.value("reason", "");
    EXPECT_THAT(file.message(), HasSubstr(full.filename().string()));
    return;
  }

  ASSERT_EQ(expect, "accept");
  ASSERT_TRUE(file) << rel << ": " << file.message();
  EXPECT_EQ(file->fileSize(), entry["size"].get<uint64_t>());
  EXPECT_EQ(file->headerLength(), entry["header_len"].get<uint64_t>());
  EXPECT_EQ(file->bufferOffset(), 8 + entry["header_len"].get<uint64_t>());

  // Metadata: null means "no __metadata__ entry".
  const json &meta = entry["metadata"];
  if (meta.is_null()) {
    EXPECT_FALSE(file->hasMetadata());
    EXPECT_TRUE(file->metadata().empty());
  } else {
    EXPECT_TRUE(file->hasMetadata());
    std::map<std::string, std::string> want =
        meta.get<std::map<std::string, std::string>>();
    EXPECT_EQ(file->metadata(), want);
  }

  // Inventory.
  const json &tensors = entry["tensors"];
  ASSERT_EQ(file->size(), tensors.size());
  uint64_t prevBegin = 0, covered = 0;
  for (const TensorView &v : file->tensors()) { // data order, tiling
    EXPECT_GE(v.begin, prevBegin);
    EXPECT_EQ(v.begin, covered);
    prevBegin = v.begin;
    covered = v.end;
  }
  EXPECT_EQ(covered, file->bufferSize());

  for (const json &t : tensors) {
    const std::string name = t["name"];
    SCOPED_TRACE(rel + " tensor \"" + name + "\"");
    const TensorView *v = file->find(name);
    ASSERT_NE(v, nullptr);
    EXPECT_EQ(v->name, name);
    EXPECT_EQ(dtypeName(v->dtype), t["dtype"].get<std::string>());
    EXPECT_EQ(v->shape, t["shape"].get<std::vector<int64_t>>());
    EXPECT_EQ(v->begin, t["data_offsets"][0].get<uint64_t>());
    EXPECT_EQ(v->end, t["data_offsets"][1].get<uint64_t>());
    EXPECT_EQ(v->absoluteOffset(), t["abs_offset"].get<uint64_t>());
    EXPECT_EQ(v->byteSize(), t["nbytes"].get<uint64_t>());
    EXPECT_EQ(hexDigest(v->data, v->byteSize()),
              t["bytes_sha256"].get<std::string>());
    auto got = file->get(name);
    ASSERT_TRUE(got);
    EXPECT_EQ(*got, v);
    // Values: the manifest lists them in full or not at all.
    if (t.contains("values") && t["values"].size() == v->elementCount())
      expectValues(*v, t["values"]);
  }
  // expected_values (crafted files) repeat the per-tensor values by name.
  if (entry.contains("expected_values"))
    for (const auto &[name, values] : entry["expected_values"].items()) {
      const TensorView *v = file->find(name);
      ASSERT_NE(v, nullptr) << name;
      ASSERT_EQ(values.size(), v->elementCount());
      expectValues(*v, values);
    }
}

INSTANTIATE_TEST_SUITE_P(Manifest, CorpusSafetensors,
                         ::testing::ValuesIn(safetensorsCases()),
                         [](const ::testing::TestParamInfo<json> &info) {
                           return caseName(info.param["path"]);
                         });
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(CorpusSafetensors);

TEST(CorpusSafetensorsManifest, ListsBothVerdicts) {
  ST_REQUIRE_CORPUS();
  ASSERT_TRUE(manifest().is_object()) << "manifest.json: " << manifestError();
  size_t accept = 0, reject = 0;
  for (const json &e : safetensorsCases())
    (e["expect"] == "accept" ? accept : reject)++;
  EXPECT_GT(accept, 0u);
  EXPECT_GT(reject, 0u);
}

TEST(CorpusSafetensorsManifest, ExactErrorMessages) {
  ST_REQUIRE_CORPUS();
  fs::path dir = corpusDir() / "safetensors/crafted";
  struct Case {
    const char *file;
    const char *text;
  } cases[] = {
      {"bad_offsets_beyond_buffer.safetensors",
       ": tensor \"b\": data_offsets [16, 32] end beyond the 16-byte buffer"},
      {"bad_overlapping_offsets.safetensors",
       ": tensor \"b\": data_offsets [8, 24] overlap tensor \"a\" [0, 16]"},
      {"bad_hole_between_tensors.safetensors",
       ": hole in the byte buffer: bytes [16, 24)"},
      {"bad_dtype_shape_mismatch.safetensors",
       "F32 shape [2, 3] needs 24 bytes but data_offsets [0, 16] span 16"},
      {"bad_shape_elem_overflow.safetensors", "(overflow)"},
      {"bad_negative_dim.safetensors", "shape[0] = -1 is negative"},
      {"bad_unknown_dtype.safetensors", "unknown dtype \"X99\""},
      {"bad_metadata_not_object.safetensors",
       "\"__metadata__\" is a string; expected an object"},
      {"bad_tensor_entry_not_object.safetensors",
       "tensor \"x\": entry is a number"},
      {"bad_header_leading_whitespace.safetensors",
       "header must begin with '{' at absolute byte offset 8"},
      {"bad_file_too_short.safetensors", "file is 5 bytes"},
      {"bad_header_len_exceeds_file.safetensors",
       "header length (bytes 0-7) is 1000 but only 64 bytes follow"},
  };
  for (const Case &c : cases) {
    fs::path p = dir / c.file;
    if (!fs::exists(p))
      continue;
    auto f = SafetensorsFile::open(p.string());
    ASSERT_FALSE(f) << c.file;
    EXPECT_THAT(f.message(), HasSubstr(p.string() + ":")) << c.file;
    EXPECT_THAT(f.message(), HasSubstr(c.text)) << c.file;
  }
}

//===----------------------------------------------------------------------===//
// Hand-made files, one per rule
//===----------------------------------------------------------------------===//

class SafetensorsRules : public ::testing::Test {
protected:
  TempDir tmp;
  int counter = 0;

  /// Writes `bytes` to a fresh file and opens it.
  Expected<SafetensorsFile> openBytes(const std::string &bytes,
                                      const Limits &limits = Limits()) {
    std::string path =
        tmp.write("case" + std::to_string(counter++) + ".safetensors", bytes);
    lastPath = path;
    return SafetensorsFile::open(path, limits);
  }
  Expected<SafetensorsFile> openHeader(const std::string &header,
                                       const std::string &payload = "",
                                       const Limits &limits = Limits()) {
    return openBytes(stBytes(header, payload), limits);
  }
  /// Asserts rejection with the file name and every fragment in the message.
  void expectReject(const Expected<SafetensorsFile> &f,
                    std::initializer_list<const char *> fragments) {
    ASSERT_FALSE(f) << "accepted " << lastPath;
    EXPECT_THAT(f.message(), HasSubstr(lastPath + ": "));
    for (const char *frag : fragments)
      EXPECT_THAT(f.message(), HasSubstr(frag));
  }
  std::string lastPath;
};

std::string f32Tensor(const std::string &name, const std::string &shape,
                      uint64_t b, uint64_t e, const char *dtype = "F32") {
  return "\"" + name + "\":{\"dtype\":\"" + dtype + "\",\"shape\":" + shape +
         ",\"data_offsets\":[" + std::to_string(b) + "," + std::to_string(e) +
         "]}";
}

TEST_F(SafetensorsRules, FileShorterThanPrefix) {
  for (size_t n = 0; n < 8; ++n)
    expectReject(openBytes(std::string(n, '\x01')),
                 {"shorter than the 8-byte header-length prefix"});
}

TEST_F(SafetensorsRules, HeaderLengthZero) {
  expectReject(openBytes(lengthPrefix(0)), {"header length (bytes 0-7) is 0"});
  expectReject(openBytes(lengthPrefix(0) + "{}"), {"is 0"});
}

TEST_F(SafetensorsRules, HeaderLengthAboveLimit) {
  expectReject(openBytes(lengthPrefix(UINT64_MAX) + "{}"),
               {"18446744073709551615", "above the limit of 100000000 bytes"});
  expectReject(openBytes(lengthPrefix(100'000'001) + "{}"),
               {"above the limit"});
  Limits small;
  small.maxHeaderBytes = 8;
  expectReject(openHeader("{}              ", "", small),
               {"is 16, above the limit of 8 bytes"});
  EXPECT_TRUE(openHeader("{}      ", "", small));
}

TEST_F(SafetensorsRules, HeaderLengthBeyondFile) {
  expectReject(openBytes(lengthPrefix(3) + "{}"),
               {"is 3 but only 2 bytes follow the prefix (file size 10)"});
  // 8 + N overflowing 64 bits cannot wrap into range.
  Limits huge;
  huge.maxHeaderBytes = UINT64_MAX;
  expectReject(openBytes(lengthPrefix(UINT64_MAX - 3) + "{}", huge),
               {"bytes follow the prefix"});
}

TEST_F(SafetensorsRules, HeaderMustBeginWithBrace) {
  expectReject(openHeader("  {}"), {"must begin with '{'", "found byte 0x20"});
  expectReject(openHeader("\n{}"), {"found byte 0x0a"});
  expectReject(openHeader("\xEF\xBB\xBF{}"), {"found byte 0xef"}); // BOM
  expectReject(openHeader("[]"), {"found byte 0x5b"});
  expectReject(openHeader("\"x\""), {"must begin with '{'"});
}

TEST_F(SafetensorsRules, HeaderMustBeOneJsonObject) {
  expectReject(openHeader("{"), {"header is not valid JSON (absolute byte"});
  expectReject(openHeader("{\"a\":}"), {"not valid JSON"});
  expectReject(openHeader("{}x"), {"not valid JSON (absolute byte offset 10)"});
  expectReject(openHeader("{}{}"), {"not valid JSON"});
  // NUL padding (nlohmann would stop at the NUL and ignore the rest).
  expectReject(openHeader(std::string("{}\0\0\0\0\0\0", 8)),
               {"header contains a NUL byte at absolute byte offset 10"});
  expectReject(openHeader(std::string("{}\0{\"a\":1}", 10)), {"NUL byte"});
  expectReject(
      openHeader(std::string("{\"__metadata__\":{\"k\":\"a\0b\"}}", 28)),
      {"NUL byte at absolute byte offset 31"});
  EXPECT_TRUE(openHeader("{\"__metadata__\":{\"k\":\"a\\u0000b\"}}"));
  expectReject(openHeader("{/*c*/}"), {"not valid JSON"});
  expectReject(openHeader("{'a':1}"), {"not valid JSON"});
  // Trailing whitespace (the writers' padding) is fine.
  EXPECT_TRUE(openHeader("{}      "));
  EXPECT_TRUE(openHeader("{} \n\t\r  "));
}

TEST_F(SafetensorsRules, HeaderMustBeValidUtf8) {
  struct Case {
    std::string bad;
    const char *byte;
  } cases[] = {
      {"\xff", "0xff"},             // never valid
      {"\x80", "0x80"},             // lone continuation
      {"\xc0\xaf", "0xc0"},         // overlong '/'
      {"\xe0\x80\xaf", "0x80"},     // overlong 3-byte
      {"\xed\xa0\x80", "0xa0"},     // UTF-16 surrogate D800
      {"\xf4\x90\x80\x80", "0x90"}, // above U+10FFFF
      {"\xe2\x82", "0x22"},         // truncated by the closing quote
  };
  for (const Case &c : cases) {
    std::string header = "{\"__metadata__\":{\"k\":\"" + c.bad + "\"}}";
    auto f = openHeader(header);
    expectReject(
        f, {"header is not valid UTF-8", c.byte, "at absolute byte offset"});
    // The offset is exact: 8 + position of the first bad byte.
    size_t bad = header.find(c.bad);
    if (std::string(c.byte) == "0x22")
      bad += 2;
    else if (c.bad.size() > 1 && std::string(c.byte) != "0xc0")
      bad += 1;
    EXPECT_THAT(f.message(), HasSubstr("offset " + std::to_string(8 + bad)));
  }
  // An escaped lone surrogate is rejected by the JSON layer.
  expectReject(openHeader("{\"__metadata__\":{\"k\":\"\\ud800\"}}"),
               {"not valid JSON"});
  // Real multi-byte names are fine.
  std::string name = "caf\xc3\xa9.\xe6\xa8\xa1\xe5\x9e\x8b.\xf0\x9f\x98\x80";
  auto ok = openHeader("{" + f32Tensor(name, "[1]", 0, 4) + "}",
                       std::string(4, '\0'));
  ASSERT_TRUE(ok) << ok.message();
  EXPECT_NE(ok->find(name), nullptr);
}

TEST_F(SafetensorsRules, DuplicateKeysRejected) {
  std::string a = f32Tensor("a", "[1]", 0, 4);
  expectReject(openHeader("{" + a + "," + a + "}", std::string(4, '\0')),
               {"duplicate tensor name \"a\""});
  expectReject(openHeader("{\"__metadata__\":{},\"__metadata__\":{}}"),
               {"duplicate key \"__metadata__\""});
  expectReject(openHeader("{\"__metadata__\":{\"k\":\"1\",\"k\":\"2\"}}"),
               {"__metadata__: duplicate key \"k\""});
  expectReject(openHeader("{\"a\":{\"dtype\":\"F32\",\"dtype\":\"F32\","
                          "\"shape\":[1],\"data_offsets\":[0,4]}}",
                          std::string(4, '\0')),
               {"tensor \"a\": duplicate field \"dtype\""});
  // Distinct escapes of one name are the same key.
  expectReject(
      openHeader("{" + a + "," + f32Tensor("\\u0061", "[1]", 4, 8) + "}",
                 std::string(8, '\0')),
      {"duplicate tensor name \"a\""});
}

TEST_F(SafetensorsRules, MetadataMustBeStringToString) {
  expectReject(openHeader("{\"__metadata__\":\"x\"}"),
               {"\"__metadata__\" is a string; expected an object"});
  expectReject(openHeader("{\"__metadata__\":null}"), {"is null"});
  expectReject(openHeader("{\"__metadata__\":[]}"), {"is an array"});
  expectReject(openHeader("{\"__metadata__\":{\"v\":2}}"),
               {"__metadata__ \"v\": value is a number; expected a string"});
  expectReject(openHeader("{\"__metadata__\":{\"v\":{}}}"), {"is an object"});
  expectReject(openHeader("{\"__metadata__\":{\"v\":null}}"), {"is null"});
  expectReject(openHeader("{\"__metadata__\":{\"v\":true}}"), {"is a boolean"});
  auto empty = openHeader("{\"__metadata__\":{}}");
  ASSERT_TRUE(empty) << empty.message();
  EXPECT_TRUE(empty->hasMetadata());
  EXPECT_TRUE(empty->metadata().empty());
  auto none = openHeader("{}");
  ASSERT_TRUE(none);
  EXPECT_FALSE(none->hasMetadata());
  Limits limits;
  limits.maxMetadataEntries = 2;
  expectReject(
      openHeader("{\"__metadata__\":{\"a\":\"\",\"b\":\"\",\"c\":\"\"}}", "",
                 limits),
      {"more than 2 entries"});
}

TEST_F(SafetensorsRules, TensorEntryMustBeObjectWithExactFields) {
  expectReject(openHeader("{\"x\":5}"), {"tensor \"x\": entry is a number"});
  expectReject(openHeader("{\"x\":\"F32\"}"), {"entry is a string"});
  expectReject(openHeader("{\"x\":[0,4]}"), {"entry is an array"});
  expectReject(openHeader("{\"x\":null}"), {"entry is null"});
  expectReject(openHeader("{\"x\":{\"shape\":[1],\"data_offsets\":[0,4]}}",
                          std::string(4, '\0')),
               {"tensor \"x\": missing field \"dtype\""});
  expectReject(openHeader("{\"x\":{\"dtype\":\"F32\",\"data_offsets\":[0,4]}}",
                          std::string(4, '\0')),
               {"missing field \"shape\""});
  expectReject(openHeader("{\"x\":{\"dtype\":\"F32\",\"shape\":[1]}}",
                          std::string(4, '\0')),
               {"missing field \"data_offsets\""});
  expectReject(openHeader("{\"x\":{\"dtype\":\"F32\",\"shape\":[1],"
                          "\"data_offsets\":[0,4],\"extra\":1}}",
                          std::string(4, '\0')),
               {"unexpected field \"extra\""});
  expectReject(openHeader("{\"x\":{}}"), {"missing field \"dtype\""});
}

TEST_F(SafetensorsRules, DtypeMustBeKnown) {
  for (const char *bad : {"X99", "f32", "F8_E4M3FN", "FLOAT", "", "C64", "F4"})
    expectReject(openHeader("{" + f32Tensor("x", "[1]", 0, 1, bad) + "}",
                            std::string(1, '\0')),
                 {"unknown dtype"});
  expectReject(openHeader("{\"x\":{\"dtype\":4,\"shape\":[1],"
                          "\"data_offsets\":[0,4]}}",
                          std::string(4, '\0')),
               {"field \"dtype\" is a number; expected a dtype string"});
}

TEST_F(SafetensorsRules, ShapeMustBeNonNegativeInt64s) {
  auto withShape = [&](const std::string &shape) {
    return openHeader("{" + f32Tensor("t", shape, 0, 4) + "}",
                      std::string(4, '\0'));
  };
  expectReject(withShape("[-1,4]"),
               {"tensor \"t\": shape[0] = -1 is negative"});
  expectReject(withShape("[-0]"), {"shape[0] = -0 is negative"});
  expectReject(withShape("[01]"), {"not valid JSON"});
  expectReject(withShape("[1,2.0]"), {"shape[1] = 2.0 is not an integer"});
  expectReject(withShape("[1e0]"), {"is not an integer"});
  expectReject(withShape("[9223372036854775808]"),
               {"shape[0] = 9223372036854775808 exceeds 2^63 - 1"});
  expectReject(withShape("[18446744073709551616]"), {"is not an integer"});
  expectReject(withShape("[[1]]"), {"shape[0] is an array"});
  expectReject(withShape("[\"1\"]"), {"shape[0] is a string"});
  expectReject(withShape("[null]"), {"shape[0] is null"});
  expectReject(withShape("{}"), {"field \"shape\" is an object"});
  expectReject(withShape("4"), {"field \"shape\" is a number"});
  // The largest accepted dimension still has to match the extent.
  expectReject(
      openHeader("{" + f32Tensor("t", "[9223372036854775807]", 0, 4, "U8") +
                     "}",
                 std::string(4, '\0')),
      {"U8 shape [9223372036854775807] needs 9223372036854775807 "
       "bytes"});
  expectReject(withShape("[9223372036854775807]"), {"overflows 64 bits"});
}

TEST_F(SafetensorsRules, RankIsBounded) {
  std::string ones33 = "[1";
  for (int i = 1; i < 33; ++i)
    ones33 += ",1";
  ones33 += "]";
  expectReject(openHeader("{" + f32Tensor("t", ones33, 0, 4) + "}",
                          std::string(4, '\0')),
               {"shape has more than 32 dimensions"});
  std::string ones32 = ones33.substr(0, ones33.size() - 3) + "]";
  auto ok = openHeader("{" + f32Tensor("t", ones32, 0, 4) + "}",
                       std::string(4, '\0'));
  ASSERT_TRUE(ok) << ok.message();
  EXPECT_EQ(ok->tensors()[0].shape.size(), 32u);
  Limits l;
  l.maxRank = 2;
  expectReject(openHeader("{" + f32Tensor("t", "[1,1,1]", 0, 4) + "}",
                          std::string(4, '\0'), l),
               {"more than 2 dimensions"});
}

TEST_F(SafetensorsRules, DataOffsetsMustBeBeginEnd) {
  auto withOffsets = [&](const std::string &offs) {
    return openHeader(
        "{\"t\":{\"dtype\":\"U8\",\"shape\":[4],\"data_offsets\":" + offs +
            "}}",
        std::string(4, '\0'));
  };
  expectReject(withOffsets("[0]"), {"data_offsets has 1 elements"});
  expectReject(withOffsets("[]"), {"data_offsets has 0 elements"});
  expectReject(withOffsets("[0,4,4]"), {"data_offsets has more than 2"});
  expectReject(withOffsets("[-4,0]"), {"data_offsets[0] = -4 is negative"});
  expectReject(withOffsets("[0,4.5]"), {"data_offsets[1] = 4.5 is not"});
  expectReject(withOffsets("\"0-4\""), {"field \"data_offsets\" is a string"});
  expectReject(withOffsets("[4,0]"),
               {"data_offsets [4, 0]: begin is greater than end"});
  expectReject(withOffsets("[0,8]"),
               {"tensor \"t\": data_offsets [0, 8] end beyond the 4-byte "
                "buffer"});
  expectReject(withOffsets("[0,18446744073709551615]"), {"end beyond"});
}

TEST_F(SafetensorsRules, ExtentMustMatchDtypeTimesShape) {
  expectReject(openHeader("{" + f32Tensor("t", "[2,3]", 0, 16) + "}",
                          std::string(16, '\0')),
               {"tensor \"t\": F32 shape [2, 3] needs 24 bytes but "
                "data_offsets [0, 16] span 16"});
  // Element count overflow (would wrap to 0 and match [0, 0]).
  expectReject(openHeader("{" +
                          f32Tensor("t", "[4294967296,4294967296,16]", 0, 0) +
                          "}"),
               {"shape [4294967296, 4294967296, 16] has more than 2^64 - 1 "
                "elements (overflow)"});
  // Byte count overflow: 2^62 elements x 8 bytes.
  expectReject(openHeader("{" +
                          f32Tensor("t", "[4611686018427387904]", 0, 0, "F64") +
                          "}"),
               {"overflows 64 bits"});
  // A zero dimension makes any other dimension harmless.
  auto ok = openHeader(
      "{" +
      f32Tensor("t", "[0,9223372036854775807,9223372036854775807]", 0, 0) +
      "}");
  ASSERT_TRUE(ok) << ok.message();
  EXPECT_EQ(ok->tensors()[0].elementCount(), 0u);
}

TEST_F(SafetensorsRules, BufferMustBeTiledExactly) {
  std::string p16(16, '\0'), p24(24, '\0');
  // Overlap.
  expectReject(openHeader("{" + f32Tensor("a", "[4]", 0, 16) + "," +
                              f32Tensor("b", "[4]", 8, 24) + "}",
                          p24),
               {"tensor \"b\": data_offsets [8, 24] overlap tensor \"a\" "
                "[0, 16]"});
  // Identical intervals.
  expectReject(openHeader("{" + f32Tensor("a", "[4]", 0, 16) + "," +
                              f32Tensor("b", "[4]", 0, 16) + "}",
                          p16),
               {"overlap"});
  // A zero-sized tensor strictly inside another one.
  expectReject(openHeader("{" + f32Tensor("a", "[4]", 0, 16) + "," +
                              f32Tensor("z", "[0]", 4, 4) + "}",
                          p16),
               {"tensor \"z\": data_offsets [4, 4] overlap tensor \"a\""});
  // Hole in the middle.
  expectReject(openHeader("{" + f32Tensor("a", "[2]", 0, 8) + "," +
                              f32Tensor("b", "[2]", 16, 24) + "}",
                          p24),
               {"hole in the byte buffer: bytes [8, 16)", "tensor \"b\""});
  // Hole at the start.
  expectReject(openHeader("{" + f32Tensor("a", "[2]", 8, 16) + "}", p16),
               {"hole in the byte buffer: bytes [0, 8)"});
  // Trailing bytes after the last tensor.
  expectReject(openHeader("{" + f32Tensor("a", "[2]", 0, 8) + "}", p16),
               {"trailing bytes: buffer bytes [8, 16)", "after the last "
                                                        "tensor \"a\""});
  // Trailing bytes with no tensor at all.
  expectReject(openHeader("{}", "x"),
               {"trailing bytes: 1 bytes after the header", "declares none"});
  expectReject(openHeader("{\"__metadata__\":{}}", p16), {"trailing bytes"});
}

TEST_F(SafetensorsRules, ZeroSizedTensorsMayShareOffsets) {
  std::string header = "{" + f32Tensor("z2", "[0]", 8, 8) + "," +
                       f32Tensor("a", "[2]", 0, 8) + "," +
                       f32Tensor("z0", "[0,3]", 0, 0) + "," +
                       f32Tensor("z1", "[5,0]", 0, 0, "I64") + "," +
                       f32Tensor("b", "[1]", 8, 12) + "," +
                       f32Tensor("z3", "[0]", 12, 12, "U8") + "}";
  auto f = openHeader(header, std::string(12, '\0'));
  ASSERT_TRUE(f) << f.message();
  std::vector<std::string> order;
  for (const TensorView &v : f->tensors())
    order.push_back(v.name);
  EXPECT_EQ(order,
            (std::vector<std::string>{"z0", "z1", "a", "z2", "b", "z3"}));
  auto z = toFloat32(*f->find("z3"));
  ASSERT_TRUE(z);
  EXPECT_TRUE(z->empty());
}

TEST_F(SafetensorsRules, CountsAreBounded) {
  Limits l;
  l.maxTensors = 2;
  std::string header = "{" + f32Tensor("a", "[1]", 0, 4) + "," +
                       f32Tensor("b", "[1]", 4, 8) + "," +
                       f32Tensor("c", "[1]", 8, 12) + "}";
  expectReject(openHeader(header, std::string(12, '\0'), l),
               {"more than 2 tensors"});
  l.maxTensors = 3;
  EXPECT_TRUE(openHeader(header, std::string(12, '\0'), l));
}

TEST_F(SafetensorsRules, DeepNestingStopsAtOnce) {
  std::string deep(100000, '[');
  expectReject(openHeader("{\"t\":{\"dtype\":\"F32\",\"shape\":" + deep + "}}"),
               {"shape[0] is an array"});
  expectReject(openHeader("{\"__metadata__\":{\"k\":" + deep + "}}"),
               {"is an array"});
  expectReject(openHeader("{\"t\":" + std::string(100000, '{') + "}"),
               {"not valid JSON"});
}

TEST_F(SafetensorsRules, ViewsPointIntoTheMapping) {
  std::string payload;
  for (int i = 0; i < 20; ++i)
    payload += static_cast<char>(i);
  std::string header = "{\"__metadata__\":{\"format\":\"pt\",\"k\":\"v\"}," +
                       f32Tensor("w", "[2,2]", 4, 20) + "," +
                       f32Tensor("", "[]", 0, 4, "I32") + "}    ";
  auto f = openHeader(header, payload);
  ASSERT_TRUE(f) << f.message();
  ASSERT_EQ(f->size(), 2u);
  const TensorView &first = f->tensors()[0];
  EXPECT_EQ(first.name, "");
  EXPECT_TRUE(first.shape.empty());
  EXPECT_EQ(first.elementCount(), 1u);
  EXPECT_EQ(first.absoluteOffset(), 8 + header.size());
  const TensorView *w = f->find("w");
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->absoluteOffset(), 8 + header.size() + 4);
  EXPECT_EQ(w->data[0], 4);
  EXPECT_EQ(w->data[15], 19);
  EXPECT_EQ(f->metadata().at("format"), "pt");
  EXPECT_EQ(f->find("missing"), nullptr);
  auto missing = f->get("missing");
  ASSERT_FALSE(missing);
  EXPECT_THAT(missing.message(), HasSubstr(lastPath));
  EXPECT_THAT(missing.message(), HasSubstr("no tensor named \"missing\""));
  // Moving the file keeps the views valid (the mapping does not move).
  const uint8_t *before = w->data;
  SafetensorsFile moved = f.take();
  EXPECT_EQ(moved.find("w")->data, before);
  EXPECT_EQ(moved.find("w")->data[15], 19);
}

TEST_F(SafetensorsRules, EveryDtypeIsAccepted) {
  std::string header = "{";
  uint64_t off = 0;
  for (unsigned i = 0; i < kNumDTypes; ++i) {
    DType t = static_cast<DType>(i);
    uint64_t n = 3 * dtypeSize(t);
    if (i)
      header += ",";
    header += f32Tensor(std::string(dtypeName(t)), "[3]", off, off + n,
                        std::string(dtypeName(t)).c_str());
    off += n;
  }
  header += "}";
  std::string payload(off, '\0');
  payload[0] = 1; // BOOL true
  auto f = openHeader(header, payload);
  ASSERT_TRUE(f) << f.message();
  EXPECT_EQ(f->size(), kNumDTypes);
  for (unsigned i = 0; i < kNumDTypes; ++i) {
    DType t = static_cast<DType>(i);
    const TensorView *v = f->find(dtypeName(t));
    ASSERT_NE(v, nullptr);
    EXPECT_EQ(v->dtype, t);
    EXPECT_EQ(parseDType(dtypeName(t)), t);
  }
}

TEST_F(SafetensorsRules, NotARegularFile) {
  auto f = SafetensorsFile::open(tmp.path().string());
  ASSERT_FALSE(f);
  EXPECT_THAT(f.message(), HasSubstr("not a regular file"));
  auto g = SafetensorsFile::open((tmp / "absent.safetensors").string());
  ASSERT_FALSE(g);
  EXPECT_THAT(g.message(), HasSubstr("absent.safetensors: cannot open"));
  std::string fifo = (tmp / "fifo.safetensors").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  auto h = SafetensorsFile::open(fifo); // must not block
  ASSERT_FALSE(h);
  EXPECT_THAT(h.message(), HasSubstr("not a regular file"));
}

//===----------------------------------------------------------------------===//
// No allocation sized from an unchecked field
//===----------------------------------------------------------------------===//

TEST_F(SafetensorsRules, HostileLengthsAllocateNothingLarge) {
  const size_t kSmall = 64 * 1024;
  std::vector<std::string> files = {
      lengthPrefix(UINT64_MAX) + "{}",
      lengthPrefix(99'999'999) + "{\"a\":1}",
      lengthPrefix(1000) +
          "{\"weight\":{\"dtype\":\"F32\",\"shape\":[2,2],"
          "\"data_offsets\":[0,16]}}" +
          std::string(16, '\0'),
      stBytes("{" + f32Tensor("t", "[4294967296,4294967296,16]", 0, 0) + "}"),
      stBytes("{" + f32Tensor("t", "[9223372036854775807]", 0, 0, "U8") + "}"),
      stBytes("{" + f32Tensor("t", "[1]", 0, 18446744073709551615ull) + "}"),
      stBytes("{\"t\":{\"dtype\":\"F32\",\"shape\":" + std::string(50000, '[') +
              "}}"),
  };
  std::vector<std::string> paths;
  for (const std::string &bytes : files)
    paths.push_back(tmp.write("hostile" + std::to_string(paths.size()), bytes));
  size_t largest;
  {
    AllocationProbe probe;
    for (const std::string &p : paths) {
      auto f = SafetensorsFile::open(p);
      EXPECT_FALSE(f) << p;
    }
    largest = probe.largest();
  }
  EXPECT_LT(largest, kSmall);
  EXPECT_GT(largest, 0u); // the probe is live
}

TEST(SafetensorsCorpusAllocations, RejectedCorpusFilesAllocateLittle) {
  ST_REQUIRE_CORPUS();
  std::vector<std::string> paths;
  for (const json &e : safetensorsCases())
    if (e["expect"] == "reject")
      paths.push_back((corpusDir() / e["path"].get<std::string>()).string());
  ASSERT_FALSE(paths.empty());
  size_t largest;
  {
    AllocationProbe probe;
    for (const std::string &p : paths)
      (void)SafetensorsFile::open(p);
    largest = probe.largest();
  }
  EXPECT_LT(largest, 64u * 1024);
}

//===----------------------------------------------------------------------===//
// Conversions
//===----------------------------------------------------------------------===//

TEST(SafetensorsConvert, HalfAnchors) {
  EXPECT_EQ(halfToFloat(0x3c00), 1.0f);
  EXPECT_EQ(halfToFloat(0xc000), -2.0f);
  EXPECT_EQ(halfToFloat(0x7bff), 65504.0f);
  EXPECT_EQ(halfToFloat(0x0400), std::ldexp(1.0f, -14));
  EXPECT_EQ(halfToFloat(0x0001), std::ldexp(1.0f, -24));
  EXPECT_EQ(halfToFloat(0x03ff), std::ldexp(1023.0f, -24));
  EXPECT_EQ(halfToFloat(0x7c00), INFINITY);
  EXPECT_EQ(halfToFloat(0xfc00), -INFINITY);
  EXPECT_TRUE(std::isnan(halfToFloat(0x7e00)));
  EXPECT_TRUE(std::isnan(halfToFloat(0x7c01)));
  EXPECT_TRUE(std::signbit(halfToFloat(0x8000)));
  EXPECT_EQ(halfToFloat(0x8000), 0.0f);
  EXPECT_EQ(halfToFloat(0x3555), 0.333251953125f);
}

#if defined(__FLT16_MAX__)
TEST(SafetensorsConvert, HalfMatchesCompilerFloat16Exhaustively) {
  for (uint32_t h = 0; h <= 0xffff; ++h) {
    _Float16 x;
    uint16_t bits = static_cast<uint16_t>(h);
    std::memcpy(&x, &bits, 2);
    float want = static_cast<float>(x);
    float got = halfToFloat(bits);
    if (std::isnan(want)) {
      ASSERT_TRUE(std::isnan(got)) << h;
      ASSERT_EQ(std::signbit(got), std::signbit(want)) << h;
    } else {
      uint32_t a, b;
      std::memcpy(&a, &want, 4);
      std::memcpy(&b, &got, 4);
      ASSERT_EQ(a, b) << "half 0x" << std::hex << h;
    }
  }
}
#endif

TEST(SafetensorsConvert, BFloat16) {
  EXPECT_EQ(bfloat16ToFloat(0x3f80), 1.0f);
  EXPECT_EQ(bfloat16ToFloat(0xbf80), -1.0f);
  EXPECT_EQ(bfloat16ToFloat(0x7f80), INFINITY);
  EXPECT_TRUE(std::isnan(bfloat16ToFloat(0x7fc0)));
  EXPECT_EQ(bfloat16ToFloat(0x0001), std::ldexp(1.0f, -133));
  EXPECT_EQ(bfloat16ToFloat(0x7f7f), std::ldexp(255.0f, 120));
  // Manifest value of the corpus file: -0.82421875.
  EXPECT_EQ(bfloat16ToFloat(0xbf53), -0.82421875f);
}

TEST(SafetensorsConvert, Float8E4M3FN) {
  EXPECT_EQ(f8e4m3fnToFloat(0x00), 0.0f);
  EXPECT_TRUE(std::signbit(f8e4m3fnToFloat(0x80)));
  EXPECT_EQ(f8e4m3fnToFloat(0x38), 1.0f);
  EXPECT_EQ(f8e4m3fnToFloat(0x7e), 448.0f); // largest finite
  EXPECT_EQ(f8e4m3fnToFloat(0xfe), -448.0f);
  EXPECT_EQ(f8e4m3fnToFloat(0x78), 256.0f); // S.1111.000 is finite: no inf
  EXPECT_EQ(f8e4m3fnToFloat(0x08), std::ldexp(1.0f, -6)); // smallest normal
  EXPECT_EQ(f8e4m3fnToFloat(0x01), std::ldexp(1.0f, -9)); // smallest subnormal
  EXPECT_EQ(f8e4m3fnToFloat(0x07), std::ldexp(7.0f, -9));
  int nans = 0;
  for (int c = 0; c < 256; ++c) {
    float v = f8e4m3fnToFloat(static_cast<uint8_t>(c));
    EXPECT_FALSE(std::isinf(v)) << c;
    if (std::isnan(v)) {
      ++nans;
      EXPECT_TRUE(c == 0x7f || c == 0xff) << c;
      continue;
    }
    EXPECT_EQ(-v, f8e4m3fnToFloat(static_cast<uint8_t>(c ^ 0x80))) << c;
    if (c > 0 && c <= 0x7e) { // strictly increasing over the positive codes
      EXPECT_LT(f8e4m3fnToFloat(static_cast<uint8_t>(c - 1)), v) << c;
    }
  }
  EXPECT_EQ(nans, 2);
}

TEST(SafetensorsConvert, Float8E5M2) {
  EXPECT_EQ(f8e5m2ToFloat(0x3c), 1.0f);
  EXPECT_EQ(f8e5m2ToFloat(0x7b), 57344.0f);
  EXPECT_EQ(f8e5m2ToFloat(0x7c), INFINITY);
  EXPECT_EQ(f8e5m2ToFloat(0xfc), -INFINITY);
  EXPECT_EQ(f8e5m2ToFloat(0x01), std::ldexp(1.0f, -16));
  EXPECT_EQ(f8e5m2ToFloat(0x04), std::ldexp(1.0f, -14));
  int nans = 0;
  for (int c = 0; c < 256; ++c) {
    float v = f8e5m2ToFloat(static_cast<uint8_t>(c));
    if (std::isnan(v)) {
      ++nans;
      EXPECT_TRUE((c & 0x7f) >= 0x7d) << c;
    } else if (c > 0 && c <= 0x7c) {
      EXPECT_LT(f8e5m2ToFloat(static_cast<uint8_t>(c - 1)), v) << c;
    }
  }
  EXPECT_EQ(nans, 6);
}

TensorView viewOf(DType t, std::vector<int64_t> shape,
                  const std::vector<uint8_t> &bytes) {
  TensorView v;
  v.name = "v";
  v.dtype = t;
  v.shape = std::move(shape);
  v.begin = 100;
  v.end = 100 + bytes.size();
  v.bufferOffset = 1000;
  v.data = bytes.data();
  return v;
}

TEST(SafetensorsConvert, IntegersAndBool) {
  std::vector<uint8_t> i64(16);
  int64_t lo = INT64_MIN, hi = INT64_MAX;
  std::memcpy(i64.data(), &lo, 8);
  std::memcpy(i64.data() + 8, &hi, 8);
  auto f = toFloat32(viewOf(DType::I64, {2}, i64));
  ASSERT_TRUE(f);
  EXPECT_EQ((*f)[0], -9223372036854775808.0f);
  EXPECT_EQ((*f)[1], 9223372036854775808.0f); // rounds to 2^63
  std::vector<uint8_t> u64(8, 0xff);
  auto g = toFloat64(viewOf(DType::U64, {1}, u64));
  ASSERT_TRUE(g);
  EXPECT_EQ((*g)[0], 18446744073709551616.0);
  std::vector<uint8_t> i32 = {0, 0, 0, 0x80, 0xff, 0xff, 0xff, 0x7f};
  auto h = toFloat64(viewOf(DType::I32, {2}, i32));
  ASSERT_TRUE(h);
  EXPECT_EQ((*h)[0], -2147483648.0);
  EXPECT_EQ((*h)[1], 2147483647.0);
  std::vector<uint8_t> i8 = {0x80, 0x7f, 0xff};
  auto k = toFloat32(viewOf(DType::I8, {3}, i8));
  ASSERT_TRUE(k);
  EXPECT_EQ(*k, (std::vector<float>{-128, 127, -1}));
  auto ku = toFloat32(viewOf(DType::U8, {3}, i8));
  ASSERT_TRUE(ku);
  EXPECT_EQ(*ku, (std::vector<float>{128, 127, 255}));
  std::vector<uint8_t> u16 = {0xff, 0xff, 0x00, 0x80};
  auto m = toFloat32(viewOf(DType::U16, {2}, u16));
  ASSERT_TRUE(m);
  EXPECT_EQ(*m, (std::vector<float>{65535, 32768}));
  auto s16 = toFloat32(viewOf(DType::I16, {2}, u16));
  ASSERT_TRUE(s16);
  EXPECT_EQ(*s16, (std::vector<float>{-1, -32768}));

  std::vector<uint8_t> b = {0, 1, 1, 0};
  auto bb = toFloat32(viewOf(DType::BOOL, {2, 2}, b));
  ASSERT_TRUE(bb);
  EXPECT_EQ(*bb, (std::vector<float>{0, 1, 1, 0}));
  std::vector<uint8_t> bad = {0, 1, 2};
  auto e = toFloat32(viewOf(DType::BOOL, {3}, bad));
  ASSERT_FALSE(e);
  EXPECT_THAT(e.message(), HasSubstr("BOOL element 2 at absolute byte offset "
                                     "1102 is 2, expected 0 or 1"));
}

TEST(SafetensorsConvert, FloatsAndScalars) {
  std::vector<uint8_t> f32(4);
  float x = -3.25f;
  std::memcpy(f32.data(), &x, 4);
  auto a = toFloat32(viewOf(DType::F32, {}, f32)); // rank-0
  ASSERT_TRUE(a);
  EXPECT_EQ(*a, std::vector<float>{-3.25f});
  std::vector<uint8_t> f64(8);
  double d = 0.1;
  std::memcpy(f64.data(), &d, 8);
  auto b = toFloat64(viewOf(DType::F64, {1}, f64));
  ASSERT_TRUE(b);
  EXPECT_EQ((*b)[0], 0.1);
  auto c = toFloat32(viewOf(DType::F64, {1}, f64));
  ASSERT_TRUE(c);
  EXPECT_EQ((*c)[0], 0.1f);
  std::vector<uint8_t> h = {0x00, 0x3c, 0x00, 0xc0};
  auto hh = toFloat32(viewOf(DType::F16, {2}, h));
  ASSERT_TRUE(hh);
  EXPECT_EQ(*hh, (std::vector<float>{1.0f, -2.0f}));
  auto bf = toFloat32(viewOf(DType::BF16, {2}, {0x80, 0x3f, 0x00, 0xc0}));
  ASSERT_TRUE(bf);
}

TEST(SafetensorsConvert, InconsistentViewsAreErrors) {
  std::vector<uint8_t> bytes(6);
  auto a = toFloat32(viewOf(DType::F32, {2}, bytes));
  ASSERT_FALSE(a);
  EXPECT_THAT(a.message(), HasSubstr("does not match its shape"));
  auto b = toFloat32(viewOf(DType::F32, {-1}, bytes));
  ASSERT_FALSE(b);
  EXPECT_THAT(b.message(), HasSubstr("negative"));
  TensorView v = viewOf(DType::U8, {4}, std::vector<uint8_t>(4));
  v.data = nullptr;
  EXPECT_FALSE(toFloat32(v));
  TensorView huge = viewOf(DType::U8, {INT64_MAX, INT64_MAX}, bytes);
  EXPECT_FALSE(toFloat64(huge));
}

TEST(SafetensorsConvert, DTypeTable) {
  EXPECT_EQ(dtypeSize(DType::BOOL), 1u);
  EXPECT_EQ(dtypeSize(DType::F8_E5M2), 1u);
  EXPECT_EQ(dtypeSize(DType::BF16), 2u);
  EXPECT_EQ(dtypeSize(DType::U32), 4u);
  EXPECT_EQ(dtypeSize(DType::F64), 8u);
  EXPECT_EQ(dtypeSize(DType::U64), 8u);
  EXPECT_EQ(parseDType("F8_E4M3"), DType::F8_E4M3);
  EXPECT_EQ(parseDType("bf16"), std::nullopt);
  EXPECT_TRUE(isFloatDType(DType::F8_E5M2));
  EXPECT_FALSE(isFloatDType(DType::BOOL));
  // Alignment order: sizes never decrease along the enum.
  for (unsigned i = 1; i < kNumDTypes; ++i)
    EXPECT_LE(dtypeSize(static_cast<DType>(i - 1)),
              dtypeSize(static_cast<DType>(i)));
}

} // namespace
