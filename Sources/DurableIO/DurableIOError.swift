import Foundation

/// A failure to create, sync, move or lock a file, naming the operation, the path and the
/// system's reason.
public struct DurableIOError: Error, CustomStringConvertible, Sendable {
  /// What was being done ("cannot create", "fsync failed", …).
  public let operation: String
  /// The file or folder.
  public let path: String
  /// The `errno` the system reported.
  public let errno: Int32
  /// Why, in graphvault's words, when the system's reason would mislead.
  public let explanation: String?

  /// Creates an error for `operation` on `path`, with the system's `errno` (and an
  /// `explanation` that replaces its wording).
  public init(_ operation: String, path: String, errno: Int32, explanation: String? = nil) {
    self.operation = operation
    self.path = path
    self.errno = errno
    self.explanation = explanation
  }

  /// The explanation, else the system's reason as `strerror` gives it.
  public var reason: String { explanation ?? String(cString: strerror(errno)) }

  /// "operation PATH: reason".
  public var description: String { "\(operation) \(path): \(reason)" }
}
