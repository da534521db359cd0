import Foundation
import PropertyList

/// A class-tagged record as a backup writes it: entity name, primary key, five attributes of
/// mixed types, two to-one references and a to-many list of references.
struct BenchRecord: Codable, Equatable {
  var entity: String
  var pk: Int64
  var title: String
  var price: Double
  var published: Date
  var isbn: Data
  var inPrint: Bool
  var author: Int64
  var publisher: Int64
  var pages: [Int64]

  enum CodingKeys: String, CodingKey {
    case entity = "class"
    case pk, title, price, published, isbn, inPrint, author, publisher, pages
  }

  static func make(_ i: Int) -> BenchRecord {
    BenchRecord(
      entity: i % 4 == 0 ? "GraphicNovel" : "Book",
      pk: Int64(i + 1),
      title: "The Book Number \(i) of the Series",
      price: Double(i % 5000) / 100 + 0.99,
      published: Date(timeIntervalSinceReferenceDate: 600_000_000 + Double(i) * 3600),
      isbn: Data((0..<16).map { UInt8(truncatingIfNeeded: i &* 31 &+ $0) }),
      inPrint: i % 3 != 0,
      author: Int64(i % 977 + 1),
      publisher: Int64(i % 53 + 1),
      pages: (0..<(i % 7)).map { Int64(i * 7 + $0 + 1) })
  }

  /// The record in Foundation's property-list object form.
  var foundationObject: NSDictionary {
    [
      "class": entity, "pk": NSNumber(value: pk), "title": title, "price": NSNumber(value: price),
      "published": published, "isbn": isbn, "inPrint": NSNumber(value: inPrint),
      "author": NSNumber(value: author), "publisher": NSNumber(value: publisher),
      "pages": pages.map { NSNumber(value: $0) } as NSArray,
    ]
  }
}

extension BenchRecord {
  /// Encodes the record straight into the writer, as the backup's graph walker does: no
  /// intermediate value tree.
  func write(to writer: inout BinaryPropertyListWriter) -> BinaryPropertyListWriter.Reference {
    let start = writer.stackCount
    writer.push(writer.string("class"))
    writer.push(writer.string(entity))
    writer.push(writer.string("pk"))
    writer.push(writer.integer(pk))
    writer.push(writer.string("title"))
    writer.push(writer.string(title))
    writer.push(writer.string("price"))
    writer.push(writer.real(price))
    writer.push(writer.string("published"))
    writer.push(
      writer.date(
        PropertyListDate(secondsSinceReferenceDate: published.timeIntervalSinceReferenceDate)))
    writer.push(writer.string("isbn"))
    writer.push(isbn.withUnsafeBytes { writer.data($0) })
    writer.push(writer.string("inPrint"))
    writer.push(writer.bool(inPrint))
    writer.push(writer.string("author"))
    writer.push(writer.integer(author))
    writer.push(writer.string("publisher"))
    writer.push(writer.integer(publisher))
    writer.push(writer.string("pages"))
    let pagesStart = writer.stackCount
    for page in pages { writer.push(writer.integer(page)) }
    writer.push(writer.makeArray(fromStackIndex: pagesStart))
    return writer.makeDictionary(fromStackIndex: start)
  }

  /// Reads a record back from a decoded value.
  init?(_ value: PropertyListValue) {
    guard case .dictionary(let d) = value,
      let entity = d["class"]?.stringValue, let pk = d["pk"]?.integerValue,
      let title = d["title"]?.stringValue, let price = d["price"]?.doubleValue,
      let published = d["published"]?.dateValue, let isbn = d["isbn"]?.dataValue,
      let inPrint = d["inPrint"]?.boolValue, let author = d["author"]?.integerValue,
      let publisher = d["publisher"]?.integerValue, let pages = d["pages"]?.arrayValue
    else { return nil }
    self.init(
      entity: entity, pk: pk, title: title, price: price,
      published: Date(timeIntervalSinceReferenceDate: published.secondsSinceReferenceDate),
      isbn: Data(isbn), inPrint: inPrint, author: author, publisher: publisher,
      pages: pages.compactMap(\.integerValue))
  }
}

extension BenchRecord {
  /// Decodes records straight from the list with the object-by-object reader (what a restore
  /// does): no value tree; keys are uniqued objects, so each key object is read once.
  static func decodeAll(from bytes: [UInt8]) throws -> [BenchRecord] {
    let reader = try BinaryPropertyListReader(bytes: bytes)
    var keys: [Int: CodingKeys] = [:]
    var result: [BenchRecord] = []
    let elements = try reader.arrayElements(of: reader.topObject)
    result.reserveCapacity(elements.count)
    for element in elements {
      var record = BenchRecord(
        entity: "", pk: 0, title: "", price: 0, published: Date(timeIntervalSinceReferenceDate: 0),
        isbn: Data(), inPrint: false, author: 0, publisher: 0, pages: [])
      for (keyIndex, valueIndex) in try reader.dictionaryEntries(of: element) {
        let key: CodingKeys
        if let known = keys[keyIndex] {
          key = known
        } else {
          guard let parsed = CodingKeys(rawValue: try reader.string(at: keyIndex)) else { continue }
          keys[keyIndex] = parsed
          key = parsed
        }
        switch key {
        case .pages:
          record.pages = try reader.arrayElements(of: valueIndex).map {
            try reader.scalar(at: $0).integerValue ?? 0
          }
        default:
          let value = try reader.scalar(at: valueIndex)
          switch key {
          case .entity: record.entity = value.stringValue ?? ""
          case .pk: record.pk = value.integerValue ?? 0
          case .title: record.title = value.stringValue ?? ""
          case .price: record.price = value.doubleValue ?? 0
          case .published:
            record.published = Date(
              timeIntervalSinceReferenceDate: value.dateValue?.secondsSinceReferenceDate ?? 0)
          case .isbn: record.isbn = Data(value.dataValue ?? [])
          case .inPrint: record.inPrint = value.boolValue ?? false
          case .author: record.author = value.integerValue ?? 0
          case .publisher: record.publisher = value.integerValue ?? 0
          case .pages: break
          }
        }
      }
      result.append(record)
    }
    return result
  }
}
