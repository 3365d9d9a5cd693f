// Selections between the wire (zarrd.v1.Selection) and the engine (zarrd::Selection), for the
// server and the clients alike.
#pragma once

#include "common/selection.h"
#include "zarrd/v1/zarrd.pb.h"

namespace zarrd {

Selection FromWire(const v1::Selection& selection);
v1::Selection ToWire(const Selection& selection);
// A resolved selection spelled out item by item (indices and explicit slices, no ellipsis).
v1::Selection ToWire(const ResolvedSelection& selection);

}  // namespace zarrd
