import PropertyList
import TestSupport
import Testing

@Suite("Malformed binary property lists")
struct MalformedBinaryTests {
  /// A hand-built list: header, the given objects, offset table (1- or 2-byte offsets as
  /// needed), trailer.
  static func handBuilt(objects: [[UInt8]], top: UInt64 = 0, referenceSize: UInt8 = 1) -> [UInt8] {
    var bytes = Array("bplist00".utf8)
    var offsets: [Int] = []
    for object in objects {
      offsets.append(bytes.count)
      bytes += object
    }
    let offsetSize: UInt8 = bytes.count > 255 ? 2 : 1
    let table = UInt64(bytes.count)
    for offset in offsets {
      if offsetSize == 2 { bytes.append(UInt8(offset >> 8)) }
      bytes.append(UInt8(offset & 0xFF))
    }
    bytes += [0, 0, 0, 0, 0, 0, offsetSize, referenceSize]
    for value in [UInt64(objects.count), top, table] {
      for shift in stride(from: 56, through: 0, by: -8) {
        bytes.append(UInt8(truncatingIfNeeded: value >> UInt64(shift)))
      }
    }
    return bytes
  }

  func failure(_ bytes: [UInt8]) -> PropertyListError? {
    do {
      _ = try PropertyListValue(binaryPropertyList: bytes)
      return nil
    } catch {
      return error
    }
  }

  @Test func aHandBuiltListDecodes() throws {
    let bytes = Self.handBuilt(objects: [[0xA2, 1, 1], [0x51, 0x41]])
    #expect(try PropertyListValue(binaryPropertyList: bytes) == ["A", "A"])
  }

  @Test func anArrayThatContainsItselfIsACycle() {
    let error = failure(Self.handBuilt(objects: [[0xA1, 0]]))
    #expect(error?.kind == .referenceCycle)
    #expect(error?.description.contains("object 0") == true)
  }

  @Test func anIndirectCycleIsFound() {
    let error = failure(Self.handBuilt(objects: [[0xA1, 1], [0xD1, 2, 0], [0x51, 0x6B]]))
    #expect(error?.kind == .referenceCycle)
  }

  @Test func nestingBeyondTheLimitIsRefused() {
    // 600 arrays, each holding the next (2-byte references); the last holds false.
    let depth = 600
    var objects: [[UInt8]] = (0..<depth).map {
      [0xA1, UInt8(($0 + 1) >> 8), UInt8(($0 + 1) & 0xFF)]
    }
    objects.append([0x08])
    let error = failure(Self.handBuilt(objects: objects, referenceSize: 2))
    #expect(error?.kind == .nestingTooDeep(limit: BinaryPropertyListReader.maximumDepth))
  }

  @Test func anAbsurdCountIsRefusedBeforeAnyAllocation() {
    // An array claiming 2^60 elements.
    let error = failure(Self.handBuilt(objects: [[0xAF, 0x13, 0x10, 0, 0, 0, 0, 0, 0, 0]]))
    #expect(error?.kind == .invalidStructure)
    #expect(error?.description.contains("elements") == true)
  }

  @Test func aReferenceBeyondTheObjectTableIsRefused() {
    let error = failure(Self.handBuilt(objects: [[0xA1, 9]]))
    #expect(error?.kind == .invalidStructure)
    #expect(error?.description.contains("object 9") == true)
  }

  @Test func anOffsetOutsideTheObjectAreaIsRefused() {
    var bytes = Self.handBuilt(objects: [[0x08]])
    bytes[9] = 200  // the offset table entry
    #expect(failure(bytes)?.kind == .invalidStructure)
  }

  @Test func aStringRunningPastTheObjectAreaIsTruncation() {
    let error = failure(Self.handBuilt(objects: [[0x5E, 0x41]]))  // claims 14 bytes, has 1
    #expect(error?.kind == .truncated)
    #expect(error?.offset != nil)
  }

  @Test func invalidUtf16IsRefused() {
    let error = failure(Self.handBuilt(objects: [[0x61, 0xD8, 0x00]]))  // a lone high surrogate
    #expect(error?.kind == .invalidText)
  }

  @Test func aNonStringDictionaryKeyIsRefused() {
    let error = failure(Self.handBuilt(objects: [[0xD1, 1, 1], [0x10, 5]]))
    #expect(error?.kind == .invalidStructure)
    #expect(error?.description.contains("key") == true)
  }

  @Test func anIntegerBeyondSixtyFourBitsIsRefused() {
    let error = failure(Self.handBuilt(objects: [[0x14] + [UInt8](repeating: 0x7F, count: 16)]))
    #expect(error?.kind == .unsupportedValue)
  }

