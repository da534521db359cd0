import ArchiveFormat
import PropertyList
import Testing

@Suite("Sealed archive members")
struct ArchiveSealTests {
  static let content = Array("{\"title\": \"The Left Hand of Darkness\"}".utf8)

  @Test func aSealedMemberOpensOnlyAtItsPositionUnderItsPathWithItsKey() throws {
    let seal = try ArchiveSeal.create(password: Array("secret".utf8), compression: .zstd)
    let sealed = try seal.seal(Self.content, path: "objects/Book/000001.plist", position: 3)
    #expect(!sealed.isEmpty)
    let opened = try ArchiveSeal.open(
      password: Array("secret".utf8), parameters: seal.parameters, compression: .zstd)
    #expect(
      try opened.open(sealed, path: "objects/Book/000001.plist", position: 3, limit: 1 << 20)
        == Self.content)
    // Moved, renamed, changed: none opens.
    #expect(throws: ArchiveFormatError.self) {
      _ = try opened.open(sealed, path: "objects/Book/000001.plist", position: 4, limit: 1 << 20)
    }
    #expect(throws: ArchiveFormatError.self) {
      _ = try opened.open(sealed, path: "objects/Book/000002.plist", position: 3, limit: 1 << 20)
    }
    var changed = sealed
    changed[0] ^= 1
    #expect(throws: ArchiveFormatError.self) {
      _ = try opened.open(changed, path: "objects/Book/000001.plist", position: 3, limit: 1 << 20)
    }
    // The same parameters under another compression name are another context.
    let relabelled = try ArchiveSeal.open(
      password: Array("secret".utf8), parameters: seal.parameters, compression: .none)
    #expect(throws: ArchiveFormatError.self) {
      _ = try relabelled.open(
        sealed, path: "objects/Book/000001.plist", position: 3, limit: 1 << 20)
    }
  }

  @Test func aWrongPasswordIsToldApartFromADamagedMember() throws {
    let seal = try ArchiveSeal.create(password: Array("secret".utf8), compression: .zstd)
    #expect {
      _ = try ArchiveSeal.open(
        password: Array("Secret".utf8), parameters: seal.parameters, compression: .zstd)
    } throws: { ($0 as? ArchiveFormatError)?.kind == .wrongPassword }
  }

  @Test func twoArchivesWithOnePasswordHaveDifferentSaltsAndKeys() throws {
    let first = try ArchiveSeal.create(password: Array("secret".utf8), compression: .none)
    let second = try ArchiveSeal.create(password: Array("secret".utf8), compression: .none)
    #expect(first.parameters.salt != second.parameters.salt)
    let sealed = try first.seal(Self.content, path: "a", position: 1)
    #expect(try second.seal(Self.content, path: "a", position: 1) != sealed)
    #expect(throws: ArchiveFormatError.self) {
      _ = try second.open(sealed, path: "a", position: 1, limit: 1 << 20)
    }
  }
}

@Suite("An encrypted archive's trailer")
struct SealedTrailerTests {
  @Test func aTrailerReadsBackOnlyWhenItPlacesTheIndexRightBeforeTheEndOfArchive() {
    let size: Int64 = 100_000
    let end = size - Int64(SealedTrailer.size + SealedTrailer.endOfArchive)
    let trailer = SealedTrailer(offset: end - 2_048, length: 2_048, position: 41)
    #expect(trailer.bytes.count == SealedTrailer.size)
    #expect(SealedTrailer.claimed(trailer.bytes))
    #expect(SealedTrailer(trailer.bytes, archiveSize: size) == trailer)
    // Records that stop short of the end-of-archive blocks, or run past them; an archive of
    // another size; another tag or version; too few bytes.
    for other in [
      SealedTrailer(offset: end - 2_048, length: 1_536, position: 41),
      SealedTrailer(offset: end - 2_048, length: 2_560, position: 41),
      SealedTrailer(offset: end, length: 0, position: 41),
    ] {
      #expect(SealedTrailer(other.bytes, archiveSize: size) == nil, "\(other)")
    }
    #expect(SealedTrailer(trailer.bytes, archiveSize: size + 512) == nil)
    var retagged = trailer.bytes
    retagged[0] = UInt8(ascii: "X")
    #expect(SealedTrailer(retagged, archiveSize: size) == nil && !SealedTrailer.claimed(retagged))
    var reversioned = trailer.bytes
    reversioned[4] = 2
    #expect(SealedTrailer(reversioned, archiveSize: size) == nil)
    #expect(SealedTrailer(trailer.bytes.dropLast(), archiveSize: size) == nil)
    #expect(SealedTrailer(trailer.bytes, archiveSize: 100) == nil)
  }
}
