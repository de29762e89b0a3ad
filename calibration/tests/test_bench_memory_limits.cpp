/* What memory a benchmark may take: MemAvailable, and less where a cgroup (a Slurm job's, a
 * container's) leaves less; arrays beyond it are refused before they are allocated. */
#include <calibration/bench_options.hpp>

#include <catch2/catch.hpp>

#include "../../tests/support/temp_folder.hpp"

#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>

namespace fs = std::filesystem;

namespace {

struct TempDir : simcore_test::TempFolder {
  TempDir() : TempFolder("cgroup") {}
};

void write(const fs::path& p, const std::string& text)
{
  fs::create_directories(p.parent_path());
  std::ofstream(p) << text;
}

} // namespace

TEST_CASE("a cgroup's memory limit bounds what a benchmark may allocate", "[calibration]")
{
  TempDir t;
  const fs::path self = t.path / "self_cgroup", root = t.path / "sys";
  SECTION("cgroup v2: the smallest limit less use along the path, 'max' no limit")
  {
    write(self, "0::/slurm/job_7/step_0\n");
    write(root / "slurm/memory.max", "max\n");
    write(root / "slurm/job_7/memory.max", "8589934592\n"); // 8 GiB for the job
    write(root / "slurm/job_7/memory.current", "1073741824\n");
    write(root / "slurm/job_7/step_0/memory.max", "max\n");
    CHECK(calibration::cgroup_memory_left(self.c_str(), root) == 7516192768.0);
    write(root / "slurm/job_7/step_0/memory.max", "4294967296\n");
    write(root / "slurm/job_7/step_0/memory.current", "3221225472\n"); // 1 GiB left in the step
    CHECK(calibration::cgroup_memory_left(self.c_str(), root) == 1073741824.0);
    // Files the step wrote are in its use; their inactive cache is reclaimed before a kill.
    write(root / "slurm/job_7/step_0/memory.stat", "anon 1073741824\nfile 2147483648\nactive_file 536870912\n"
                                                   "inactive_file 1610612736\nshmem 0\n");
    CHECK(calibration::cgroup_memory_left(self.c_str(), root) == 2684354560.0);
    write(root / "slurm/job_7/step_0/memory.stat", "inactive_anon 5\ninactive_file_x 7\n"); // other keys only
    CHECK(calibration::cgroup_memory_left(self.c_str(), root) == 1073741824.0);
  }
  SECTION("cgroup v1: the memory controller's hierarchy; its 'no limit' is a number near 2^63")
  {
    write(self, "9:name=systemd:/\n5:devices:/\n4:cpu,memory:/job_9\n0::/\n");
    write(root / "memory/memory.limit_in_bytes", "9223372036854771712\n");
    write(root / "memory/job_9/memory.limit_in_bytes", "9223372036854771712\n");
    CHECK_FALSE(calibration::cgroup_memory_left(self.c_str(), root));
    write(root / "memory/job_9/memory.limit_in_bytes", "2147483648\n");
    write(root / "memory/job_9/memory.usage_in_bytes", "536870912\n");
    CHECK(calibration::cgroup_memory_left(self.c_str(), root) == 1610612736.0);
    // v1's hierarchical count of inactive file cache (inactive_file is this level's alone).
    write(root / "memory/job_9/memory.stat", "cache 400000000\ninactive_file 100\ntotal_inactive_file 268435456\n");
    CHECK(calibration::cgroup_memory_left(self.c_str(), root) == 1879048192.0);
    write(root / "memory/job_9/memory.stat", "total_inactive_file 1073741824\n"); // more than the use: none used
    CHECK(calibration::cgroup_memory_left(self.c_str(), root) == 2147483648.0);
  }
  SECTION("no cgroup file, no memory controller: no limit")
  {
    CHECK_FALSE(calibration::cgroup_memory_left((t.path / "missing").c_str(), root));
    write(self, "5:devices:/\n");
    CHECK_FALSE(calibration::cgroup_memory_left(self.c_str(), root));
  }
  SECTION("the smaller of MemAvailable and the cgroup's, and the refusal that names them")
  {
    write(t.path / "meminfo", "MemTotal:       32000000 kB\nMemAvailable:   16777216 kB\n"); // 16 GiB
    const auto meminfo = (t.path / "meminfo").string();
    CHECK(calibration::available_memory(meminfo.c_str(), std::nullopt) == 17179869184.0);
    CHECK(calibration::available_memory(meminfo.c_str(), 2147483648.0) == 2147483648.0);
    CHECK(calibration::available_memory((t.path / "none").c_str(), 2147483648.0) == 2147483648.0);
    CHECK_FALSE(calibration::available_memory((t.path / "none").c_str(), std::nullopt));
    CHECK(calibration::beyond_available_memory(3.0 * (1 << 30), "three arrays", 4.0 * (1 << 30)).empty());
    CHECK(calibration::beyond_available_memory(3.0 * (1 << 30), "three arrays", 2.0 * (1 << 30)) ==
          "three arrays need 3 GiB, more than the 2 GiB of memory available; expected smaller sizes that fit (no "
          "trace written)");
    CHECK(calibration::beyond_available_memory(1e30, "anything", std::nullopt).empty()); // nothing to compare with
    // What a benchmark calls: exit code 2 where the working set does not fit, 0 where it does.
    CHECK(calibration::refuse_beyond_available_memory("calib_x", 3.0 * (1 << 30), "three arrays", 2.0 * (1 << 30)) == 2);
    CHECK(calibration::refuse_beyond_available_memory("calib_x", 1.0 * (1 << 30), "one array", 2.0 * (1 << 30)) == 0);
    CHECK(calibration::refuse_beyond_available_memory("calib_x", 1e30, "anything", std::nullopt) == 0);
  }
}
