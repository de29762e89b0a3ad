/* simcore: the command line tool. main() finds the sub-command and reports its errors. */
#include "commands.hpp"

#include "simcore/error.hpp"
#include "simcore/version.hpp"

#include <cstdio>
#include <exception>
#include <string>
#include <vector>

namespace {

/** A message on one line: a line break or tab inside a name or value (taken from the input)
 *  written as \n or \t, other control characters as \xHH. */
std::string one_line(const std::string& text)
{
  std::string out;
  for (const char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '\n')
      out += "\\n";
    else if (c == '\t')
      out += "\\t";
    else if (u < 0x20 || u == 0x7f) {
      char hex[8];
      std::snprintf(hex, sizeof hex, "\\x%02x", u);
      out += hex;
    } else
      out += c;
  }
  return out;
}

const char* kMainHelp = R"(simcore: discrete-event simulation of HPC, AI-training and edge-cloud systems

Usage:
  simcore run SCENARIO.xml [--set NAME=VALUE]... [--seed N] [--out DIR] [options]
  simcore validate SCENARIO.xml [--set NAME=VALUE]... [--seed N]
  simcore models [--json]
  simcore platform FILE.xml [--json]
  simcore calibrate TRACE.h5... -o PROFILE.json
  simcore COMMAND --help
  simcore --version

Exit codes: 0 success, 2 bad input (file:line and what was expected on stderr),
1 internal failure.
)";

bool is_help(const std::string& a) { return a == "--help" || a == "-h"; }

} // namespace

int main(int argc, char** argv)
{
  namespace cli = simcore::cli;
  cli::Args args(argv + 1, argv + argc);
  if (args.empty() || is_help(args[0])) {
    std::fputs(kMainHelp, args.empty() ? stderr : stdout);
    return args.empty() ? simcore::kExitBadInput : 0;
  }
  if (args[0] == "--version") {
    std::printf("simcore %s\n", SIMCORE_VERSION);
    return 0;
  }
  const std::string name = args[0];
  args.erase(args.begin());
  const std::vector<cli::Command> commands{cli::run_command(), cli::validate_command(), cli::models_command(),
                                           cli::platform_command(), cli::calibrate_command()};
  const cli::Command* command = nullptr;
  for (const auto& c : commands)
    if (name == c.name)
      command = &c;
  if (!command) {
    std::fprintf(stderr, "simcore: unknown command '%s'; expected run, validate, models, platform or calibrate (see --help)\n",
                 name.c_str());
    return simcore::kExitBadInput;
  }
  for (const auto& a : args)
    if (is_help(a)) {
      std::fputs(command->help, stdout);
      return 0;
    }
  try {
    return command->run(args);
  } catch (const simcore::InputError& e) {
    std::fprintf(stderr, "simcore: error: %s\n", one_line(e.what()).c_str());
    return simcore::kExitBadInput;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "simcore: internal error: %s\n", one_line(e.what()).c_str());
    return simcore::kExitInternal;
  }
}
