/// An archive being written to a backend: invisible under its name until ``publish()``.
public protocol ArchiveOutput: AnyObject {
  /// Where the archive will be, as messages show it.
  var location: String { get }

  /// Appends the next bytes.
  /// - Throws: ``StorageError``.
  func write(_ bytes: UnsafeRawBufferPointer) throws(StorageError)

  /// Makes the whole archive visible under its name, durably.
  /// - Returns: the archive's size in bytes.
  /// - Throws: ``StorageError``; nothing is left under the name then.
  func publish() throws(StorageError) -> Int64

  /// Drops what was written; nothing is left under the name. Safe to call more than once and
  /// after ``publish()`` (then it does nothing).
  func abandon()
}
