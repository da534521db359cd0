import LibArchive
import PropertyList

extension FramedArchive {
  /// What the archive holds before its objects (header, model, store members; not the change
  /// ledger), each member read from its frame and checked against the index, then checked
  /// together as a restore checks them (``ArchiveScanner``): what a store restored from it is
  /// made of before its rows. Nothing after them is read.
  /// - Throws: ``ArchiveFormatError`` for a member that does not match the index or is
  ///   refused by the checks, or when one is missing.
  package func readStore() throws -> ArchivedStore {
    let tar = Bytes()
    let writer = try ArchiveWriter(name: name, format: .pax, filter: .none, unblocked: true) {
      tar.bytes.append(contentsOf: $0)
    }
    let front = members.filter {
      ArchiveScanner.storeMembers.contains($0.path) && $0.path != ArchiveLayout.changes
    }
    try read(front) { member, bytes in
      try writer.writeEntry(path: member.path, contents: bytes)
    }
    // The index ends the scan: what came before it is then whole, or refused as missing.
    try writer.writeEntry(path: ArchiveLayout.index, contents: index.binaryPropertyList())
    try writer.close()
    let stream = MemberStream(
      reader: try ArchiveReader(bytes: tar.bytes), name: name, password: nil)
    var options = ArchiveScanner.Options()
    options.leavingOutLedger = true
    guard let store = try ArchiveScanner(stream: stream, options: options).readStore() else {
      throw ArchiveFormatError(
        member: ArchiveLayout.header, "\(name) lacks what comes before its objects")
    }
    return store
  }
}

/// A growing buffer the archive writer's stream fills.
private final class Bytes {
  var bytes: [UInt8] = []
}
