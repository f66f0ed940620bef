// sim::LocalStore: a core's local memory as addressable bytes, with the faults of its size and
// access granularity, poison in fresh bytes, and host objects attached as views of its bytes.
#include "tessera/sim/local_store.h"

#include <array>
#include <cstdint>
#include <cstring>
#include <functional>
#include <string>

#include <gtest/gtest.h>

#include "tessera/core/error.h"
#include "test_machine.h"

namespace tessera::sim {
namespace {

// 1 KiB at base 0x400, accessed in 4-byte chunks.
arch::MemorySpec scratch() {
  return testing::memory_spec("scratch", "core", 1024, 0x400, 4, 1, 0, 4, 4);
}

std::string fault_text(const std::function<void()>& f) {
  try {
    f();
  } catch (const DeviceFault& e) {
    return e.what();
  }
  return "no DeviceFault";
}

TEST(LocalStore, FreshBytesHoldThePoisonPattern) {
  LocalStore m(scratch(), "core0");
  std::uint32_t word = 0;
  m.read(0x400 + 8, &word, 4, 4, "load");
  EXPECT_EQ(word, 0xDEADBEEFu);
  std::uint8_t byte = 0;
  m.read(0x400 + 9, &byte, 1, 1, "load");
  EXPECT_EQ(byte, 0xBEu);  // little-endian: EF BE AD DE
}

TEST(LocalStore, WritesAreReadBackByAddress) {
  LocalStore m(scratch(), "core0");
  const std::array<std::uint32_t, 3> in{1, 2, 0xffffffffu};
  m.write(0x400 + 12, in.data(), sizeof in, 4, "store");
  std::array<std::uint32_t, 3> out{};
  m.read(0x400 + 12, out.data(), sizeof out, 4, "load");
  EXPECT_EQ(out, in);
  std::uint16_t half = 0;
  m.read(0x400 + 16, &half, 2, 2, "load");
  EXPECT_EQ(half, 2u);
  EXPECT_EQ(m.reads(), 2u);
  EXPECT_EQ(m.writes(), 1u);
  EXPECT_EQ(m.bytes_read(), 14u);
  EXPECT_EQ(m.bytes_written(), 12u);
  EXPECT_EQ(m.high_water(), 24u);
}

TEST(LocalStore, AnAccessPastTheMemoryNamesOwnerAddressAndSize) {
  LocalStore m(scratch(), "tpc3 kernel k");
  std::uint32_t word = 0;
  EXPECT_NO_THROW(m.read(0x400 + 1020, &word, 4, 4, "load"));
  const std::string what = fault_text([&] { m.read(0x400 + 1024, &word, 4, 4, "s_f32_ld_l"); });
  EXPECT_NE(what.find("tpc3 kernel k"), std::string::npos) << what;
  EXPECT_NE(what.find("s_f32_ld_l"), std::string::npos) << what;
  EXPECT_NE(what.find("0x800"), std::string::npos) << what;
  EXPECT_NE(what.find("1 KiB"), std::string::npos) << what;
  EXPECT_THROW(m.write(0x3fc, &word, 4, 4, "store"), DeviceFault);         // below the base
  EXPECT_THROW(m.write(0x400 + 1022, &word, 4, 1, "store"), DeviceFault);  // straddles the end
}

TEST(LocalStore, AReducedLimitFaultsBeforeTheCapacityAndSaysWhy) {
  LocalStore m(scratch(), "core0", 256, "special functions use the rest");
  std::uint32_t word = 7;
  EXPECT_NO_THROW(m.write(0x400 + 252, &word, 4, 4, "store"));
  const std::string what = fault_text([&] { m.write(0x400 + 256, &word, 4, 4, "store"); });
  EXPECT_NE(what.find("special functions use the rest"), std::string::npos) << what;
  EXPECT_NE(what.find("256 B"), std::string::npos) << what;
  EXPECT_THROW(LocalStore(scratch(), "core0", 2048), UserError);
}

TEST(LocalStore, AMisalignedAccessNamesTheChunkSize) {
  LocalStore m(scratch(), "core0");
  std::uint32_t word = 0;
  const std::string what = fault_text([&] { m.read(0x400 + 6, &word, 4, 4, "s_i32_ld_l"); });
  EXPECT_NE(what.find("0x406"), std::string::npos) << what;
  EXPECT_NE(what.find("4-byte"), std::string::npos) << what;
  EXPECT_NO_THROW(m.read(0x400 + 6, &word, 2, 2, "load"));
}

// A host object larger than its modeled bytes, as a TPC vector carries its ready cycle.
struct Padded {
  std::uint32_t lanes[2];
  std::uint64_t host_only;
};

TEST(LocalStore, AttachedObjectsAreTheBytesAtTheirAddresses) {
  LocalStore m(scratch(), "core0");
  std::array<Padded, 3> objects{};
  for (auto& o : objects) o.host_only = 0x5555;
  // Three 8-byte elements at 0x410: the objects take the memory's (poison) bytes.
  m.attach(0x410, reinterpret_cast<std::byte*>(objects.data()), 3, 8, sizeof(Padded), true,
           "array");
  EXPECT_EQ(objects[1].lanes[0], 0xDEADBEEFu);
  EXPECT_EQ(objects[1].host_only, 0x5555u);
  // A write by address lands in the objects, across the element boundary, not in host_only.
  const std::array<std::uint32_t, 4> in{10, 11, 12, 13};
  m.write(0x410 + 4, in.data(), sizeof in, 4, "store");
  EXPECT_EQ(objects[0].lanes[1], 10u);
  EXPECT_EQ(objects[1].lanes[0], 11u);
  EXPECT_EQ(objects[1].lanes[1], 12u);
  EXPECT_EQ(objects[2].lanes[0], 13u);
  EXPECT_EQ(objects[1].host_only, 0x5555u);
  // The objects' own writes are what a read by address sees, with the memory's bytes around.
  objects[2].lanes[1] = 99;
  std::array<std::uint32_t, 4> out{};
  m.read(0x410 + 16, out.data(), sizeof out, 4, "load");
  EXPECT_EQ(out[0], 13u);
  EXPECT_EQ(out[1], 99u);
  EXPECT_EQ(out[2], 0xDEADBEEFu);
  // Detached, the memory keeps the last values.
  m.detach(0x410);
  objects[2].lanes[1] = 0;
  m.read(0x410 + 20, out.data(), 4, 4, "load");
  EXPECT_EQ(out[0], 99u);
  EXPECT_EQ(m.views(), 0u);
}

TEST(LocalStore, AttachingCanGiveTheMemoryTheObjectsValues) {
  LocalStore m(scratch(), "core0");
  std::array<std::uint32_t, 2> init{0x1234, 0x5678};
  m.attach(0x400, reinterpret_cast<std::byte*>(init.data()), 2, 4, 4, false, "initialised");
  EXPECT_EQ(init[0], 0x1234u);  // kept, not overwritten with poison
  m.detach(0x400);
  std::uint32_t word = 0;
  m.read(0x404, &word, 4, 4, "load");
  EXPECT_EQ(word, 0x5678u);
}

TEST(LocalStore, ViewsMayNotOverlapNorReachPastTheLimit) {
  LocalStore m(scratch(), "core0", 512, "reduced");
  std::array<std::uint32_t, 4> a{}, b{};
  m.attach(0x420, reinterpret_cast<std::byte*>(a.data()), 4, 4, 4, true, "a");
  EXPECT_THROW(m.attach(0x42c, reinterpret_cast<std::byte*>(b.data()), 4, 4, 4, true, "b"),
               UserError);
  EXPECT_THROW(m.attach(0x414, reinterpret_cast<std::byte*>(b.data()), 4, 4, 4, true, "b"),
               UserError);
  EXPECT_NO_THROW(m.attach(0x430, reinterpret_cast<std::byte*>(b.data()), 4, 4, 4, true, "b"));
  EXPECT_THROW(m.attach(0x400 + 508, reinterpret_cast<std::byte*>(b.data()), 2, 4, 4, true, "c"),
               DeviceFault);
  EXPECT_THROW(m.detach(0x500), UserError);
}

}  // namespace
}  // namespace tessera::sim
