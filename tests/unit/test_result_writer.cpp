// write_results / write_trace_h5: read back with the HDF5 C API, byte-identical rewrites,
// summary.json only after success.
#include <catch2/catch.hpp>

#include "../support/temp_folder.hpp"

#include "simcore/error.hpp"
#include "simcore/file_to_replace.hpp"
#include "simcore/result_writer.hpp"

#include <hdf5.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace {

using TempDir = simcore_test::TempFolder;

std::string slurp(const fs::path& p)
{
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

simcore::Results sample_results()
{
  simcore::Results r;
  r.set_metric("makespan", 3.5, "s");
  r.add_table("tasks", "one row per task")
      .add_column("task", "", std::vector<std::int64_t>{0, 1, 2})
      .add_column("send_start", "s", std::vector<double>{0.0, 0.25, 0.5})
      .add_column("bytes", "B", std::vector<std::int64_t>{1000, 2000, -3});
  r.add_table("empty", "").add_column("x", "s", std::vector<double>{});
  return r;
}

nlohmann::ordered_json sample_summary() { return {{"metrics", {{"makespan", 3.5}}}}; }

std::string read_string_attribute(hid_t obj, const std::string& name)
{
  hid_t attr = H5Aopen(obj, name.c_str(), H5P_DEFAULT);
  REQUIRE(attr >= 0);
  hid_t type = H5Aget_type(attr);
  CHECK(H5Tis_variable_str(type) > 0);
  CHECK(H5Tget_cset(type) == H5T_CSET_UTF8);
  char* value = nullptr;
  hid_t mem = H5Tcopy(H5T_C_S1);
  H5Tset_size(mem, H5T_VARIABLE);
  H5Tset_cset(mem, H5T_CSET_UTF8);
  REQUIRE(H5Aread(attr, mem, &value) >= 0);
  std::string out = value ? value : "";
  H5free_memory(value);
  H5Tclose(mem);
  H5Tclose(type);
  H5Aclose(attr);
  return out;
}

} // namespace

TEST_CASE("write_results: trace.h5 holds each table as a compound dataset with units", "[writer]")
{
  TempDir tmp("h5");
  const fs::path out = tmp.path / "run";
  simcore::write_results(out.string(), sample_summary(), sample_results(), true);
  REQUIRE(fs::is_regular_file(out / "summary.json"));
  REQUIRE(fs::is_regular_file(out / "trace.h5"));
  CHECK(slurp(out / "summary.json") == sample_summary().dump(2) + "\n");
  // Nothing temporary is left.
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(out))
    names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  CHECK(names == std::vector<std::string>{"summary.json", "trace.h5"});

  hid_t file = H5Fopen((out / "trace.h5").c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  REQUIRE(file >= 0);
  CHECK(read_string_attribute(file, "schema") == "simcore-trace/1");

  hid_t ds = H5Dopen2(file, "tasks", H5P_DEFAULT);
  REQUIRE(ds >= 0);
  hid_t type = H5Dget_type(ds);
  REQUIRE(H5Tget_class(type) == H5T_COMPOUND);
  REQUIRE(H5Tget_nmembers(type) == 3);
  const char* expected_names[] = {"task", "send_start", "bytes"};
  const H5T_class_t expected_classes[] = {H5T_INTEGER, H5T_FLOAT, H5T_INTEGER};
  for (unsigned i = 0; i < 3; i++) {
    char* name = H5Tget_member_name(type, i);
    CHECK(std::string(name) == expected_names[i]);
    H5free_memory(name);
    CHECK(H5Tget_member_class(type, i) == expected_classes[i]);
    hid_t mt = H5Tget_member_type(type, i);
    CHECK(H5Tget_size(mt) == 8);
    if (expected_classes[i] == H5T_INTEGER)
      CHECK(H5Tget_sign(mt) == H5T_SGN_2);
    H5Tclose(mt);
  }
  hid_t space = H5Dget_space(ds);
  hsize_t dims[1] = {0};
  REQUIRE(H5Sget_simple_extent_ndims(space) == 1);
  H5Sget_simple_extent_dims(space, dims, nullptr);
  CHECK(dims[0] == 3);

  struct Row {
    std::int64_t task;
    double send_start;
    std::int64_t bytes;
  };
  hid_t mem = H5Tcreate(H5T_COMPOUND, sizeof(Row));
  H5Tinsert(mem, "task", HOFFSET(Row, task), H5T_NATIVE_INT64);
  H5Tinsert(mem, "send_start", HOFFSET(Row, send_start), H5T_NATIVE_DOUBLE);
  H5Tinsert(mem, "bytes", HOFFSET(Row, bytes), H5T_NATIVE_INT64);
  Row rows[3] = {};
  REQUIRE(H5Dread(ds, mem, H5S_ALL, H5S_ALL, H5P_DEFAULT, rows) >= 0);
  CHECK(rows[0].task == 0);
  CHECK(rows[1].task == 1);
  CHECK(rows[2].task == 2);
  CHECK(rows[0].send_start == 0.0);
  CHECK(rows[1].send_start == 0.25);
  CHECK(rows[2].send_start == 0.5);
  CHECK(rows[0].bytes == 1000);
  CHECK(rows[1].bytes == 2000);
  CHECK(rows[2].bytes == -3);

  CHECK(read_string_attribute(ds, "unit:task") == "");
  CHECK(read_string_attribute(ds, "unit:send_start") == "s");
  CHECK(read_string_attribute(ds, "unit:bytes") == "B");
  CHECK(read_string_attribute(ds, "units") == "task=,send_start=s,bytes=B");
  CHECK(read_string_attribute(ds, "doc") == "one row per task");
  H5Tclose(mem);
  H5Sclose(space);
  H5Tclose(type);
  H5Dclose(ds);

  hid_t empty = H5Dopen2(file, "empty", H5P_DEFAULT);
  REQUIRE(empty >= 0);
  hid_t espace = H5Dget_space(empty);
  H5Sget_simple_extent_dims(espace, dims, nullptr);
  CHECK(dims[0] == 0);
  CHECK(read_string_attribute(empty, "unit:x") == "s");
  CHECK(H5Aexists(empty, "doc") == 0); // no doc attribute for an empty doc
  H5Sclose(espace);
  H5Dclose(empty);
  H5Fclose(file);
}

