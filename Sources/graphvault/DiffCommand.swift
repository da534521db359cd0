import ArgumentParser
import Foundation
import GraphVault

/// `graphvault diff OLD NEW`: the objects inserted, deleted and changed between two archives
/// or stores.
struct DiffCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "diff",
    abstract: "Show the objects inserted, deleted and changed between two archives or stores.",
    discussion: """
      Each side is an archive (a file, - for standard input, or s3://BUCKET/KEY) or a store; \
      archives are verified and restored to private temporary stores first. Objects are matched \
      by primary key, or with --key ENTITY.ATTRIBUTE by an attribute (a natural key or a UUID) \
      when the sides' keys differ (a store rebuilt by an import, objects merged in). When the \
      two models differ, OLD is migrated into NEW's model first, as restore would.

      Each object that differs is a line: '+' inserted, '-' deleted (with its first values), 'M' \
      changed, followed by each changed property's old and new value (long values shortened); \
      relationships name their targets (Author/p3, or Author[name='Le Guin'] when Author has a \
      --key). A summary per entity follows. With --json, one document: {"changes": [...], \
      "summary": {...}}.

      Exits 0 when the sides are equal (within the selection), 1 when they differ, and with the \
      statuses below when something is wrong.
      """
  )

  @Argument(help: "The older archive or store.")
  var old: String

  @Argument(help: "The newer archive or store.")
  var new: String

  @Option(
    help: ArgumentHelp(
      "An entity to compare, with its sub-entities (repeatable; default: all).",
      valueName: "name"))
  var entity: [String] = []

  @Option(
    name: .customLong("where"),
    help: ArgumentHelp(
      "Compare only objects matching this Core Data predicate (with one --entity), on each side.",
      valueName: "predicate"))
  var predicate: String?

  @Option(
    help: ArgumentHelp(
      "Match ENTITY's objects (and name them in relationships) by ATTRIBUTE rather than primary key (repeatable).",
      valueName: "ENTITY.ATTRIBUTE"))
  var key: [String] = []

  @Option(
    help:
      "The model, for stores without Z_MODELCACHE; its versions are the migration path when the sides' models differ."
  )
  var model: String?

  @OptionGroup var reading: ReadingOptions
  @OptionGroup var options: GlobalOptions

  func run() throws {
    var differ = false
    try Failure.exitOnError(json: options.json) {
      var settings = DiffService.Options()
      settings.entities = entity
      settings.predicate = predicate
      settings.keys = key
      settings.modelPath = model
      settings.password = reading.password.source
      settings.allowUnencrypted = reading.allowUnencrypted
      let printer = ChangePrinter(json: options.json, quiet: options.quiet)
      let summary = try StatusLine(command: "diff", options: options, printsAsItGoes: true)
        .showing { meter in
          settings.meter = meter
          return try DiffService.diff(old: old, new: new, options: settings) {
            try printer.print($0)
          }
        }
      try printer.finish(summary)
      differ = !summary.equal
    }
    if differ { throw ExitCode(1) }
  }
}

/// Writes a diff's changes as they come: lines for people, or one JSON document.
final class ChangePrinter {
  private let json: Bool
  private let quiet: Bool
  private var first = true
  private var buffer = ""
  private let encoder: JSONEncoder = {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    return encoder
  }()

  init(json: Bool, quiet: Bool) {
    self.json = json
    self.quiet = quiet
  }

  func print(_ change: ObjectChange) throws {
    if json {
      buffer += first ? "{\n  \"changes\": [\n    " : ",\n    "
      buffer += String(decoding: try encoder.encode(change), as: UTF8.self)
    } else if !quiet {
      buffer += Self.lines(change)
    }
    first = false
    if buffer.utf8.count >= 1 << 16 { flush() }
  }

  func finish(_ summary: DiffSummary) throws {
    if json {
      buffer += first ? "{\n  \"changes\": [],\n  \"summary\": " : "\n  ],\n  \"summary\": "
      let pretty = JSONEncoder()
      pretty.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
      buffer +=
        String(decoding: try pretty.encode(summary), as: UTF8.self)
        .replacingOccurrences(of: "\n", with: "\n  ") + "\n}\n"
    } else if !quiet {
      if !first { buffer += "\n" }
      if let migrated = summary.migrated { buffer += "(\(summary.old) migrated: \(migrated))\n" }
      for (entity, counts) in summary.entities.sorted(by: { $0.key < $1.key }) {
        let differing = counts.inserted + counts.deleted + counts.changed
        buffer +=
          differing == 0
          ? "\(entity): equal (\(counts.unchanged) objects)\n"
          : "\(entity): \(counts.inserted) inserted, \(counts.deleted) deleted, \(counts.changed) changed, \(counts.unchanged) unchanged\n"
      }
    }
    flush()
  }

  private func flush() {
    FileHandle.standardOutput.write(Data(buffer.utf8))
    buffer.removeAll(keepingCapacity: true)
  }

  /// `M Book p5` and a line per property, or `- Book p17  title="Dune", …` on one line.
  static func lines(_ change: ObjectChange) -> String {
    switch change.kind {
    case .changed:
      var text = "M \(change.entity) \(change.key)\n"
      for property in change.properties {
        text += "    \(property.name): \(property.old ?? "nil") -> \(property.new ?? "nil")\n"
      }
      return text
    case .inserted, .deleted:
      let sign = change.kind == .inserted ? "+" : "-"
      var values = change.properties.map { "\($0.name)=\($0.new ?? $0.old ?? "nil")" }
        .joined(separator: ", ")
      if values.count > 100 { values = String(values.prefix(100)) + "…" }
      return "\(sign) \(change.entity) \(change.key)\(values.isEmpty ? "" : "  " + values)\n"
    }
  }
}
