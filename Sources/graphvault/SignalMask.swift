import Foundation

#if os(Linux)
  import Glibc
#endif

/// The process's signal mask.
enum SignalMask {
  /// Unblocks `signals`: a process inherits its parent's mask, and a run started from a thread
  /// that blocked them (as a thread pool's may) would otherwise never receive them.
  static func unblock(_ signals: [Int32]) {
    var unblocked = sigset_t()
    sigemptyset(&unblocked)
    for signal in signals { sigaddset(&unblocked, signal) }
    sigprocmask(SIG_UNBLOCK, &unblocked, nil)
  }
}
