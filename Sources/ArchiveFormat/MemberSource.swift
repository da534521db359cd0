/// An archive's members in the order they were written, as a scan reads them
/// (``ArchiveScanner``): an archive's own (``MemberStream``), or members a writer hands over in
/// memory (``MemberPipe``).
package protocol MemberSource: AnyObject {
  /// The next member, or nil at the end. `wantBytes` decides which members' bytes are kept;
  /// with `hash`, each member's SHA-256 is given.
  func next(hash: Bool, wantBytes: (String) -> Bool) throws -> MemberStream.Member?
}

extension MemberStream: MemberSource {}
