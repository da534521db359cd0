import Foundation
import ObjectModel
import Testing

@testable import ObjectStore

/// The object stream's pipeline, with a source, stages and a sink written here: what reaches
/// the sink, in what order, on which thread, and what a failure does.
@Suite("Object pipeline")
struct ObjectPipelineTests {
  /// A source giving a head, then `chunks` chunks of `size` books (keys in order) and a table's
  /// rows; it can fail at a chunk, and says whether it ended sound.
  final class ListSource: PulledSource {
    let chunks: Int
    let size: Int
    let failingAt: Int?
    var sound = true
    private(set) var given = 0
    private(set) var threads = Set<String>()
    private var step = 0

    init(chunks: Int, size: Int = 3, failingAt: Int? = nil) {
      self.chunks = chunks
      self.size = size
      self.failingAt = failingAt
    }

    var isSound: Bool { sound }

    func next() throws -> StreamEvent<String>? {
      threads.insert(ObjectPipelineTests.thread)
      defer { step += 1 }
      if step == 0 { return .begin("library") }
      let chunk = step - 1
      if chunk == failingAt { throw StoreError(.invalidValue, "chunk \(chunk) is damaged") }
      if chunk < chunks {
        given += 1
        let keys = (0..<size).map { Int64(chunk * size + $0 + 1) }
        return .objects(
          .columns(ObjectBatch(entity: "Book", primaryKeys: keys, versions: keys.map { _ in 1 })),
          place: "objects/Book/\(chunk + 1)")
      }
      if chunk == chunks {
        return .rows([["ZNAME": .string("history")]], table: "ACHANGE", place: "tables/ACHANGE/1")
      }
      return nil
    }
  }

  /// A source that runs a loop of its own and hands each event on (as a backup does inside its
  /// read transaction): what it handed on, and how its loop ended.
  final class PushingSource: ObjectSource {
    typealias Head = String
    let chunks: Int
    private(set) var handed = 0
    private(set) var stoppedBy: (any Error)?
    private(set) var threads = Set<String>()
    private(set) var isSound = false

    init(chunks: Int) { self.chunks = chunks }

    func produce(_ emit: (StreamEvent<String>) throws -> Void) throws {
      threads.insert(ObjectPipelineTests.thread)
      do {
        try emit(.begin("pushed"))
        for chunk in 0..<chunks {
          let keys = [Int64(chunk + 1)]
          try emit(
            .objects(
              .columns(ObjectBatch(entity: "Tag", primaryKeys: keys, versions: [1])),
              place: "objects/Tag/\(chunk + 1)"))
          handed += 1
        }
        isSound = true
      } catch {
        stoppedBy = error
        throw error
      }
    }
  }

  /// A sink that records what it is given, and can fail at one place.
  final class RecordingSink: ObjectSink {
    let failingAt: String?
    private(set) var log: [String] = []
    private(set) var threads = Set<String>()

    init(failingAt: String? = nil) { self.failingAt = failingAt }

    func begin(_ head: String) throws { log.append("begin \(head)") }

    func take(_ chunk: ObjectChunk, from place: String) throws {
      threads.insert(ObjectPipelineTests.thread)
      if place == failingAt { throw StoreError(.database, "the disk is full at \(place)") }
      guard case .columns(let batch) = chunk else {
        log.append("\(chunk.count) objects from \(place)")
        return
      }
      log.append("\(batch.entity) \(batch.primaryKeys.map(String.init).joined(separator: ","))")
    }

    func take(rows: [[String: AttributeValue]], of table: String, from place: String) throws {
      log.append("\(rows.count) rows of \(table)")
    }

    func finish() throws { log.append("finish") }
  }

  /// A stage that renames the head, drops books with an even first key, splits the others in
  /// two, keeps history rows back and gives one chunk when the stream ends.
  final class SplittingStage: ObjectStage {
    func begin(_ head: String) throws -> String { head.uppercased() }

    func pass(_ chunk: ObjectChunk) throws -> [ObjectChunk] {
      guard case .columns(let batch) = chunk, batch.primaryKeys[0] % 2 == 1 else { return [] }
      let half = batch.count / 2
      return [
        .columns(part(batch, 0..<half)), .columns(part(batch, half..<batch.count)),
      ]
    }

    func pass(rows: [[String: AttributeValue]], of table: String) throws
      -> [[String: AttributeValue]]
    { table.hasPrefix("A") ? [] : rows }

    func finish() throws -> [ObjectChunk] {
      [.objects([ObjectValue(entity: "Tag", primaryKey: 1)], links: [])]
    }

    private func part(_ batch: ObjectBatch, _ range: Range<Int>) -> ObjectBatch {
      ObjectBatch(
        entity: batch.entity, primaryKeys: Array(batch.primaryKeys[range]),
        versions: Array(batch.versions[range]))
    }
  }

  static var thread: String { "\(pthread_self())" }

