import ArchiveStorage
import DurableIO
import Foundation
import JSON
import ObjectModel
import ObjectStore
import PropertyList

/// How exported objects are laid out.
public enum ExportFormat: String, Codable, Sendable, CaseIterable {
  /// One pretty-printed document: `{"model": …, "objects": [ … ]}`.
  case json
  /// JSON Lines: the model on the first line (`{"model": …}`), then one object a line.
  case jsonl
}

/// What an export wrote.
public struct ExportResult: Codable, Sendable {
  /// The file written (`-` for standard output).
  public let output: String
  /// The layout.
  public let format: ExportFormat
  /// Objects per entity.
  public let objects: [String: Int]
  /// Bytes written.
  public let bytes: Int64
}

/// `graphvault export`: the objects of a store or an archive as class-tagged dictionaries in
/// JSON (see ``ObjectJSON``), with the model they follow, for people to read, diff and edit and
/// for `graphvault import` to load.
///
/// Objects come entity by entity (by name), each in primary-key order, every key sorted, so the
/// same store always gives the same bytes. Derived and transient attributes are left out (the
/// store computes the one, never keeps the other), as are tables outside the model (persistent
/// history). The store is read in one read transaction and never written.
public enum ExportService {
  /// What to export, and where.
  public struct Options: Sendable {
    /// The layout.
    public var format: ExportFormat = .json
    /// The entities to export (each with its sub-entities); all when empty.
    public var entities: [String] = []
    /// The model, for stores without `Z_MODELCACHE`.
    public var modelPath: String?
    /// The file to write, or `-` for standard output.
    public var output = "-"
    /// Replace a file already at ``output`` (never the file being read).
    public var force = false
    /// The password of an encrypted archive.
    public var password: PasswordSource?
    /// Read an archive that is not encrypted although a password was given.
    public var allowUnencrypted = false
    /// Where the run reports how far it has got (an archive read first, then the objects
    /// exported of the store's count, and the bytes written).
    public var meter: ProgressMeter?

    /// Every entity as pretty JSON on standard output.
    public init() {}
  }

  /// The name an export gives a model read from a store's `Z_MODELCACHE`.
  public static let cacheModelName = "StoreModel"

  /// Bytes gathered before each write.
  static let chunkSize = 1 << 16

  /// Exports the store or archive at `source`.
  /// - Throws: ``VaultError``: 64 for an unknown `--entity` or an output that is the file being
  ///   read (standard input's included), 66 for a missing source, 73 for an existing output
  ///   without ``Options/force``.
  public static func export(source path: Location, options: Options) throws(VaultError)
    -> ExportResult
  {
    try vault {
      if options.output != StandardStream.name {
        if let file = path.readFile, StoreDestination.sameFile(file, options.output) {
          throw VaultError(
            .usage,
            "the output is the file being read: the export would replace it (\(options.output))")
        }
        if !options.force && FileManager.default.fileExists(atPath: options.output) {
          throw VaultError(
            .destinationExists, "the file exists (use --force to replace it) (\(options.output))")
        }
      }
      let source = try SourceStore(
        path, password: options.password, allowingUnencrypted: options.allowUnencrypted,
        meter: options.meter)
      options.meter?.startPhase("")
      // The scratch folder (a restored archive) must outlive every use of its store.
      defer { withExtendedLifetime(source) {} }
      // A model read from the store is named the same whatever the file is called, so the
      // same objects always give the same text.
      let store = try CoreDataStore(path: source.path)
      let model = try source.model(
        of: store, modelPath: options.modelPath, cacheName: cacheModelName)
      let entities = try selectedEntities(model, options.entities)
      var transformers = ValueTransformerRegistry.standard
      transformers.refusesUnknownNames = false
      let context = try ObjectContext(
        storePath: source.path, model: model, transformers: transformers, readOnly: true)
      let sink = try Sink(options.output, meter: options.meter)
      var counts: [String: Int] = [:]
      do {
        try context.reading {
          if let meter = options.meter {
            let all = try store.objectCounts(layout: store.layout(for: model))
            meter.setTotal(objects: entities.reduce(0) { $0 + all[$1, default: 0] })
          }
          var total = 0
          try write(
            model: model, context: context, entities: entities, format: options.format, into: sink
          ) {
            if counts[$0] == nil { options.meter?.begin($0) }
            counts[$0, default: 0] += 1
            total += 1
            if total & 1023 == 0 { options.meter?.add(objects: 1024) }
          }
          options.meter?.add(objects: total & 1023)
        }
        try sink.finish()
      } catch {
        sink.abandon()
        throw error
      }
      return ExportResult(
        output: options.output, format: options.format, objects: counts, bytes: sink.written)
    }
  }