  @Test func inputThatIsNotABinaryPlistSaysSo() {
    #expect(
      failure(Array("hello world, this is not a plist at all!".utf8))?.kind == .notAPropertyList)
    #expect(failure([])?.kind == .notAPropertyList)
    #expect(failure(Array("bplist00".utf8))?.kind == .truncated)
  }

  @Test func everyTruncationOfAValidListThrows() {
    let bytes = PropertyListValue.array((0..<5).map(SampleValues.record)).binaryPropertyList()
    var survivors: [Int] = []
    for length in 0..<bytes.count where failure(Array(bytes[0..<length])) == nil {
      survivors.append(length)
    }
    #expect(survivors.isEmpty, "truncations that decoded: \(survivors)")
  }

  @Test func thousandsOfByteFlipsNeverCrashOrHang() {
    let bytes = PropertyListValue.array((0..<5).map(SampleValues.record)).binaryPropertyList()
    var generator = SeededRandom(seed: 42)
    var thrown = 0
    let trials = 5_000
    for _ in 0..<trials {
      var damaged = bytes
      let flips = Int(generator.next() % 3) + 1
      for _ in 0..<flips {
        let position = Int(generator.next() % UInt64(damaged.count))
        damaged[position] ^= UInt8(truncatingIfNeeded: generator.next() | 1)
      }
      // Either a clear error or a (different) well-formed value; never a crash.
      if failure(damaged) != nil { thrown += 1 }
    }
    #expect(thrown > trials / 10)
  }

  /// A dictionary of scalars only decodes on a path of its own (no record of visited
  /// objects); damaged, it must fail or succeed as the object-by-object reader does.
  @Test func aDamagedDictionaryOfScalarsDecodesAsTheObjectByObjectReaderReadsIt() {
    let flat: PropertyListValue = [
      "color": "blue", "count": 3, "ratio": 0.25, "flag": true, "name": "a longer string value",
      "when": .date(PropertyListDate(secondsSinceReferenceDate: 12.5)), "blob": .data([1, 2, 3]),
    ]
    let bytes = flat.binaryPropertyList()
    /// What the object-by-object API reads, nil when it refuses something.
    func walked(_ bytes: [UInt8]) -> PropertyListValue? {
      guard let reader = try? BinaryPropertyListReader(bytes: bytes) else { return nil }
      guard case .dictionary? = try? reader.kind(of: reader.topObject) else {
        return try? reader.value(at: reader.topObject)
      }
      guard let pairs = try? reader.dictionaryEntries(of: reader.topObject) else { return nil }
      var result: [String: PropertyListValue] = [:]
      for (key, value) in pairs {
        guard case .string(let key)? = try? reader.scalar(at: key) else { return nil }
        guard case .scalar? = try? reader.kind(of: value), let value = try? reader.scalar(at: value)
        else { return try? reader.value(at: reader.topObject) }
        result[key] = value
      }
      return .dictionary(result)
    }
    var generator = SeededRandom(seed: 7)
    var decodedDamaged = 0
    for _ in 0..<5_000 {
      var damaged = bytes
      for _ in 0..<(Int(generator.next() % 2) + 1) {
        let position = Int(generator.next() % UInt64(damaged.count))
        damaged[position] ^= UInt8(truncatingIfNeeded: generator.next() | 1)
      }
      let decoded = try? PropertyListValue(binaryPropertyList: damaged)
      #expect(decoded == walked(damaged), "damaged: \(damaged)")
      // The entries, when there is no error (those given before an error are not kept).
      var pairs: [(key: String, value: PropertyListValue)] = []
      let isDictionary = try? BinaryPropertyListReader(bytes: damaged).forEachDictionaryEntry {
        pairs.append(($0, $1))
      }
      let entries = isDictionary == true ? pairs : nil
      if isDictionary == false { #expect(pairs.isEmpty) }
      if case .dictionary(let dictionary)? = decoded {
        #expect(entries.map { Dictionary($0, uniquingKeysWith: { _, last in last }) } == dictionary)
        if decoded != flat { decodedDamaged += 1 }
      } else if decoded == nil {
        #expect(entries == nil)
      }
    }
    // Some damage leaves a different, well-formed dictionary: those were compared too.
    #expect(decodedDamaged > 0)
  }

  @Test func damageToTheTrailersSizesCountsAndOffsetsIsNeverReadAsTheOriginal() {
    let bytes = SampleValues.portable.binaryPropertyList()
    // The first six trailer bytes are unused and the sort version; the rest all matter.
    for position in (bytes.count - 26)..<bytes.count {
      for bit in 0..<8 {
        var damaged = bytes
        damaged[position] ^= 1 << bit
        let decoded = try? PropertyListValue(binaryPropertyList: damaged)
        #expect(decoded != SampleValues.portable, "flip at \(position) bit \(bit)")
      }
    }
  }
}
