//===- Compiler.cpp - compileArtifact and the ladder behind C -------------===//

#include "CAPISupport.h"

#include "qtensor-c/Compiler.h"
#include "qtensor/Compiler/Compile.h"
#include "qtensor/Support/JsonObjectReader.h"

using namespace qtensor;

namespace {

/// The request JSON as a CompileRequest; unknown fields are refused.
Expected<compiler::CompileRequest> readRequest(const char *text) {
  if (!text)
    return makeError("the compile request is null");
  QTENSOR_ASSIGN_OR_RETURN(
      nlohmann::json j, parseStrictJson(text, "compile request", 1 << 20, 16));
  JsonObjectReader r(j, "request");
  QTENSOR_TRY(r.expectObject());
  compiler::CompileRequest q;
  q.target = "host";
  QTENSOR_TRY(r.readString("input", q.input));
  QTENSOR_TRY(r.readString("output_dir", q.outputDir));
  auto optional = [&](const char *key, std::string &out) -> Status {
    std::optional<std::string> v;
    QTENSOR_TRY(r.readOptionalString(key, v));
    if (v)
      out = *v;
    return Status::ok();
  };
  QTENSOR_TRY(optional("target", q.target));
  QTENSOR_TRY(optional("weights", q.weights));
  QTENSOR_TRY(optional("quant", q.quant));
  if (r.find("phase"))
    QTENSOR_TRY(r.readEnum("phase", &kernels::parsePhaseChoice, q.phase));
  if (r.find("fallback"))
    QTENSOR_TRY(
        r.readEnum("fallback", &kernels::parseFallbackPolicy, q.fallback));
  if (r.find("group_policy"))
    QTENSOR_TRY(r.readEnum("group_policy", &compiler::parseGroupPolicyChoice,
                           q.groupPolicy));
  if (r.find("tp"))
    QTENSOR_TRY(r.readInt("tp", 1, 64, q.tp));
  for (auto [key, out] :
       {std::pair{"exclude", &q.excludes}, std::pair{"include", &q.includes}}) {
    const nlohmann::json *list = r.find(key);
    if (!list)
      continue;
    if (!list->is_array())
      return makeError(r.at(key), ": expected an array of globs");
    for (size_t i = 0; i < list->size(); ++i) {
      std::string glob;
      QTENSOR_TRY(JsonObjectReader::toString(
          (*list)[i], JsonObjectReader::indexed(r.at(key), i), glob));
      out->push_back(glob);
    }
  }
  QTENSOR_TRY(r.noUnknownKeys());
  QTENSOR_TRY(compiler::validateCompileRequest(q));
  return q;
}

int finish(nlohmann::json j, char **resultJson) {
  bool ok = j.value("ok", false) && j.value("verified", true);
  if (resultJson)
    *resultJson = capi::copyString(
        j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace));
  return ok ? 0 : 1;
}

} // namespace

extern "C" int qtensorCompileArtifact(const char *requestJson,
                                      char **resultJson) {
  try {
    capi::installBuilders();
    auto request = readRequest(requestJson);
    if (!request)
      return finish({{"ok", false}, {"error", request.message()}}, resultJson);
    auto result = compiler::compileArtifact(*request);
    if (!result)
      return finish({{"ok", false}, {"error", result.message()}}, resultJson);
    return finish({{"ok", true},
                   {"verified", result->verified},
                   {"artifact", result->artifactDir},
                   {"linears", result->linears},
                   {"fallbacks", result->fallbacks},
                   {"ladder", result->ladder.toJson()},
                   {"peak_rss_bytes", result->peakRssBytes}},
                  resultJson);
  } catch (const std::exception &e) { // out of memory: say so, do not abort
    return finish({{"ok", false}, {"error", e.what()}}, resultJson);
  }
}

extern "C" int qtensorVerifyArtifact(const char *dir, char **resultJson) {
  try {
    capi::installBuilders();
    if (!dir)
      return finish({{"ok", false}, {"error", "the directory is null"}},
                    resultJson);
    verify::LadderResult r = verify::runLadder(dir);
    nlohmann::json j = r.toJson();
    j["ok"] = r.ok;
    return finish(std::move(j), resultJson);
  } catch (const std::exception &e) {
    return finish({{"ok", false}, {"error", e.what()}}, resultJson);
  }
}
