import Foundation
import PropertyList

/// A binary property list written object by object, from the format's description (Apple's
/// `CFBinaryPList.c` comments, as `graphvault(1)` cites them) and not from graphvault's writer,
/// so that one object can be referenced from many places: what a forger does to make a small
/// list decode to a large tree.
///
/// ```swift
/// var list = SharingPropertyList()
/// let big = list.add(.string(String(repeating: "é", count: 30_000)))
/// let top = list.add(.array(Array(repeating: big, count: 15_000)))
/// let bytes = list.bytes(top: top)
/// ```
public struct SharingPropertyList {
  /// An object of the table; containers name other objects by index.
  public enum Object {
    case string(String)
    case integer(Int64)
    case real(Double)
    case bool(Bool)
    case date(Double)
    case data([UInt8])
    case uid(UInt64)
    case array([Int])
    case dictionary([(key: Int, value: Int)])
  }

  /// The objects, by index.
  public private(set) var objects: [Object] = []

  /// An empty table.
  public init() {}

  /// Adds `object` and returns its index.
  @discardableResult
  public mutating func add(_ object: Object) -> Int {
    objects.append(object)
    return objects.count - 1
  }

  /// Replaces object `index` (to make a container name other objects).
  public mutating func set(_ index: Int, _ object: Object) {
    objects[index] = object
  }

  /// Adds `value` and everything below it, each object once (nothing shared), and returns the
  /// index of its top object.
  @discardableResult
  public mutating func add(tree value: PropertyListValue) -> Int {
    switch value {
    case .null: return add(.data([]))
    case .bool(let v): return add(.bool(v))
    case .integer(let v): return add(.integer(v))
    case .real(let v): return add(.real(v))
    case .date(let v): return add(.date(v.secondsSinceReferenceDate))
    case .data(let v): return add(.data(v))
    case .string(let v): return add(.string(v))
    case .uid(let v): return add(.uid(v))
    case .array(let elements):
      let references = elements.map { add(tree: $0) }
      return add(.array(references))
    case .dictionary(let entries):
      let pairs = entries.keys.sorted().map { key in
        (key: add(.string(key)), value: add(tree: entries[key]!))
      }
      return add(.dictionary(pairs))
    }
  }

  /// A chain of `levels` arrays, each holding the next one twice, above `leaf`: `levels`
  /// objects that decode, copied, to 2^levels leaves.
  public mutating func doublingChain(levels: Int, above leaf: Int) -> Int {
    var node = leaf
    for _ in 0..<levels { node = add(.array([node, node])) }
    return node
  }

  /// The list's bytes, `top` its top object (4-byte references, 8-byte offsets).
  public func bytes(top: Int) -> [UInt8] {
    var out = Array("bplist00".utf8)
    var offsets: [Int] = []
    func header(_ marker: UInt8, _ count: Int) {
      if count < 15 {
        out.append(marker | UInt8(count))
      } else {
        out.append(marker | 0x0F)
        out.append(0x13)
        out.append(contentsOf: bigEndian(UInt64(count), 8))
      }
    }
    for object in objects {
      offsets.append(out.count)
      switch object {
      case .string(let text):
        if text.utf8.allSatisfy({ $0 < 0x80 }) {
          header(0x50, text.utf8.count)
          out.append(contentsOf: text.utf8)
        } else {
          let units = Array(text.utf16)
          header(0x60, units.count)
          for unit in units { out.append(contentsOf: bigEndian(UInt64(unit), 2)) }
        }
      case .integer(let value):
        out.append(0x13)
        out.append(contentsOf: bigEndian(UInt64(bitPattern: value), 8))
      case .real(let value):
        out.append(0x23)
        out.append(contentsOf: bigEndian(value.bitPattern, 8))
      case .bool(let value): out.append(value ? 0x09 : 0x08)
      case .date(let seconds):
        out.append(0x33)
        out.append(contentsOf: bigEndian(seconds.bitPattern, 8))
      case .data(let bytes):
        header(0x40, bytes.count)
        out.append(contentsOf: bytes)
      case .uid(let value):
        out.append(0x87)
        out.append(contentsOf: bigEndian(value, 8))
      case .array(let references):
        header(0xA0, references.count)
        for reference in references { out.append(contentsOf: bigEndian(UInt64(reference), 4)) }
      case .dictionary(let pairs):
        header(0xD0, pairs.count)
        for pair in pairs { out.append(contentsOf: bigEndian(UInt64(pair.key), 4)) }
        for pair in pairs { out.append(contentsOf: bigEndian(UInt64(pair.value), 4)) }
      }
    }
    let table = out.count
    for offset in offsets { out.append(contentsOf: bigEndian(UInt64(offset), 8)) }
    out.append(contentsOf: [0, 0, 0, 0, 0, 0, 8, 4])
    out.append(contentsOf: bigEndian(UInt64(objects.count), 8))
    out.append(contentsOf: bigEndian(UInt64(top), 8))
    out.append(contentsOf: bigEndian(UInt64(table), 8))
    return out
  }

  private func bigEndian(_ value: UInt64, _ size: Int) -> [UInt8] {
    (0..<size).reversed().map { UInt8(truncatingIfNeeded: value >> (8 * UInt64($0))) }
  }
}
