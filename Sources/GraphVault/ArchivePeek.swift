import ArchiveFormat
import Foundation
import ObjectModel
import PropertyList

/// The model an archive's objects are read in, from the members at its start alone (header,
/// model descriptor, the store's model cache), so that a command can check what it was asked
/// against that model before it reads the objects: a mistake in the command line found in
/// milliseconds, not after a restore. The archive is not verified here; whatever goes wrong
/// while peeking is left for the full read to report.
enum ArchivePeek {
  /// The model a store restored from the archive at `location` is read with (its model cache
  /// when it carries one, else its model descriptor), or nil when that cannot be known cheaply:
  /// standard input (which can be read once), an encrypted archive (a password costs a key
  /// derivation), a damaged or unreadable archive.
  static func model(of location: Location) -> ObjectModel? {
    guard !location.isStandardStream, SourceStore.isArchive(location) else { return nil }
    struct Sealed: Error {}
    do {
      let name = URL(fileURLWithPath: location.description).deletingPathExtension()
        .lastPathComponent
      // A framed archive's first members are read by their frames (on object storage, the
      // ends and the front in two requests), not by streaming its first part.
      if let framed = try? ArchiveAccess.framed(
        location, password: nil, allowingUnencrypted: false)
      {
        let held = Set(framed.members.map(\.path))
        func member(_ path: String) throws -> [UInt8]? {
          held.contains(path) ? try framed.member(path) : nil
        }
        return try model(
          descriptor: member(ArchiveLayout.modelDescriptor),
          cache: member(ArchiveLayout.storeModelCache), name: name)
      }
      let members = MemberStream(
        reader: try ArchiveAccess.reader(location), name: location.description,
        password: { throw Sealed() })
      var descriptor: [UInt8]?
      var cache: [UInt8]?
      let early: Set<String> = [
        ArchiveLayout.header, ArchiveLayout.modelDescriptor, ArchiveLayout.storeModelCache,
      ]
      while let member = try members.next(hash: false, wantBytes: { early.contains($0) }) {
        if member.path == ArchiveLayout.modelDescriptor {
          descriptor = member.bytes
        } else if member.path == ArchiveLayout.storeModelCache {
          cache = member.bytes
        } else if ArchiveLayout.entity(ofObjectsMember: member.path) != nil
          || member.path == ArchiveLayout.index
        {
          break
        }
      }
      return try model(descriptor: descriptor, cache: cache, name: name)
    } catch {
      return nil
    }
  }

  /// The model of a store's cache when it has one, else of the model descriptor.
  private static func model(descriptor: [UInt8]?, cache: [UInt8]?, name: String) throws
    -> ObjectModel?
  {
    if let cache, !cache.isEmpty {
      return try CompiledModelLoader.load(modelCache: cache, name: name)
    }
    return try descriptor.map {
      try ModelDescriptor.decode(PropertyListValue(binaryPropertyList: $0))
    }
  }
}
