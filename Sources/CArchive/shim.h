#ifndef GRAPHVAULT_CARCHIVE_SHIM_H
#define GRAPHVAULT_CARCHIVE_SHIM_H
#include <archive.h>
#include <archive_entry.h>
#include <errno.h>

// The AE_IF* file types are macros with casts, which Swift cannot import.
static const unsigned int GV_AE_IFREG = AE_IFREG;
static const unsigned int GV_AE_IFDIR = AE_IFDIR;
static const unsigned int GV_AE_IFLNK = AE_IFLNK;

// archive_set_error is variadic, which Swift cannot call: a stream callback reports its
// failure through this.
static inline void gv_archive_set_error(struct archive *a, int code, const char *message) {
  archive_set_error(a, code, "%s", message);
}
#endif
