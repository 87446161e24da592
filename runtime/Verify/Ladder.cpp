//===- Ladder.cpp - The parity ladder of an artifact ----------------------===//

#include "qtensor/Verify/Ladder.h"
#include "LadderLevels.h"

#include <chrono>

#include "qtensor/Formats/Artifact.h"
#include "qtensor/Formats/QuantizedStorage.h"
#include "qtensor/Runtime/ArtifactMetadata.h"
#include "qtensor/Support/MappedFile.h"
#include "qtensor/Support/Sha256.h"
#include "qtensor/Support/ThreadPool.h"

#include <functional>
#include <map>

namespace qtensor::verify {

std::string LevelResult::toText() const {
  return level + " " + name + ": " + (ok ? "ok" : "FAILED") + " - " + detail;
}

nlohmann::ordered_json LadderResult::toJson() const {
  nlohmann::ordered_json out;
  out["ok"] = ok;
  out["levels"] = nlohmann::ordered_json::array();
  for (const LevelResult &l : levels) {
    nlohmann::ordered_json level = {{"level", l.level},
                                    {"name", l.name},
                                    {"ok", l.ok},
                                    {"detail", l.detail},
                                    {"seconds", l.seconds}};
    if (!l.metrics.is_null())
      level["metrics"] = l.metrics;
    out["levels"].push_back(std::move(level));
  }
  return out;
}

namespace detail {

Expected<nlohmann::json> readRoleJson(const artifact::Artifact &a,
                                      artifact::FileRole role,
                                      const char *what) {
  for (const artifact::FileEntry &f : a.manifest().files) {
    if (f.role != role)
      continue;
    const MappedFile *file = a.file(f.path);
    if (!file)
      return makeError(f.path, ": not mapped");
    // The same bounded, strict parse the runtime's loader applies.
    return runtime::parseBoundedJson(
        {reinterpret_cast<const char *>(file->data()), file->size()}, f.path);
  }
  return makeError("the manifest lists no ", what);
}

Expected<nlohmann::json> readReport(const artifact::Artifact &a) {
  QTENSOR_ASSIGN_OR_RETURN(
      nlohmann::json report,
      readRoleJson(a, artifact::FileRole::Report, "file with role \"report\""));
  if (!report.is_object())
    return makeError("the report is not a JSON object");
  return report;
}

Expected<LogicalTensor> loadQuantized(const artifact::Artifact &a,
                                      const artifact::TensorEntry &entry) {
  QTENSOR_ASSIGN_OR_RETURN(artifact::ResolvedTensor r, a.tensor(entry.name));
  const artifact::QuantizedTensor &q = *entry.quantized();
  LogicalTensor t;
  t.descriptor = q.logical;
  t.codeBytes = r.codes->data;
  t.codeSize = r.codes->byteSize();
  auto scales = artifact::readQParams(r.scales->dtype, r.scales->data,
                                      r.scales->byteSize());
  if (!scales)
    return makeError(entry.name, ".scales: ", scales.message());
  t.scales = scales.take();
  if (r.zeros) {
    auto zeros = artifact::readQParams(r.zeros->dtype, r.zeros->data,
                                       r.zeros->byteSize());
    if (!zeros)
      return makeError(entry.name, ".zeros: ", zeros.message());
    t.zeros = zeros.take();
  }
  return t;
}

} // namespace detail

namespace {

/// After L0 failed: which stored tensors' bytes differ from the digests the
/// compiler recorded in the report (itself checked against the manifest).
/// Empty when that cannot be told (no readable report, an unparsable shard).
std::string locateChangedTensors(const std::string &dir) {
  auto root = artifact::ArtifactRoot::open(dir);
  if (!root)
    return "";
  auto manifest = artifact::readManifest(*root);
  if (!manifest || !*manifest)
    return "";
  const artifact::Manifest &m = **manifest;
  nlohmann::json report;
  for (const artifact::FileEntry &f : m.files)
    if (f.role == artifact::FileRole::Report) {
      auto file = root->openVerified(f.path, f.bytes, f.sha256);
      if (!file)
        return "";
      auto parsed = runtime::parseBoundedJson(
          {reinterpret_cast<const char *>(file->data()), file->size()}, f.path);
      if (!parsed)
        return "";
      report = parsed.take();
    }
  if (!report.is_object() || !report.contains("stored_sha256") ||
      !report["stored_sha256"].is_object())
    return "";
  const nlohmann::json &digests = report["stored_sha256"];
  std::string changed;
  for (const artifact::FileEntry &f : m.files) {
    if (f.role != artifact::FileRole::Shard)
      continue;
    auto opened = root->openFile(f.path);
    if (!opened)
      continue;
    auto mapped =
        MappedFile::fromDescriptor(opened->fd.get(), root->display(f.path));
    if (!mapped)
      continue;
    auto shard = safetensors::SafetensorsFile::fromMappedFile(mapped.take());
    if (!shard)
      continue; // the header itself is damaged: L0's message says where
    for (const safetensors::TensorView &t : shard->tensors()) {
      auto hex = sha256HexOfMapped(t.data, t.byteSize());
      auto it = digests.find(t.name);
      if (hex && it != digests.end() && it->is_string() && *it != *hex)
        changed += (changed.empty() ? "" : ", ") + f.path + ": " + t.name;
    }
  }
  return changed;
}

LevelResult levelBytes(const std::string &dir,
                       std::optional<artifact::Artifact> &opened) {
  LevelResult r{"L0", "bytes and inventory", false, ""};
  artifact::OpenOptions options;
  options.digests = artifact::DigestCheck::All;
  auto a = artifact::openArtifact(dir, options);
  if (!a) {
    r.detail = a.message();
    if (std::string changed = locateChangedTensors(dir); !changed.empty())
      r.detail += "; changed bytes in tensor(s) " + changed;
    return r;
  }
  size_t shards = 0, chunks = 0;
  for (const auto &f : a->manifest().files) {
    shards += f.role == artifact::FileRole::Shard;
    chunks += f.chunks ? f.chunks->sha256.size() : 0;
  }
  r.ok = true;
  r.detail = std::to_string(a->manifest().files.size()) + " files (" +
             std::to_string(shards) + " shards) hashed" +
             (chunks ? " whole and in " + std::to_string(chunks) + " chunks"
                     : std::string()) +
             ", " + std::to_string(a->manifest().tensors.size()) +
             " tensors present as declared";
  opened.emplace(a.take());
  return r;
}

/// Runs `check` on every quantized tensor of `a`, spread over the thread
/// pool (tensors are independent; each holds only its own unpacked codes),
/// and returns the count checked, or the failure of the first failing
/// tensor in manifest order, as one pass in that order would.
Expected<size_t> forEachQuantized(
    const artifact::Artifact &a,
    const std::function<Status(const artifact::TensorEntry &)> &check) {
  std::vector<const artifact::TensorEntry *> entries;
  for (const artifact::TensorEntry &e : a.manifest().tensors)
    if (e.isQuantized())
      entries.push_back(&e);
  std::vector<std::string> failures(entries.size());
  defaultThreadPool().parallelFor(entries.size(), [&](size_t i) {
    if (Status s = check(*entries[i]); !s)
      failures[i] = s.message();
  });
  for (const std::string &f : failures)
    if (!f.empty())
      return makeError(f);
  return entries.size();
}

/// Reads and checks the streams of every mixed_2416 tensor of `a` (in
/// manifest order), handing each to `check`; returns the count.
Expected<size_t>
forEachMixed2416(const artifact::Artifact &a,
                 const std::function<Status(const artifact::TensorEntry &,
                                            const Mixed2416Streams &)> &check) {
  size_t count = 0;
  for (const artifact::TensorEntry &e : a.manifest().tensors) {
    const artifact::Mixed2416Tensor *m = e.mixed2416();
    if (!m)
      continue;
    QTENSOR_ASSIGN_OR_RETURN(artifact::ResolvedTensor r, a.tensor(e.name));
    QTENSOR_ASSIGN_OR_RETURN(
        Mixed2416Streams streams,
        artifact::readMixed2416Streams(e.name, m->logical, r.streams));
    QTENSOR_TRY(check(e, streams));
    ++count;
  }
  return count;
}

LevelResult levelPacking(const artifact::Artifact &a) {
  LevelResult r{"L1", "pack/unpack", false, ""};
  auto count =
      forEachQuantized(a, [&](const artifact::TensorEntry &e) -> Status {
        QTENSOR_ASSIGN_OR_RETURN(detail::LogicalTensor t,
                                 detail::loadQuantized(a, e));
        // A block of rows at a time: unpacked, repacked, compared with
        // the same rows' stored bytes. `mismatch` says the repacking, not
        // the unpacking, failed.
        bool mismatch = false;
        Status same = artifact::forEachStoredRowBlock(
            t.descriptor, t.codeBytes, t.codeSize, uint64_t(1) << 22,
            [&](int64_t first, int64_t count,
                const std::vector<int32_t> &codes) -> Status {
              QuantizedTensorDescriptor part = t.descriptor;
              if (part.shape.size() == 2) // other ranks are one block
                part.shape[0] = count;
              QTENSOR_ASSIGN_OR_RETURN(
                  auto range,
                  artifact::storedRowsByteRange(t.descriptor, first, count));
              mismatch = true;
              auto repacked = artifact::packStoredCodes(part, codes);
              if (!repacked)
                return makeError(": repacking: ", repacked.message());
              const uint8_t *stored = t.codeBytes + range.first;
              if (repacked->size() != range.second ||
                  !std::equal(repacked->begin(), repacked->end(), stored)) {
                size_t at = 0;
                while (at < range.second && at < repacked->size() &&
                       (*repacked)[at] == stored[at])
                  ++at;
                return makeError(
                    ".codes: repacking the unpacked codes differs at byte ",
                    range.first + at, " (layout ", t.descriptor.layout.family,
                    ")");
              }
              mismatch = false;
              return Status::ok();
            });
        if (!same)
          return makeError(e.name, mismatch ? "" : ".codes: ", same.message());
        // Only the tensors in flight stay resident (the shard is a read-only
        // mapping).
        releaseMappedPages(t.codeBytes, t.codeSize);
        return Status::ok();
      });
  if (!count) {
    r.detail = count.message();
    return r;
  }
  // A mixed_2416 tensor's streams are stored as the family defines them:
  // reading them checks every size, code range and CSR rule.
  auto mixed = forEachMixed2416(
      a, [](const artifact::TensorEntry &, const Mixed2416Streams &) {
        return Status::ok();
      });
  if (!mixed) {
    r.detail = mixed.message();
    return r;
  }
  r.ok = true;
  r.detail = std::to_string(*count) +
             " quantized tensors unpack and repack to the same bytes";
  if (*mixed)
    r.detail +=
        "; " + std::to_string(*mixed) + " mixed_2416 tensors' streams verify";
  return r;
}

LevelResult levelReference(const artifact::Artifact &a) {
  LevelResult r{"L2", "reference reconstruction", false, ""};
  auto report = detail::readReport(a);
  if (!report) {
    r.detail = report.message();
    return r;
  }
  // Each tensor's recorded digest and its form: XXH3-128 where the report
  // has it, else the SHA-256 of earlier compilers.
  std::map<std::string, std::pair<std::string, artifact::DigestForm>> expected;
  if (report->contains("tensors") && (*report)["tensors"].is_array())
    for (const auto &t : (*report)["tensors"]) {
      if (!t.is_object() || !t.contains("name") || !t["name"].is_string())
        continue;
      auto text = [&](const char *key) -> const nlohmann::json * {
        return t.contains(key) && t[key].is_string() ? &t[key] : nullptr;
      };
      if (const nlohmann::json *xxh = text("reconstruction_xxh3_128"))
        expected[t["name"]] = {*xxh, artifact::DigestForm::Xxh3};
      else if (const nlohmann::json *sha = text("reconstruction_sha256"))
        expected[t["name"]] = {*sha, artifact::DigestForm::Sha256};
    }
  auto count =
      forEachQuantized(a, [&](const artifact::TensorEntry &e) -> Status {
        auto it = expected.find(e.name);
        if (it == expected.end())
          return makeError(e.name,
                           ": the report records no reconstruction digest");
        const auto &[recorded, form] = it->second;
        QTENSOR_ASSIGN_OR_RETURN(detail::LogicalTensor t,
                                 detail::loadQuantized(a, e));
        auto digest = artifact::storedReconstructionDigest(
            t.descriptor, t.codeBytes, t.codeSize, t.scales, t.zeros, form);
        if (!digest)
          return makeError(e.name, ": ", digest.message());
        if (*digest != recorded)
          return makeError(e.name, ": reconstruction digest ",
                           digest->substr(0, 16),
                           "... differs from the compiler's ",
                           recorded.substr(0, 16), "...");
        releaseMappedPages(t.codeBytes, t.codeSize);
        return Status::ok();
      });
  if (!count) {
    r.detail = count.message();
    return r;
  }
  auto mixed = forEachMixed2416(
      a,
      [&](const artifact::TensorEntry &e,
          const Mixed2416Streams &streams) -> Status {
        auto it = expected.find(e.name);
        if (it == expected.end() ||
            it->second.second != artifact::DigestForm::Sha256)
          return makeError(e.name, ": the report records no reconstruction "
                                   "digest (reconstruction_sha256)");
        QTENSOR_ASSIGN_OR_RETURN(std::string digest,
                                 artifact::mixed2416ReconstructionDigest(
                                     e.mixed2416()->logical, streams));
        if (digest != it->second.first)
          return makeError(e.name, ": reconstruction digest ",
                           digest.substr(0, 16),
                           "... differs from the compiler's ",
                           it->second.first.substr(0, 16), "...");
        return Status::ok();
      });
  if (!mixed) {
    r.detail = mixed.message();
    return r;
  }
  r.ok = true;
  r.detail = std::to_string(*count + *mixed) +
             " reconstructions match the digests recorded at compile time";
  return r;
}

} // namespace

LadderResult runLadder(const std::string &dir, const LadderOptions &options) {
  LadderResult result;
  std::optional<artifact::Artifact> a;
  auto finished = [&] {
    if (!options.progress)
      return;
    const LevelResult &l = result.levels.back();
    options.progress->advance(result.levels.size(), 6,
                              "levels (" + l.level + " " + l.name + ": " +
                                  (l.ok ? "ok" : "FAILED") + ")");
  };
  auto bytesStart = std::chrono::steady_clock::now();
  result.levels.push_back(levelBytes(dir, a));
  result.levels.back().seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                    bytesStart)
          .count();
  finished();
  if (!a) {
    for (auto [level, name] : {std::pair{"L1", "pack/unpack"},
                               {"L2", "reference reconstruction"},
                               {"L3", "operator parity (host)"},
                               {"L4", "model parity"},
                               {"L5", "dispatch and resources"}})
      result.levels.push_back({level, name, false, "not run: L0 failed"});
    result.ok = false;
    return result;
  }
  // A level reads JSON the artifact supplies; a field of the wrong type
  // fails that level with the library's message instead of the command.
  auto guarded = [&](const char *level, const char *name, auto run) {
    auto start = std::chrono::steady_clock::now();
    try {
      result.levels.push_back(run());
    } catch (const nlohmann::json::exception &e) {
      result.levels.push_back(
          {level, name, false, std::string("malformed JSON: ") + e.what()});
    }
    result.levels.back().seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count();
    finished();
  };
  guarded("L1", "pack/unpack", [&] { return levelPacking(*a); });
  guarded("L2", "reference reconstruction", [&] { return levelReference(*a); });
  guarded("L3", "operator parity",
          [&] { return detail::levelOperator(*a, options); });
  guarded("L4", "model parity",
          [&] { return detail::levelModel(*a, dir, options); });
  guarded("L5", "dispatch and resources",
          [&] { return detail::levelDispatch(*a, options); });
  result.ok = true;
  for (const LevelResult &l : result.levels)
    result.ok &= l.ok;
  return result;
}

} // namespace qtensor::verify
