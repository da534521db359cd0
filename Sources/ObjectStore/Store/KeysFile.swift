import Foundation

/// The file an index's keys are spilled to (``IndexKeys``, ``SortedKeys``): without a name
/// (removed from its folder as soon as it is made), closed with the last holder of it. Written
/// and read by position, by one thread at a time.
final class KeysFile: @unchecked Sendable {
  let descriptor: Int32
  let folder: String

  /// A new file in `folder`.
  /// - Throws: ``StoreError`` when it cannot be made.
  init(in folder: String) throws(StoreError) {
    descriptor = try SpoolFile.unnamedFile(
      in: folder, named: "keys", for: "a file for an index's keys")
    self.folder = folder
  }

  deinit { close(descriptor) }
}
