import ArchiveFormat
import Foundation
import GraphVault
import ObjectStore
import PropertyList
import TestSupport
import Testing

/// Random damage with the index made to agree: whatever the bytes, no crash, no hang, and
/// `verify` passes exactly when `restore` succeeds (bad data: 65, nothing left behind).
///
/// `GRAPHVAULT_FUZZ_CASES` sets the number of cases (300 by default; the longer run in the
/// docs/BENCHMARKS.md used 10,000), `GRAPHVAULT_FUZZ_SEED` the first seed.
@Suite("Fuzzed archives")
struct FuzzedArchiveTests {
  typealias Random = SplitMix64

  static let environment = ProcessInfo.processInfo.environment
  static let cases = Int(environment["GRAPHVAULT_FUZZ_CASES"] ?? "") ?? 300
  static let firstSeed = UInt64(environment["GRAPHVAULT_FUZZ_SEED"] ?? "") ?? 1

  /// Small archives of a sample store, one per format.
  static let sources: [String] = {
    let directory = try! TemporaryDirectory.forTheRun("graphvault-fuzz-sources").url
    let store = directory.appendingPathComponent("Library.sqlite").path
    try? SampleLibrary.generate(at: store, objects: 120)
    return [Int64(1), 2].compactMap { format in
      var options = BackupService.Options()
      options.formatVersion = format
      options.output = Location(
        path: directory.appendingPathComponent("Library-\(format).gvault").path)
      return try? BackupService.backup(storePath: store, options: options).archive
    }
  }()

  /// One random change to the archive's members.
  static func mutate(_ forger: inout ArchiveForger, _ random: inout Random) {
    let members = forger.members.indices.filter { forger.members[$0].path != ArchiveForger.index }
    let target = members[random.below(members.count)]
    var bytes = forger.members[target].bytes
    switch random.below(11) {
    case 0, 1:  // flip a few bits
      for _ in 0...random.below(4) where !bytes.isEmpty {
        bytes[random.below(bytes.count)] ^= UInt8(1 << random.below(8))
      }
    case 2:  // overwrite a run with noise
      guard !bytes.isEmpty else { break }
      let start = random.below(bytes.count)
      for index in start..<min(bytes.count, start + 1 + random.below(16)) {
        bytes[index] = UInt8(truncatingIfNeeded: random.next())
      }
    case 3:  // cut
      bytes = Array(bytes.prefix(random.below(bytes.count)))
    case 4:  // insert noise
      let position = random.below(bytes.count + 1)
      bytes.insert(
        contentsOf: (0...random.below(8)).map { _ in UInt8(truncatingIfNeeded: random.next()) },
        at: position)
    case 5:  // a value of the property list replaced by another
      if var value = try? PropertyListValue(binaryPropertyList: bytes) {
        replaceSomeValue(in: &value, &random)
        bytes = value.binaryPropertyList()
      }
    case 6:  // a member dropped
      forger.members.remove(at: target)
      return
    case 7:  // a member twice, or two swapped
      if random.below(2) == 0 {
        forger.members.insert(forger.members[target], at: target)
      } else {
        let other = members[random.below(members.count)]
        forger.members.swapAt(target, other)
      }
      return
    case 9:  // one object met many times (shared references)
      if let value = try? PropertyListValue(binaryPropertyList: bytes) {
        bytes = sharingReferences(value, &random)
      }
    case 10:  // a chunk past the format's bound of objects
      if let value = try? PropertyListValue(binaryPropertyList: bytes) {
        bytes = oversized(value, &random)
      }
    default:  // an integer nudged (keys, counts, lengths)
      if var value = try? PropertyListValue(binaryPropertyList: bytes) {
        nudgeSomeInteger(in: &value, &random)
        bytes = value.binaryPropertyList()
      }
    }
    forger.members[target].bytes = bytes
  }

