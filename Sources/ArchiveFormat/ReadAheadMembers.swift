import ObjectStore

/// An archive's members read one ahead of the scan, on a thread of their own: the next member
/// is read, decompressed and hashed (what a member costs before it is decoded: a fifth of
/// `verify`'s time) while the scan decodes the one before.
///
/// Every member comes with its bytes and its SHA-256, whatever the caller asks: what
/// ``ArchiveScanner`` asks of every member. The first member is read on the caller's thread
/// (a sealed archive's password is asked for there); the rest on the reading thread, which
/// stops (and is waited for) when this is released.
package final class ReadAheadMembers: MemberSource {
  private let members: any MemberSource
  private var ahead: Prefetcher<MemberStream.Member>?

  /// The members of `members`, read ahead.
  package init(_ members: any MemberSource) { self.members = members }

  package func next(hash: Bool, wantBytes: (String) -> Bool) throws -> MemberStream.Member? {
    if let ahead { return try ahead.next() }
    let first = try members.next(hash: true) { _ in true }
    if first != nil {
      let members = self.members
      ahead = Prefetcher(depth: 1) { try members.next(hash: true) { _ in true } }
    }
    return first
  }
}
