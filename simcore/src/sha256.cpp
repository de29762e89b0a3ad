#include "simcore/sha256.hpp"
#include "simcore/error.hpp"

#include <openssl/evp.h>

#include <fstream>
#include <memory>
#include <vector>

namespace simcore {

namespace {

std::string hex_of(const unsigned char* md, unsigned len)
{
  static const char* hex = "0123456789abcdef";
  std::string out;
  for (unsigned i = 0; i < len; i++) {
    out += hex[md[i] >> 4];
    out += hex[md[i] & 15];
  }
  return out;
}

} // namespace

std::string sha256_hex(const std::string& bytes)
{
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (EVP_Digest(bytes.data(), bytes.size(), md, &len, EVP_sha256(), nullptr) != 1)
    throw InternalError("SHA-256 failed");
  return hex_of(md, len);
}

std::string sha256_file_hex(const std::string& path)
{
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return "";
  const std::unique_ptr<EVP_MD_CTX, void (*)(EVP_MD_CTX*)> ctx(EVP_MD_CTX_new(), EVP_MD_CTX_free);
  if (!ctx || EVP_DigestInit_ex(ctx.get(), EVP_sha256(), nullptr) != 1)
    throw InternalError("SHA-256 failed");
  std::vector<char> block(1 << 16);
  while (in) {
    in.read(block.data(), static_cast<std::streamsize>(block.size()));
    if (in.gcount() > 0 && EVP_DigestUpdate(ctx.get(), block.data(), static_cast<std::size_t>(in.gcount())) != 1)
      throw InternalError("SHA-256 failed");
  }
  if (!in.eof() || in.bad()) // stopped before the end: a folder, a read error
    return "";
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (EVP_DigestFinal_ex(ctx.get(), md, &len) != 1)
    throw InternalError("SHA-256 failed");
  return hex_of(md, len);
}

} // namespace simcore
