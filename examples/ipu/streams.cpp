// Data streams (spec 001 §2.6.1): a host-to-device stream fed by a callback, a device-to-host
// stream drained into a circular buffer, over ten runs of the same program.
#include <iostream>
#include <numeric>
#include <vector>

#include <poplar/Engine.hpp>
#include <poplar/Graph.hpp>
#include <poplar/IPUModel.hpp>

using namespace poplar;
using namespace poplar::program;

class Producer : public StreamCallback {
 public:
  Result prefetch(void*) override { return Result::NotAvailable; }
  void fetch(void* p) override {
    auto* f = static_cast<float*>(p);
    for (int i = 0; i < 8; ++i) f[i] = float(batch_ * 8 + i);
    ++batch_;
  }
  void complete() override {}

 private:
  int batch_ = 0;
};

int main() {
  IPUModel ipuModel;
  ipuModel.tilesPerIPU = 4;
  Device device = ipuModel.createDevice();
  Graph graph(device.getTarget());
  Tensor buf = graph.addVariable(FLOAT, {8}, "buf");
  graph.setTileMapping(buf.slice(0, 4), 0);
  graph.setTileMapping(buf.slice(4, 8), 1);
  DataStream in = graph.addHostToDeviceFIFO("in", FLOAT, 8);
  DataStream out = graph.addDeviceToHostFIFO("out", FLOAT, 8);
  Engine engine(graph, Sequence({Copy(in, buf), Copy(buf.reverse(0), out)}));
  engine.connectStreamToCallback("in", std::make_unique<Producer>());
  std::vector<float> ring(8 * 10);
  engine.connectStream("out", ring.data(), ring.data() + ring.size());
  engine.load(device);
  for (int run = 0; run < 10; ++run) engine.run(0);
  for (int b = 0; b < 10; ++b)
    for (int i = 0; i < 8; ++i)
      if (ring[b * 8 + i] != float(b * 8 + 7 - i)) {
        std::cerr << "batch " << b << " element " << i << " is " << ring[b * 8 + i] << '\n';
        return 1;
      }
  std::cout << "10 batches streamed in, reversed on the device and streamed out\n"
            << "modeled cycles: " << engine.tesseraTotalCycles() << '\n';
  return 0;
}
