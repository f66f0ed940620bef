// Spec 004 names this SDK header; everything it declares is in <epu.hpp>.
#pragma once
#include "epu.hpp"
