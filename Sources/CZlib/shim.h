#ifndef GRAPHVAULT_CZLIB_SHIM_H
#define GRAPHVAULT_CZLIB_SHIM_H
#include <zlib.h>

// deflateInit2 and inflateInit2 are macros (they pass the library version
// and the stream size); Swift cannot call macros.
static inline int gv_deflateInit2(z_streamp s, int level, int windowBits, int memLevel, int strategy) {
  return deflateInit2(s, level, Z_DEFLATED, windowBits, memLevel, strategy);
}
static inline int gv_inflateInit2(z_streamp s, int windowBits) {
  return inflateInit2(s, windowBits);
}
#endif
