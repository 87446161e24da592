//===- CommandLine.h - One option parser for qtc's commands -----*- C++ -*-===//
//
// Each qtc command declares its flags, its options (each with a setter that
// checks the value and returns what was expected when it is wrong) and its
// positional arguments; parse() walks argv once. Every usage error is
// printed the same way, "qtc CMD: MESSAGE" and the command's usage, with
// exit status 2; --help prints the usage and exits 0.
//
//===----------------------------------------------------------------------===//
#ifndef QTENSOR_TOOLS_QTC_COMMANDLINE_H
#define QTENSOR_TOOLS_QTC_COMMANDLINE_H

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace qtensor::qtc {

class CommandLine {
public:
  /// Checks and stores an option's value; returns an error ("expected ...")
  /// to reject it.
  using Setter = std::function<std::optional<std::string>(const std::string &)>;

  /// `command` as in "qtc compile"; `usage` is printed with every error.
  CommandLine(std::string command, std::string usage);

  /// `--name` (and aliases such as "-o") sets `out` to `value`.
  CommandLine &flag(std::vector<std::string> names, bool &out,
                    bool value = true);
  /// `--name VALUE`; `what` names the value in "needs a ...".
  CommandLine &option(std::vector<std::string> names, const char *what,
                      Setter set);
  /// `--name VALUE` stored as is.
  CommandLine &option(std::vector<std::string> names, const char *what,
                      std::string &out);
  /// `--name VALUE` stored as is; `out` is set only when the option is
  /// given (an empty VALUE included).
  CommandLine &option(std::vector<std::string> names, const char *what,
                      std::optional<std::string> &out);
  /// The next positional argument; `missing` is the error without it.
  CommandLine &positional(std::string &out, std::string missing);

  /// None: parsed. Otherwise the exit status to return now (0 after
  /// --help, 2 after a usage error, both already printed).
  std::optional<int> parse(const std::vector<std::string> &args);

  /// Prints "qtc CMD: message" and the usage; returns 2 (for checks that
  /// span several options, after parse()).
  int usageError(const std::string &message) const;

private:
  struct Option {
    std::vector<std::string> names;
    const char *what = nullptr; ///< null for a flag
    Setter set;
  };
  struct Positional {
    std::string *out;
    std::string missing;
  };
  const Option *find(const std::string &arg) const;

  std::string command, usage;
  std::vector<Option> options;
  std::vector<Positional> positionals;
};

/// The integer `s` spells in `base` (0: C prefixes, 0x.. and 0..), when
/// the whole of `s` is one and it lies in [min, max]; none otherwise
/// (overflow included).
std::optional<int64_t> parseInteger(const std::string &s, int64_t min,
                                    int64_t max, int base = 10);

/// A setter that stores `parse(value)` (an optional) into `out`, or answers
/// `expected` when it is empty: `parsedInto(o.backend, parseBackendChoice,
/// "expected host, cuda or auto")`.
template <typename T, typename Parse>
CommandLine::Setter parsedInto(T &out, Parse parse, std::string expected) {
  return [&out, parse,
          expected](const std::string &v) -> std::optional<std::string> {
    auto parsed = parse(v);
    if (!parsed)
      return expected;
    out = *parsed;
    return std::nullopt;
  };
}

/// "a,b,,c" -> {"a", "b", "", "c"} appended to `out` (empty entries kept,
/// for the caller to refuse).
void appendCommaList(std::vector<std::string> &out, const std::string &value);

/// A failed run of `command` ("qtc run"): with `json`, {"ok": false,
/// "stage", "error"} on stdout (bytes that are not UTF-8 replaced); the
/// message on stderr either way. Returns the exit status, 1.
int reportFailure(const char *command, bool json, const char *stage,
                  const std::string &message);

} // namespace qtensor::qtc

#endif // QTENSOR_TOOLS_QTC_COMMANDLINE_H
