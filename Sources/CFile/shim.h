#ifndef GRAPHVAULT_CFILE_SHIM_H
#define GRAPHVAULT_CFILE_SHIM_H
// fallocate(2), which glibc declares only under _GNU_SOURCE and the Glibc module does not
// export: used to give a file's read bytes back to the file system (a hole punched).
#if defined(__linux__)
#include <sys/types.h>
int fallocate(int fd, int mode, off_t offset, off_t len);

/// Punches a hole of `length` bytes at `offset` of the file `fd`, keeping its size
/// (FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE); 0, or -1 with errno set.
static inline int gv_punch_hole(int fd, off_t offset, off_t length) {
  return fallocate(fd, 0x02 | 0x01, offset, length);
}
#endif
#endif
