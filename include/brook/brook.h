// The Brook+ SDK header brook/brook.h: the whole Brook+ C++ API (brook.hpp), with the SDK's
// `using namespace brook;`, so legacy programs name Stream, streamRead, ... unqualified.
#include "brook.hpp"
using namespace brook;
