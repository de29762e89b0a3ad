/* The JSON form of a trace: bit-exact round trips through JSON and on to HDF5 and back, and
 * clear errors for malformed documents (the element at fault and what was expected). */
#include <calibration/trace_file.hpp>
#include <calibration/trace_json.hpp>

#include <simcore/error.hpp>

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <unistd.h>

namespace {

calibration::Trace sample_trace()
{
  calibration::Trace t;
  t.attributes = calibration::machine_attributes("-O2 (test)");
  t.attributes["gpu"] = "Test GPU";
  // Values a decimal text of few digits would not give back exactly.
  t.benchmarks["cuda"] = {"cuda",
                          {{"device", "Test GPU"}, {"compute_capability", "9.0"}},
                          {{"gemm_fp32", {{0.1, 1.0 / 3.0, 2.0 / 7.0 * 1e5}, {3}, "Gflop/s"}},
                           {"check_error", {{1e-300, std::numeric_limits<double>::quiet_NaN(), 4.9e-324, -0.0, HUGE_VAL, -HUGE_VAL}, {3, 2}, "1"}}}};
  t.benchmarks["stream"] = {"stream", {}, {}};
  return t;
}

void require_same(const calibration::Trace& a, const calibration::Trace& b)
{
  REQUIRE(a.attributes == b.attributes);
  REQUIRE(a.benchmarks.size() == b.benchmarks.size());
  for (const auto& [name, ba] : a.benchmarks) {
    const auto& bb = b.benchmarks.at(name);
    CHECK(bb.name == name);
    CHECK(ba.parameters == bb.parameters);
    REQUIRE(ba.datasets.size() == bb.datasets.size());
    for (const auto& [dname, da] : ba.datasets) {
      const auto& db = bb.datasets.at(dname);
      CHECK(da.unit == db.unit);
      CHECK(da.shape == db.shape);
      REQUIRE(da.values.size() == db.values.size());
      for (std::size_t i = 0; i < da.values.size(); i++) {
        if (std::isnan(da.values[i])) // NaN, infinities and -0 included
          CHECK(std::isnan(db.values[i]));
        else
          CHECK(std::memcmp(&da.values[i], &db.values[i], sizeof(double)) == 0); // bit for bit
      }
    }
  }
}

std::string error_of(const std::string& text)
{
  try {
    calibration::trace_from_json_text(text, "t.json");
  } catch (const simcore::InputError& e) {
    return e.what();
  }
  return "";
}

const std::string kAttrs = R"("attributes": {"schema": "simcore-calibration-trace/1"})";

} // namespace

TEST_CASE("a trace goes through JSON and on to HDF5 bit for bit", "[calibration]")
{
  const auto t = sample_trace();
  const auto back = calibration::trace_from_json_text(calibration::trace_to_json_text(t), "memory");
  require_same(t, back);

  const std::string stem = "trace_json_" + std::to_string(getpid());
  calibration::write_trace(stem + ".json", t); // by extension: the JSON form
  calibration::write_trace(stem + ".h5", calibration::read_trace(stem + ".json"));
  const auto from_h5 = calibration::read_trace(stem + ".h5");
  CHECK(calibration::is_json_trace_path(stem + ".json"));
  CHECK_FALSE(calibration::is_json_trace_path(stem + ".h5"));
  std::remove((stem + ".json").c_str());
  std::remove((stem + ".h5").c_str());
  require_same(t, from_h5);
}

