// A MultiVertex that splits its work over the tile's workers (spec 001 §3.3), and the vertices
// of the loops example.
#include <poplar/Vertex.hpp>

using namespace poplar;

class AddTwoVectors : public MultiVertex {
 public:
  Input<Vector<unsigned>> a;
  Input<Vector<unsigned>> b;
  Output<Vector<unsigned>> c;

  bool compute(unsigned workerId) {
    const auto numElements = a.size();
    for (std::size_t i = workerId; i < numElements; i += MultiVertex::numWorkers()) {
      c[i] = a[i] + b[i];
    }
    return true;
  }
};

// x = x * 0.5 + 1, and done = |x - 2| < tolerance: a fixed-point iteration towards 2.
class Halve : public Vertex {
 public:
  InOut<float> x;
  Output<bool> more;
  float tolerance;

  bool compute() {
    *x = *x * 0.5f + 1.0f;
    float d = *x - 2.0f;
    *more = (d < 0 ? -d : d) >= tolerance;
    return true;
  }
};
