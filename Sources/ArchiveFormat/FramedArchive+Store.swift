import PropertyList

extension FramedArchive {
  /// What the archive holds before its objects (header, model, store members; not the change
  /// ledger), each member read from its frame and checked against the index, then checked
  /// together as a restore checks them (``ArchiveScanner``): what a store restored from it is
  /// made of before its rows. Nothing after them is read.
  /// - Throws: ``ArchiveFormatError`` for a member that does not match the index or is
  ///   refused by the checks, or when one is missing.
  package func readStore() throws -> ArchivedStore {
    let front = members.filter {
      ArchiveScanner.storeMembers.contains($0.path) && $0.path != ArchiveLayout.changes
    }
    // Handed to the scan in memory: every member fits before the scan starts reading.
    let pipe = MemberPipe(depth: front.count + 1)
    try read(front) { member, bytes in try pipe.write(member.path, bytes) }
    // The index ends the scan: what came before it is then whole, or refused as missing.
    try pipe.write(ArchiveLayout.index, index.binaryPropertyList())
    pipe.finish()
    var options = ArchiveScanner.Options()
    options.leavingOutLedger = true
    guard let store = try ArchiveScanner(stream: pipe, options: options).readStore() else {
      throw ArchiveFormatError(
        member: ArchiveLayout.header, "\(name) lacks what comes before its objects")
    }
    return store
  }
}