TEST_CASE("malformed JSON traces name the element and what was expected", "[calibration]")
{
  CHECK(error_of("{") .find("t.json:1: not JSON") == 0);
  CHECK(error_of("[]") == "t.json:1: the document is array; expected an object");
  CHECK(error_of(R"({"benchmarks": {}})") == "t.json:1: trace: no 'attributes'; expected an object");
  CHECK(error_of(R"({"attributes": {"schema": "other/2"}, "benchmarks": {}})") ==
        "t.json:1: attributes.schema is 'other/2'; expected 'simcore-calibration-trace/1'");
  CHECK(error_of(R"({"attributes": {"schema": "simcore-calibration-trace/1", "host": 3}, "benchmarks": {}})") ==
        "t.json:1: attributes.host is number; expected a string");
  CHECK(error_of("{" + kAttrs + R"(, "benchmarks": {"cuda": {"parameters": {}}}})") ==
        "t.json:1: benchmarks.cuda: no 'datasets'; expected an object");
  const std::string d = "{" + kAttrs + R"(, "benchmarks": {"cuda": {"parameters": {}, "datasets": {"g": )";
  CHECK(error_of(d + R"({"unit": "s", "shape": [2, 2], "values": [1, 2, 3]}}}}})") ==
        "t.json:1: benchmarks.cuda.datasets.g.values holds 3 numbers; expected 4 (the product of its shape)");
  CHECK(error_of(d + R"({"unit": "s", "shape": [1, 1, 1], "values": [1]}}}}})") ==
        "t.json:1: benchmarks.cuda.datasets.g.shape has 3 dimensions; expected 1 or 2");
  CHECK(error_of(d + R"({"unit": "s", "shape": [-1], "values": []}}}}})") ==
        "t.json:1: benchmarks.cuda.datasets.g.shape holds -1; expected counts (integers >= 0)");
  CHECK(error_of(d + R"({"unit": "s", "shape": [2], "values": [1, "x"]}}}}})") ==
        "t.json:1: benchmarks.cuda.datasets.g.values[1] is string; expected a number (or \"nan\", \"inf\", \"-inf\")");
  CHECK(error_of(d + R"({"unit": "s", "shape": [4294967296, 4294967296], "values": []}}}}})") ==
        "t.json:1: benchmarks.cuda.datasets.g.shape [4294967296,4294967296] is too large; expected fewer than 2^32 values");
  CHECK(error_of(d + R"({"unit": "s", "shape": [1], "values": [1e400]}}}}})").find("t.json: not JSON that a trace can hold") == 0);
  CHECK(error_of(R"({"attributes": {"host": "h"}, "benchmarks": {}})") ==
        "t.json:1: attributes: no 'schema'; expected 'simcore-calibration-trace/1'");
  CHECK(error_of(d + R"({"shape": [1], "values": [1]}}}}})") ==
        "t.json:1: benchmarks.cuda.datasets.g: no 'unit'; expected a string");
  // Over many lines, as benchmarks write it: the element's own line, a key given twice at its second.
  const std::string lines = "{\n" + kAttrs + ",\n \"benchmarks\": {\n  \"cuda\": {\n   \"parameters\": {},\n"
                            "   \"datasets\": {\n    \"g\": {\"unit\": \"s\",\n     \"shape\": [2],\n"
                            "     \"values\": [1,\n \"x\"]}}}}}";
  CHECK(error_of(lines) ==
        "t.json:10: benchmarks.cuda.datasets.g.values[1] is string; expected a number (or \"nan\", \"inf\", \"-inf\")");
  CHECK(error_of("{\n" + kAttrs + R"(,
 "benchmarks": {},
 "benchmarks": {}})") == "t.json:4: the key 'benchmarks' twice in one object; expected each name once");
  CHECK(error_of("{\n\"attributes\": {\n") .find("t.json:3: not JSON") == 0);
}

TEST_CASE("JSON traces: any case of the extension, text that is not UTF-8, a folder", "[calibration]")
{
  CHECK(calibration::is_json_trace_path("T.JSON"));
  CHECK_FALSE(calibration::is_json_trace_path("json"));
  auto t = sample_trace();
  t.attributes["cpu_model"] = "Intel\xae Xeon"; // Latin-1, as an odd /proc may give
  const auto back = calibration::trace_from_json_text(calibration::trace_to_json_text(t), "memory");
  CHECK(back.attributes.at("cpu_model") == "Intel\xef\xbf\xbd Xeon"); // U+FFFD in its place
  const std::string dir = "trace_json_folder_" + std::to_string(getpid()) + ".json";
  std::filesystem::create_directory(dir);
  CHECK_THROWS_WITH(calibration::read_trace(dir), dir + ": is a folder; expected a calibration trace file");
  std::filesystem::remove_all(dir);
}

TEST_CASE("a JSON trace that cannot be written leaves nothing behind", "[calibration]")
{
  const std::string dir = "trace_json_dir_" + std::to_string(getpid());
  std::filesystem::create_directory(dir);
  const std::string target = dir + "/missing/t.json";
  CHECK_THROWS_AS(calibration::write_trace(target, sample_trace()), simcore::InputError);
  CHECK(std::filesystem::is_empty(dir));
  std::filesystem::remove_all(dir);
}

