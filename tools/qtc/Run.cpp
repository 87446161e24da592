//===- Run.cpp - `qtc run`: load an artifact and run its linears ----------===//
//
// A thin driver over the runtime: options -> LoadOptions, the load, then
// runOps or runGroupOps (Runtime/OpRun.h: activations, one call per op,
// --check against the float64 reference) and the report they return.
// --rank all loads every rank in this process and joins their outputs with
// the host stand-in for the collectives (Runtime/TensorParallel.h; not
// NCCL). --prompt runs the decoder program (Generate.h). No MLIR: qtc run
// works in a QTENSOR_ENABLE_MLIR=OFF build too.
//
//===----------------------------------------------------------------------===//

#include "Run.h"

#include "CommandLine.h"
#include "Generate.h"

#include "qtensor/Runtime/OpRun.h"
#include "qtensor/Support/ThreadPool.h"
#include "qtensor/Tokenizer/ChatTemplate.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdlib>
#include <iostream>
#include <optional>

namespace qtensor::qtc {
namespace {

using json = nlohmann::ordered_json;
using namespace qtensor::runtime;

const char *kRunUsage =
    "usage: qtc run DIR --prompt TEXT | --prompt-ids ID,ID,... [-n N]\n"
    "               | --chat TEXT [--system TEXT] | --messages FILE.json\n"
    "               [--chat-template NAME]\n"
    "               [--temperature X [--top-k K] [--top-p P] [--min-p P]]\n"
    "               [--repeat-penalty X] [--frequency-penalty X]\n"
    "               [--presence-penalty X] [--repeat-last-n N]\n"
    "               [--seed S] [--context C]\n"
    "               [--logits-out FILE] [--threads N] [--json]\n"
    "       qtc run DIR [--op NAME] [--input FILE.safetensors] [--tokens T]\n"
    "               [--rank R|all] [--backend host|cuda|auto]\n"
    "               [--fallback forbid|warn|allow] [--seed S] [--check]\n"
    "               [--no-warmup] [--json]\n"
    "  with --prompt: run the artifact's decoder program (docs/model.md):\n"
    "  tokenize TEXT with the artifact's tokenizer (BOS per the model's\n"
    "  rule; control tokens such as <start_of_turn> written in TEXT are\n"
    "  tokens, as llama.cpp parses a prompt), prefill it, decode up to N\n"
    "  tokens (default 16; greedy at temperature 0, the default, else\n"
    "  sampled with --seed; stopping early at an end-of-generation token),\n"
    "  stream the text and print prefill and decode tokens/s\n"
    "  --prompt-ids  the prompt as token ids (no tokenizer needed)\n"
    "  --chat TEXT   a user turn: the prompt is the conversation ([--system\n"
    "                TEXT], TEXT, the assistant's opening) in the model's\n"
    "                chat format, as llama.cpp's built-in formats write it:\n"
    "                recognized from the tokenizer's chat_template, or\n"
    "                --chat-template NAME (llama.cpp's names: chatml,\n"
    "                llama3, gemma, mistral-v7, ...); only the reply prints\n"
    "  --messages FILE.json  the same for a whole conversation: a JSON\n"
    "                array of {\"role\": system|user|assistant, \"content\"}\n"
    "                ending with a user turn\n"
    "  --top-k K, --top-p P, --min-p P  with --temperature: sample only\n"
    "                from the K likeliest tokens, the smallest set holding\n"
    "                mass P, and those at least P times the likeliest's\n"
    "                probability (llama.cpp's order, before the temperature)\n"
    "  --repeat-penalty X, --frequency-penalty X, --presence-penalty X\n"
    "                llama.cpp's penalties of the tokens among the last N\n"
    "                (--repeat-last-n, default 64; the prompt's included),\n"
    "                greedy or sampled: a seen logit divided by X when\n"
    "                positive, multiplied when not, then lowered by count x\n"
    "                frequency + presence (off: 1, 0, 0)\n"
    "  --context C   KV cache positions (default: the trained context)\n"
    "  --logits-out FILE  the logits after the last prompt token, raw\n"
    "                little-endian float32 (n_vocab values)\n"
    "  --json        one object: prompt_tokens, tokens, text, timings\n"
    "  --threads N   host threads a linear's rows are split across (default:\n"
    "                $QTENSOR_THREADS, else every core); both modes\n"
    "\n"
    "  otherwise: load the artifact in DIR (verified, admitted,\n"
    "  materialized: seed M8.9 0x05D) and run its quantized linears, or the\n"
    "  one named\n"
    "  --op NAME     a manifest tensor or bound op name (default: every op\n"
    "                of this rank)\n"
    "  --input FILE  activations: the tensor named after the op, else \"x\";\n"
    "                [T, K] or [K] (T = 1), any float dtype, rounded to the\n"
    "                op's activation dtype; a row-parallel rank takes its K\n"
    "                slice of a [T, K_global] input (with --rank all: the\n"
    "                tensor named after the op or \"x\", [T, K_global])\n"
    "  --outputs FILE  write every op's output as an F32 tensor named after\n"
    "                the op into a safetensors file (to compare with another\n"
    "                framework's outputs on the same --input)\n"
    "  --tokens T    rows of generated activations (default 1; seeded by\n"
    "                --seed, default 0x5EED, and the op name: "
    "docs/runtime.md)\n"
    "  --rank R      tensor-parallel rank to load (default 0)\n"
    "  --rank all    load every rank in this process and join their outputs\n"
    "                as the collectives would (all_gather of column slices,\n"
    "                all_reduce(sum) of row partials, then the bias; on the\n"
    "                host, standing in for NCCL); --check then compares with\n"
    "                the whole weight\n"
    "  --rank mpi    under `mpirun -np TP`: this process runs its MPI rank "
    "and\n"
    "                the outputs are joined through MPI, bit for bit as\n"
    "                --rank all joins them; rank 0 prints\n"
    "  --backend     host, cuda, or auto (default: the GPU when the artifact\n"
    "                has GPU kernels and a GPU is present)\n"
    "  --fallback    override the report's full-dequant fallback policy\n"
    "  --backend-fallback forbid|warn|allow\n"
    "                with --backend auto, a GPU artifact where no GPU is\n"
    "                usable: refuse (forbid, the default), or run its host\n"
    "                twins, warning on stderr (warn) or not (allow)\n"
    "  --check       compare each output with the float64 reference and its\n"
    "                error bound; exit 1 if any output exceeds it\n"
    "  --no-warmup   skip the load-time warmup calls\n"
    "  --trust-artifact-code  load the artifact's own host code (its\n"
    "                constructors run in this process) instead of this\n"
    "                installation's rebuild of its kernel records (both\n"
    "                modes; docs/security.md)\n"
    "  --mmap        map the artifact's files instead of reading them into\n"
    "                memory (no copy; the files must not change while in\n"
    "                use: a truncated one ends the run with exit status 74)\n"
    "  --json        print one JSON object\n"
    "exit status: 0 ran (and checked), 1 load, run or check failure, 2 usage\n";

struct Options {
  std::string dir, op, input, outputs;
  std::optional<int64_t> tokens;
  int64_t rank = 0;
  bool allRanks = false; ///< --rank all (or mpi)
  bool mpiRanks = false; ///< --rank mpi: this process's rank, MPI between
  uint64_t seed = kDefaultActivationSeed;
  BackendChoice backend = BackendChoice::Auto;
  std::optional<kernels::FallbackPolicy> fallback;
  kernels::FallbackPolicy backendFallback = kernels::FallbackPolicy::Forbid;
  bool check = false, warmup = true, json = false;
  bool trustArtifactCode = false, mapFiles = false;
  // --prompt mode (Generate.h).
  std::optional<std::string> prompt;
  std::optional<std::vector<int32_t>> promptIds;
  std::optional<std::string> chat, system, chatTemplate; ///< --chat mode
  std::optional<std::string> messages;                   ///< --messages
  int64_t maxTokens = 16, context = 0;
  double temperature = 0;
  int64_t topK = 0;
  double topP = 1.0, minP = 0.0;
  runtime::PenaltyOptions penalties;
  bool seedGiven = false;
  std::string logitsOut;
};

std::optional<std::vector<int32_t>> parseIds(const std::string &v) {
  std::vector<std::string> items;
  appendCommaList(items, v);
  std::vector<int32_t> ids;
  for (const std::string &item : items) {
    std::optional<int64_t> id = parseInteger(item, 0, INT32_MAX, 0);
    if (!id || ids.size() >= (1u << 20))
      return std::nullopt;
    ids.push_back(int32_t(*id));
  }
  return ids;
}

/// A parser of a finite number in [low, high], or (low, high] when the low
/// end is excluded.
auto parseNumberIn(double low, double high, bool lowIncluded) {
  return [=](const std::string &v) -> std::optional<double> {
    char *end = nullptr;
    double x = std::strtod(v.c_str(), &end);
    if (v.empty() || *end != '\0' || !std::isfinite(x) || x > high ||
        (lowIncluded ? x < low : x <= low))
      return std::nullopt;
    return x;
  };
}

/// Parses argv into `o`; none when the run should go ahead, else the exit
/// status (usage printed).
std::optional<int> parse(const std::vector<std::string> &args, Options &o) {
  using Error = std::optional<std::string>;
  CommandLine cl("qtc run", kRunUsage);
  cl.flag({"--json"}, o.json)
      .flag({"--check"}, o.check)
      .flag({"--no-warmup"}, o.warmup, false)
      .flag({"--trust-artifact-code"}, o.trustArtifactCode)
      .flag({"--mmap"}, o.mapFiles)
      .option({"--op"}, "a value", o.op)
      .option({"--outputs"}, "a value", o.outputs)
      .option({"--prompt"}, "a value", o.prompt)
      .option({"--chat"}, "a value", o.chat)
      .option({"--messages"}, "a value", o.messages)
      .option({"--system"}, "a value", o.system)
      .option({"--chat-template"}, "a value",
              [&o](const std::string &v) -> Error {
                if (qtensor::chatFormatByName(v).empty())
                  return "\"" + v +
                         "\" is not a chat format llama.cpp names "
                         "(implemented here: " +
                         qtensor::implementedChatFormats() + ")";
                o.chatTemplate = v;
                return std::nullopt;
              })
      .option({"--prompt-ids"}, "a value",
              parsedInto(o.promptIds, parseIds,
                         "expected comma-separated token ids"))
      .option({"-n"}, "a value",
              parsedInto(
                  o.maxTokens,
                  [](const std::string &v) {
                    return parseInteger(v, 0, 1 << 20, 0);
                  },
                  "expected an integer in [0, 2^20]"))
      .option({"--context"}, "a value",
              parsedInto(
                  o.context,
                  [](const std::string &v) {
                    return parseInteger(v, 1, 1 << 24, 0);
                  },
                  "expected an integer in [1, 2^24]"))
      .option({"--temperature"}, "a value",
              parsedInto(o.temperature, parseNumberIn(0, 100, true),
                         "expected a number in [0, 100]"))
      .option({"--top-k"}, "a value",
              parsedInto(
                  o.topK,
                  [](const std::string &v) {
                    return parseInteger(v, 1, 1 << 24, 0);
                  },
                  "expected an integer in [1, 2^24]"))
      .option({"--top-p"}, "a value",
              parsedInto(o.topP, parseNumberIn(0, 1, false),
                         "expected a number in (0, 1]"))
      .option({"--min-p"}, "a value",
              parsedInto(o.minP, parseNumberIn(0, 1, false),
                         "expected a number in (0, 1]"))
      .option({"--repeat-penalty"}, "a value",
              parsedInto(o.penalties.repeat, parseNumberIn(0, 100, false),
                         "expected a number in (0, 100]"))
      .option({"--frequency-penalty"}, "a value",
              parsedInto(o.penalties.frequency, parseNumberIn(-100, 100, true),
                         "expected a number in [-100, 100]"))
      .option({"--presence-penalty"}, "a value",
              parsedInto(o.penalties.presence, parseNumberIn(-100, 100, true),
                         "expected a number in [-100, 100]"))
      .option({"--repeat-last-n"}, "a value",
              parsedInto(
                  o.penalties.lastN,
                  [](const std::string &v) {
                    return parseInteger(v, 0, 1 << 24, 0);
                  },
                  "expected an integer in [0, 2^24]"))
      .option({"--logits-out"}, "a value", o.logitsOut)
      .option({"--input"}, "a value", o.input)
      .option({"--tokens"}, "a value",
              parsedInto(
                  o.tokens,
                  [](const std::string &v) {
                    return parseInteger(v, 1, 1 << 20, 0);
                  },
                  "expected an integer in [1, 2^20]"))
      .option({"--rank"}, "a value",
              [&o](const std::string &v) -> Error {
                auto r = parseInteger(v, 0, 65535, 0);
                if (v != "all" && v != "mpi" && !r)
                  return "expected all, mpi or an integer in [0, 65535]";
                o.allRanks = v == "all" || v == "mpi";
                o.mpiRanks = v == "mpi";
                o.rank = r.value_or(0);
                return std::nullopt;
              })
      .option({"--seed"}, "a value",
              [&o](const std::string &v) -> Error {
                std::optional<int64_t> s = parseInteger(v, 0, INT64_MAX, 0);
                if (!s)
                  return "expected a non-negative integer";
                o.seed = uint64_t(*s);
                o.seedGiven = true;
                return std::nullopt;
              })
      .option({"--threads"}, "a value",
              [](const std::string &v) -> Error {
                std::optional<int64_t> n = parseInteger(v, 1, 256);
                if (!n || !setDefaultThreadCount(unsigned(*n)))
                  return "expected an integer in [1, 256]";
                return std::nullopt;
              })
      .option({"--backend"}, "a value",
              parsedInto(o.backend, parseBackendChoice,
                         "expected host, cuda or auto"))
      .option({"--fallback"}, "a value",
              parsedInto(o.fallback, kernels::parseFallbackPolicy,
                         "expected forbid, warn or allow"))
      .option({"--backend-fallback"}, "a value",
              parsedInto(o.backendFallback, kernels::parseFallbackPolicy,
                         "expected forbid, warn or allow"))
      .positional(o.dir, "missing DIR");
  if (std::optional<int> status = cl.parse(args))
    return status;
  if (!o.input.empty() && o.tokens)
    return cl.usageError(
        "--tokens applies to generated activations, not --input");
  const bool generate = o.prompt || o.promptIds || o.chat || o.messages;
  if (int(bool(o.prompt)) + int(bool(o.promptIds)) + int(bool(o.chat)) +
          int(bool(o.messages)) >
      1)
    return cl.usageError(
        "give one of --prompt, --prompt-ids, --chat and --messages");
  if (o.system && !o.chat)
    return cl.usageError("--system is a turn before --chat's (--messages "
                         "holds its own)");
  if (o.chatTemplate && !o.chat && !o.messages)
    return cl.usageError("--chat-template formats --chat or --messages");
  if (generate &&
      (!o.op.empty() || !o.input.empty() || o.tokens || o.allRanks || o.check))
    return cl.usageError("--prompt runs the whole model; --op, --input, "
                         "--tokens, --rank all and --check are per-op");
  const bool cuts = o.topK || o.topP != 1.0 || o.minP != 0.0;
  const runtime::PenaltyOptions off;
  const bool penalties = o.penalties.repeat != off.repeat ||
                         o.penalties.frequency != off.frequency ||
                         o.penalties.presence != off.presence ||
                         o.penalties.lastN != off.lastN;
  if (!generate &&
      (!o.logitsOut.empty() || o.context || o.temperature || cuts || penalties))
    return cl.usageError("--logits-out, --context, --temperature, --top-k, "
                         "--top-p, --min-p and the penalties need --prompt");
  if (cuts && o.temperature == 0)
    return cl.usageError("--top-k, --top-p and --min-p cut what sampling "
                         "draws from: they need --temperature above 0");
  return std::nullopt;
}

int fail(const Options &o, const char *stage, const std::string &message) {
  return reportFailure("qtc run", o.json, stage, message);
}

/// --backend-fallback warn says so on stderr (the JSON marks it either way).
void warnOnBackendFallback(const Options &o, const LoadedModel &model) {
  if (model.backendFallback() &&
      o.backendFallback == kernels::FallbackPolicy::Warn)
    std::cerr << "qtc run: warning: " << *model.backendFallback() << "\n";
}

/// The load options both modes share (the rank is the caller's).
LoadOptions loadOptionsOf(const Options &o) {
  LoadOptions lo;
  lo.backend = o.backend;
  lo.backendFallback = o.backendFallback;
  lo.fallback = o.fallback;
  lo.warmup = o.warmup;
  lo.code.trustArtifactCode = o.trustArtifactCode;
  lo.access = o.mapFiles ? FileAccess::Map : FileAccess::Read;
  if (!o.op.empty())
    lo.ops = {o.op};
  return lo;
}

OpRunOptions opRunOptionsOf(const Options &o) {
  OpRunOptions r;
  r.artifact = o.dir;
  r.input = o.input;
  r.tokens = o.tokens;
  r.seed = o.seed;
  r.check = o.check;
  r.outputs = o.outputs;
  return r;
}

/// Prints the report (the process that speaks for a group only); the exit
/// status.
int print(const Options &o, const OpRunReport &r) {
  if (!r.speaks)
    return r.ok ? 0 : 1;
  if (r.failedStage)
    return fail(o, r.failedStage->c_str(), r.error);
  if (o.json)
    std::cout << r.json.dump(2) << "\n";
  else
    std::cout << r.text;
  return r.ok ? 0 : 1;
}

int runGroup(const Options &o, RankExchange *exchange);

/// --rank all: every rank in this process, outputs joined by the host
/// stand-in for the collectives; --rank mpi: one rank per process, joined
/// through MPI (Runtime/TensorParallel.h).
int runAllRanks(const Options &o) {
  if (!o.mpiRanks)
    return runGroup(o, nullptr);
#ifdef QTENSOR_QTC_MPI
  auto opened = openMpiExchange();
  if (!opened)
    return fail(o, "mpi", opened.message());
  std::unique_ptr<RankExchange> exchange = opened.take();
  try {
    return runGroup(o, exchange.get());
  } catch (const std::exception &e) {
    // Unwinding would finalize MPI, which waits for ranks that wait for
    // this one: end them all instead.
    std::cerr << "qtc run: error: rank " << exchange->rank() << ": " << e.what()
              << "\n";
    exchange->abort(1);
  }
#else
  return fail(o, "mpi",
              "--rank mpi: this qtc was built without MPI (install "
              "libopenmpi-dev and rebuild)");
#endif
}

int runGroup(const Options &o, RankExchange *exchange) {
  auto loaded =
      exchange
          ? TensorParallelGroup::loadRank(o.dir, loadOptionsOf(o), *exchange)
          : TensorParallelGroup::load(o.dir, loadOptionsOf(o));
  if (!loaded) {
    const bool speaks = !exchange || exchange->rank() == 0;
    return speaks ? fail(o, "load", loaded.message()) : 1;
  }
  TensorParallelGroup &group = **loaded;
  if (!exchange || exchange->rank() == 0)
    warnOnBackendFallback(o, group.rank(group.firstLocalRank()));
  return print(o, runGroupOps(group, exchange, opRunOptionsOf(o)));
}

} // namespace

int runRun(const std::vector<std::string> &args) {
  Options o;
  if (std::optional<int> status = parse(args, o))
    return *status;
  if (o.allRanks)
    return runAllRanks(o);
  if (o.prompt || o.promptIds || o.chat || o.messages) {
    GenerateArgs g;
    g.dir = o.dir;
    g.prompt = o.prompt;
    g.ids = o.promptIds;
    g.chat = o.chat;
    g.messages = o.messages;
    g.system = o.system;
    g.chatTemplate = o.chatTemplate;
    g.maxTokens = o.maxTokens;
    g.temperature = o.temperature;
    g.topK = o.topK;
    g.topP = o.topP;
    g.minP = o.minP;
    g.penalties = o.penalties;
    g.seed = o.seedGiven ? o.seed : 0; // the activation seed is per-op mode's
    g.context = o.context;
    g.logitsOut = o.logitsOut;
    g.json = o.json;
    g.load = loadOptionsOf(o);
    g.load.rank = o.rank;
    return runGenerate(g);
  }

  LoadOptions lo = loadOptionsOf(o);
  lo.rank = o.rank;
  auto loaded = loadModel(o.dir, lo);
  if (!loaded)
    return fail(o, "load", loaded.message());
  LoadedModel &model = **loaded;
  warnOnBackendFallback(o, model);

  return print(o, runOps(model, opRunOptionsOf(o)));
}

} // namespace qtensor::qtc