  /// `value` written with one object referenced from many places: a large string or data
  /// repeated in an array, arrays doubling shared arrays, or (in a chunk of records) one record
  /// repeated; put in place of a random reference.
  static func sharingReferences(_ value: PropertyListValue, _ random: inout Random) -> [UInt8] {
    var list = SharingPropertyList()
    var top = list.add(tree: value)
    let bomb: Int
    switch random.below(3) {
    case 0:
      let leaf =
        random.below(2) == 0
        ? list.add(.string(String(repeating: "é", count: 1 + random.below(40_000))))
        : list.add(.data([UInt8](repeating: 1, count: 1 + random.below(80_000))))
      bomb = list.add(.array(Array(repeating: leaf, count: 1 + random.below(30_000))))
    case 1:
      bomb = list.doublingChain(levels: 1 + random.below(70), above: list.add(.integer(7)))
    default:
      // The top array's first element (a record, in a chunk of records) over and over.
      guard case .array(let references) = list.objects[top], let first = references.first
      else { return list.bytes(top: top) }
      let repeated = list.add(.array(Array(repeating: first, count: 2 + random.below(20_000))))
      return list.bytes(top: repeated)
    }
    let containers = list.objects.indices.filter { index in
      switch list.objects[index] {
      case .array(let references): return !references.isEmpty && index != bomb
      case .dictionary(let pairs): return !pairs.isEmpty && index != bomb
      default: return false
      }
    }
    guard !containers.isEmpty else { return list.bytes(top: bomb) }
    let container = containers[random.below(containers.count)]
    switch list.objects[container] {
    case .array(var references):
      references[random.below(references.count)] = bomb
      list.set(container, .array(references))
    case .dictionary(var pairs):
      pairs[random.below(pairs.count)].value = bomb
      list.set(container, .dictionary(pairs))
    default: break
    }
    if random.below(8) == 0 { top = bomb }
    return list.bytes(top: top)
  }

  /// A chunk claiming more objects than the format allows: a chunk of records with records
  /// repeated past the bound, or a chunk of columns whose count (and keys) say so.
  static func oversized(_ value: PropertyListValue, _ random: inout Random) -> [UInt8] {
    let count = ArchiveLayout.chunkRecords + 1 + random.below(100_000)
    switch value {
    case .array(let records) where !records.isEmpty:
      var list = SharingPropertyList()
      let first = list.add(tree: records[0])
      let repeated = list.add(.array(Array(repeating: first, count: count)))
      return list.bytes(top: repeated)
    case .dictionary(var chunk) where chunk["count"] != nil:
      chunk["count"] = .integer(Int64(count))
      for key in ["pk", "opt"] {
        if case .data(var bytes)? = chunk[key] {
          bytes.append(contentsOf: [UInt8](repeating: 0, count: max(0, count - bytes.count)))
          chunk[key] = .data(bytes)
        }
      }
      return PropertyListValue.dictionary(chunk).binaryPropertyList()
    default:
      return value.binaryPropertyList()
    }
  }

  static func replaceSomeValue(in value: inout PropertyListValue, _ random: inout Random) {
    switch value {
    case .array(var items) where !items.isEmpty && random.below(3) != 0:
      let index = random.below(items.count)
      replaceSomeValue(in: &items[index], &random)
      value = .array(items)
    case .dictionary(var fields) where !fields.isEmpty && random.below(3) != 0:
      let key = fields.keys.sorted()[random.below(fields.count)]
      if random.below(6) == 0 {
        fields[key] = nil
      } else {
        replaceSomeValue(in: &fields[key]!, &random)
      }
      value = .dictionary(fields)
    default:
      let replacements: [PropertyListValue] = [
        .integer(Int64(bitPattern: random.next())), .integer(Int64(random.below(5)) - 1),
        .string("x'; DROP TABLE ZBOOK; --"), .data([0, 1, 2]), .bool(true), .array([]),
        .dictionary([:]), .real(.nan), .string(""),
      ]
      value = replacements[random.below(replacements.count)]
    }
  }

