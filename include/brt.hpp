// BrookGPU programs include brt.hpp: the whole Brook runtime API (brook/brook.hpp), with
// BrookGPU's brook::stream, brook::iter, brook::initialize and BRTALIGNED.
#include "brook/brook.hpp"
