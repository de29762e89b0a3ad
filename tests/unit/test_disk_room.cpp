// result_disk_need / require_disk_room: the room on disk a run's result files are sure to take.
#include <catch2/catch.hpp>

#include "../support/temp_folder.hpp"

#include "simcore/disk_room.hpp"
#include "simcore/error.hpp"

#include <cstdint>
#include <string>
#include <vector>

TEST_CASE("result_disk_need: 8 B a value in trace.h5, 2 B a value in each CSV table", "[disk]")
{
  const std::vector<simcore::TableSize> tables{{"tasks", 1000, 6}, {"workers", 16, 3}, {"empty", 0, 4}};
  CHECK(simcore::result_disk_need(tables, true, false).bytes == 8 * (6000 + 48));
  CHECK(simcore::result_disk_need(tables, false, true).bytes == 2 * (6000 + 48));
  const auto both = simcore::result_disk_need(tables, true, true);
  CHECK(both.bytes == 10 * (6000 + 48));
  CHECK(both.what == "trace.h5 at 8 B a value: tasks 1000 rows x 6 columns, workers 16 rows x 3 columns; the CSV "
                     "tables at 2 B a value: tasks 1000 rows x 6 columns, workers 16 rows x 3 columns");
  CHECK(simcore::result_disk_need(tables, false, false).bytes == 0);
  CHECK(simcore::result_disk_need({}, true, true).what.empty());
  // Counts past 2^64 B saturate instead of wrapping to a small need.
  CHECK(simcore::result_disk_need({{"huge", UINT64_MAX / 4, 3}}, true, false).bytes == UINT64_MAX);
  CHECK(simcore::result_disk_need({{"a", UINT64_MAX / 8, 1}, {"b", UINT64_MAX / 8, 1}}, true, false).bytes ==
        UINT64_MAX);
}

TEST_CASE("require_disk_room: refuses what no disk holds, names where and how much", "[disk]")
{
  simcore_test::TempFolder tmp("disk");
  const auto free = simcore::free_disk_bytes(tmp.path.string());
  REQUIRE(free.has_value());
  CHECK(*free > 0);
  // A folder not made yet: its nearest existing parent's file system.
  CHECK(simcore::free_disk_bytes((tmp.path / "not" / "yet").string()).has_value());
  CHECK_NOTHROW(simcore::require_disk_room(tmp.path.string(), "s.xml:3", {8, "t"}));
  CHECK_NOTHROW(simcore::require_disk_room(tmp.path.string(), "s.xml:3", {0, ""}));
  const std::string dir = (tmp.path / "out").string();
  CHECK_THROWS_WITH(simcore::require_disk_room(dir, "s.xml:3", {UINT64_MAX, "how it was counted"}),
                    Catch::StartsWith("s.xml:3 (<output dir=\"" + dir + "\">): the results need at least ") &&
                        Catch::Contains(" on disk (how it was counted), and the output folder's file system has ") &&
                        Catch::EndsWith("free; expected a folder with room for them, fewer rows, or <output "
                                        "trace=\"false\"> (and csv=\"false\")"));
  CHECK_THROWS_AS(simcore::require_disk_room(dir, "", {UINT64_MAX, ""}), simcore::InputError);
}
