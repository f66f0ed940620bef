// Label constants of PopLibs' encodings and losses (popops/EncodingConstants.hpp).
#pragma once

// A label that popnn::calcLoss / calcAccuracy leave out.
#define MASKED_LABEL_CODE 0xFFFFFFFFU
