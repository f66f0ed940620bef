// The description of a convolution (PopLibs API: poplin/ConvParams.hpp): batch, field and kernel
// shapes, channels per group, groups, and the transforms of input, kernel and output.
#pragma once

#include <cstddef>
#include <ostream>
#include <vector>

#include <poplar/Type.hpp>

namespace poplin {

struct ConvParams {
  struct InputTransform {
    std::vector<unsigned> truncationLower, truncationUpper, dilation, paddingLower, paddingUpper;
    std::vector<bool> flip;
  };
  struct OutputTransform {
    std::vector<unsigned> truncationLower, truncationUpper, stride, paddingLower, paddingUpper;
  };

  ConvParams() = default;
  ConvParams(poplar::Type dataType, std::size_t batchSize,
             std::vector<std::size_t> inputFieldShape, std::vector<std::size_t> kernelShape,
             std::size_t inputChannelsPerConvGroup, std::size_t outputChannelsPerConvGroup,
             std::size_t numConvGroups);
  ConvParams(poplar::Type inputType, poplar::Type outputType, std::size_t batchSize,
             std::vector<std::size_t> inputFieldShape, std::vector<std::size_t> kernelShape,
             std::size_t inputChannelsPerConvGroup, std::size_t outputChannelsPerConvGroup,
             std::size_t numConvGroups);

  poplar::Type inputType, outputType;
  std::size_t batchSize = 0;
  std::vector<std::size_t> inputFieldShape, kernelShape;
  std::size_t inputChannelsPerConvGroup = 0, outputChannelsPerConvGroup = 0, numConvGroups = 1;
  InputTransform inputTransform, kernelTransform;
  OutputTransform outputTransform;

  std::size_t getNumFieldDims() const { return inputFieldShape.size(); }
  std::size_t getNumInputChans() const { return inputChannelsPerConvGroup * numConvGroups; }
  std::size_t getNumOutputChans() const { return outputChannelsPerConvGroup * numConvGroups; }
  std::size_t getOutputSize(unsigned dim) const;
  std::vector<std::size_t> getOutputFieldShape() const;
  std::size_t getBatchSize() const { return batchSize; }
};

std::ostream& operator<<(std::ostream& os, const ConvParams& p);

}  // namespace poplin
