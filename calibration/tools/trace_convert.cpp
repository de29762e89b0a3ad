/* calib_trace_convert IN -o OUT: a calibration trace from one form to the other (HDF5 or JSON,
 * by extension: ".json" is JSON, anything else HDF5). The GPU benchmark built for a bare
 * machine writes JSON; this makes the HDF5 trace that is shipped and pooled with the others. */
#include "calibration/trace_file.hpp"

#include <simcore/error.hpp>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>

int main(int argc, char** argv)
{
  std::string in, out;
  for (int i = 1; i < argc; i++) {
    if (std::strcmp(argv[i], "-o") == 0 && i + 1 < argc)
      out = argv[++i];
    else if (in.empty() && argv[i][0] != '-')
      in = argv[i];
    else {
      std::fprintf(stderr, "calib_trace_convert: unexpected argument '%s'; usage: calib_trace_convert IN -o OUT\n", argv[i]);
      return simcore::kExitBadInput;
    }
  }
  if (in.empty() || out.empty()) {
    std::fprintf(stderr, "usage: calib_trace_convert IN.json|IN.h5 -o OUT.h5|OUT.json\n");
    return simcore::kExitBadInput;
  }
  try {
    if (std::filesystem::exists(out))
      throw simcore::InputError(out, "exists already; expected a new file (a trace is never overwritten)");
    calibration::write_trace(out, calibration::read_trace(in));
  } catch (const simcore::InputError& e) {
    std::fprintf(stderr, "calib_trace_convert: %s\n", e.what());
    return simcore::kExitBadInput;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "calib_trace_convert: %s\n", e.what());
    return simcore::kExitInternal;
  }
  return 0;
}