TEST_CASE("write_results: the same results give byte-identical files", "[writer]")
{
  TempDir tmp("bytes");
  simcore::write_results((tmp.path / "a").string(), sample_summary(), sample_results(), true);
  simcore::write_results((tmp.path / "b").string(), sample_summary(), sample_results(), true);
  const std::string a = slurp(tmp.path / "a" / "trace.h5");
  CHECK(a.size() > 0);
  CHECK(a == slurp(tmp.path / "b" / "trace.h5"));
  // Writing again over an earlier run gives the same bytes as well.
  simcore::write_results((tmp.path / "a").string(), sample_summary(), sample_results(), true);
  CHECK(a == slurp(tmp.path / "a" / "trace.h5"));
  // A different value changes the file.
  simcore::Results other = sample_results();
  other.add_table("more").add_column("v", "", std::vector<double>{1});
  simcore::write_results((tmp.path / "c").string(), sample_summary(), other, true);
  CHECK(a != slurp(tmp.path / "c" / "trace.h5"));
}

TEST_CASE("write_results without trace removes an earlier trace.h5", "[writer]")
{
  TempDir tmp("notrace");
  const fs::path out = tmp.path / "run";
  simcore::write_results(out.string(), sample_summary(), sample_results(), true);
  REQUIRE(fs::exists(out / "trace.h5"));
  simcore::write_results(out.string(), sample_summary(), sample_results(), false);
  CHECK(fs::exists(out / "summary.json"));
  CHECK_FALSE(fs::exists(out / "trace.h5"));
}

TEST_CASE("write_results: summary.json exists only after a successful write", "[writer]")
{
  TempDir tmp("fail");
  const fs::path out = tmp.path / "run";
  fs::create_directories(out);
  std::ofstream(out / "summary.json") << "{\"stale\": true}\n";
  std::ofstream(out / "trace.h5") << "stale";
  // A non-empty folder where the temporary trace file must go makes the HDF5 write fail
  // (stale temporary files are removed, but not folders with content).
  const fs::path blocker = out / ("trace.h5.tmp." + std::to_string(::getpid()));
  fs::create_directories(blocker);
  std::ofstream(blocker / "keep") << "x";
  CHECK_THROWS_AS(simcore::write_results(out.string(), sample_summary(), sample_results(), true),
                  simcore::InternalError);
  CHECK_FALSE(fs::exists(out / "summary.json")); // the stale one is gone, no new one
  CHECK_FALSE(fs::exists(out / "trace.h5"));
  fs::remove_all(blocker);
  simcore::write_results(out.string(), sample_summary(), sample_results(), true);
  CHECK(fs::exists(out / "summary.json"));
}

