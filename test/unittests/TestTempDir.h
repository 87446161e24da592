//===- TestTempDir.h - A scratch directory for the unit tests ---*- C++ -*-===//
#ifndef QTENSOR_TEST_UNITTESTS_TESTTEMPDIR_H
#define QTENSOR_TEST_UNITTESTS_TESTTEMPDIR_H

#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <string>

namespace qtensor::test {

/// A fresh directory under the system's temporary directory, named
/// `<prefix>-XXXXXX`, removed with its contents on destruction. Failing to
/// create it throws (GoogleTest reports the test failed).
class TempDir {
public:
  explicit TempDir(const std::string &prefix) {
    std::string tmpl =
        (std::filesystem::temp_directory_path() / (prefix + "-XXXXXX"))
            .string();
    if (!::mkdtemp(tmpl.data()))
      throw std::runtime_error("mkdtemp failed for " + tmpl);
    dir = tmpl;
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(dir, ignored);
  }
  TempDir(const TempDir &) = delete;
  TempDir &operator=(const TempDir &) = delete;

  const std::filesystem::path &path() const { return dir; }
  std::string str() const { return dir.string(); }
  std::filesystem::path operator/(const std::string &name) const {
    return dir / name;
  }

private:
  std::filesystem::path dir;
};

} // namespace qtensor::test

#endif // QTENSOR_TEST_UNITTESTS_TESTTEMPDIR_H
