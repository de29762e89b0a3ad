/* simcore's sub-commands: what main() dispatches to. One file a command (or a pair that
 * shares its options: run and validate). */
#pragma once

#include <string>
#include <vector>

namespace simcore::cli {

using Args = std::vector<std::string>;

/** A sub-command: its name, the text `--help` prints, and what it does. `run` returns the
 *  exit code; bad input is thrown as simcore::InputError (main() prints it and exits 2). */
struct Command {
  const char* name;
  const char* help;
  int (*run)(const Args& args);
};

Command run_command();
Command validate_command();
Command models_command();
Command platform_command();
Command calibrate_command();

} // namespace simcore::cli