TEST_CASE("the NVIDIA driver's release is read from the driver's version file", "[calibration]")
{
  const std::string path = "nvidia_version_" + std::to_string(getpid()) + ".txt";
  const auto release_of = [&path](const std::string& text) {
    std::ofstream(path) << text;
    const std::string r = calibration::nvidia_driver_release(path);
    std::remove(path.c_str());
    return r;
  };
  // The proprietary module's line and the open one's (the architecture, x86_64, is no release).
  CHECK(release_of("NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.15  Tue Mar  5 22:23:56 UTC 2024\n"
                   "GCC version:  gcc version 12.2.0 (Debian 12.2.0-14)\n") == "550.54.15");
  CHECK(release_of("NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  570.86.10  Release Build  "
                   "(dvs-builder@U16-I3-B03-4-3)  Thu Jan 16 23:38:19 UTC 2025\n") == "570.86.10");
  CHECK(release_of("NVRM version: NVIDIA UNIX aarch64 Kernel Module  535.104.05  Sat Aug 19 01:13:52 UTC 2023\n") ==
        "535.104.05");
  // The GCC line's version is not the driver's; a line without a release, or no file: nothing.
  CHECK(release_of("GCC version:  gcc version 12.2.0 (Debian 12.2.0-14)\n").empty());
  CHECK(release_of("NVRM version: NVIDIA UNIX x86_64 Kernel Module  Tue Mar  5 UTC 2024\n").empty());
  CHECK(calibration::nvidia_driver_release(path + ".missing").empty());
}

