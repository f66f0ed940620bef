// Does not compile: the test checks that the compiler's message comes back.
#include <poplar/Vertex.hpp>

class Broken : public poplar::Vertex {
 public:
  poplar::Output<float> out;
  bool compute() {
    *out = undeclared_name;
    return true;
  }
};
