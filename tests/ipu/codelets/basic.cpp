// Codelets the IPU tests compile at run time with Graph::addCodelets.
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

// Sums each row of a VectorList into one output element.
class RowSum : public Vertex {
 public:
  Input<VectorList<float>> rows;
  Output<Vector<float>> out;

  bool compute() {
    for (std::size_t r = 0; r < rows.size(); ++r) {
      float s = 0;
      for (float v : rows[r]) s += v;
      out[r] = s;
    }
    return true;
  }
};

class Scale : public MultiVertex {
 public:
  InOut<Vector<float>> data;
  float factor;

  bool compute(unsigned workerId) {
    for (std::size_t i = workerId; i < data.size(); i += numWorkers()) data[i] *= factor;
    return true;
  }
};

// Reads one past the end of its input: an index fault.
class OffByOne : public Vertex {
 public:
  Input<Vector<int>> in;
  Output<int> out;

  bool compute() {
    int s = 0;
    for (std::size_t i = 0; i <= in.size(); ++i) s += in[i];
    *out = s;
    return true;
  }
};

class Increment : public Vertex {
 public:
  InOut<unsigned> counter;
  Output<bool> below;
  unsigned limit;

  bool compute() {
    *counter = *counter + 1;
    *below = *counter < limit;
    return true;
  }
};

template <typename T>
class Fill : public Vertex {
 public:
  Output<Vector<T>> out;
  Vector<T> values;

  bool compute() {
    for (std::size_t i = 0; i < out.size(); ++i) out[i] = values[i % values.size()];
    return true;
  }
};

template class Fill<float>;
template class Fill<int>;

// Gathers single elements from anywhere into one vector.
class Gather : public Vertex {
 public:
  Vector<Input<float>> in;
  Output<Vector<float>> out;

  bool compute() {
    for (std::size_t i = 0; i < in.size(); ++i) out[i] = in[i];
    return true;
  }
};

class [[poplar::constraint("elem(*src)!=elem(*dst)")]] ConstrainedCopy : public Vertex {
 public:
  Input<Vector<float>> src;
  Output<Vector<float>> dst;

  bool compute() {
    for (std::size_t i = 0; i < src.size(); ++i) dst[i] = src[i];
    return true;
  }
};
