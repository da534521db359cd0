import ArchiveFormat
import Foundation
import GraphVault
import ObjectModel
import ObjectStore
import PropertyList
import TestSupport
import Testing

/// Backup's fast path (rows read into reused buffers) against the record path: the same bytes,
/// object by object, for the sample workloads and every fixture store.
@Suite("Objects encoded from rows")
struct RowEncodingTests {
  /// Every object of `store` encoded both ways into chunks of 500; the serialized chunks.
  static func chunks(_ store: String, model: ObjectModel) throws -> (
    rows: [[UInt8]], records: [[UInt8]]
  ) {
    let reader = try CoreDataStore(path: store)
    let layout = try reader.layout(for: model)
    var result: ([[UInt8]], [[UInt8]]) = ([], [])
    for useRows in [true, false] {
      let encoder = RecordEncoder(model: model)
      var writer = BinaryPropertyListWriter()
      var chunks: [[UInt8]] = []
      func flush() {
        guard writer.stackCount > 0 else { return }
        let root = writer.makeArray(fromStackIndex: 0)
        chunks.append(writer.serialized(root: root))
        writer = BinaryPropertyListWriter()
      }
      for entity in model.entities where !entity.isAbstract {
        if useRows {
          try reader.forEachObjectRow(of: entity.name, layout: layout) { row in
            writer.push(encoder.encode(row, manyToMany: [], into: &writer))
            if writer.stackCount == 500 { flush() }
          }
        } else {
          try reader.forEachObject(of: entity.name, layout: layout) { record in
            writer.push(encoder.encode(record, manyToMany: [], into: &writer))
            if writer.stackCount == 500 { flush() }
          }
        }
        flush()
      }
      if useRows { result.0 = chunks } else { result.1 = chunks }
    }
    return result
  }

  @Test(arguments: SampleWorkload.allCases)
  func aSampleStoreEncodesTheSameFromRowsAsFromRecords(workload: SampleWorkload) throws {
    let directory = try TemporaryDirectory()
    let store = directory.path("sample.sqlite").path
    try workload.generate(at: store, objects: 1_500)
    let model = try #require(try CoreDataStore(path: store).cachedModel())
    let (rows, records) = try Self.chunks(store, model: model)
    #expect(!rows.isEmpty)
    #expect(rows == records)
  }

  @Test(
    .enabled(if: SharedFixtures.isAvailable, SharedFixtures.skipNote),
    arguments: FixtureStore.withModelCache)
  func aFixtureStoreEncodesTheSameFromRowsAsFromRecords(fixture: FixtureStore) throws {
    let directory = try TemporaryDirectory()
    let store = try SharedFixtures.copyStore(fixture.store, into: directory.url).path
    let model = try #require(try CoreDataStore(path: store).cachedModel())
    let (rows, records) = try Self.chunks(store, model: model)
    #expect(rows == records)
  }
}
