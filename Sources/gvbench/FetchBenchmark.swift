import Foundation
import GraphVault
import ObjectModel
import ObjectStore

/// Fetches through the object context on a generated library store of `objects` objects (its
/// books about a third of them), in one run, each figure the best of three, each on a fresh
/// read-only context:
///
/// - a fetch of ten books sorted on `uniqueID` (a uniquely indexed attribute) against a fetch
///   of every book;
/// - `count(for:)` of every book, and of the books matching `rating > 2.5`, against fetching
///   them;
/// - a `forEach` walk over every book, batch by batch, in a child process: its peak RSS at
///   `objects` and at five times as many.
func fetchBenchmark(objects: Int) throws {
  let workspace = try BenchWorkspace()
  defer { workspace.remove() }
  let model = try SampleLibrary.model()
  // Stores made and walked by child processes first, so that what this process holds later
  // (a fetch of every book) is not in a child's peak RSS.
  var walks: [(Int, Measured)] = []
  for size in [objects, objects * 5] {
    FileHandle.standardError.write(Data("gvbench fetch: generating \(size) objects\n".utf8))
    let store = workspace.path("store-\(size).sqlite")
    let made = try runMeasured(
      workspace.tool, ["sample", store, "--objects", String(size), "-q"])
    guard made.status == 0 else {
      throw NSError(
        domain: "gvbench", code: 1, userInfo: [NSLocalizedDescriptionKey: "sample failed"])
    }
    walks.append((size, try runMeasured(CommandLine.arguments[0], ["fetch-walk", store])))
  }
  print(
    "| store | books | fetch all | limit 10 sorted | share | count all | share | count where | fetch where | share |"
  )
  print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
  do {
    let size = objects
    let store = workspace.path("store-\(size).sqlite")
    func best(_ body: (ObjectContext) throws -> Int) throws -> (seconds: Double, count: Int) {
      var fastest = Double.infinity
      var count = 0
      for _ in 0..<3 {
        let context = try ObjectContext(storePath: store, model: model, readOnly: true)
        let start = Date()
        count = try body(context)
        fastest = min(fastest, Date().timeIntervalSince(start))
      }
      return (fastest, count)
    }
    let all = FetchRequest(entity: "Book")
    let sorted = FetchRequest(
      entity: "Book", sortDescriptors: [ObjectStore.SortDescriptor("uniqueID")], fetchLimit: 10)
    let rated = FetchRequest(entity: "Book", predicate: "rating > 2.5")
    let fetchAll = try best { try $0.fetch(all).count }
    let limited = try best { try $0.fetch(sorted).count }
    let countAll = try best { try $0.count(for: all) }
    let countRated = try best { try $0.count(for: rated) }
    let fetchRated = try best { try $0.fetch(rated).count }
    guard limited.count == 10, countAll.count == fetchAll.count,
      countRated.count == fetchRated.count
    else {
      throw NSError(
        domain: "gvbench", code: 1,
        userInfo: [NSLocalizedDescriptionKey: "fetch and count disagree"])
    }
    print(
      String(
        format:
          "| %d objects | %d | %.3f s | %.4f s | %.2f%% | %.4f s | %.2f%% | %.4f s | %.3f s | %.2f%% |",
        size, fetchAll.count, fetchAll.seconds, limited.seconds,
        limited.seconds * 100 / fetchAll.seconds, countAll.seconds,
        countAll.seconds * 100 / fetchAll.seconds, countRated.seconds, fetchRated.seconds,
        countRated.seconds * 100 / fetchRated.seconds))
  }
  print("")
  print("| store | walk over every book (batches of 1,000) | peak RSS |")
  print("|---|---:|---:|")
  for (size, walk) in walks {
    print(
      String(format: "| %d objects | %.2f s | %d MiB |", size, walk.seconds, walk.peakKiB / 1024))
  }
}

/// The child process of the walk: every book of `store`, batch by batch, each one's title read.
func fetchWalk(store: String) throws {
  let context = try ObjectContext(
    storePath: store, model: try SampleLibrary.model(), readOnly: true)
  var request = FetchRequest(entity: "Book")
  request.fetchBatchSize = 1000
  var characters = 0
  try context.forEach(request) { book in
    if case .string(let title)? = try book.value(for: "title") { characters += title.utf8.count }
  }
  print(characters)
}
