import Foundation

#if canImport(FoundationXML)
  import FoundationXML
#endif

/// The text of the elements of an S3 XML response, in document order, by element name, and
/// grouped by the repeated records a listing holds (`Contents`, `Upload`, `Part`).
struct S3XML {
  /// One element with text: its name and its text.
  private(set) var elements: [(name: String, text: String)] = []
  /// The records: for each element named in `records`, the texts of its children by name.
  private(set) var records: [[String: String]] = []

  /// The first text of an element named `name`.
  func first(_ name: String) -> String? { elements.first { $0.name == name }?.text }

  /// Parses `data`; each element named in `records` becomes a record of its children.
  static func parse(_ data: Data, records: Set<String> = []) -> S3XML {
    let delegate = Collector(records: records)
    let parser = XMLParser(data: data)
    parser.delegate = delegate
    parser.parse()
    return delegate.document
  }

  private final class Collector: NSObject, XMLParserDelegate {
    let recordNames: Set<String>
    var document = S3XML()
    var text = ""
    var record: [String: String]?
    var depth = 0
    var recordDepth = 0

    init(records: Set<String>) { recordNames = records }

    func parser(
      _ parser: XMLParser, didStartElement name: String, namespaceURI: String?,
      qualifiedName: String?, attributes: [String: String] = [:]
    ) {
      depth += 1
      text = ""
      if recordNames.contains(name) && record == nil {
        record = [:]
        recordDepth = depth
      }
    }

    func parser(_ parser: XMLParser, foundCharacters string: String) { text += string }

    func parser(
      _ parser: XMLParser, didEndElement name: String, namespaceURI: String?,
      qualifiedName: String?
    ) {
      if record != nil && depth == recordDepth {
        document.records.append(record!)
        record = nil
      } else {
        document.elements.append((name, text))
        if record != nil && depth == recordDepth + 1 { record![name] = text }
      }
      text = ""
      depth -= 1
    }
  }
}
