// A supervisor vertex as Poplar's profiling examples write it, and a plain vertex doing the same.
#include <poplar/Vertex.hpp>

#include "supervisor_helpers.h"

using namespace poplar;

class CountUp : public SupervisorVertex {
 public:
  InOut<Vector<int>> counts;

  __attribute__((target("supervisor"))) bool compute() {
    for (auto& c : counts) c = next_count(c);
    return true;
  }
};

class CountUpOnAWorker : public Vertex {
 public:
  InOut<Vector<int>> counts;

  bool compute() {
    for (unsigned i = 0; i < counts->size(); ++i) counts[i] = next_count(counts[i]);
    return true;
  }
};
