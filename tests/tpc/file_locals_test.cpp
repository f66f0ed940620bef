// Program-scope __local__ objects of TPC-C files built by tessera_add_tpc_kernels (spec 000
// §2.5.3, §2.6.4): one copy per core, kept from one of the core's program instances to the next
// whatever the host threads, fresh at each launch, and counted against local memory.
#include <gtest/gtest.h>

#include "tessera/sim/scheduler.h"
#include "tpc_test_util.h"

extern "C" const tessera::tpc::KernelImage tessera_tpc_image_file_local_counter;
extern "C" const tessera::tpc::KernelImage tessera_tpc_image_file_local_too_big;
extern "C" const tessera::tpc::KernelImage tessera_tpc_image_global_pointer;
extern "C" const tessera::tpc::KernelImage tessera_tpc_image_header_pointer;
extern "C" const tessera::tpc::KernelImage tessera_tpc_image_file_local_modeled_size;
extern "C" const tessera::tpc::KernelImage tessera_tpc_image_file_local_by_address;

namespace {

using namespace tpc_test;

struct FileLocals : KernelFixture {
  FileLocals() : KernelFixture("file-locals") {
    const GlueOptions i32{.inputs = 0, .type = gcapi::DATA_I32};
    lib->add("file_local_counter", glue_for(tessera_tpc_image_file_local_counter.function, i32));
    lib->add("file_local_too_big",
             glue_for(tessera_tpc_image_file_local_too_big.function, {.inputs = 0}));
    lib->add("global_pointer", glue_for(tessera_tpc_image_global_pointer.function,
                                        {.inputs = 1, .type = gcapi::DATA_I32}));
    lib->add("header_pointer", glue_for(tessera_tpc_image_header_pointer.function,
                                        {.inputs = 1, .type = gcapi::DATA_I32}));
    lib->add("file_local_modeled_size",
             glue_for(tessera_tpc_image_file_local_modeled_size.function, {.inputs = 0}));
    lib->add("file_local_by_address",
             glue_for(tessera_tpc_image_file_local_by_address.function, {.inputs = 1}));
  }
};

TEST_F(FileLocals, EachCoreStartsFromTheFilesValuesWhateverTheHostThreads) {
  // The launcher gives each core one box, so every instance finds its core's copy as the file
  // initialised it: a count of 1 everywhere, at every launch. Per-host-thread storage would
  // give 2 or more wherever one thread ran several cores' instances, or on the second launch.
  const int members = 1000;
  for (unsigned threads : {1u, 2u, 8u}) {
    sim::WorkScheduler pool(threads);
    Runtime rt(*dev, options(&pool));
    for (int launch = 0; launch < 2; ++launch) {
      auto out = make_device_tensor(*dev, DType::i32, Shape{64 * members});
      rt.launch("file_local_counter", {}, {out});
      const auto got = download<std::int32_t>(*dev, out);
      for (int m = 0; m < members; ++m)
        ASSERT_EQ(got[static_cast<std::size_t>(m) * 64], 1)
            << "member " << m << ", launch " << launch << ", " << threads << " threads";
    }
  }
}

TEST_F(FileLocals, StateCarriedFromOneInstanceToTheNextFailsCheckOrder) {
  // Check-order mode runs more, finer instances: a core's second instance sees the count its
  // first left, so the outputs differ and the kernel is reported as order-dependent.
  RuntimeOptions o = options();
  o.check_order = true;
  Runtime rt(*dev, o);
  auto out = make_device_tensor(*dev, DType::i32, Shape{64 * 1000});
  try {
    rt.launch("file_local_counter", {}, {out});
    FAIL() << "no DeviceFault";
  } catch (const DeviceFault& e) {
    EXPECT_NE(std::string(e.what()).find("check-order mode"), std::string::npos) << e.what();
  }
}

TEST_F(FileLocals, MoreThanTheCoresLocalMemoryIsADeviceFault) {
  Runtime rt(*dev, options());
  auto out = make_device_tensor(*dev, DType::f32, Shape{64});
  try {
    rt.launch("file_local_too_big", {}, {out});
    FAIL() << "no DeviceFault";
  } catch (const DeviceFault& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("program-scope __local__"), std::string::npos) << msg;
    EXPECT_NE(msg.find("file_local_too_big"), std::string::npos) << msg;
  }
}

