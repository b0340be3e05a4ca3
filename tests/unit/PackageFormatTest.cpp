//===- PackageFormatTest.cpp - the .tkpkg format --------------------------===//
//
// A package written and read back is the same package; every truncation and
// every damaged byte is refused (by the checksum or a field check) with a
// message, never an overread (the fuzz target tk-fuzz-tkpkg goes on from
// here); the writer refuses what a reader would.
//
//===----------------------------------------------------------------------===//

#include "tk/package/Package.h"

#include <zlib.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <string>

using namespace tk::package;
using ::testing::HasSubstr;

namespace {

Package twoKernels() {
  Package package;
  Kernel add;
  add.entry = "vector_add";
  add.numWarps = 4;
  add.arguments = {{"x", "!tk.ptr<f32>", 0, 16, 64, 4},
                   {"n", "i32", 1, 1, 1, 0}};
  add.binaries.push_back({"cpu", "x86-64-v4", "tk-cpu 3", 1, 0, 0, "ELF..."});
  add.binaries.push_back(
      {"cuda", "sm_90a", "tk-cuda 7", 4, 0, 32, std::string("\0cubin", 6)});
  Kernel softmax;
  softmax.entry = "softmax";
  softmax.numWarps = 8;
  softmax.numStages = 2;
  softmax.arguments = {{"out", "!tk.ptr<f16>", 0, 8, 16, 2}};
  softmax.binaries.push_back(
      {"vulkan", "subgroup8 shared32768", "tk-vulkan 2", 4, 1024, 0, "SPV"});
  package.kernels = {add, softmax};
  return package;
}

std::string written(const Package &package) {
  std::string bytes, error;
  EXPECT_TRUE(write(package, bytes, error)) << error;
  return bytes;
}

TEST(PackageFormat, RoundTrips) {
  Package package = twoKernels();
  std::string bytes = written(package);
  Package read;
  std::string error;
  ASSERT_TRUE(tk::package::read(bytes.data(), bytes.size(), read, error))
      << error;
  ASSERT_EQ(read.kernels.size(), 2u);
  const Kernel *add = read.find("vector_add");
  ASSERT_NE(add, nullptr);
  EXPECT_EQ(add->numWarps, 4);
  ASSERT_EQ(add->arguments.size(), 2u);
  EXPECT_EQ(add->arguments[0].typeName, "!tk.ptr<f32>");
  EXPECT_EQ(add->arguments[0].alignment, 64);
  EXPECT_EQ(add->arguments[1].kind, 1u);
  ASSERT_EQ(add->binaries.size(), 2u);
  EXPECT_EQ(add->binaries[1].target, "sm_90a");
  EXPECT_EQ(add->binaries[1].registersPerThread, 32);
  EXPECT_EQ(add->binaries[1].bytes, std::string("\0cubin", 6));
  const Kernel *softmax = read.find("softmax");
  ASSERT_NE(softmax, nullptr);
  EXPECT_EQ(softmax->numStages, 2);
  EXPECT_EQ(softmax->binaries[0].sharedMemoryBytes, 1024);
  EXPECT_EQ(read.find("matmul"), nullptr);
  // Writing what was read gives the same bytes.
  EXPECT_EQ(written(read), bytes);
}

TEST(PackageFormat, EveryTruncationIsRefused) {
  std::string bytes = written(twoKernels());
  for (size_t size = 0; size < bytes.size(); ++size) {
    Package read;
    std::string error;
    EXPECT_FALSE(tk::package::read(bytes.data(), size, read, error)) << size;
    EXPECT_FALSE(error.empty()) << size;
  }
}

TEST(PackageFormat, EveryDamagedByteIsRefused) {
  std::string bytes = written(twoKernels());
  for (size_t at = 0; at < bytes.size(); ++at) {
    std::string damaged = bytes;
    damaged[at] = static_cast<char>(damaged[at] ^ 0x40);
    Package read;
    std::string error;
    EXPECT_FALSE(tk::package::read(damaged.data(), damaged.size(), read, error))
        << "byte " << at;
    EXPECT_FALSE(error.empty()) << at;
  }
}

TEST(PackageFormat, MessagesSayWhatIsWrong) {
  std::string bytes = written(twoKernels());
  Package read;
  std::string error;
  EXPECT_FALSE(tk::package::read("ELF", 3, read, error));
  EXPECT_THAT(error, HasSubstr("shorter than a package's 32-byte header"));
  std::string other = bytes;
  other[0] = 'X';
  EXPECT_FALSE(tk::package::read(other.data(), other.size(), read, error));
  EXPECT_THAT(error, HasSubstr("not a tk package"));
  other = bytes;
  other[8] = 2; // the version
  EXPECT_FALSE(tk::package::read(other.data(), other.size(), read, error));
  EXPECT_THAT(error, HasSubstr("format version 2; this tk reads version 1"));
  EXPECT_FALSE(tk::package::read(bytes.data(), bytes.size() - 1, read, error));
  EXPECT_THAT(error, HasSubstr("(truncated?)"));
  other = bytes;
  other[bytes.size() - 1] ^= 1;
  EXPECT_FALSE(tk::package::read(other.data(), other.size(), read, error));
  EXPECT_THAT(error, HasSubstr("damaged"));
}

/// `payload` behind a header with its right size and checksum, as a writer
/// with a bug (or a crafted file) would give it.
std::string wrap(const std::string &payload) {
  std::string file(kMagic, sizeof(kMagic));
  auto append = [&](uint64_t value, int width) {
    for (int i = 0; i < width; ++i)
      file.push_back(static_cast<char>((value >> (8 * i)) & 0xff));
  };
  append(kFormatVersion, 4);
  append(kHeaderBytes, 4);
  append(payload.size(), 8);
  append(crc32(crc32(0L, Z_NULL, 0),
               reinterpret_cast<const Bytef *>(payload.data()),
               static_cast<uInt>(payload.size())),
         4);
  append(0, 4);
  return file + payload;
}

/// Where the checksum is right but the fields are not, the field checks
/// name the byte.
TEST(PackageFormat, FieldChecksNameTheByte) {
  Package package = twoKernels();
  std::string payload = written(package).substr(kHeaderBytes);
  Package read;
  std::string error;
  ASSERT_TRUE(tk::package::read(wrap(payload).data(), wrap(payload).size(),
                                read, error))
      << error;

  std::string crafted = payload;
  crafted[4] = static_cast<char>(0xff); // the first entry's length
  crafted[5] = static_cast<char>(0x0f);
  std::string file = wrap(crafted);
  EXPECT_FALSE(tk::package::read(file.data(), file.size(), read, error));
  EXPECT_EQ(error, "at byte 36: a kernel's entry claims 4095 bytes, " +
                       std::to_string(payload.size() - 8) + " left");

  crafted = payload;
  crafted[0] = static_cast<char>(0xff); // the kernel count
  crafted[1] = static_cast<char>(0xff);
  file = wrap(crafted);
  EXPECT_FALSE(tk::package::read(file.data(), file.size(), read, error));
  EXPECT_EQ(error, "at byte 32: the kernel count is 65535; a package holds "
                   "at most 4096");

  file = wrap(payload + "extra");
  EXPECT_FALSE(tk::package::read(file.data(), file.size(), read, error));
  EXPECT_THAT(error, HasSubstr("5 bytes after the last kernel"));
}

TEST(PackageFormat, WriterRefusesWhatReadersWould) {
  std::string bytes, error;
  Package twice = twoKernels();
  twice.kernels[1].entry = "vector_add";
  EXPECT_FALSE(write(twice, bytes, error));
  EXPECT_THAT(error, HasSubstr("two kernels named 'vector_add'"));
  Package sameTarget = twoKernels();
  sameTarget.kernels[0].binaries[1].backend = "cpu";
  sameTarget.kernels[0].binaries[1].target = "x86-64-v4";
  EXPECT_FALSE(write(sameTarget, bytes, error));
  EXPECT_THAT(error, HasSubstr("two binaries for cpu x86-64-v4"));
  Package noCode = twoKernels();
  noCode.kernels[0].binaries[0].bytes.clear();
  EXPECT_FALSE(write(noCode, bytes, error));
  EXPECT_THAT(error, HasSubstr("without a backend or code"));
  Package longName = twoKernels();
  longName.kernels[0].arguments[0].name.assign(kMaxStringBytes + 1, 'x');
  EXPECT_FALSE(write(longName, bytes, error));
  EXPECT_THAT(error, HasSubstr("at most 4096"));
}

} // namespace
