// The built-in kernels are independent of member order and host threads (spec 000 §2.4.3):
// each op gives byte-identical outputs and identical cycle counts with 1, 2 and 8 host threads,
// and passes the runtime's check-order mode (a shuffled, finer re-run compared byte for byte).
#include <functional>

#include "kernels_util.h"
#include "tessera/sim/scheduler.h"

namespace kernels_test {
namespace {

struct Result {
  std::vector<std::byte> bytes;
  std::uint64_t cycles = 0;
  std::vector<std::uint64_t> per_core;
};

using Op = std::function<const profile::KernelRecord&(Runtime&, runtime::Device&,
                                                      const DeviceTensor& out)>;

struct Case {
  const char* name;
  DType dtype;
  Shape out;
  Op op;
};

Result run_case(const Case& c, unsigned threads, bool check_order) {
  auto device = runtime::Device::open("gaudi");
  sim::WorkScheduler scheduler(threads);
  tpc::RuntimeOptions options;
  options.scheduler = &scheduler;
  options.check_order = check_order;
  Runtime rt(*device, options);
  const DeviceTensor out = make_device_tensor(*device, c.dtype, c.out);
  const profile::KernelRecord& rec = c.op(rt, *device, out);
  Result r;
  r.cycles = rec.cycles;
  r.per_core = rec.cycles_per_core;
  r.bytes.resize(out.buffer.bytes);
  device->copy_to_host(r.bytes.data(), out.buffer, r.bytes.size());
  return r;
}

DeviceTensor make(runtime::Device& d, DType dt, const Shape& s, std::uint32_t seed, double lo = -3,
                  double hi = 3) {
  const Tensor t = random_tensor(dt, s, lo, hi, seed);
  return make_device_tensor(d, dt, s, t.raw_data());
}

std::vector<Case> cases() {
  using R = const profile::KernelRecord&;
  return {
      {"add broadcast", DType::f32, Shape{300, 7, 3},
       [](Runtime& rt, runtime::Device& d, const DeviceTensor& o) -> R {
         return top::add(rt, make(d, DType::f32, Shape{300, 7, 3}, 1),
                         make(d, DType::f32, Shape{300, 1, 3}, 2), o);
       }},
      {"softmax dim 0", DType::bf16, Shape{1000, 9},
       [](Runtime& rt, runtime::Device& d, const DeviceTensor& o) -> R {
         return top::softmax(rt, make(d, DType::bf16, Shape{1000, 9}, 3), o, 0);
       }},
      {"reduce_sum dims 0 and 2", DType::f32, Shape{1, 5, 1},
       [](Runtime& rt, runtime::Device& d, const DeviceTensor& o) -> R {
         return top::reduce_sum(rt, make(d, DType::f32, Shape{700, 5, 6}, 4), o, {0, 2});
       }},
      {"layernorm", DType::bf16, Shape{300, 4, 5},
       [](Runtime& rt, runtime::Device& d, const DeviceTensor& o) -> R {
         return top::layer_norm(rt, make(d, DType::bf16, Shape{300, 4, 5}, 5),
                                make(d, DType::bf16, Shape{300}, 6), nullptr, o, 0);
       }},
      {"maxpool", DType::i8, Shape{70, 5, 5, 2},
       [](Runtime& rt, runtime::Device& d, const DeviceTensor& o) -> R {
         kernels::Pool2dParams p;
         p.kernel[0] = p.kernel[1] = 3;
         p.strides[0] = p.strides[1] = 2;
         p.pads[0] = p.pads[1] = p.pads[2] = p.pads[3] = 1;
         return top::max_pool_2d(rt, make(d, DType::i8, Shape::nhwc(2, 10, 10, 70), 7, -100, 100),
                                 o, p);
       }},
      {"concat dim 0", DType::f32, Shape{139, 3},
       [](Runtime& rt, runtime::Device& d, const DeviceTensor& o) -> R {
         const DeviceTensor in[] = {make(d, DType::f32, Shape{70, 3}, 8),
                                    make(d, DType::f32, Shape{5, 3}, 9),
                                    make(d, DType::f32, Shape{64, 3}, 10)};
         return top::concat(rt, in, o, 0);
       }},
      {"transpose moving dim 0", DType::bf16, Shape{9, 70, 4},
       [](Runtime& rt, runtime::Device& d, const DeviceTensor& o) -> R {
         return top::transpose(rt, make(d, DType::bf16, Shape{70, 9, 4}, 11), o, {1, 0, 2});
       }},
      {"gather axis 0", DType::f32, Shape{3, 2, 4},
       [](Runtime& rt, runtime::Device& d, const DeviceTensor& o) -> R {
         const Tensor idx = Tensor::from_ints(DType::i32, Shape{3, 2}, {5, -1, 0, 2, 69, 3});
         return top::gather(rt, make(d, DType::f32, Shape{70, 4}, 12),
                            make_device_tensor(d, DType::i32, idx.shape(), idx.raw_data()), o, 0);
       }},
  };
}

TEST(KernelDeterminism, SameBytesAndCyclesForAnyThreadCountAndOrder) {
  for (const Case& c : cases()) {
    const Result one = run_case(c, 1, false);
    for (unsigned threads : {2u, 8u}) {
      const Result other = run_case(c, threads, false);
      EXPECT_EQ(one.bytes, other.bytes) << c.name << " with " << threads << " threads";
      EXPECT_EQ(one.cycles, other.cycles) << c.name << " with " << threads << " threads";
      EXPECT_EQ(one.per_core, other.per_core) << c.name << " with " << threads << " threads";
    }
    EXPECT_NO_THROW(run_case(c, 2, true)) << c.name << " fails check-order mode";
  }
}

}  // namespace
}  // namespace kernels_test