  /// The concrete entities to export, by name.
  static func selectedEntities(_ model: ObjectModel, _ names: [String]) throws -> [String] {
    var chosen = Set<String>()
    for name in names {
      guard model.entity(named: name) != nil else {
        throw VaultError(
          .usage,
          "--entity \(name): the model has no such entity (it has \(model.entities.map(\.name).sorted().joined(separator: ", ")))"
        )
      }
      chosen.formUnion(model.hierarchy(from: name).map(\.name))
    }
    return model.entities.filter { !$0.isAbstract && (names.isEmpty || chosen.contains($0.name)) }
      .map(\.name).sorted()
  }

  private static func write(
    model: ObjectModel, context: ObjectContext, entities: [String], format: ExportFormat,
    into sink: Sink, counted: (String) -> Void
  ) throws {
    let converter = ObjectJSON(model: model)
    let descriptor = PropertyListJSON.json(ModelDescriptor.encode(model))
    var first = true
    switch format {
    case .json:
      sink.append("{\n  \"model\": ")
      sink.append(JSONWriter.encode(descriptor, style: .pretty, level: 1))
      sink.append(",\n  \"objects\": [")
    case .jsonl:
      sink.append(JSONWriter.encode(.object([("model", descriptor)]), style: .compact))
      sink.append("\n")
    }
    for entity in entities {
      try context.forEachObject(of: entity, includesSubentities: false) { object in
        let json = converter.json(try object.dictionary())
        switch format {
        case .json:
          sink.append(first ? "\n    " : ",\n    ")
          sink.append(JSONWriter.encode(json, style: .pretty, level: 2))
        case .jsonl:
          sink.append(JSONWriter.encode(json, style: .compact))
          sink.append("\n")
        }
        first = false
        counted(entity)
        try sink.flushIfFull()
      }
    }
    if format == .json { sink.append(first ? "]\n}\n" : "\n  ]\n}\n") }
  }

  /// Where the text goes: a file that appears under its name only when complete (mode 0600,
  /// as exported data may be private), or standard output.
  final class Sink {
    private let file: PendingFile?
    private let standardOutput: (any ArchiveOutput)?
    private var buffer: [UInt8] = []
    private(set) var written: Int64 = 0
    private let meter: ProgressMeter?

    init(_ output: String, meter: ProgressMeter? = nil) throws {
      self.meter = meter
      let toStandardOutput = output == StandardStream.name
      file = toStandardOutput ? nil : try PendingFile(creating: output, mode: 0o600)
      standardOutput = toStandardOutput ? StandardStream.output() : nil
    }

    func append(_ text: String) { buffer.append(contentsOf: text.utf8) }
    func append(_ bytes: [UInt8]) { buffer.append(contentsOf: bytes) }

    func flushIfFull() throws {
      if buffer.count >= ExportService.chunkSize { try flush() }
    }

    func flush() throws {
      defer { buffer.removeAll(keepingCapacity: true) }
      written += Int64(buffer.count)
      meter?.add(bytes: Int64(buffer.count))
      try buffer.withUnsafeBytes { bytes in
        try file?.write(bytes)
        try standardOutput?.write(bytes)
      }
    }

    func finish() throws {
      try flush()
      try file?.publish(replacing: true)
    }

    func abandon() { file?.abandon() }
  }
}
