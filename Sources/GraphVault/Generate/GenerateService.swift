import DurableIO
import Foundation
import ObjectModel

/// `graphvault generate`: the entity classes of a model version written into a folder.
public enum GenerateService {
  /// What a run wrote.
  public struct Result: Codable, Sendable, Equatable {
    /// The model version the classes are for.
    public let modelVersion: String
    /// The folder.
    public let output: String
    /// The files written, by name.
    public let files: [String]
  }

  /// Writes the classes of `modelPath`'s version `versionName` (the current one when nil) into
  /// `output`, made if missing. A file of the same name is replaced only when graphvault
  /// generated it (its first line says so) or `force`; each file is written durably under a
  /// temporary name and renamed (``PendingFile``), so a file is never left half written.
  /// - Throws: ``VaultError``: 66 for a model that is not there, 73 when a file graphvault did
  ///   not write is in the way, 74 when writing fails, 65 or 78 for a model that cannot be read
  ///   or whose classes cannot be generated.
  public static func generate(
    modelPath: String, versionName: String? = nil, output: String, force: Bool = false
  ) throws(VaultError) -> Result {
    try vault {
      try write(modelPath: modelPath, versionName: versionName, output: output, force: force)
    }
  }

  private static func write(
    modelPath: String, versionName: String?, output: String, force: Bool
  ) throws -> Result {
    let model = try ModelSource.model(at: modelPath, versionName: versionName)
    let files = try ClassGenerator.files(for: model)
    let manager = FileManager.default
    do {
      try manager.createDirectory(atPath: output, withIntermediateDirectories: true)
    } catch {
      throw VaultError(
        .ioFailure, "cannot make the folder \(output): \(error.localizedDescription)")
    }
    for file in files where !force {
      let path = (output as NSString).appendingPathComponent(file.name)
      guard let existing = manager.contents(atPath: path) else { continue }
      guard String(decoding: existing.prefix(200), as: UTF8.self).hasPrefix(ClassGenerator.marker)
      else {
        throw VaultError(
          .destinationExists,
          "\(path) was not written by graphvault generate; move it, or pass --force to replace it")
      }
    }
    for file in files {
      // What a killed run left of this file.
      for leftover in DurableFile.abandonedTemporaries(in: output, of: file.name) {
        unlink(leftover)
      }
      let pending = try PendingFile(
        creating: (output as NSString).appendingPathComponent(file.name), mode: 0o644)
      try Array(file.text.utf8).withUnsafeBytes { try pending.write($0) }
      try pending.publish()
    }
    return Result(
      modelVersion: model.versionName ?? model.name, output: output, files: files.map(\.name))
  }
}
