#include "simcore/natural_order.hpp"

#include <cctype>

namespace simcore {

bool natural_less(const std::string& a, const std::string& b)
{
  std::size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    const bool da = std::isdigit(static_cast<unsigned char>(a[i])) != 0;
    const bool db = std::isdigit(static_cast<unsigned char>(b[j])) != 0;
    if (da && db) {
      std::size_t ei = i, ej = j;
      while (ei < a.size() && std::isdigit(static_cast<unsigned char>(a[ei])))
        ei++;
      while (ej < b.size() && std::isdigit(static_cast<unsigned char>(b[ej])))
        ej++;
      std::size_t si = i, sj = j; // skip leading zeros, then compare by length and digits
      while (si + 1 < ei && a[si] == '0')
        si++;
      while (sj + 1 < ej && b[sj] == '0')
        sj++;
      if (ei - si != ej - sj)
        return ei - si < ej - sj;
      const int c = a.compare(si, ei - si, b, sj, ej - sj);
      if (c != 0)
        return c < 0;
      i = ei;
      j = ej;
    } else {
      if (a[i] != b[j])
        return a[i] < b[j];
      i++;
      j++;
    }
  }
  if (i < a.size() || j < b.size())
    return a.size() - i < b.size() - j;
  return a < b;
}


} // namespace simcore
