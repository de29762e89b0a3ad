#include "simcore/sha256.hpp"
#include "simcore/error.hpp"

#include <openssl/evp.h>

namespace simcore {

std::string sha256_hex(const std::string& bytes)
{
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (EVP_Digest(bytes.data(), bytes.size(), md, &len, EVP_sha256(), nullptr) != 1)
    throw InternalError("SHA-256 failed");
  static const char* hex = "0123456789abcdef";
  std::string out;
  for (unsigned i = 0; i < len; i++) {
    out += hex[md[i] >> 4];
    out += hex[md[i] & 15];
  }
  return out;
}

} // namespace simcore
