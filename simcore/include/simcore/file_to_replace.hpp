/* Where a file written through a temporary file and a rename lands: the result files, the
 * calibration profiles and traces. Header only: the benchmarks built with smpicxx use it too. */
#pragma once

#include "simcore/error.hpp"

#include <filesystem>
#include <string>

namespace simcore {

/** The file that writing `path` (a temporary file beside it, then a rename) should replace:
 *  `path`, or the file a symbolic link at `path` leads to, so that the link stays a link (as
 *  a shell's redirection writes through it). simcore::InputError naming `path` when the file
 *  exists and is a folder or anything else that is not a regular file (a device, a pipe, a
 *  socket), which a rename would replace, or when symbolic links lead on more than 40 times. */
inline std::filesystem::path file_to_replace(const std::string& path)
{
  namespace fs = std::filesystem;
  constexpr int kMostLinks = 40; // as the kernel's own limit on a path's links (ELOOP)
  fs::path p(path);
  std::error_code ec;
  for (int links = 0; fs::is_symlink(fs::symlink_status(p, ec)); links++) {
    if (links == kMostLinks)
      throw InputError(path, "symbolic links lead on more than 40 times; expected the path of a file to write");
    const fs::path target = fs::read_symlink(p, ec);
    if (ec)
      throw InputError(path, "cannot read the symbolic link (" + ec.message() + "); expected the path of a file to write");
    p = target.is_absolute() ? target : p.parent_path() / target;
  }
  const fs::file_status s = fs::status(p, ec); // a status that cannot be read fails at the write, as bad input
  if (fs::is_directory(s))
    throw InputError(path, "is a folder; expected the path of a file to write");
  if (fs::exists(s) && !fs::is_regular_file(s))
    throw InputError(path, "is not a regular file (a device, a pipe or a socket), which writing would replace; "
                           "expected the path of a file to write");
  return p;
}

} // namespace simcore
