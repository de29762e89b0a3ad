/* Typed exceptions of simcore. */
#pragma once

#include <stdexcept>
#include <string>

namespace simcore {

/** Base class of every exception thrown by simcore. */
class Error : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

/** Bad input from a user: scenario, platform, profile, parameter override. Exit code 2.
 *  The message reads "where: what was found; what was expected". */
class InputError : public Error {
public:
  InputError(std::string where, const std::string& message)
      : Error(where.empty() ? message : where + ": " + message), where_(std::move(where)), detail_(message)
  {
  }
  explicit InputError(const std::string& message) : InputError("", message) {}
  /** "file:line", "file", "--set" ...; empty when unknown. */
  const std::string& where() const { return where_; }
  /** The message without its location. */
  const std::string& detail() const { return detail_; }

private:
  std::string where_;
  std::string detail_;
};

/** A failure of simcore or of a model, not of the input. Exit code 1. */
class InternalError : public Error {
public:
  using Error::Error;
};

/** A caller asked run_in_children() to stop (e.g. Ctrl-C in Python); children were ended. */
class Interrupted : public Error {
public:
  using Error::Error;
};

/** Exit codes of the command line tool (and of child processes). */
enum ExitCode : int { kExitOk = 0, kExitInternal = 1, kExitBadInput = 2 };

} // namespace simcore