TEST_CASE("the core and its caches are named where a virtual machine's model name says little", "[calibration]")
{
  namespace fs = std::filesystem;
  const fs::path dir = "cpu_identity_" + std::to_string(getpid());
  fs::create_directories(dir);
  const auto id_of = [&dir](const std::string& text) {
    std::ofstream(dir / "cpuinfo") << text;
    return calibration::cpu_identity((dir / "cpuinfo").string());
  };
  // x86: vendor, family, model and stepping (not "model name"'s text); every processor alike, once.
  const std::string zen5 = "processor\t: 0\nvendor_id\t: AuthenticAMD\ncpu family\t: 26\nmodel\t\t: 2\n"
                           "model name\t: AMD EPYC\nstepping\t: 1\n\n";
  CHECK(id_of(zen5 + zen5 + "\n") == "AuthenticAMD family 26 model 2 stepping 1");
  CHECK(id_of(zen5 + "processor\t: 1\nvendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t\t: 143\nstepping\t: 8\n") ==
        "1 x AuthenticAMD family 26 model 2 stepping 1; 1 x GenuineIntel family 6 model 143 stepping 8");
  // A hidden stepping leaves it out; a blank line before the first processor is skipped.
  CHECK(id_of("\nvendor_id : GenuineIntel\ncpu family : 6\nmodel : 143\nmodel name : Intel Xeon\n") ==
        "GenuineIntel family 6 model 143");
  // Arm kernels: implementer, variant, part and revision, as they write them.
  CHECK(id_of("processor\t: 0\nBogoMIPS\t: 2000.00\nFeatures\t: fp asimd sve\nCPU implementer\t: 0x41\n"
              "CPU architecture: 8\nCPU variant\t: 0x1\nCPU part\t: 0xd40\nCPU revision\t: 1\n") ==
        "implementer 0x41 variant 0x1 part 0xd40 revision 1");
  CHECK(id_of("processor : 0\nBogoMIPS : 50.00\n").empty());
  CHECK(calibration::cpu_identity((dir / "missing").string()).empty());
  // big.LITTLE: both kinds, with their counts, in order (CPU 0 is the little one).
  std::string big_little;
  for (int c = 0; c < 6; c++)
    big_little += "processor\t: " + std::to_string(c) + "\nFeatures\t: fp asimd\nCPU implementer\t: 0x41\n" +
                  "CPU variant\t: 0x0\nCPU part\t: " + (c < 4 ? "0xd03" : "0xd08") + "\nCPU revision\t: " +
                  (c < 4 ? "4" : "2") + "\n\n";
  CHECK(id_of(big_little) == "4 x implementer 0x41 variant 0x0 part 0xd03 revision 4; "
                             "2 x implementer 0x41 variant 0x0 part 0xd08 revision 2");
  // Old 32-bit Arm kernels: processors first, then one block that names the core.
  CHECK(id_of("processor\t: 0\nBogoMIPS\t: 38.40\n\nprocessor\t: 1\nBogoMIPS\t: 38.40\n\n"
              "Features\t: half thumb fastmult vfp edsp neon\nCPU implementer\t: 0x41\nCPU architecture: 7\n"
              "CPU variant\t: 0x0\nCPU part\t: 0xc07\nCPU revision\t: 5\n\nHardware\t: BCM2835\n") ==
        "implementer 0x41 variant 0x0 part 0xc07 revision 5");
  // POWER, RISC-V, s390x.
  CHECK(id_of("processor\t: 0\ncpu\t\t: POWER9 (architected), altivec supported\nclock\t\t: 2300.000000MHz\n"
              "revision\t: 2.2 (pvr 004e 1202)\n\ntimebase\t: 512000000\nplatform\t: pSeries\n") ==
        "cpu POWER9 (architected), altivec supported revision 2.2 (pvr 004e 1202)");
  CHECK(id_of("processor\t: 0\nhart\t\t: 1\nisa\t\t: rv64imafdc\nmmu\t\t: sv39\nuarch\t\t: sifive,u74-mc\n"
              "mvendorid\t: 0x489\nmarchid\t\t: 0x8000000000000007\nmimpid\t\t: 0x4210427\n") ==
        "uarch sifive,u74-mc mvendorid 0x489 marchid 0x8000000000000007 mimpid 0x4210427");
  CHECK(id_of("vendor_id       : IBM/S390\n# processors    : 2\nbogomips per cpu: 3241.00\n"
              "processor 0: version = FF,  identification = 0133E8,  machine = 8561\n"
              "processor 1: version = FF,  identification = 0133E8,  machine = 8561\n") == "IBM/S390 machine 8561");
  // A 32-bit PowerPC without SMP (no blank line before the machine's "model"): its cpu, not that model.
  CHECK(id_of("processor\t: 0\ncpu\t\t: 7447A, altivec supported\nrevision\t: 1.2 (pvr 8003 0102)\n"
              "platform\t: PowerMac\nmodel\t\t: PowerBook6,8\n") ==
        "cpu 7447A, altivec supported revision 1.2 (pvr 8003 0102)");

  // An aarch64 program's /proc/cpuinfo under qemu-user: the host's (no Arm keys, before QEMU
  // 8.2), the emulator's (implementer 0, since 8.2), or an Arm kernel's.
  std::ofstream(dir / "midr_el1") << "0x00000000410fd401\n"; // an Arm kernel's sysfs register file
  const auto emulation_of = [&dir](const std::string& text, const char* midr = "midr_el1") {
    std::ofstream(dir / "cpuinfo") << text;
    return calibration::arm_cpuinfo_emulation((dir / "cpuinfo").string(), (dir / midr).string());
  };
  CHECK(emulation_of("processor\t: 0\nvendor_id\t: AuthenticAMD\ncpu family\t: 26\n") == "the host's");
  CHECK(emulation_of("processor\t: 0\nBogoMIPS\t: 100.00\nFeatures\t: fp asimd sve\nCPU implementer\t: 0x00\n"
                     "CPU architecture: 8\nCPU variant\t: 0x0\nCPU part\t: 0x051\nCPU revision\t: 0\n") ==
        "the emulator's");
  CHECK(emulation_of("processor\t: 0\nFeatures\t: fp asimd sve\nCPU implementer\t: 0x41\nCPU part\t: 0xd40\n")
            .empty());
  // QEMU 8.2 with a named CPU (-cpu neoverse-v1) gives that core's numbers; sysfs, the host's, has no midr_el1.
  CHECK(emulation_of("processor\t: 0\nFeatures\t: fp asimd sve\nCPU implementer\t: 0x41\nCPU part\t: 0xd40\n",
                     "no_midr_el1") == "the emulator's");

  // Caches: sysfs's index folders in order, data and instruction caches told apart.
  const fs::path cache = dir / "cache";
  const auto add = [&cache](int i, const char* level, const char* type, const char* size) {
    fs::create_directories(cache / ("index" + std::to_string(i)));
    std::ofstream(cache / ("index" + std::to_string(i)) / "level") << level << "\n";
    std::ofstream(cache / ("index" + std::to_string(i)) / "type") << type << "\n";
    std::ofstream(cache / ("index" + std::to_string(i)) / "size") << size << "\n";
  };
  CHECK(calibration::cache_sizes(cache.string()).empty());
  add(0, "1", "Data", "48K");
  add(1, "1", "Instruction", "32K");
  add(2, "2", "Unified", "1024K");
  add(3, "3", "Unified", "32768K");
  CHECK(calibration::cache_sizes(cache.string()) == "L1d 48K, L1i 32K, L2 1024K, L3 32768K");
  add(10, "4", "Unified", "1G"); // after a gap, and in the order of the numbers (not index1, index10, index2)
  add(5, "3", "Unified", "4M");
  fs::create_directories(cache / "index6"); // no level or size (an Arm VM without cache tables): left out
  add(7, "9", "Unified", "9G");
  fs::rename(cache / "index7", cache / "index99999999999999999999"); // no sysfs name: passed over, not a crash
  CHECK(calibration::cache_sizes(cache.string()) == "L1d 48K, L1i 32K, L2 1024K, L3 32768K, L3 4M, L4 1G");
  CHECK(calibration::cache_sizes((dir / "missing").string()).empty());
  fs::remove_all(dir);

  // What this machine's traces get.
  const auto a = calibration::machine_attributes("-O2 (test)");
  REQUIRE(a.count("cpu_id"));
  REQUIRE(a.count("caches"));
  if (fs::exists("/sys/devices/system/cpu/cpu0/cache/index0/size"))
    CHECK_FALSE(a.at("caches").empty());
}
