// Codelets of the IPU benchmarks: an elementwise a*x+y over a tile's slice, split over workers
// in contiguous blocks, and a tiny vertex for Engine-creation scale.
#include <poplar/Vertex.hpp>

using namespace poplar;

class Axpy : public MultiVertex {
 public:
  Input<Vector<float>> x;
  InOut<Vector<float>> y;
  float a;

  bool compute(unsigned workerId) {
    const std::size_t n = x.size(), per = (n + numWorkers() - 1) / numWorkers();
    const std::size_t b = workerId * per, e = b + per < n ? b + per : n;
    const float* xs = x.data();
    float* ys = y.data();
    for (std::size_t i = b; i < e; ++i) ys[i] = a * xs[i] + ys[i];
    return true;
  }
};

class Touch : public Vertex {
 public:
  InOut<float> v;

  bool compute() {
    *v = *v + 1.0f;
    return true;
  }
};
