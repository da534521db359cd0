import Foundation
import SQLite
import TestSupport
import Testing

@Suite("Row hashes")
struct RowHasherTests {
  /// FORMAT.md's steps for a row's hash ("Sets, elements and their hash"), written apart in
  /// Python: every column of each row of `t` in table order, by storage class, keyed by the
  /// seed; one `rowid hash` line per row.
  static let reference = #"""
    import sqlite3, struct, sys
    M = (1 << 64) - 1
    def mix(state, word):
        product = ((state ^ word ^ 0xA4093822299F31D0) & M) * 0x9E3779B97F4A7C15
        return (product >> 64) ^ (product & M)
    def row_hash(seed, typed):
        state = seed ^ 0x243F6A8885A308D3
        for kind, value in typed:
            if kind == "null":
                state = mix(state, 0)
            elif kind == "integer":
                state = mix(mix(state, 1), value & M)
            elif kind == "real":
                state = mix(mix(state, 2), struct.unpack("<Q", struct.pack("<d", value))[0])
            else:
                state = mix(mix(state, 3 if kind == "text" else 4), len(value))
                for start in range(0, len(value), 8):
                    state = mix(state, int.from_bytes(value[start:start + 8].ljust(8, b"\0"), "little"))
        z = state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M
        return z ^ (z >> 31)
    path, seed = sys.argv[1], int(sys.argv[2])
    db = sqlite3.connect(path)
    db.text_factory = bytes
    columns = [row[1].decode() for row in db.execute("PRAGMA table_info(t)")]
    picks = ", ".join(f'typeof("{c}"), "{c}"' for c in columns)
    for row in db.execute(f"SELECT rowid, {picks} FROM t ORDER BY rowid"):
        typed = [(row[i].decode(), row[i + 1]) for i in range(1, len(row), 2)]
        print(row[0], row_hash(seed, typed))
    """#

  @Test func aRowsHashIsWhatFormatMdsStepsGiveComputedApartInPython() throws {
    let directory = try TemporaryDirectory()
    let path = directory.path("hashed.sqlite").path
    let db = try Database(path: path, mode: .readWriteCreate)
    try db.execute("CREATE TABLE t (a, b, c)")
    let insert = try db.prepare("INSERT INTO t VALUES (?, ?, ?)")
    // Every storage class; texts and blobs of every length around a word of 8 bytes (the
    // tail's each length), texts not all ASCII, integers at both ends.
    var rows: [[SQLiteValue]] = [
      [.null, .integer(0), .integer(-1)],
      [.integer(Int64.min), .integer(Int64.max), .real(-0.5)],
      [.real(0), .real(.infinity), .real(1e300)],
      [.text(""), .blob([]), .text("héllo ✓, wörld")],
      [.integer(1), .real(1), .text("1")],
      [.blob([0x31]), .null, .null],
    ]
    for length in 0...25 {
      let bytes = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 200) }
      let text = String((0..<length).map { Character(UnicodeScalar(UInt8(97 + $0 % 26))) })
      rows.append([.text(text), .blob(bytes), .integer(Int64(length))])
    }
    for row in rows {
      try insert.bind(row)
      try insert.run()
    }
    let seed: UInt64 = 0xDEAD_BEEF_0123_4567
    var ours: [String] = []
    var loaded: [String] = []
    // The same rows hashed from the statement and from the row loaded once, with its columns
    // selected in another order and hashed in the table's.
    let read = try db.prepare("SELECT rowid, * FROM t ORDER BY rowid")
    let reordered = try db.prepare("SELECT c, rowid, a, b FROM t ORDER BY rowid")
    let columns = RowColumns(of: reordered)
    while try read.step() {
      var hasher = RowHasher(seed: seed)
      read.hashColumns(from: 1, into: &hasher)
      ours.append("\(read.int64(at: 0)) \(hasher.value)")
      #expect(try reordered.step())
      columns.load()
      var again = RowHasher(seed: seed)
      columns.hash([2, 3, 0], into: &again)
      loaded.append("\(columns.int64(at: 1)) \(again.value)")
    }
    let python = try Subprocess.python(Self.reference, [path, "\(seed)"])
    #expect(python.status == 0, "\(python.stderr)")
    #expect(ours.count == rows.count)
    #expect(python.stdout.split(separator: "\n").map(String.init) == ours)
    #expect(loaded == ours)
  }

  @Test func oneAsAnIntegerARealTextAndABlobHashesFourWays() {
    let one: [UInt8] = [0x31]
    var hashes: Set<UInt64> = []
    for kind in 0..<4 {
      var hasher = RowHasher(seed: 7)
      switch kind {
      case 0: hasher.add(integer: 1)
      case 1: hasher.add(real: 1)
      default: one.withUnsafeBytes { hasher.add(bytes: $0, isText: kind == 2) }
      }
      hashes.insert(hasher.value)
    }
    #expect(hashes.count == 4)
  }
}
