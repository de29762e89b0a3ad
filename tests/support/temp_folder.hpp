/* A fresh folder for a test's files under the system's temporary folder, removed with the
 * object (a static one: as the test process ends). */
#pragma once

#include <filesystem>
#include <string>
#include <system_error>
#include <unistd.h>

namespace simcore_test {

struct TempFolder {
  std::filesystem::path path;
  /** "simcore-test-TAG-PID" */
  explicit TempFolder(const std::string& tag)
      : path(std::filesystem::temp_directory_path() / ("simcore-test-" + tag + "-" + std::to_string(::getpid())))
  {
    std::filesystem::remove_all(path);
    std::filesystem::create_directories(path);
  }
  ~TempFolder()
  {
    std::error_code ec; // never throws from a destructor
    std::filesystem::remove_all(path, ec);
  }
  TempFolder(const TempFolder&) = delete;
  TempFolder& operator=(const TempFolder&) = delete;
};

} // namespace simcore_test