TEST_CASE("write_results: an output folder that cannot be created is bad input", "[writer]")
{
  TempDir tmp("nodir");
  std::ofstream(tmp.path / "file") << "x";
  const std::string dir = (tmp.path / "file" / "sub").string();
  CHECK_THROWS_WITH(simcore::write_results(dir, sample_summary(), sample_results(), true),
                    Catch::StartsWith(dir + ": cannot create the output folder (") &&
                        Catch::EndsWith("); expected a writable path"));
}

TEST_CASE("write_file_atomically replaces the file", "[writer]")
{
  TempDir tmp("atomic");
  const fs::path p = tmp.path / "x.txt";
  simcore::write_file_atomically(p.string(), "first");
  simcore::write_file_atomically(p.string(), "second");
  CHECK(slurp(p) == "second");
  CHECK(std::distance(fs::directory_iterator(tmp.path), fs::directory_iterator()) == 1);
}

TEST_CASE("write_file_atomically writes through links and never replaces what is not a file", "[writer]")
{
  TempDir tmp("links");
  const fs::path file = tmp.path / "data" / "x.txt";
  fs::create_directories(file.parent_path());
  fs::create_symlink("data/x.txt", tmp.path / "relative"); // a link to a file not yet there
  fs::create_symlink(tmp.path / "relative", tmp.path / "chain");
  simcore::write_file_atomically((tmp.path / "chain").string(), "through two links");
  CHECK(slurp(file) == "through two links");
  CHECK(fs::is_symlink(tmp.path / "chain"));
  CHECK(fs::is_symlink(tmp.path / "relative"));
  CHECK(simcore::file_to_replace((tmp.path / "chain").string()) == tmp.path / "data/x.txt");
  CHECK(simcore::file_to_replace((tmp.path / "new.txt").string()) == tmp.path / "new.txt");

  const fs::path fifo = tmp.path / "pipe";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  CHECK_THROWS_WITH(simcore::write_file_atomically(fifo.string(), "x"),
                    fifo.string() + ": is not a regular file (a device, a pipe or a socket), which writing would "
                                    "replace; expected the path of a file to write");
  CHECK(fs::is_fifo(fifo));
  CHECK_THROWS_WITH(simcore::write_file_atomically(tmp.path.string(), "x"),
                    tmp.path.string() + ": is a folder; expected the path of a file to write");
  fs::create_symlink("loop", tmp.path / "loop");
  CHECK_THROWS_WITH(simcore::write_file_atomically((tmp.path / "loop").string(), "x"),
                    Catch::Contains("symbolic links lead on more than 40 times"));
}

