/* Natural order of names: digit runs compare as numbers ("node-2" < "node-10"). */
#pragma once

#include <string>

namespace simcore {

/** a < b with digit runs compared by value; equal values written with different leading
 *  zeros fall back to plain text order, so the order stays total. */
bool natural_less(const std::string& a, const std::string& b);

} // namespace simcore
