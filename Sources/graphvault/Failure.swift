import ArgumentParser
import Foundation
import GraphVault

/// Turns a failure into a message on standard error and the documented exit status.
///
/// With `--json`, standard output also gets one JSON document, `{"ok": false, "status": N,
/// "error": "…"}`, so a monitor reading it always finds one document, success or not.
enum Failure {
  /// What a failed command prints as JSON.
  struct Document: Encodable {
    let ok = false
    let status: Int32
    let error: String
  }

  /// Runs `body`; a ``VaultError`` becomes a message on standard error, the JSON document
  /// with `json` (on standard error when standard output carries data: `--output -`), and the
  /// documented exit status.
  static func exitOnError(
    json: Bool = false, dataOnStandardOutput: Bool = false, _ body: () throws -> Void
  ) throws {
    do {
      try body()
    } catch let error as VaultError {
      let status = ExitStatus(error).rawValue
      FileHandle.standardError.write(Data("graphvault: \(error)\n".utf8))
      if json {
        try? Output.json(
          Document(status: status, error: error.detail), toStandardError: dataOnStandardOutput)
      }
      throw ExitCode(status)
    }
  }
}

/// Writes JSON documents on standard output.
enum Output {
  /// Reports a written archive: its summary as JSON with `--json`, else its path unless
  /// `--quiet`. When the archive itself went to standard output (`-`), nothing else goes
  /// there: the JSON goes to standard error and the path is not printed.
  static func archive<T: Encodable>(
    _ result: T, path: String, output: String?, options: GlobalOptions
  ) throws {
    let toStandardError = output == "-"
    if options.json {
      try json(result, toStandardError: toStandardError)
    } else if !options.quiet && !toStandardError {
      print(path)
    }
  }

  /// Writes `value` as one JSON document. A document that is an object gets `"ok": true`
  /// unless it says itself (a failure's document, a verify's report), so that a monitor finds
  /// `ok` in every document; and the run's warnings beside its keys (a list stays a list).
  static func json<T: Encodable>(_ value: T, toStandardError: Bool = false) throws {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
    let handle = toStandardError ? FileHandle.standardError : FileHandle.standardOutput
    var bytes = try encoder.encode(value)
    if bytes.first == UInt8(ascii: "{") {
      let keys = (try? JSONSerialization.jsonObject(with: bytes)) as? [String: Any]
      let ok: Bool? = keys?["ok"] == nil ? true : nil
      if ok != nil || !Warnings.all.isEmpty {
        bytes = try encoder.encode(
          Stamped(value: value, ok: ok, warnings: Warnings.all.isEmpty ? nil : Warnings.all))
      }
    }
    handle.write(bytes)
    handle.write(Data("\n".utf8))
  }

  /// A document with `ok` and the run's warnings added to its keys.
  private struct Stamped<T: Encodable>: Encodable {
    let value: T
    let ok: Bool?
    let warnings: [String]?

    enum Key: String, CodingKey { case ok, warnings }

    func encode(to encoder: any Encoder) throws {
      try value.encode(to: encoder)
      var container = encoder.container(keyedBy: Key.self)
      try container.encodeIfPresent(ok, forKey: .ok)
      try container.encodeIfPresent(warnings, forKey: .warnings)
    }
  }
}

/// Times given on the command line: ISO 8601 with a zone (`Z` or `±hh:mm`), seconds optional
/// fractions.
enum TimeOption {
  static func parse(_ text: String) -> Date? {
    for withFractions in [false, true] {
      let formatter = ISO8601DateFormatter()
      formatter.formatOptions =
        withFractions ? [.withInternetDateTime, .withFractionalSeconds] : [.withInternetDateTime]
      if let date = formatter.date(from: text) { return date }
    }
    return nil
  }
}
