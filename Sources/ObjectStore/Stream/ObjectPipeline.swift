/// Runs an object stream: the source on a second thread, the stages and the sink on this one,
/// so that reading, checking and decoding (or, in a backup, reading and encoding) take one
/// core while the sink writes on the other.
///
/// ```swift
/// try ObjectPipeline(source: scanner, stage: HeadStage(\.storeHead).then(migration), sink: store)
///   .run()
/// ```
package struct ObjectPipeline<Head, Output> {
  /// Where the objects come from.
  package let source: any ObjectSource<Head>
  /// What they go through.
  package let stage: any ObjectStage<Head, Output>
  /// Where they go.
  package let sink: any ObjectSink<Output>
  /// How many events the source may read ahead.
  package var depth = 1

  /// A pipeline from `source` through `stage` into `sink`.
  package init(
    source: any ObjectSource<Head>, stage: any ObjectStage<Head, Output>,
    sink: any ObjectSink<Output>
  ) {
    self.source = source
    self.stage = stage
    self.sink = sink
  }

  /// Runs the stream to its end.
  ///
  /// `failed` decides what an error of a stage or the sink does, given the place in the source
  /// it happened at: thrown on (the default), or recorded by a collecting caller, which goes
  /// on. The stages' and the sink's `finish` run only when the source ended sound.
  /// - Throws: what the source throws (its first problem, unless it collects them), and what
  ///   `failed` throws.
  package func run(failed: (any Error, String) throws -> Void = { error, _ in throw error })
    throws
  {
    let events = Prefetcher(depth: depth) { [source] hand in
      try source.produce { try hand($0) }
    }
    defer { events.cancel() }
    var place = source.headPlace
    while let event = try events.next() {
      do {
        switch event {
        case .begin(let head):
          try sink.begin(try stage.begin(head))
        case .objects(let chunk, let at):
          place = at
          for passed in try stage.pass(chunk) { try sink.take(passed, from: at) }
        case .rows(let rows, let table, let at):
          place = at
          let kept = try stage.pass(rows: rows, of: table)
          if !kept.isEmpty { try sink.take(rows: kept, of: table, from: at) }
        }
      } catch {
        try failed(error, place)
      }
    }
    guard source.isSound else { return }
    do {
      for held in try stage.finish() { try sink.take(held, from: "the end") }
      try sink.finish()
    } catch {
      try failed(error, "the objects")
    }
  }
}

extension ObjectPipeline where Head == Output {
  /// A pipeline from `source` straight into `sink`.
  package init(source: any ObjectSource<Head>, sink: any ObjectSink<Head>) {
    self.init(source: source, stage: HeadStage { $0 }, sink: sink)
  }
}
