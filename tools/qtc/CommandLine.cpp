//===- CommandLine.cpp - One option parser for qtc's commands -------------===//

#include "CommandLine.h"

#include <nlohmann/json.hpp>

#include <cerrno>
#include <cstdlib>
#include <iostream>

namespace qtensor::qtc {

CommandLine::CommandLine(std::string command, std::string usage)
    : command(std::move(command)), usage(std::move(usage)) {}

CommandLine &CommandLine::flag(std::vector<std::string> names, bool &out,
                               bool value) {
  options.push_back(
      {std::move(names), nullptr, [&out, value](const std::string &) {
         out = value;
         return std::optional<std::string>();
       }});
  return *this;
}

CommandLine &CommandLine::option(std::vector<std::string> names,
                                 const char *what, Setter set) {
  options.push_back({std::move(names), what, std::move(set)});
  return *this;
}

CommandLine &CommandLine::option(std::vector<std::string> names,
                                 const char *what, std::string &out) {
  return option(std::move(names), what, [&out](const std::string &v) {
    out = v;
    return std::optional<std::string>();
  });
}

CommandLine &CommandLine::option(std::vector<std::string> names,
                                 const char *what,
                                 std::optional<std::string> &out) {
  return option(std::move(names), what, [&out](const std::string &v) {
    out = v;
    return std::optional<std::string>();
  });
}

CommandLine &CommandLine::positional(std::string &out, std::string missing) {
  positionals.push_back({&out, std::move(missing)});
  return *this;
}

const CommandLine::Option *CommandLine::find(const std::string &arg) const {
  for (const Option &o : options)
    for (const std::string &name : o.names)
      if (name == arg)
        return &o;
  return nullptr;
}

int CommandLine::usageError(const std::string &message) const {
  std::cerr << command << ": " << message << "\n" << usage;
  return 2;
}

std::optional<int> CommandLine::parse(const std::vector<std::string> &args) {
  size_t next = 0;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string &a = args[i];
    if (a == "-h" || a == "--help") {
      std::cout << usage;
      return 0;
    }
    if (const Option *o = find(a)) {
      std::string value;
      if (o->what) {
        if (i + 1 >= args.size())
          return usageError(a + " needs " + o->what);
        value = args[++i];
      }
      if (std::optional<std::string> error = o->set(value))
        return usageError(a + (o->what ? " " + value : std::string()) + ": " +
                          *error);
      continue;
    }
    if (!a.empty() && a[0] == '-')
      return usageError("unknown option " + a);
    if (next >= positionals.size())
      return usageError("unexpected argument " + a);
    *positionals[next++].out = a;
  }
  if (next < positionals.size())
    return usageError(positionals[next].missing);
  return std::nullopt;
}

void appendCommaList(std::vector<std::string> &out, const std::string &value) {
  size_t start = 0;
  while (true) {
    size_t comma = value.find(',', start);
    out.push_back(value.substr(start, comma - start));
    if (comma == std::string::npos)
      return;
    start = comma + 1;
  }
}

std::optional<int64_t> parseInteger(const std::string &s, int64_t min,
                                    int64_t max, int base) {
  if (s.empty())
    return std::nullopt;
  char *end = nullptr;
  errno = 0;
  long long v = std::strtoll(s.c_str(), &end, base);
  if (errno || *end != '\0' || v < min || v > max)
    return std::nullopt;
  return v;
}

int reportFailure(const char *command, bool json, const char *stage,
                  const std::string &message) {
  if (json)
    std::cout << nlohmann::ordered_json{{"ok", false},
                                        {"stage", stage},
                                        {"error", message}}
                     .dump(2, ' ', false,
                           nlohmann::ordered_json::error_handler_t::replace)
              << "\n";
  std::cerr << command << ": error: " << message << "\n";
  return 1;
}

} // namespace qtensor::qtc
