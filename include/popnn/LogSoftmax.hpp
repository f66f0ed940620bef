// log-softmax (PopLibs API: popnn/LogSoftmax.hpp); declared with the other non-linearities.
#pragma once

#include <popnn/NonLinearity.hpp>