TEST_CASE("write_results: a table without columns", "[writer]")
{
  TempDir tmp("nocols");
  simcore::Results r;
  r.add_table("nothing", "no columns yet");
  simcore::write_results((tmp.path / "run").string(), sample_summary(), r, true);
  hid_t file = H5Fopen((tmp.path / "run" / "trace.h5").c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  REQUIRE(file >= 0);
  hid_t ds = H5Dopen2(file, "nothing", H5P_DEFAULT);
  CHECK(ds >= 0);
  CHECK(read_string_attribute(ds, "units") == "");
  H5Dclose(ds);
  H5Fclose(file);
}

namespace {

constexpr std::size_t kLargeRows = 1'000'003; // 15 blocks of 65,536 rows (2 MiB of 4 columns) and a part of one

double large_time(std::size_t r) { return 0.1 * static_cast<double>(r) + 1.0 / 3.0; }
std::int64_t large_bytes(std::size_t r) { return static_cast<std::int64_t>(r * r % 1000003) - 7; }

/** High-water mark of this process's resident memory, in bytes. */
long peak_resident_bytes()
{
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_maxrss * 1024L;
}

} // namespace

TEST_CASE("write_results: a large table is written in blocks, not through a copy of itself", "[writer]")
{
  // 1,000,003 rows of 4 columns: 32 MB of values, 48 MB of CSV text. Writing them through
  // a copy of the table (HDF5) and the whole text (CSV) took as much again; in blocks, the
  // writing takes a few MiB whatever the table's size.
  TempDir tmp("large");
  const fs::path out = tmp.path / "run";
  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) { // a child of its own: its high-water mark is this table's, not other tests'
    ::close(fds[0]);
    long growth = -1;
    try {
      std::vector<double> time(kLargeRows), nan_or_half(kLargeRows);
      std::vector<std::int64_t> bytes(kLargeRows), row(kLargeRows);
      for (std::size_t r = 0; r < kLargeRows; r++) {
        time[r] = large_time(r);
        nan_or_half[r] = r % 2 ? 0.5 : std::nan("");
        bytes[r] = large_bytes(r);
        row[r] = static_cast<std::int64_t>(r);
      }
      simcore::Results results;
      results.add_table("large", "one row per step")
          .add_column("row", "", std::move(row))
          .add_column("time", "s", std::move(time))
          .add_column("bytes", "B", std::move(bytes))
          .add_column("half", "", std::move(nan_or_half));
      H5open(); // the library's own set-up is not the writing's
      const long before = peak_resident_bytes();
      simcore::write_results(out.string(), sample_summary(), results, true, true);
      growth = peak_resident_bytes() - before;
    } catch (...) {
    }
    const ssize_t written = ::write(fds[1], &growth, sizeof growth);
    ::_exit(written == sizeof growth ? 0 : 1);
  }
  ::close(fds[1]);
  long growth = -1;
  const ssize_t got = ::read(fds[0], &growth, sizeof growth);
  ::close(fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  REQUIRE(got == sizeof growth);
  REQUIRE(WIFEXITED(status));
  REQUIRE(growth >= 0);
  INFO("writing took " << growth / 1024 << " KiB beyond the results' own memory");
  CHECK(growth < 12L * 1024 * 1024);

  // Every block in its place: rows at the blocks' edges and the last one.
  hid_t file = H5Fopen((out / "trace.h5").c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  REQUIRE(file >= 0);
  hid_t ds = H5Dopen2(file, "large", H5P_DEFAULT);
  REQUIRE(ds >= 0);
  hid_t space = H5Dget_space(ds);
  hsize_t dims[1] = {0};
  H5Sget_simple_extent_dims(space, dims, nullptr);
  CHECK(dims[0] == kLargeRows);
  struct Row {
    std::int64_t row;
    double time;
    std::int64_t bytes;
    double half;
  };
  hid_t type = H5Dget_type(ds);
  for (const std::size_t r : {std::size_t{0}, std::size_t{65535}, std::size_t{65536}, std::size_t{131072},
                              kLargeRows - 1}) {
    const hsize_t start[1] = {r};
    const hsize_t one[1] = {1};
    REQUIRE(H5Sselect_hyperslab(space, H5S_SELECT_SET, start, nullptr, one, nullptr) >= 0);
    hid_t memory = H5Screate_simple(1, one, nullptr);
    Row value{};
    REQUIRE(H5Dread(ds, type, memory, space, H5P_DEFAULT, &value) >= 0);
    H5Sclose(memory);
    CHECK(value.row == static_cast<std::int64_t>(r));
    CHECK(value.time == large_time(r));
    CHECK(value.bytes == large_bytes(r));
    CHECK((r % 2 ? value.half == 0.5 : std::isnan(value.half)));
  }
  H5Tclose(type);
  H5Sclose(space);
  H5Dclose(ds);
  H5Fclose(file);

  std::ifstream csv(out / "large.csv", std::ios::binary);
  std::string line;
  std::size_t lines = 0;
  std::getline(csv, line);
  CHECK(line == "row,time,bytes,half");
  std::size_t r = 0;
  for (; std::getline(csv, line); r++) {
    if (r == 65535 || r == 65536 || r == kLargeRows - 1) {
      char time[40];
      std::snprintf(time, sizeof time, "%.17g", large_time(r));
      CHECK(line == std::to_string(r) + "," + time + "," + std::to_string(large_bytes(r)) + "," +
                        (r % 2 ? "0.5" : "nan"));
    }
    lines++;
  }
  CHECK(lines == kLargeRows);
}
