/* SHA-256 digests of input files, recorded with results so that a run names exactly what it read. */
#pragma once

#include <string>

namespace simcore {

/** The SHA-256 of `bytes` in lower-case hexadecimal (64 characters). */
std::string sha256_hex(const std::string& bytes);

} // namespace simcore
