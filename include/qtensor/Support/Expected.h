//===- Expected.h - Value-or-error for MLIR-free libraries ------*- C++ -*-===//
//
// The libraries under lib/ are shared by the compiler and the runtime and
// never throw across their API: every fallible call returns Expected<T>. An
// error is a readable sentence naming what was wrong and what was expected.
//
//===----------------------------------------------------------------------===//
#ifndef QTENSOR_SUPPORT_EXPECTED_H
#define QTENSOR_SUPPORT_EXPECTED_H

#include <cassert>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>

namespace qtensor {

/// A failure with a human-readable message.
struct Error {
  std::string message;
};

namespace detail {
template <typename T> void appendPart(std::string &out, const T &part) {
  if constexpr (std::is_convertible_v<const T &, std::string_view>)
    out += std::string_view(part);
  else if constexpr (std::is_same_v<T, char>)
    out += part;
  else
    out += std::to_string(part);
}
} // namespace detail

/// Builds an Error from parts: `makeError("axis ", 3, " is out of range")`.
template <typename... Parts> Error makeError(const Parts &...parts) {
  std::string message;
  (detail::appendPart(message, parts), ...);
  return Error{std::move(message)};
}

/// Holds either a T or an Error. Check with `if (!result)` before `*result`.
template <typename T> class [[nodiscard]] Expected {
public:
  Expected(T value) : storage(std::in_place_index<0>, std::move(value)) {}
  Expected(Error error) : storage(std::in_place_index<1>, std::move(error)) {}

  explicit operator bool() const { return storage.index() == 0; }
  T &operator*() {
    assert(*this && "dereferencing an error");
    return std::get<0>(storage);
  }
  const T &operator*() const {
    assert(*this && "dereferencing an error");
    return std::get<0>(storage);
  }
  T *operator->() { return &**this; }
  const T *operator->() const { return &**this; }
  const Error &error() const {
    assert(!*this && "no error");
    return std::get<1>(storage);
  }
  const std::string &message() const { return error().message; }
  T take() { return std::move(**this); }

private:
  std::variant<T, Error> storage;
};

/// The result of a check that returns nothing on success.
class [[nodiscard]] Status {
public:
  Status() = default;
  Status(Error error) : failure(true), err(std::move(error)) {}
  static Status ok() { return Status(); }

  explicit operator bool() const { return !failure; }
  const std::string &message() const { return err.message; }
  const Error &error() const { return err; }

private:
  bool failure = false;
  Error err;
};

} // namespace qtensor

/// Returns the error of a failed Status-returning expression from the
/// enclosing function (whose return type is Status or Expected<T>).
#define QTENSOR_TRY(expr)                                                      \
  do {                                                                         \
    if (::qtensor::Status qtensorTryStatus = (expr); !qtensorTryStatus)        \
      return qtensorTryStatus.error();                                         \
  } while (0)

/// `QTENSOR_ASSIGN_OR_RETURN(Type x, expected)`: declares/assigns the value of
/// an Expected, or returns its error from the enclosing function.
#define QTENSOR_ASSIGN_OR_RETURN(lhs, expr)                                    \
  QTENSOR_ASSIGN_OR_RETURN_IMPL(QTENSOR_CONCAT(qtensorAssign, __LINE__), lhs,  \
                                expr)
#define QTENSOR_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr)                          \
  auto tmp = (expr);                                                           \
  if (!tmp)                                                                    \
    return tmp.error();                                                        \
  lhs = tmp.take()
#define QTENSOR_CONCAT(a, b) QTENSOR_CONCAT_IMPL(a, b)
#define QTENSOR_CONCAT_IMPL(a, b) a##b

#endif // QTENSOR_SUPPORT_EXPECTED_H