// Local memory holds a vector in 256 bytes and a bool256 in 32 (spec 000 §2.5.1), whatever the
// host objects carry beside their lanes: the build step records each declaration's TPC size.
TEST_F(FileLocals, ObjectsTakeTheirTpcSizeInLocalMemory) {
  Runtime rt(*dev, options());
  auto out = make_device_tensor(*dev, DType::f32, Shape{64});
  const auto& record = rt.launch("file_local_modeled_size", {}, {out});
  EXPECT_EQ(download<float>(*dev, out)[5], 2.0f);
  EXPECT_EQ(record.metrics.at("local.vlm.high_water_bytes"), 300.0 * 256 + 8 * 512 + 4 * 32);
  EXPECT_GT(sizeof(float64) * 300, 81920u);  // the host objects would not fit
}

// The file's objects are the core's local memories at their addresses, vectors from address 0 of
// vector local memory and scalars from address 0 of scalar local memory: what the kernel stores
// there by address it reads back through the arrays.
TEST_F(FileLocals, ObjectsAreTheLocalMemoryAtTheirAddresses) {
  Runtime rt(*dev, options());
  std::vector<float> x(256);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = 0.5f * static_cast<float>(i) - 3;
  auto in = upload(*dev, DType::f32, Shape{256}, x);
  auto out = make_device_tensor(*dev, DType::f32, Shape{256});
  const auto& record = rt.launch("file_local_by_address", {in}, {out});
  const auto got = download<float>(*dev, out);
  for (int i = 0; i < 4; ++i)
    for (int l = 0; l < 64; ++l)
      ASSERT_EQ(got[static_cast<std::size_t>(i * 64 + l)],
                x[static_cast<std::size_t>((3 - i) * 64 + l)] + static_cast<float>(i + 10))
          << "vector " << i << " lane " << l;
  EXPECT_EQ(record.metrics.at("local.vlm.high_water_bytes"), 4 * 256);
  EXPECT_EQ(record.metrics.at("local.slm.high_water_bytes"), 4 * 4);
}

// tessera_add_tpc_kernels writes `__global__ T*` as global_ptr<T>: each access through the
// pointer is a checked, counted scalar access; making an address past the tensor is not.
TEST_F(FileLocals, GlobalPointersAreCheckedAndCountedAtEveryAccess) {
  Runtime rt(*dev, options());
  std::vector<std::int32_t> host(64);
  for (int i = 0; i < 64; ++i) host[static_cast<std::size_t>(i)] = 10 + i;
  auto in = upload(*dev, DType::i32, Shape{64}, host);
  auto out = make_device_tensor(*dev, DType::i32, Shape{64});
  const auto& record = rt.launch("global_pointer", {in}, {out}, 0);
  const auto got = download<std::int32_t>(*dev, out);
  EXPECT_EQ(got[0], 10 + 11 + 12);
  EXPECT_EQ(got[1], 20);
  EXPECT_EQ(got[3], 10);
  EXPECT_EQ(got[4], 11);
  // Six reads and four writes, each one transaction; the past-the-end address costs none.
  EXPECT_EQ(record.metrics.at("global.transactions"), 10.0);
  try {
    rt.launch("global_pointer", {in}, {out}, 1);
    FAIL() << "reading through a pointer past the tensor must fault";
  } catch (const DeviceFault& e) {
    EXPECT_NE(std::string(e.what()).find("(64, 0, 0, 0, 0)"), std::string::npos) << e.what();
  }
}

// A kernel body in an included header gets the same rewriting (Habana's gather_fwd_i32.h).
TEST_F(FileLocals, GlobalPointersInIncludedHeadersAreCheckedToo) {
  Runtime rt(*dev, options());
  std::vector<std::int32_t> host(64, 41);
  auto in = upload(*dev, DType::i32, Shape{64}, host);
  auto out = make_device_tensor(*dev, DType::i32, Shape{64});
  const auto& record = rt.launch("header_pointer", {in}, {out});
  const auto got = download<std::int32_t>(*dev, out);
  EXPECT_EQ(got[0], 42);
  EXPECT_EQ(got[1], 7);  // the predicated-off load's income; its address past the tensor is fine
  // One read and two writes; neither the past-the-end address nor the skipped load counts.
  EXPECT_EQ(record.metrics.at("global.transactions"), 3.0);
}

}  // namespace
