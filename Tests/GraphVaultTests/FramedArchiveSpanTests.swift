import ArchiveFormat
import Foundation
import GraphVault
import LibArchive
import ObjectStore
import PropertyList
import TestSupport
import Testing

/// A framed archive read where reads cost more than their bytes (object storage): the trailer
/// and the index in one read, frames that follow each other in one read up to the span.
@Suite("Framed archives read by spans")
struct FramedArchiveSpanTests {
  /// The bytes of a backup of a generated store of `objects` objects.
  static func archive(objects: Int = 3_000) throws -> [UInt8] {
    let directory = try TemporaryDirectory()
    let store = directory.path("Library.sqlite").path
    try SampleLibrary.generate(at: store, objects: objects)
    var options = BackupService.Options()
    options.output = Location(path: directory.path("Library.gvault").path)
    let written = try BackupService.backup(storePath: store, options: options)
    return [UInt8](try Data(contentsOf: URL(fileURLWithPath: written.archive)))
  }

  /// Counts the reads made of `bytes`.
  final class Reads {
    var count = 0
    var bytes = 0
  }

  static func open(_ bytes: [UInt8], span: Int, counting reads: Reads) throws -> FramedArchive {
    try #require(
      try FramedArchive(size: Int64(bytes.count), name: "Library.gvault", span: span) {
        offset, count, into in
        reads.count += 1
        let end = min(bytes.count, Int(offset) + count)
        into = Array(bytes[Int(offset)..<end])
        reads.bytes += into.count
      })
  }

  @Test func theHeaderReadAloneBringsTheOtherMembersBeforeTheObjectsWithIt() throws {
    let bytes = try Self.archive()
    let (alone, together) = (Reads(), Reads())
    let one = try Self.open(bytes, span: 0, counting: alone)
    let spanned = try Self.open(bytes, span: 1 << 20, counting: together)
    let opened = together.bytes
    // What a search does: the header first (is it incremental?), then the store's members.
    let header = try one.member(ArchiveLayout.header)
    let front = try one.readStore()
    #expect(try spanned.member(ArchiveLayout.header) == header)
    let again = try spanned.readStore()
    #expect(again.header.created == front.header.created && again.model == front.model)
    #expect(alone.count > 3)
    #expect(together.count == 2, "\(together.count) reads: the ends, then the front")
    // Nothing of the objects is fetched along.
    let objects = try #require(
      spanned.members.first { ArchiveLayout.entity(ofObjectsMember: $0.path) != nil })
    #expect(together.bytes - opened <= Int(objects.place.offset))
    #expect(bytes.count > 4 * Int(objects.place.offset))
  }

  @Test func framesThatFollowEachOtherAreReadTogetherAndGiveWhatEachReadAloneGives() throws {
    let bytes = try Self.archive()
    let (alone, together) = (Reads(), Reads())
    let one = try Self.open(bytes, span: 0, counting: alone)
    let spanned = try Self.open(bytes, span: 1 << 20, counting: together)
    // Opened: the trailer, then the index; or both in the archive's last few KiB.
    #expect(alone.count == 2)
    #expect(together.count == 1)
    #expect(one.members.count > 8)
    var contents: [String: [UInt8]] = [:]
    try one.read(one.members) { member, content in contents[member.path] = content }
    var again: [String: [UInt8]] = [:]
    try spanned.read(spanned.members) { member, content in again[member.path] = content }
    #expect(contents == again)
    #expect(contents.count == one.members.count)
    #expect(alone.count == 2 + one.members.count)
    let frames = one.members.reduce(0) { $0 + Int($1.place.length) }
    #expect(together.count <= 1 + frames / (1 << 20) + 1, "\(together.count) reads")
    // Nothing is read twice, and what is counted is what was read.
    #expect(together.bytes == Int(spanned.bytesRead))
    #expect(together.bytes <= frames + (4 << 10))
    // Members a little apart are read together, through what lies between them.
    let apart = stride(from: 0, to: spanned.members.count, by: 2).map { spanned.members[$0] }
    let before = together.count
    try spanned.read(apart) { member, content in #expect(content == contents[member.path]) }
    #expect(together.count - before < apart.count)
  }

  @Test func aReadMayFetchMoreAtOnceThanTheArchivesSpanButNotLess() throws {
    let bytes = try Self.large.get()
    let whole = try Self.open(bytes, span: 0, counting: Reads())
    let frames = whole.members.reduce(0) { $0 + Int($1.place.length) }
    #expect(frames > 2 << 20)
    /// The reads of every member with the archive's span `span` and the read's `asked`.
    func reads(span: Int, asked: Int) throws -> Int {
      let reads = Reads()
      let archive = try Self.open(bytes, span: span, counting: reads)
      let opened = reads.count
      try archive.read(archive.members, columns: nil, span: asked) { member, content in
        let alone = try whole.read(member)
        #expect(content.bytes == alone)
      }
      return reads.count - opened
    }
    let small = try reads(span: 256 << 10, asked: 0)
    let larger = try reads(span: 256 << 10, asked: 4 << 20)
    #expect(larger < small)
    #expect(larger <= frames / (4 << 20) + 2, "\(larger) reads")
    // Asked for less than the archive's span, a read still fetches up to it; on a disk (no
    // span), one member at a time.
    #expect(try reads(span: 4 << 20, asked: 256 << 10) == larger)
    #expect(try reads(span: 0, asked: 4 << 20) == whole.members.count)
  }

  @Test func membersFartherApartThanTheReadThroughAreReadOneByOne() throws {
    let bytes = try Self.large.get()
    let far = Reads()
    let archive = try Self.open(bytes, span: 8 << 20, counting: far)
    let first = archive.members[0]
    let last = try #require(
      archive.members.first {
        $0.place.offset > first.place.offset + first.place.length
          + Int64(FramedArchive.readThrough)
      })
    let whole = try Self.open(bytes, span: 0, counting: Reads())
    var contents: [[UInt8]] = []
    try archive.read([first, last]) { _, content in contents.append(content) }
    #expect(contents == [try whole.read(first), try whole.read(last)])
    #expect(far.count == 1 + 2)
    #expect(far.bytes < Int(first.place.length + last.place.length) + (64 << 10))
  }

  /// A backup of a store with enough books that their titles and covers have frames of
  /// their own in each chunk.
  static let large: Result<[UInt8], any Error> = Result { try archive(objects: 20_000) }

  static func titles(_ batch: ObjectBatch) -> [String] {
    batch.records.compactMap { record, _ in
      if case .string(let text)? = record.attributes["title"] { return text }
      return nil
    }
  }

  @Test(arguments: [0, 1 << 20])
  func aChunkReadForSomeColumnsReadsTheirFramesAloneAndDecodesTheSameValues(span: Int) throws {
    let bytes = try Self.large.get()
    let reads = Reads()
    let archive = try Self.open(bytes, span: span, counting: reads)
    let model = try archive.readStore().model
    let books = archive.members.filter { $0.path.hasPrefix("objects/Book/") }
    let framed = try #require(books.first?.frames)
    #expect(Set(framed.columns.values).isSuperset(of: ["cover", "title"]))
    let decoder = RecordDecoder(model: model, member: "Book")
    var whole: [String] = []
    var wholeBytes = 0
    for member in books {
      let content = try archive.read(member)
      let chunk = try #require(try decoder.columnChunk(content))
      whole += Self.titles(try decoder.decodeBatch(chunk))
      wholeBytes += Int(member.place.length)
    }
    let before = reads.bytes
    var partial: [String] = []
    let titlesOnly = { (key: String) in decoder.reads(column: key, of: "Book", for: ["title"]) }
    try archive.read(books, columns: titlesOnly) { _, content in
      #expect(!content.unread.isEmpty)
      let chunk = try #require(
        try decoder.columnChunk(content.bytes, only: ["title"], unread: content.unread))
      partial += Self.titles(try decoder.decodeBatch(chunk, only: ["title"]))
      // Wanted whole after all, a chunk read in part is refused rather than decoded.
      #expect(throws: ArchiveFormatError.self) {
        _ = try decoder.columnChunk(content.bytes, only: nil, unread: content.unread)
      }
    }
    #expect(partial == whole)
    #expect(whole.count > 1_000)
    #expect(reads.bytes - before < wholeBytes / 3, "\(reads.bytes - before) of \(wholeBytes)")
  }

  @Test func aReadThroughAsLargeAsTheSkippedFramesFetchesEachChunkOnceAndItsWholeWithIt()
    throws
  {
    let bytes = try Self.large.get()
    let whole = try Self.open(bytes, span: 0, counting: Reads())
    let model = try whole.readStore().model
    let decoder = RecordDecoder(model: model, member: "Book")
    let titlesOnly = { (key: String) in decoder.reads(column: key, of: "Book", for: ["title"]) }
    /// The requests a test of every book chunk's titles makes, each chunk then read whole,
    /// with `readThrough`; the chunks read whole are checked against one read of each.
    func requests(readThrough: Int) throws -> (tested: Int, whole: Int) {
      let reads = Reads()
      let archive = try Self.open(bytes, span: 8 << 20, counting: reads)
      _ = try archive.readStore()
      let books = archive.members.filter { $0.path.hasPrefix("objects/Book/") }
      #expect(!books.isEmpty && books.allSatisfy { $0.frames != nil })
      var wholeReads = 0
      try archive.read(books, columns: titlesOnly, readThrough: readThrough) { member, content in
        #expect(!content.unread.isEmpty)
        let before = reads.count
        let read = try archive.whole(member, given: content)
        wholeReads += reads.count - before
        #expect(read == (try whole.read(member)))
      }
      return (reads.count - wholeReads, wholeReads)
    }
    let skipping = try requests(readThrough: FramedArchive.readThrough)
    let covers = try #require(
      whole.members.first { $0.path.hasPrefix("objects/Book/") }.map { Int($0.place.length) })
    let through = try requests(readThrough: covers)
    // Skipped, the covers are fetched once a chunk is wanted whole: a request a chunk.
    #expect(skipping.whole >= 1)
    // Read along, they are there when it is.
    #expect(through.whole == 0)
    #expect(through.tested <= skipping.tested)
  }

  @Test func aDamagedFrameIsFoundWhenReadAndOnlyThen() throws {
    var bytes = try Self.large.get()
    let clean = try Self.open(bytes, span: 0, counting: Reads())
    let book = try #require(clean.members.first { $0.path.hasPrefix("objects/Book/") })
    let frames = try #require(book.frames)
    let cover = try #require(frames.columns.first { $0.value == "cover" }?.key)
    let start = Int(book.place.offset) + frames.frames[..<cover].reduce(0) { $0 + Int($1.length) }
    bytes[start + Int(frames.frames[cover].length) / 2] ^= 0x55
    let archive = try Self.open(bytes, span: 0, counting: Reads())
    let model = try archive.readStore().model
    let decoder = RecordDecoder(model: model, member: "Book")
    // The titles are read without the damaged cover frame.
    let titles = { (key: String) in decoder.reads(column: key, of: "Book", for: ["title"]) }
    try archive.read([book], columns: titles) { _, content in
      #expect(content.unread.count >= 1)
    }
    // Read, the cover frame is refused by its checksum; read whole, by the member's SHA-256.
    let covers = { (key: String) in decoder.reads(column: key, of: "Book", for: ["cover"]) }
    #expect(throws: ArchiveFormatError.self) {
      try archive.read([book], columns: covers) { _, _ in }
    }
    #expect(throws: ArchiveFormatError.self) { _ = try archive.read(book) }
  }

  /// `bytes` with the first book chunk's entry in the index changed by `change`, the index
  /// written again (a forger's work: the index of a plain archive is anyone's to rewrite).
  static func forgingIndex(
    _ bytes: [UInt8], _ change: (inout [String: PropertyListValue]) -> Void
  ) throws -> [UInt8] {
    let archive = try open(bytes, span: 0, counting: Reads())
    guard case .dictionary(var index) = archive.index,
      case .array(var members)? = index["members"],
      let book = members.firstIndex(where: {
        $0["path"]?.stringValue?.hasPrefix("objects/Book/") == true
      }),
      case .dictionary(var entry) = members[book]
    else { throw ArchiveFormatError(member: "index.plist", "no book chunk") }
    change(&entry)
    members[book] = .dictionary(entry)
    index["members"] = .array(members)
    let start = archive.members.last.map { Int($0.place.offset + $0.place.length) } ?? 0
    var tar: [UInt8] = []
    let writer = try ArchiveWriter(name: nil, format: .pax, filter: .none, unblocked: true) {
      tar.append(contentsOf: $0)
    }
    try writer.writeEntry(
      path: "index.plist", contents: PropertyListValue.dictionary(index).binaryPropertyList())
    let records = Array(tar)
    let frame = try FilterCodec.compress(records, filter: .zstd)
    var forged = Array(bytes[..<start]) + frame
    // The end-of-archive frame, then the trailer naming the new index frame.
    forged += try FilterCodec.compress([UInt8](repeating: 0, count: 1024), filter: .zstd)
    forged += FramedStream.trailer(
      FramedStream.Place(offset: Int64(start), length: Int64(frame.count)))
    return forged
  }

  @Test func anIndexThatCallsAChunksStartAColumnsValuesIsRefusedWhenTheChunkIsReadInPart()
    throws
  {
    let bytes = try Self.large.get()
    // Frame 0 (the tar header and the start of the property list) called the covers.
    let forged = try Self.forgingIndex(bytes) { entry in
      entry["columns"] = .array([.array([.string("cover"), .integer(0)])])
    }
    let archive = try Self.open(forged, span: 0, counting: Reads())
    let model = try archive.readStore().model
    let decoder = RecordDecoder(model: model, member: "Book")
    let book = try #require(archive.members.first { $0.path.hasPrefix("objects/Book/") })
    let titles = { (key: String) in decoder.reads(column: key, of: "Book", for: ["title"]) }
    #expect(throws: ArchiveFormatError.self) {
      try archive.read([book], columns: titles) { _, content in
        _ = try decoder.columnChunk(content.bytes, only: ["title"], unread: content.unread)
      }
    }
    // Read whole, the chunk is what it was.
    let original = try Self.open(bytes, span: 0, counting: Reads())
    #expect(try archive.read(book) == original.read(book))
  }

  @Test func aChunkReadInPartIsRefusedWhereItsStructureLiesInWhatWasNotRead() throws {
    let bytes = try Self.large.get()
    let archive = try Self.open(bytes, span: 0, counting: Reads())
    let model = try archive.readStore().model
    let book = try #require(archive.members.first { $0.path.hasPrefix("objects/Book/") })
    let content = try archive.read(book)
    let decoder = RecordDecoder(model: model, member: book.path)
    // As if the index had called the chunk's start or its column dictionaries a column's
    // values: what was not read holds what the decoding needs.
    for unread in [0..<64, (content.count - 600)..<(content.count - 40)] {
      #expect(throws: ArchiveFormatError.self) {
        _ = try decoder.columnChunk(content, only: ["title"], unread: [unread])
      }
    }
  }
}
