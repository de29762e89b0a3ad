/* Quantities with units, parsed the way SimGrid parses its platform files. */
#pragma once

#include <string>

namespace simcore {

/** Kind of a physical quantity. Values are stored in SI base units. */
enum class Quantity { Time, Size, Bandwidth, Speed, Flops };

/** Base unit of a quantity, as printed: "s", "B", "Bps", "flop/s", "flop". */
const char* base_unit(Quantity q);

/** Examples of valid spellings, for error messages ("1us, 2.5ms, 3s"). */
const char* unit_examples(Quantity q);

/** Parses "10GBps", "1us", "4MiB", "1Gf" with SimGrid's own unit tables.
 *  A bare number is taken in the base unit. Throws InputError naming `where`. */
double parse_quantity(Quantity q, const std::string& text, const std::string& where);

/** InputError at `where` when `v` (read from `text`) is a subnormal double: a rate or a time
 *  that small took SimGrid's clock to infinity. */
void check_not_subnormal(double v, const std::string& text, const std::string& where);

/** Formats a value with its base unit and a readable prefix ("1.25 GBps"). */
std::string format_quantity(Quantity q, double value);

} // namespace simcore
