import Foundation
import GraphVault
import ObjectModel
import ObjectStore

/// The object context against Python's `sqlite3` module doing the same work on the same store,
/// in one run, each figure the best of five (the two sides taking turns), each in a child process of its own (so that its
/// peak RSS is its own) and each timed inside that process (opening excluded):
///
/// - inserting `inserts` books with nine attribute values each and saving them, into a fresh
///   copy of a sample store of `objects` objects;
/// - the same books written by one ``BatchInsertRequest`` (no objects held);
/// - fetching every book (about a third of the store), holding them all;
/// - counting every book.
///
/// Beside each peak RSS, the rows' size: the bytes of their values (text and blobs by length,
/// numbers eight bytes each), what any process must at least hold to have them all.
func saveBenchmark(objects: Int, inserts: Int) throws {
  let workspace = try BenchWorkspace()
  defer { workspace.remove() }
  let script = workspace.path("baseline.py")
  try Data(saveBaselineScript.utf8).write(to: URL(fileURLWithPath: script))
  FileHandle.standardError.write(Data("gvbench save: generating \(objects) objects\n".utf8))
  let store = workspace.path("store.sqlite")
  let made = try runMeasured(workspace.tool, ["sample", store, "--objects", String(objects), "-q"])
  guard made.status == 0 else { throw benchFailure("sample failed") }
  let copy = workspace.path("copy.sqlite")
  let timing = workspace.path("timing.txt")

  let python = "/usr/bin/python3"
  let me = CommandLine.arguments[0]
  let count = String(inserts)
  typealias Run = (seconds: Double, peakKiB: Int, report: [String])
  /// One run of one side: the seconds it timed itself and the run's peak RSS, with what the
  /// run reported after its time.
  func run(fresh: Bool, _ executable: String, _ arguments: [String]) throws -> Run {
    if fresh { try copyStore(store, to: copy) }
    try? FileManager.default.removeItem(atPath: timing)
    let run = try runMeasured(executable, arguments + [fresh ? copy : store, timing])
    guard run.status == 0,
      let words = try? String(contentsOfFile: timing, encoding: .utf8).split(separator: " "),
      let seconds = words.first.flatMap({ Double($0) })
    else { throw benchFailure("\(arguments.first ?? executable) failed (\(run.status))") }
    return (seconds, run.peakKiB, words.dropFirst().map(String.init))
  }
  /// The best of five runs of each side, the sides taking turns, so that a slow spell of this
  /// machine falls on both.
  func best(fresh: Bool, _ mode: String) throws -> (context: Run, baseline: Run) {
    var context: Run?
    var baseline: Run?
    for _ in 0..<5 {
      let mine = try run(fresh: fresh, me, ["save-child", mode, count])
      if mine.seconds < context?.seconds ?? .infinity { context = mine }
      let theirs = try run(fresh: fresh, python, [script, mode, count])
      if theirs.seconds < baseline?.seconds ?? .infinity { baseline = theirs }
    }
    return (context!, baseline!)
  }
  let saving = try best(fresh: true, "save")
  let batching = try best(fresh: true, "batch")
  let fetching = try best(fresh: false, "fetch")
  let counting = try best(fresh: false, "count")
  let rows: [(String, Run, Run)] = [
    ("insert and save \(inserts) books", saving.context, saving.baseline),
    ("batch insert of \(inserts) books", batching.context, batching.baseline),
    ("fetch every book", fetching.context, fetching.baseline),
    ("count every book", counting.context, counting.baseline),
  ]
  print(
    "| \(objects) objects | context | sqlite3 (Python) | ratio | peak RSS, context | peak RSS, sqlite3 | rows' size | RSS ÷ rows |"
  )
  print("|---|---:|---:|---:|---:|---:|---:|---:|")
  for (name, context, baseline) in rows {
    // The baseline reports how many rows and how many bytes of values it handled.
    let rowCount = baseline.2.first ?? "?"
    let bytes = baseline.2.dropFirst().first.flatMap { Double($0) } ?? 0
    let bytesText = bytes > 0 ? String(format: "%.1f MiB", bytes / 1_048_576) : "–"
    let ratio =
      bytes > 0 ? String(format: "%.1f×", Double(context.1) * 1024 / bytes) : "–"
    print(
      String(
        format: "| %@ (%@ rows) | %.4f s | %.4f s | %.2f× | %d MiB | %d MiB | %@ | %@ |",
        name, rowCount, context.0, baseline.0, context.0 / baseline.0, context.1 / 1024,
        baseline.1 / 1024, bytesText, ratio))
  }
}

/// A UUID whose last eight bytes are `number + 1`, big-endian, as Python's
/// `uuid.UUID(int=number + 1)`: the same keys on both sides, without a random source's cost.
private func numberedUUID(_ number: Int) -> UUID {
  var bytes = [UInt8](repeating: 0, count: 16)
  let value = UInt64(number + 1)
  for index in 0..<8 { bytes[15 - index] = UInt8(truncatingIfNeeded: value >> (8 * index)) }
  return bytes.withUnsafeBytes { UUID(uuid: $0.load(as: uuid_t.self)) }
}

private func benchFailure(_ message: String) -> NSError {
  NSError(domain: "gvbench", code: 1, userInfo: [NSLocalizedDescriptionKey: message])
}

