//===- TestAssertions.h - Assertions the unit tests share -------*- C++ -*-===//
#ifndef QTENSOR_TEST_UNITTESTS_TESTASSERTIONS_H
#define QTENSOR_TEST_UNITTESTS_TESTASSERTIONS_H

#include <gtest/gtest.h>

#include <string>

namespace qtensor::test {

/// `text` contains `part`; the failure shows both.
inline ::testing::AssertionResult contains(const std::string &text,
                                           const std::string &part) {
  if (text.find(part) != std::string::npos)
    return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << "\"" << text << "\"\n  does not contain \"" << part << "\"";
}

} // namespace qtensor::test

#endif // QTENSOR_TEST_UNITTESTS_TESTASSERTIONS_H
