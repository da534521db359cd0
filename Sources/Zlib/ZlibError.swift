/// An error from zlib, with its return code, zlib's message and what was being done.
public struct ZlibError: Error, CustomStringConvertible, Sendable, Equatable {
  /// What went wrong.
  public enum Kind: Sendable, Equatable {
    /// The compressed data is not valid DEFLATE data (`Z_DATA_ERROR`).
    case corruptData
    /// The compressed data ended before the end of the DEFLATE stream.
    case truncated
    /// The output would exceed the caller's limit.
    case outputLimitExceeded(limit: Int)
    /// zlib could not get memory.
    case outOfMemory
    /// Any other failure, with zlib's return code.
    case other(code: Int32)
  }

  /// What went wrong.
  public let kind: Kind
  /// zlib's message (`msg`), when it gave one.
  public let message: String?
  /// How many compressed bytes had been consumed when it failed.
  public let inputOffset: Int

  /// Creates an error from its parts.
  public init(kind: Kind, message: String?, inputOffset: Int) {
    self.kind = kind
    self.message = message
    self.inputOffset = inputOffset
  }

  /// A one-line description naming the failure and where in the input it happened.
  public var description: String {
    let what: String
    switch kind {
    case .corruptData: what = "invalid DEFLATE data"
    case .truncated: what = "DEFLATE data ends before the end of its stream"
    case .outputLimitExceeded(let limit): what = "inflated data exceeds the limit of \(limit) bytes"
    case .outOfMemory: what = "zlib is out of memory"
    case .other(let code): what = "zlib error \(code)"
    }
    var text = "\(what) at compressed byte \(inputOffset)"
    if let message { text += ": \(message)" }
    return text
  }
}