  static func nudgeSomeInteger(in value: inout PropertyListValue, _ random: inout Random) {
    switch value {
    case .integer(let number):
      value = .integer(number &+ Int64(random.below(5)) - 2)
    case .array(var items) where !items.isEmpty:
      let index = random.below(items.count)
      nudgeSomeInteger(in: &items[index], &random)
      value = .array(items)
    case .dictionary(var fields) where !fields.isEmpty:
      let key = fields.keys.sorted()[random.below(fields.count)]
      nudgeSomeInteger(in: &fields[key]!, &random)
      value = .dictionary(fields)
    default: break
    }
  }

  /// Ends the process when a case runs too long: a hang fails the run loudly, never stalls it.
  final class Watchdog: @unchecked Sendable {
    private let lock = NSLock()
    private var label = ""
    private var started = Date()

    init(limit: TimeInterval) {
      Thread.detachNewThread { [self] in
        while true {
          Thread.sleep(forTimeInterval: 1)
          let (label, started) = lock.withLock { (self.label, self.started) }
          if !label.isEmpty, Date().timeIntervalSince(started) > limit {
            FileHandle.standardError.write(Data("fuzz case \(label) hung for \(limit) s\n".utf8))
            exit(3)
          }
        }
      }
    }

    func begin(_ label: String) { lock.withLock { (self.label, started) = (label, Date()) } }
    func end() { lock.withLock { label = "" } }
  }

  @Test("verify and restore agree on every randomly damaged archive, and neither crashes nor hangs")
  func verifyAndRestoreAgreeUnderRandomDamage() throws {
    try #require(Self.sources.count == 2)
    let directory = try TemporaryDirectory()
    let watchdog = Watchdog(limit: 60)
    var refused = 0
    var disagreements: [String] = []
    for offset in 0..<Self.cases {
      let seed = Self.firstSeed &+ UInt64(offset)
      var random = Random(seed: seed)
      let source = Self.sources[random.below(2)]
      var forger = try ArchiveForger(reading: source)
      for _ in 0...random.below(2) { Self.mutate(&forger, &random) }
      let archive = directory.path("case.gvault").path
      try? FileManager.default.removeItem(atPath: archive)
      try forger.write(to: archive)
      let label = "seed \(seed) (\(URL(fileURLWithPath: source).lastPathComponent))"
      watchdog.begin(label)
      defer { watchdog.end() }
      let report = try VerifyService.verify(archive: Location(path: archive))
      let store = directory.path("restored.sqlite").path
      var restored = false
      do {
        _ = try RestoreService.restore(archive: Location(path: archive), to: store, force: true)
        restored = true
      } catch {
        if error.kind != .invalidInput {
          disagreements.append("\(label): restore failed with \(error.kind): \(error.detail)")
        }
      }
      if report.ok != restored {
        disagreements.append(
          "\(label): verify \(report.ok ? "passed" : "failed (\(report.problems.first ?? ""))"), restore \(restored ? "succeeded" : "failed")"
        )
      }
      if !report.ok { refused += 1 }
      let leftovers = try FileManager.default.contentsOfDirectory(atPath: directory.url.path)
        .filter { $0.contains(".tmp-") }
      #expect(leftovers.isEmpty, "\(label): \(leftovers)")
    }
    #expect(disagreements.isEmpty, "\(disagreements.prefix(10).joined(separator: "\n"))")
    // The test process's peak (every suite running beside this one included): a case that
    // decoded a forged list's copies would have taken gigabytes.
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    print(
      "fuzzed archives: \(Self.cases) cases from seed \(Self.firstSeed), \(refused) refused by both, \(Self.cases - refused - disagreements.count) accepted by both, \(disagreements.count) disagreements; peak RSS of the test process \(usage.ru_maxrss / 1024) MiB"
    )
  }
}

extension SplitMix64 {
  /// A number in `0..<bound` (0 when `bound` is not positive).
  mutating func below(_ bound: Int) -> Int { Int(next() % UInt64(max(bound, 1))) }
}
