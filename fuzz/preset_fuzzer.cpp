// libFuzzer target: a machine preset (JSON) from a stranger, validated, fed to the cost model,
// and used to run a small network on every backend that takes its target family, as
// `tessera run MODEL --target T --device FILE` does.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "fuzz_common.h"
#include "tessera/arch/machine_spec.h"
#include "tessera/compiler/backend.h"
#include "tessera/compiler/ir.h"
#include "tessera/sim/cost_model.h"

namespace {

// Conv -> Relu -> Add: a network that touches the MME, TPC kernels, DMA and the host link.
tessera::compiler::Graph small_network() {
  using namespace tessera;
  using namespace tessera::compiler;
  Graph g;
  g.name = "preset_fuzz";
  g.opset = 13;
  Value x;
  x.name = "x";
  x.shape = Shape::nchw(1, 2, 6, 6);
  const ValueId xi = g.add_value(x);
  g.inputs.push_back(xi);
  Tensor w(DType::f32, Shape::nchw(4, 2, 3, 3));
  for (std::int64_t i = 0; i < w.element_count(); ++i)
    w.data<float>()[i] = 0.01f * static_cast<float>(i % 7);
  const ValueId wi = g.add_constant("w", w);
  Value y;
  y.name = "y";
  y.shape = Shape::nchw(1, 4, 4, 4);
  const ValueId yi = g.add_value(y);
  Value z;
  z.name = "z";
  z.shape = y.shape;
  const ValueId zi = g.add_value(z);
  Node conv;
  conv.op = "Conv";
  conv.name = "conv";
  conv.inputs = {xi, wi};
  conv.outputs = {yi};
  g.add_node(conv);
  Node relu;
  relu.op = "Relu";
  relu.name = "relu";
  relu.inputs = {yi};
  relu.outputs = {zi};
  g.add_node(relu);
  g.outputs.push_back(zi);
  g.reindex();
  return g;
}

std::string temp_path() {
  const char* dir = std::getenv("TMPDIR");
  const std::filesystem::path base(dir && *dir ? dir : "/tmp");
  return (base / fmt::format("tessera-preset-fuzz-{}.json", getpid())).string();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace tessera;
  fuzz::initialize();
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  fuzz::expect_clean([&] {
    const arch::MachineSpec spec = arch::parse_machine_spec(text, "fuzz.json");
    const sim::PresetCostModel cost(spec);
    for (const auto& m : spec.memories)
      cost.transfer_cycles(m.name, spec.global_memory, std::uint64_t{1} << 40);
    for (const auto& p : spec.pipes) cost.op_cycles(p.name, 1e12, 1e-3);
    cost.host_link_cycles(std::uint64_t{1} << 40);
    cost.sync_cycles();
    static const std::string path = temp_path();
    {
      std::ofstream out(path, std::ios::binary | std::ios::trunc);
      out.write(text.data(), static_cast<std::streamsize>(text.size()));
    }
    static const std::vector<compiler::BackendInfo> backends = compiler::registered_backends();
    for (const auto& info : backends) {
      const auto backend = info.create();
      const auto families = backend->device_targets();
      // Empty means any family (reference keeps its tensors in any preset's global memory).
      if (!families.empty() &&
          std::find(families.begin(), families.end(), spec.target) == families.end())
        continue;
      fuzz::expect_clean([&] {
        compiler::CompileOptions options;
        options.device = path;
        const compiler::Plan plan = compiler::compile(small_network(), *backend, options);
        fuzz::run_if_small(plan);
      });
    }
  });
  return 0;
}
