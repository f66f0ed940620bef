// Kernel libraries loaded as shared objects through TESSERA_KERNEL_PATH (spec 000 §2.9).
#include <gtest/gtest.h>

#include <cstdlib>

#include "tpc_test_util.h"

using namespace tpc_test;

namespace {

std::vector<float> run_scale(Runtime& rt, runtime::Device& dev, const char* kernel) {
  std::vector<float> host(100);
  for (int i = 0; i < 100; ++i) host[i] = static_cast<float>(i);
  auto in = upload(dev, DType::f32, Shape{100}, host);
  auto out = make_device_tensor(dev, DType::f32, Shape{100});
  rt.launch(kernel, {in}, {out});
  return download<float>(dev, out);
}

}  // namespace

TEST(TpcLibrary, SharedObjectLibrariesLoadAndTheFirstNameWins) {
  auto dev = open_gaudi();
  KernelRegistry reg;
  reg.add_path(std::string(TPC_TEST_LIB_B) + ":" + TPC_TEST_LIB_A);
  RuntimeOptions o;
  o.registry = &reg;
  Runtime rt(*dev, o);
  auto got = run_scale(rt, *dev, "scale_f32");
  EXPECT_EQ(got[10], 30.0f);  // library B comes first in the path
  got = run_scale(rt, *dev, "only_a_f32");
  EXPECT_EQ(got[10], 20.0f);  // only A has it

  KernelRegistry reversed;
  reversed.add_path(std::string(TPC_TEST_LIB_A) + ":" + TPC_TEST_LIB_B);
  o.registry = &reversed;
  Runtime rt2(*dev, o);
  EXPECT_EQ(run_scale(rt2, *dev, "scale_f32")[10], 20.0f);
}

TEST(TpcLibrary, GlobalRegistryReadsTesseraKernelPath) {
  // A directory entry contributes its *.so files in name order: tpc_test_lib_a before _b.
  setenv("TESSERA_KERNEL_PATH", TPC_TEST_LIB_DIR, 1);
  auto dev = open_gaudi();
  Runtime rt(*dev);
  EXPECT_EQ(run_scale(rt, *dev, "scale_f32")[7], 14.0f);
  const auto libs = KernelRegistry::global().libraries();
  ASSERT_GE(libs.size(), 2u);
  EXPECT_NE(libs[0]->origin().find("tpc_test_lib_a"), std::string::npos);
}

TEST(TpcLibrary, BadPathEntriesAreUserErrors) {
  KernelRegistry reg;
  EXPECT_THROW(reg.add_path("/nonexistent/libnothing.so"), UserError);
  EXPECT_THROW(reg.add_path(__FILE__), UserError);  // not a shared object
}

// Launches look names up in each library's cached set; an exported name over
// tpc.kernel_name_max_bytes is still a DeviceFault naming it, found or not, and a library added
// to a KernelSet after its names were read is searched again.
TEST(TpcLibrary, FindChecksNameLengthsAndSeesKernelsAddedLater) {
  auto set = std::make_shared<KernelSet>("test set");
  const auto glue = [](gcapi::HabanaKernelParams_t*, gcapi::HabanaKernelInstantiation_t*) {
    return gcapi::GLUE_SUCCESS;
  };
  set->add("short_f32", glue);
  KernelRegistry reg;
  reg.add_builtin_library(set);
  EXPECT_EQ(reg.find("short_f32", 16, gcapi::DEVICE_ID_GAUDI), set.get());
  EXPECT_EQ(reg.find("absent_f32", 16, gcapi::DEVICE_ID_GAUDI), nullptr);
  set->add("added_later_f32", glue);
  EXPECT_EQ(reg.find("added_later_f32", 16, gcapi::DEVICE_ID_GAUDI), set.get());
  set->add("a_kernel_name_longer_than_the_limit", glue);
  try {
    reg.find("short_f32", 16, gcapi::DEVICE_ID_GAUDI);
    FAIL() << "expected a DeviceFault for the long name";
  } catch (const DeviceFault& e) {
    EXPECT_NE(std::string(e.what()).find("a_kernel_name_longer_than_the_limit"), std::string::npos)
        << e.what();
  }
}
