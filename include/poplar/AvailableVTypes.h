// Which compressed vector layouts the target has (spec 001 §4.2.1). Tessera keeps full host
// pointers, so it defines the macros of the layouts valid on every platform only.
#pragma once

#define VECTOR_AVAIL_SCALED_PTR128 1
#define VECTORLIST_AVAIL_DELTANELEMENTS 1