/// The context's side of ``saveBenchmark(objects:inserts:)``, in a child process: `mode`
/// (`save`, `batch`, `fetch` or `count`) on `store`, the seconds it took written to `timing`.
func saveChild(mode: String, count: Int, store: String, timing: String) throws {
  let context = try ObjectContext(storePath: store, model: try SampleLibrary.model())
  defer { withExtendedLifetime(context) {} }
  let start = Date()
  var handled = 0
  switch mode {
  case "save":
    // One price for every book, as the baseline's one literal "9.99".
    let price = Decimal(string: "9.99")
    for number in 0..<count {
      let book = try context.insert("Book")
      try book.setValue("Saved book \(number)", for: "title")
      try book.setValue(numberedUUID(number), for: "uniqueID")
      try book.setValue(2.5 + Double(number % 5) / 2, for: "rating")
      try book.setValue(Int32(number % 7 + 1), for: "edition")
      try book.setValue(
        Date(timeIntervalSinceReferenceDate: 700_000_000 + Double(number)), for: "publishedAt")
      try book.setValue(Int64(number * 3), for: "sales")
      try book.setValue(price, for: "price")
      try book.setValue(true, for: "inPrint")
      try book.setValue(Float(0.5), for: "weight")
    }
    let saving = Date()
    let phases = ProcessInfo.processInfo.environment["GVBENCH_PHASES"] != nil
    // Resident and peak memory, from /proc, after the inserts and after the save.
    func memory() -> String {
      let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
      return status.split(separator: "\n").filter {
        $0.hasPrefix("VmRSS") || $0.hasPrefix("VmHWM")
      }.map { $0.split(whereSeparator: \.isWhitespace).dropFirst().joined(separator: " ") }
        .joined(separator: " / ")
    }
    let inserted = phases ? memory() : ""
    try context.save()
    if phases {
      FileHandle.standardError.write(
        Data(
          "inserts \(saving.timeIntervalSince(start)) s (RSS / peak \(inserted)), save \(Date().timeIntervalSince(saving)) s (\(memory()))\n"
            .utf8))
    }
    handled = count
  case "batch":
    let price = Decimal(string: "9.99")
    try context.execute(
      BatchInsertRequest(entity: "Book") { row in
        let number = row.index
        guard number < count else { return true }
        try row.setValue("Saved book \(number)", for: "title")
        try row.setValue(numberedUUID(number), for: "uniqueID")
        try row.setValue(2.5 + Double(number % 5) / 2, for: "rating")
        try row.setValue(Int32(number % 7 + 1), for: "edition")
        try row.setValue(
          Date(timeIntervalSinceReferenceDate: 700_000_000 + Double(number)), for: "publishedAt")
        try row.setValue(Int64(number * 3), for: "sales")
        try row.setValue(price, for: "price")
        try row.setValue(true, for: "inPrint")
        try row.setValue(Float(0.5), for: "weight")
        return false
      })
    handled = count
  case "fetch":
    let books = try context.fetch(FetchRequest(entity: "Book"))
    handled = books.count
    withExtendedLifetime(books) {}
  default:
    handled = try context.count(for: FetchRequest(entity: "Book"))
  }
  let seconds = Date().timeIntervalSince(start)
  try Data("\(seconds) \(handled)".utf8).write(to: URL(fileURLWithPath: timing))
}

/// Python's `sqlite3` doing what ``saveChild(mode:count:store:timing:)`` does, with the same
/// columns: executemany in one transaction, `Z_PRIMARYKEY` moved on; `fetchall`; `count(*)`.
/// It reports its seconds, the rows it handled and the bytes of their values.
private let saveBaselineScript = """
  import sqlite3, sys, time, uuid

  mode, count, store, timing = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
  con = sqlite3.connect(store, isolation_level=None)
  entities = dict(con.execute("SELECT Z_NAME, Z_ENT FROM Z_PRIMARYKEY"))
  book, novel = entities["Book"], entities["GraphicNovel"]

  def size(row):
      return sum(len(v.encode()) if isinstance(v, str) else len(v) if isinstance(v, bytes)
                 else 0 if v is None else 8 for v in row)

  start = time.perf_counter()
  if mode in ("save", "batch"):
      con.execute("BEGIN IMMEDIATE")
      first = con.execute("SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_ENT = ?", (book,)).fetchone()[0] + 1
      rows = [(first + i, book, 1, "Saved book %d" % i, uuid.UUID(int=i + 1).bytes, 2.5 + (i % 5) / 2,
               i % 7 + 1, 700000000.0 + i, i * 3, "9.99", 1, 0.5) for i in range(count)]
      con.executemany(
          "INSERT INTO ZBOOK (Z_PK, Z_ENT, Z_OPT, ZTITLE, ZUNIQUEID, ZRATING, ZEDITION, ZPUBLISHEDAT,"
          " ZSALES, ZPRICE, ZINPRINT, ZWEIGHT) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)
      con.execute("UPDATE Z_PRIMARYKEY SET Z_MAX = ? WHERE Z_ENT = ?", (first + count - 1, book))
      con.execute("COMMIT")
  elif mode == "fetch":
      rows = con.execute("SELECT * FROM ZBOOK WHERE Z_ENT IN (?, ?)", (book, novel)).fetchall()
  else:
      rows = con.execute("SELECT count(*) FROM ZBOOK WHERE Z_ENT IN (?, ?)", (book, novel)).fetchall()
  seconds = time.perf_counter() - start
  handled = rows[0][0] if mode == "count" else len(rows)
  measured = sum(size(row) for row in rows) if mode != "count" else 0
  open(timing, "w").write("%f %d %d" % (seconds, handled, measured))
  """
