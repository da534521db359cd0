import Foundation

#if os(Linux)
  import Glibc
#endif

/// A fatal signal ends the run, with that signal's status.
///
/// The Swift runtime catches the signals a crash raises (`SIGSEGV`, `SIGBUS`, `SIGILL`,
/// `SIGFPE`, `SIGTRAP`, `SIGABRT`, `SIGQUIT`) to print a backtrace, then returns from its
/// handler: for a real fault the faulting instruction runs again and the process dies, but a
/// signal sent by another process (`kill -QUIT`, `kill -SEGV`) is then simply over, and the
/// run went on to publish its archive and exit 0. Sent signals now take their default action
/// (the process ends, by that signal; what it was writing stays under a temporary name, which
/// the next run removes), and faults still get the runtime's backtrace first.
enum FatalSignals {
  /// The signals handled.
  static let signals: [Int32] = [SIGQUIT, SIGABRT, SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGTRAP]

  /// The handlers installed before ours (the runtime's), by signal number; read by the handler,
  /// written once before it is installed.
  nonisolated(unsafe) static var previous: [sigaction] = Array(repeating: sigaction(), count: 65)

  /// Installs the handlers (once, at start, before any other thread), with the signals
  /// unblocked (``SignalMask/unblock(_:)``).
  static func install() {
    SignalMask.unblock(signals)
    for signal in signals {
      var action = sigaction()
      action.__sigaction_handler.sa_sigaction = { signal, info, context in
        // A code of 0 or less: sent (kill, sigqueue, tgkill, abort), not a fault.
        let sent = (info?.pointee.si_code ?? 0) <= 0
        let old = FatalSignals.previous[Int(signal)]
        if !sent, old.sa_flags & SA_SIGINFO != 0,
          let backtrace = old.__sigaction_handler.sa_sigaction
        {
          backtrace(signal, info, context)
        }
        // The default action from now on: a sent signal is delivered again once this handler
        // returns; a fault recurs when the instruction runs again.
        var standard = sigaction()
        standard.__sigaction_handler.sa_handler = SIG_DFL
        sigaction(signal, &standard, nil)
        if sent { raise(signal) }
      }
      action.sa_flags = SA_SIGINFO | SA_ONSTACK
      sigemptyset(&action.sa_mask)
      sigaction(signal, &action, &previous[Int(signal)])
    }
  }
}
