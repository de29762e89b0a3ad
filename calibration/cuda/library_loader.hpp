/* A vendor library loaded at run time (dlopen), as calib_cuda loads its references (cuBLAS,
 * cuDNN): the file an environment variable names, else the first of the usual names the
 * loader finds. Plain C++: the unit tests check it on the CPU. */
#pragma once

#include <dlfcn.h>

#include <cstdlib>
#include <initializer_list>
#include <string>

namespace calibration_cuda {

struct LoadedLibrary {
  void* handle = nullptr; ///< nullptr when none was loaded
  std::string path;       ///< the name it was loaded by
  std::string why_not;    ///< why none was, when none was
};

/** Loads the file `variable` names where it is set and not empty (and nothing else: a named
 *  file that fails says why), else the first of `names` that loads. `what` names the library
 *  in the message when none is found. */
inline LoadedLibrary load_library(const char* variable, std::initializer_list<const char*> names,
                                  const std::string& what)
{
  LoadedLibrary out;
  if (const char* named = std::getenv(variable); named && *named) {
    out.handle = dlopen(named, RTLD_NOW | RTLD_LOCAL);
    if (out.handle)
      out.path = named;
    else
      out.why_not = std::string(variable) + "=" + named + ": " + dlerror();
    return out;
  }
  for (const char* name : names)
    if ((out.handle = dlopen(name, RTLD_NOW | RTLD_LOCAL))) {
      out.path = name;
      return out;
    }
  out.why_not = what + " not found (" + variable + "=/path/to/" + *names.begin() + " names it)";
  return out;
}

} // namespace calibration_cuda
