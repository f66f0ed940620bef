// CANN's lib/softmax/simplesoftmax.h: SimpleSoftMax lives with SoftMax here.
#pragma once

#include "lib/softmax/softmax.h"
