import ObjectModel
import PropertyList

extension ObjectDictionary: CustomStringConvertible {
  /// One line a person can read: `Book/p12 {title: "Dune", cover: <48213 bytes: 89504e47…>,
  /// author: Writer/p3, pages: [Page/p1, Page/p2]}`, names sorted, binary values by their
  /// size and first bytes rather than every byte.
  public var description: String {
    var parts: [String] = []
    for (name, value) in attributes.sorted(by: { $0.key < $1.key }) {
      parts.append("\(name): \(value.map(Self.text) ?? "nil")")
    }
    for (name, reference) in toOne.sorted(by: { $0.key < $1.key }) {
      parts.append("\(name): \(reference.map(\.description) ?? "nil")")
    }
    for (name, references) in toMany.sorted(by: { $0.key < $1.key }) {
      parts.append("\(name): [\(references.map(\.description).joined(separator: ", "))]")
    }
    for (key, value) in extended.sorted(by: { $0.key < $1.key }) {
      parts.append("extended.\(key): \(value.map { "\($0)" } ?? "nil")")
    }
    let name = primaryKey.map { "\(entity)/p\($0)" } ?? "\(entity) (new)"
    return "\(name) {\(parts.joined(separator: ", "))}"
  }

  /// A value as it reads in ``description``: strings quoted, binary by size and first bytes.
  static func text(_ value: AttributeValue) -> String {
    switch value {
    case .string(let text), .decimal(let text), .uri(let text): return "\"\(text)\""
    case .integer(let number): return String(number)
    case .double(let number), .date(let number): return String(number)
    case .bool(let flag): return flag ? "YES" : "NO"
    case .uuid(let bytes), .data(let bytes), .transformed(let bytes):
      return AttributeValue.summary(ofBinary: bytes)
    case .composite(let elements):
      let parts = elements.keys.sorted().map { "\($0): \(text(elements[$0]!))" }
      return "{" + parts.joined(separator: ", ") + "}"
    }
  }
}
