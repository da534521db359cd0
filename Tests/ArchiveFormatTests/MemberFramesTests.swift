import ArchiveFormat
import PropertyList
import Testing

/// What an index says of a member in several frames (FORMAT.md section 3: `frames` and
/// `columns`), written and read back, and refused when it cannot be so.
@Suite("A member's frames in the index")
struct MemberFramesTests {
  static let place = FramedStream.Place(offset: 4_096, length: 300)
  /// A member of 5,000 bytes: one header, its content padded to 5,120 bytes.
  static let size = 5_000

  static func entry(_ frames: [(Int, Int)], columns: [(String, Int)]) -> PropertyListValue {
    var encoded: [UInt8] = []
    for (length, size) in frames {
      Varint.append(UInt64(length), to: &encoded)
      Varint.append(UInt64(size), to: &encoded)
    }
    return .dictionary([
      "frames": .data(encoded),
      "columns": .array(columns.map { .array([.string($0.0), .integer(Int64($0.1))]) }),
    ])
  }

  @Test func framesAndColumnsComeBackAsWritten() throws {
    let written = MemberFrames(
      frames: [
        .init(length: 100, size: 600), .init(length: 150, size: 4_000),
        .init(length: 50, size: 1_032),
      ], columns: [1: "cover"])
    let read = try MemberFrames(
      reading: .dictionary(written.entries), member: "objects/Book/000001.plist",
      place: Self.place, size: Self.size)
    #expect(read == written)
    // A member of one frame has none.
    #expect(
      try MemberFrames(
        reading: .dictionary([:]), member: "m", place: Self.place, size: Self.size) == nil)
  }

  /// Damaged entries: what is wrong, the frames (length, size) and the columns (key, frame).
  static let damaged: [(String, [(Int, Int)], [(String, Int)])] = [
    ("lengths short of the member's", [(100, 600), (150, 4_000), (49, 1_032)], [("cover", 1)]),
    ("a frame of no bytes", [(0, 600), (250, 4_000), (50, 1_032)], [("cover", 1)]),
    ("sizes short of the records", [(100, 100), (150, 4_000), (50, 1_032)], [("cover", 1)]),
    ("headers over 64 KiB", [(100, 70_000), (150, 4_000), (50, 1_032)], [("cover", 1)]),
    ("a column's frame not among them", [(100, 600), (150, 4_000), (50, 1_032)], [("cover", 3)]),
    ("two columns in one frame", [(100, 600), (150, 4_000), (50, 1_032)], [("a", 1), ("b", 1)]),
    ("one frame only", [(300, 5_632)], []),
  ]

  @Test(arguments: 0..<damaged.count)
  func damagedFramesAreRefused(case number: Int) {
    let (what, frames, columns) = Self.damaged[number]
    #expect(throws: ArchiveFormatError.self, "\(what)") {
      _ = try MemberFrames(
        reading: Self.entry(frames, columns: columns), member: "objects/Book/000001.plist",
        place: Self.place, size: Self.size)
    }
  }

  @Test func framesThatAreNotVarintsAreRefused() {
    let entry: PropertyListValue = .dictionary([
      "frames": .data([0x80, 0x80]), "columns": .array([]),
    ])
    #expect(throws: ArchiveFormatError.self) {
      _ = try MemberFrames(reading: entry, member: "m", place: Self.place, size: Self.size)
    }
    #expect(throws: ArchiveFormatError.self) {
      _ = try MemberFrames(
        reading: .dictionary(["frames": .string("x")]), member: "m", place: Self.place,
        size: Self.size)
    }
  }
}
