// The path Bitmain's public BMNet SDK declares its OnnxBuilder under; Tessera's OnnxBuilder is
// in Builder.hpp beside Builder (docs/targets/bm.md, "BMNet builder").
#pragma once

#include "bmnet/builder/Builder.hpp"