  @Test func theSinkGetsTheSourcesEventsInOrderAndIsFinishedOnceTheSourceEndedSound() throws {
    let sink = RecordingSink()
    try ObjectPipeline(source: ListSource(chunks: 2), sink: sink).run()
    #expect(
      sink.log == ["begin library", "Book 1,2,3", "Book 4,5,6", "1 rows of ACHANGE", "finish"])
  }

  @Test func aStageChangesTheHeadAndTheChunksAndWhatItHoldsArrivesBeforeTheSinkFinishes()
    throws
  {
    let sink = RecordingSink()
    try ObjectPipeline(source: ListSource(chunks: 3), stage: SplittingStage(), sink: sink).run()
    #expect(
      sink.log == [
        "begin LIBRARY", "Book 1", "Book 2,3", "Book 7", "Book 8,9", "1 objects from the end",
        "finish",
      ])
  }

  @Test func twoStagesRunOneAfterTheOther() throws {
    let sink = RecordingSink()
    let stage = HeadStage { (head: String) in head + "!" }.then(SplittingStage())
    try ObjectPipeline(source: ListSource(chunks: 1, size: 2), stage: stage, sink: sink).run()
    #expect(sink.log == ["begin LIBRARY!", "Book 1", "Book 2", "1 objects from the end", "finish"])
  }

  @Test func aSourceRunningItsOwnLoopHandsItsEventsOnInOrderFromAThreadOfItsOwn() throws {
    let source = PushingSource(chunks: 3)
    let sink = RecordingSink()
    try ObjectPipeline(source: source, sink: sink).run()
    #expect(sink.log == ["begin pushed", "Tag 1", "Tag 2", "Tag 3", "finish"])
    #expect(source.threads.count == 1)
    #expect(!source.threads.contains(Self.thread))
  }

  @Test func aSourceRunningItsOwnLoopStopsAtItsNextHandOverOnceTheSinkFailed() throws {
    let source = PushingSource(chunks: 1_000)
    let sink = RecordingSink(failingAt: "objects/Tag/2")
    #expect(throws: StoreError.self) { try ObjectPipeline(source: source, sink: sink).run() }
    // The pipeline waited for the loop to end: it stopped where it stood, a chunk or two ahead
    // of the sink, and is not sound.
    #expect(source.stoppedBy is CancellationError)
    #expect(source.handed < 5)
    #expect(!source.isSound)
    #expect(!sink.log.contains("finish"))
  }

  @Test func theSourceIsReadOnAThreadOfItsOwnWhileTheSinkWritesOnTheCallers() throws {
    let source = ListSource(chunks: 4)
    let sink = RecordingSink()
    try ObjectPipeline(source: source, sink: sink).run()
    #expect(sink.threads == [Self.thread])
    #expect(source.threads.count == 1)
    #expect(!source.threads.contains(Self.thread))
  }

  @Test func aSinksFailureIsThrownAndTheSourceReadsNoFurtherThanItsDepthAhead() throws {
    let source = ListSource(chunks: 50)
    let sink = RecordingSink(failingAt: "objects/Book/2")
    let error = try #require(throws: StoreError.self) {
      try ObjectPipeline(source: source, sink: sink).run()
    }
    #expect(error.detail == "the disk is full at objects/Book/2")
    #expect(sink.log == ["begin library", "Book 1,2,3"])
    // The chunk failing, the one ready behind it and the one being read when it stopped.
    #expect(source.given <= 4)
  }

  @Test func aCollectingCallerHearsEachFailureWithItsPlaceAndTheStreamGoesOn() throws {
    let sink = RecordingSink(failingAt: "objects/Book/2")
    var heard: [String] = []
    try ObjectPipeline(source: ListSource(chunks: 3), sink: sink).run { error, place in
      heard.append("\(place): \((error as? StoreError)?.detail ?? "\(error)")")
    }
    #expect(heard == ["objects/Book/2: the disk is full at objects/Book/2"])
    #expect(sink.log.last == "finish")
    #expect(sink.log.contains("Book 7,8,9"))
  }

  @Test func theSourcesFailureIsThrownAfterTheChunksBeforeIt() throws {
    let sink = RecordingSink()
    let error = try #require(throws: StoreError.self) {
      try ObjectPipeline(source: ListSource(chunks: 5, failingAt: 2), sink: sink).run()
    }
    #expect(error.detail == "chunk 2 is damaged")
    #expect(sink.log == ["begin library", "Book 1,2,3", "Book 4,5,6"])
  }

  @Test func neitherStagesNorSinkAreFinishedWhenTheSourceEndedUnsound() throws {
    let source = ListSource(chunks: 1)
    source.sound = false
    let sink = RecordingSink()
    try ObjectPipeline(source: source, stage: SplittingStage(), sink: sink).run()
    #expect(sink.log == ["begin LIBRARY", "Book 1", "Book 2,3"])
  }
}
