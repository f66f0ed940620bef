// An ONNX network compiled by Tessera for the BM1880, saved as a bmodel file, registered with
// bmnet_register_bmodel and run through the BMNet runtime API (spec 002, "BMNet"):
//   bm_example_onnx_to_bmodel MODEL.onnx [OUT.bmodel]
// The bm backend quantises the network (here calibrating on random inputs, since no table is
// given) and lowers its int8 layers to BMKernel command buffers; plan_to_bmodel records them
// again with CTRL_NEURON / CTRL_WEIGHT addresses. As a BMNet application does, the program
// quantises the input with the bmodel's input threshold, runs the net and dequantises the int8
// output on the host. The logits are checked against Tessera's own run of the compiled plan,
// which must agree to the last bit of the int8 logits.
#include <libbmruntime/bmruntime.h>
#include <libbmruntime/bmruntime_bmnet.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "tessera/compiler/backend.h"
#include "tessera/compiler/onnx_import.h"
#include "tessera/compiler/plan.h"
#include "tessera/core/error.h"
#include "tessera/runtime/device.h"
#include "tessera/targets/bm/backend/backend.h"

int main(int argc, char** argv) try {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s MODEL.onnx [OUT.bmodel]\n", argv[0]);
    return 2;
  }
  using namespace tessera;
  const std::string bmodel_path = argc > 2 ? argv[2] : "network.bmodel";
  compiler::Graph graph = compiler::import_onnx_file(argv[1]);
  const compiler::Plan plan = compiler::compile(std::move(graph), *bm::make_bm_backend());
  const bm::BModel model = bm::plan_to_bmodel(plan, plan.graph.name);
  bm::save_bmodel(model, bmodel_path);

  std::printf(
      "compiled %s: %zu nodes, %d fallbacks; bmodel %s: %zu B of weights, %zu B of "
      "commands, input threshold %.4f, output threshold %.4f\n",
      argv[1], plan.graph.nodes.size(), plan.fallback_count(), bmodel_path.c_str(),
      model.weight.size(), model.stages[0].cmdbuf.size(),
      static_cast<double>(model.input_threshold), static_cast<double>(model.output_threshold));

  // The application side: quantise, run through bmnet, dequantise.
  const auto inputs = compiler::random_inputs(plan.graph, 42);
  const std::vector<double> x = inputs.begin()->second.to_doubles();
  std::vector<std::int8_t> q(x.size());
  for (std::size_t i = 0; i < x.size(); ++i)
    q[i] = static_cast<std::int8_t>(std::clamp(
        std::nearbyint(x[i] * 128.0 / static_cast<double>(model.input_threshold)), -128.0, 127.0));
  bmctx_t ctx = nullptr;
  bmnet_t net = nullptr;
  if (bm_init(0, &ctx) != BM_SUCCESS ||
      bmnet_register_bmodel(ctx, bmodel_path.c_str(), &net) != BM_SUCCESS) {
    std::fprintf(stderr, "bmnet: %s\n", tessera_bm_last_error());
    return 1;
  }
  bmnet_output_info_t info{};
  bmnet_get_output_info(net, &info);
  std::vector<std::int8_t> out(info.output_size);
  if (bmnet_inference(net, reinterpret_cast<uint8_t*>(q.data()),
                      reinterpret_cast<uint8_t*>(out.data())) != BM_SUCCESS) {
    std::fprintf(stderr, "bmnet_inference: %s\n", tessera_bm_last_error());
    return 1;
  }
  bmnet_cleanup(net);
  bm_exit(ctx);
  std::vector<double> y(out.size());
  for (std::size_t i = 0; i < out.size(); ++i)
    y[i] = out[i] * static_cast<double>(model.output_threshold) / 128.0;

  // Tessera's run of the same plan.
  auto device = runtime::Device::open(plan.device);
  compiler::PlanRunner runner(plan, *device);
  const auto result = runner.run(inputs);
  // The dequantised logits: the output of the plan's DequantizeLinear.
  std::string logits;
  for (const auto& n : plan.graph.nodes)
    if (n.op == "DequantizeLinear") logits = plan.graph.value(n.outputs[0]).name;
  if (!result.outputs.count(logits)) {
    std::fprintf(stderr, "the network does not output its dequantised logits\n");
    return 1;
  }
  const std::vector<double> want = result.outputs.at(logits).to_doubles();
  double worst = 0;
  std::size_t best = 0;
  for (std::size_t i = 0; i < y.size() && i < want.size(); ++i) {
    worst = std::max(worst, std::fabs(y[i] - want[i]));
    if (y[i] > y[best]) best = i;
  }
  std::printf(
      "bmnet_inference: %zu logits, top-1 class %zu (%.4f); largest difference from "
      "Tessera's run %.2g; modeled %llu cycles\n",
      y.size(), best, y[best], worst, static_cast<unsigned long long>(result.profile.total_cycles));
  if (y.size() != want.size() || worst > 1e-6) {
    std::fprintf(stderr, "the bmnet output differs from the compiled plan's\n");
    return 1;
  }
  std::remove(bmodel_path.c_str());
  return 0;
} catch (const tessera::Error& e) {
  std::fprintf(stderr, "error: %s\n", e.what());
  return 1;
}
