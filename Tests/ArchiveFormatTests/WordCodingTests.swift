import ArchiveFormat
import GraphVault
import ObjectModel
import ObjectStore
import PropertyList
import TestSupport
import Testing

@Suite("Format 4's text columns as numbered words")
struct WordCodingTests {
  static let vocabulary = [
    "river", "stone", "light", "winter", "garden", "signal", "paper", "harbor", "orbit", "maple",
    "café", "naïve", "✓", "😀", "",
    // Longer than eight bytes, and than sixteen; the first eight bytes of four alike.
    "lighthouses", "lighthouse-keeper", "lighthouse-reaper", "lighthouse-keepers", "watercolour",
  ]

  /// Values of up to twenty words of `vocabulary`, and every shape of spaces: none, one, two
  /// together, at the start, at the end, alone.
  static func values(_ count: Int, seed: UInt64) -> [String] {
    var random = SplitMix64(seed: seed)
    let shapes = ["", " ", "  ", "a  b", " lead", "trail ", "café naïve ✓", "😀 x", "one"]
    return (0..<count).map { index in
      if index % 50 == 0 { return shapes[index / 50 % shapes.count] }
      let words = Int(random.next() % 21)
      return (0..<words).map { _ in
        vocabulary[Int(random.next() % UInt64(vocabulary.count))]
      }.joined(separator: " ")
    }
  }

  /// `values` as a column holds them: UTF-8 back to back, and their byte lengths as varints.
  static func column(_ values: [String]) -> (bytes: [UInt8], lengths: [UInt8]) {
    var bytes: [UInt8] = []
    var lengths: [UInt8] = []
    for value in values {
      bytes += Array(value.utf8)
      Varint.append(UInt64(value.utf8.count), to: &lengths)
    }
    return (bytes, lengths)
  }

  /// `values` as a column, and that column coded.
  static func coded(_ values: [String]) throws -> (
    bytes: [UInt8], lengths: [UInt8], coder: WordCoder
  ) {
    let (bytes, lengths) = column(values)
    var coder = WordCoder()
    let coded = coder.code(values: bytes, lengths: lengths, count: values.count)
    try #require(coded)
    return (bytes, lengths, coder)
  }

  static func decoded(_ coder: WordCoder, _ lengths: [UInt8], count: Int) throws -> [UInt8] {
    try WordCoding.decode(
      words: coder.words[...], tokens: coder.tokens[...], lengths: lengths[...], count: count)
  }

  @Test func textsOfFewDistinctWordsAreCodedAndDecodeToTheirValuesExactly() throws {
    let values = Self.values(5_000, seed: 7)
    let (bytes, lengths, coder) = try Self.coded(values)
    #expect(try Self.decoded(coder, lengths, count: values.count) == bytes)
    #expect((coder.words.count + coder.tokens.count) * 3 <= bytes.count)
    // One number for each word Swift's own split finds, in a list of the distinct words.
    let words = values.filter { !$0.isEmpty }.flatMap {
      $0.split(separator: " ", omittingEmptySubsequences: false)
    }
    var numbers = Varint.Reader(coder.tokens)
    var count = 0
    while numbers.next() != nil { count += 1 }
    #expect(count == words.count)
    var list = Varint.Reader(coder.words)
    var listed: [String] = []
    while let length = list.next() {
      let start = list.offset
      list.skip(Int(length))
      listed.append(String(decoding: coder.words[start..<list.offset], as: UTF8.self))
    }
    #expect(Set(listed) == Set(words.map(String.init)) && listed.count == Set(listed).count)
    // The most used first.
    let uses = Dictionary(words.map { (String($0), 1) }, uniquingKeysWith: +)
    #expect(listed.map { uses[$0]! } == listed.map { uses[$0]! }.sorted(by: >))
    // The same values give the same bytes.
    var again = WordCoder()
    let againCoded = again.code(values: bytes, lengths: lengths, count: values.count)
    #expect(againCoded)
    #expect(again.words == coder.words && again.tokens == coder.tokens)
  }

  @Test func textOfManyDistinctWordsIsLeftAsItIs() {
    var random = SplitMix64(seed: 3)
    let identifiers = (0..<3_000).map { _ in
      "https://example.com/items/\(random.next() % 1_000_000)/\(random.next())"
    }
    let prose = (0..<3_000).map { line in
      (0..<12).map { _ in "w\(random.next() % 20_000)" }.joined(separator: " ") + " \(line)."
    }
    for values in [identifiers, prose] {
      let (bytes, lengths) = Self.column(values)
      var coder = WordCoder()
      let coderCoded = coder.code(values: bytes, lengths: lengths, count: values.count)
      #expect(!coderCoded)
      #expect(coder.words.isEmpty && coder.tokens.isEmpty)
    }
  }

