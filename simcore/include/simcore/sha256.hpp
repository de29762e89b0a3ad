/* SHA-256 digests of input files, recorded with results so that a run names exactly what it read. */
#pragma once

#include <string>

namespace simcore {

/** The SHA-256 of `bytes` in lower-case hexadecimal (64 characters). */
std::string sha256_hex(const std::string& bytes);

/** The SHA-256 of the file at `path`, read in blocks (any size, in little memory); "" where it
 *  cannot be opened or read to its end. */
std::string sha256_file_hex(const std::string& path);

} // namespace simcore
