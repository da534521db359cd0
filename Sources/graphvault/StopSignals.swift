import Dispatch
import Foundation
import GraphVault

#if os(Linux)
  import Glibc
#endif

/// SIGINT (Ctrl-C), SIGTERM and SIGHUP still end a run by that signal, as their default action
/// does, but remove the run's scratch folders first: a merge or a find stopped by hand would
/// otherwise leave a private copy of a store in the temporary folder until a later run
/// removed it. What a run was writing under a temporary name beside its destination stays
/// for the next run to remove, as after `kill -9`.
///
/// The signals are caught on a dispatch queue, never in a signal handler, so the removal may
/// use the file manager. `backup --watch` takes them over (``handOver(to:)``) to stop after
/// the backup under way.
enum StopSignals {
  /// The signals handled.
  static let signals: [Int32] = [SIGINT, SIGTERM, SIGHUP]

  /// The sources listening, kept for the whole run.
  nonisolated(unsafe) private static var sources: [any DispatchSourceSignal] = []

  /// What a command that handles the signals itself does instead.
  private static let takeover = Takeover()

  /// Starts listening (once, at start, before any other thread), with the signals unblocked.
  static func install() {
    SignalMask.unblock(signals)
    for signal in signals {
      // Ignored, so that the default action waits for the queue: the source hears it.
      Foundation.signal(signal, SIG_IGN)
      let source = DispatchSource.makeSignalSource(signal: signal, queue: .global())
      source.setEventHandler {
        if let body = takeover.body(for: signal) {
          body()
          return
        }
        ScratchFolder.removeEveryLive()
        Foundation.signal(signal, SIG_DFL)
        // To the process, not this thread: the queue's threads block every signal.
        kill(getpid(), signal)
      }
      source.resume()
      sources.append(source)
    }
  }

  /// From now on, `body` is called for each of `handled` instead, and the run goes on; the
  /// other signals still end it.
  static func handOver(_ handled: Set<Int32>, to body: @escaping @Sendable () -> Void) {
    takeover.set(handled, body)
  }

  /// The signals a command handles itself and what it does, shared with the queue.
  private final class Takeover: @unchecked Sendable {
    private let lock = NSLock()
    private var handled: Set<Int32> = []
    private var stored: (@Sendable () -> Void)?

    func set(_ signals: Set<Int32>, _ body: @escaping @Sendable () -> Void) {
      lock.withLock { (handled, stored) = (signals, body) }
    }

    func body(for signal: Int32) -> (@Sendable () -> Void)? {
      lock.withLock { handled.contains(signal) ? stored : nil }
    }
  }
}
