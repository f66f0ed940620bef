// A codelet compiled at run time against the installed Poplar headers.
#include <poplar/Vertex.hpp>

using namespace poplar;

class Square : public Vertex {
 public:
  InOut<Vector<float>> v;

  bool compute() {
    for (auto& x : v) x *= x;
    return true;
  }
};
