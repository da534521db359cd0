import Foundation
import GraphVault

/// Writes a diff's changes as they come: lines for people, or one JSON document.
final class ChangePrinter {
  private let json: Bool
  private let quiet: Bool
  private let display: ValueDisplay
  private var first = true
  private var buffer = ""
  private let encoder: JSONEncoder = {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    return encoder
  }()

  init(json: Bool, quiet: Bool, display: ValueDisplay) {
    self.json = json
    self.quiet = quiet
    self.display = display
  }

  func print(_ change: ObjectChange) throws {
    if json {
      buffer += first ? "{\n  \"changes\": [\n    " : ",\n    "
      buffer += String(decoding: try encoder.encode(change), as: UTF8.self)
    } else if !quiet {
      buffer += lines(change)
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
      for note in summary.notes { buffer += "(\(note))\n" }
      for (entity, counts) in summary.entities.sorted(by: { $0.key < $1.key }) {
        let differing = counts.inserted + counts.deleted + counts.changed
        buffer +=
          differing == 0
          ? "\(entity): equal (\(counts.unchanged) objects)\n"
          : "\(entity): \(counts.inserted) inserted, \(counts.deleted) deleted, \(counts.changed) changed, \(counts.unchanged) unchanged\n"
      }
      if !summary.renames.isEmpty {
        buffer +=
          "likely renamed (a deletion and an insertion with most values equal; not decided):\n"
        for rename in summary.renames {
          buffer +=
            "  \(rename.entity) \(rename.old) -> \(rename.new)  (\(rename.equal) of \(rename.compared) values equal)\n"
        }
      }
    }
    flush()
  }

  private func flush() {
    FileHandle.standardOutput.write(Data(buffer.utf8))
    buffer.removeAll(keepingCapacity: true)
  }

  /// `M Book p5` and a line per changed property, or `- Book p17  title="Dune", …` on one
  /// line (key attributes first, or the `--show` properties).
  func lines(_ change: ObjectChange) -> String {
    switch change.kind {
    case .changed:
      var text = "M \(change.entity) \(change.key)\n"
      for property in change.properties {
        let (old, new) = (property.old ?? "nil", property.new ?? "nil")
        text += "    \(property.name): \(display.value(old)) -> \(display.value(new))\n"
      }
      return text
    case .inserted, .deleted:
      let sign = change.kind == .inserted ? "+" : "-"
      // The service put the key attributes first.
      let shown = display.line(
        ordered: change.properties.map { ($0.name, $0.new ?? $0.old ?? "nil") })
      return "\(sign) \(change.entity) \(change.key)\(shown.isEmpty ? "" : "  " + shown)\n"
    }
  }
}
