// The adder vertex of spec 001 §2.8.
#include <poplar/Vertex.hpp>

using namespace poplar;

class AdderVertex : public Vertex {
 public:
  Input<float> x;
  Input<float> y;
  Output<float> sum;

  bool compute() {
    *sum = x + y;
    return true;
  }
};