  @Test func aColumnThatWouldDecodeToMoreThanSixteenTimesItsBytesIsLeftAsItIs() throws {
    let word = String(repeating: "x", count: 100)
    let values = Array(repeating: word, count: 2_000)
    let (bytes, lengths) = Self.column(values)
    var coder = WordCoder()
    let coderCoded = coder.code(values: bytes, lengths: lengths, count: values.count)
    #expect(!coderCoded)
    // Were it written, a reader would refuse it.
    var words: [UInt8] = []
    Varint.append(100, to: &words)
    words += Array(word.utf8)
    let tokens = [UInt8](repeating: 0, count: values.count)
    #expect(throws: WordCoding.Malformed.self) {
      try WordCoding.decode(
        words: words[...], tokens: tokens[...], lengths: lengths[...], count: values.count)
    }
  }

  @Test(
    arguments: [
      ([2, 0x61, 0x62], [1], [2], "names no word"),
      ([2, 0x61, 0x62], [0, 0], [3], "run past its length"),
      ([2, 0x61, 0x62], [0, 0], [2], "left over"),
      ([9, 0x61, 0x62], [0], [2], "runs past its list"),
      ([2, 0x61, 0x62], [], [2], "names no word"),
      ([2, 0x61, 0x62], [0], [0x80, 0x01], "more than 16 times"),
    ] as [([UInt8], [UInt8], [UInt8], String)])
  func damagedWordsOrNumbersAreRefusedSayingWhatIsWrong(
    words: [UInt8], tokens: [UInt8], lengths: [UInt8], problem: String
  ) {
    do {
      let values = try WordCoding.decode(
        words: words[...], tokens: tokens[...], lengths: lengths[...], count: 1)
      Issue.record("decoded \(values)")
    } catch {
      #expect(error.detail.contains(problem), "\(error.detail)")
    }
  }

  @Test func flippedBytesAreRefusedOrDecodeToExactlyTheLengthsNeverCrash() throws {
    let values = Self.values(600, seed: 11)
    let (bytes, lengths, coder) = try Self.coded(values)
    var random = SplitMix64(seed: 5)
    var refused = 0
    for round in 0..<2_000 {
      var parts = [coder.words, coder.tokens, lengths]
      let part = round % 3
      for _ in 0...(round % 4) where !parts[part].isEmpty {
        let at = Int(random.next() % UInt64(parts[part].count))
        parts[part][at] ^= UInt8(truncatingIfNeeded: random.next() | 1)
      }
      do {
        let decoded = try WordCoding.decode(
          words: parts[0][...], tokens: parts[1][...], lengths: parts[2][...],
          count: values.count)
        var sizes = Varint.Reader(parts[2])
        let total = (0..<values.count).reduce(0) { sum, _ in sum + Int(sizes.next() ?? 0) }
        #expect(decoded.count == total)
      } catch {
        refused += 1
      }
    }
    #expect(refused > 600)
  }

  /// A chunk of `count` books of the text workload, encoded in `format`.
  static func books(_ count: Int, format: Int64) throws -> (bytes: [UInt8], records: [ObjectRecord])
  {
    var encoder = ColumnChunkEncoder(
      model: try SampleWorkload.text.model(), formatVersion: format)
    let summaries = values(count, seed: 2)
    var records: [ObjectRecord] = []
    for (index, summary) in summaries.enumerated() {
      let record = ObjectRecord(
        entity: "Book", primaryKey: Int64(index + 1),
        attributes: [
          "title": .string("book \(index)"), "summary": .string(summary),
          "checksum": .data([UInt8(index % 256)]),
        ])
      encoder.add(record, manyToMany: [])
      records.append(record)
    }
    let bytes = encoder.serialized()
    return (try #require(bytes), records)
  }

  static func columns(of chunk: [UInt8]) throws -> [String: PropertyListValue] {
    guard case .array(let columns)? = try PropertyListValue(binaryPropertyList: chunk)["columns"]
    else { throw ArchiveFormatError(member: "chunk", "no columns") }
    var found: [String: PropertyListValue] = [:]
    for column in columns { found[column["key"]?.stringValue ?? ""] = column }
    return found
  }

  @Test func formatFourCodesALargeTextColumnAndFormatThreeDoesNotBothReadingTheSame() throws {
    let model = try SampleWorkload.text.model()
    let decoder = RecordDecoder(model: model, member: "objects/Book/000001.plist")
    let (coded, records) = try Self.books(3_000, format: 4)
    let (plain, _) = try Self.books(3_000, format: 3)
    let codedColumns = try Self.columns(of: coded)
    #expect(codedColumns["summary"]?["words"] != nil)
    // Titles of distinct numbers do not gain; checksums are data.
    #expect(codedColumns["title"]?["words"] == nil && codedColumns["checksum"]?["words"] == nil)
    #expect(try Self.columns(of: plain).values.allSatisfy { $0["words"] == nil })
    #expect(coded.count < plain.count * 2 / 3)
    let fromCoded = try decoder.decodeChunk(coded).map { $0.0 }
    #expect(fromCoded == records)
    #expect(try decoder.decodeChunk(plain).map { $0.0 } == fromCoded)
    // Read in place and as a tree, whole and in part.
    let whole = try #require(try decoder.columnChunk(coded))
    #expect(try decoder.decodeBatch(whole).records.map { $0.0 } == records)
    let part = try #require(try decoder.columnChunk(coded, only: ["summary"]))
    #expect(
      try decoder.decodeBatch(part, only: ["summary"]).records.map { $0.0.attributes["summary"] }
        == records.map { $0.attributes["summary"] })
  }

  @Test func wordsOnAColumnOfDataAreRefused() throws {
    let model = try SampleWorkload.text.model()
    let decoder = RecordDecoder(model: model, member: "objects/Book/000001.plist")
    let (coded, _) = try Self.books(3_000, format: 4)
    guard case .dictionary(var chunk) = try PropertyListValue(binaryPropertyList: coded),
      case .array(var columns)? = chunk["columns"]
    else { throw ArchiveFormatError(member: "chunk", "no columns") }
    for index in columns.indices where columns[index]["key"]?.stringValue == "checksum" {
      guard case .dictionary(var column) = columns[index] else { continue }
      column["words"] = .data([1, 0x61])
      columns[index] = .dictionary(column)
    }
    chunk["columns"] = .array(columns)
    let damaged = try PropertyListValue.dictionary(chunk).binaryPropertyList()
    #expect {
      try decoder.decodeChunk(damaged)
    } throws: { error in
      "\(error)".contains("words belong to a column of strings")
    }
  }
}
