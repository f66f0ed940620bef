// Pooling over the spatial dimensions of [N][C][H][W] activations (PopLibs API: popnn/Pooling.hpp).
// Channel planes are spread over the tiles; each tile's pooling codelet reduces its windows.
#pragma once

#include <cstddef>
#include <vector>

#include <poplar/Graph.hpp>
#include <poplar/OptionFlags.hpp>
#include <poplar/Program.hpp>
#include <popnn/PoolingDef.hpp>

namespace popnn::pooling {

struct PoolParams {
  PoolParams(PoolingType poolingType_, std::vector<std::size_t> inputFieldShape_,
             std::vector<std::size_t> kernelShape_, std::vector<unsigned> stride_,
             std::vector<int> inputTruncationOrPaddingLower_,
             std::vector<int> inputTruncationOrPaddingUpper_, std::size_t numChannels_,
             std::size_t batchSize_, poplar::Type dType_)
      : poolingType(poolingType_), inputFieldShape(std::move(inputFieldShape_)),
        kernelShape(std::move(kernelShape_)), stride(std::move(stride_)),
        inputTruncationOrPaddingLower(std::move(inputTruncationOrPaddingLower_)),
        inputTruncationOrPaddingUpper(std::move(inputTruncationOrPaddingUpper_)),
        numChannels(numChannels_), batchSize(batchSize_), dType(dType_) {}
  PoolingType poolingType;
  std::vector<std::size_t> inputFieldShape, kernelShape;
  std::vector<unsigned> stride;
  std::vector<int> inputTruncationOrPaddingLower, inputTruncationOrPaddingUpper;
  std::size_t numChannels, batchSize;
  poplar::Type dType;
  std::vector<std::size_t> getOutputFieldShape() const;
};

poplar::Tensor pool(poplar::Graph& graph, const PoolParams& params, const poplar::Tensor& in,
                    poplar::program::Sequence& prog, const poplar::DebugContext& debugContext = {},
                    const poplar::OptionFlags& options = {});

}  // namespace popnn::pooling
