import Foundation
import JSON

/// An export file read as a stream: its model (when it carries one) and its objects one at a
/// time, each with its place (1-based position and line). Reads every layout `export` writes
/// and what people write by hand: `{"model": …, "objects": [ … ]}`, a bare list of objects, or
/// JSON Lines (optionally a `{"model": …}` line first).
struct ObjectFile {
  /// An object and where it is.
  struct Entry {
    /// Its 1-based position among the file's objects.
    let position: Int
    /// The line it starts on.
    let line: Int
    /// The object.
    let value: JSONValue

    /// `object 12 (line 340)`, for messages.
    var place: String { "object \(position) (line \(line))" }
  }

  /// The file's path.
  let path: String
  /// Where the bytes read are counted, when a display watches.
  var meter: ProgressMeter?

  /// Bytes read at a time.
  static let chunkSize = 1 << 16

  /// The model descriptor the file carries, or nil.
  /// - Throws: ``VaultError`` (65) when the file is not JSON of a known layout.
  func model() throws -> JSONValue? {
    var model: JSONValue?
    do {
      // The model comes first in what export writes: stop reading there.
      try walk(wantObjects: false) {
        model = $0
        throw Found()
      } object: { _ in
      }
    } catch is Found {}
    return model
  }

  /// Ends a walk early.
  private struct Found: Error {}

  /// Calls `body` with each object in file order.
  /// - Throws: ``VaultError`` (65) when the file is not JSON of a known layout, or what `body`
  ///   throws.
  func forEachObject(_ body: (Entry) throws -> Void) throws {
    try walk(wantObjects: true) { _ in
    } object: {
      try body($0)
    }
  }

  private func walk(
    wantObjects: Bool, model: (JSONValue) throws -> Void, object: (Entry) throws -> Void
  ) throws {
    guard let handle = FileHandle(forReadingAtPath: path) else {
      throw VaultError(.inputMissing, "cannot open the file (\(path))")
    }
    defer { try? handle.close() }
    let meter = meter
    let reader = JSONReader { () throws(JSONError) -> [UInt8]? in
      do {
        guard let data = try handle.read(upToCount: Self.chunkSize), !data.isEmpty else {
          return nil
        }
        meter?.add(bytes: Int64(data.count))
        return [UInt8](data)
      } catch {
        throw JSONError("cannot read: \(error)", line: 0, column: 0)
      }
    }
    var position = 0
    func next(_ value: () throws -> JSONValue) throws {
      position += 1
      let line = reader.line
      let read = try value()
      if wantObjects { try object(Entry(position: position, line: line, value: read)) }
    }
    do {
      switch try reader.peekSignificant() {
      case UInt8(ascii: "["):
        try objects(reader, next)
      case UInt8(ascii: "{"):
        let line = reader.line
        try reader.beginObject()
        var members: [(key: String, value: JSONValue)] = []
        var sawModel = false
        var sawObjects = false
        while let key = try reader.nextKey() {
          switch key {
          case "model" where members.isEmpty && !sawModel:
            try model(try reader.value())
            sawModel = true
          case "objects" where members.isEmpty && !sawObjects:
            sawObjects = true
            try objects(reader, next)
          default:
            guard !sawModel && !sawObjects else {
              throw VaultError(
                .invalidInput,
                "line \(reader.line): unexpected member \"\(key)\"; the document holds \"model\" and \"objects\" (\(path))"
              )
            }
            members.append((key, try reader.value()))
          }
        }
        if !members.isEmpty {
          // JSON Lines without a model line: that was the first object.
          position += 1
          if wantObjects {
            try object(Entry(position: position, line: line, value: .object(members)))
          }
        }
        if !sawObjects {
          // JSON Lines: one object a line to the end.
          while try !reader.isAtEnd() {
            try next { try reader.value() }
          }
        }
      case nil:
        throw VaultError(.invalidInput, "the file is empty (\(path))")
      default:
        throw VaultError(
          .invalidInput,
          "line \(reader.line), column \(reader.column): expected an object or a list of objects (\(path))"
        )
      }
      try reader.end()
    } catch let error as JSONError {
      throw VaultError(.invalidInput, "\(error) (\(path))")
    }
  }

  private func objects(_ reader: JSONReader, _ next: (() throws -> JSONValue) throws -> Void)
    throws
  {
    try reader.beginArray()
    while try reader.nextElement() {
      try next { try reader.value() }
    }
  }
}
