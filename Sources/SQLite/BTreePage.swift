/// A B-tree page being filled bottom-up (<https://sqlite.org/fileformat2.html#b_tree_pages>):
/// cells written from the end of the page down, their pointers after the header, no free
/// blocks and no fragments. What ``TableTreeWriter`` and ``IndexTreeWriter`` fill.
struct BTreePage {
  /// A table leaf (`0x0D`): 8-byte header.
  static let tableLeaf: UInt8 = 0x0D
  /// A table interior page (`0x05`): 12-byte header.
  static let tableInterior: UInt8 = 0x05
  /// An index leaf (`0x0A`): 8-byte header.
  static let indexLeaf: UInt8 = 0x0A
  /// An index interior page (`0x02`): 12-byte header.
  static let indexInterior: UInt8 = 0x02

  private(set) var bytes: [UInt8]
  private(set) var cells = 0
  private var contentStart: Int
  /// The size of the last cell placed (it begins at `contentStart`).
  private var lastCellSize = 0
  private let type: UInt8
  private let header: Int

  /// An empty page of `pageSize` bytes of `type` (one of the four above).
  init(type: UInt8, pageSize: Int) {
    self.type = type
    header = type == Self.tableLeaf || type == Self.indexLeaf ? 8 : 12
    bytes = [UInt8](repeating: 0, count: pageSize)
    contentStart = pageSize
  }

  /// The bytes left between the cell pointers and the cells.
  var free: Int { contentStart - header - 2 * cells }

  /// Writes `cell` below the cells so far, its pointer after theirs.
  mutating func place(_ cell: [UInt8]) {
    contentStart -= cell.count
    lastCellSize = cell.count
    let start = contentStart
    bytes.withUnsafeMutableBytes { page in
      cell.withUnsafeBytes {
        page.baseAddress!.advanced(by: start).copyMemory(from: $0.baseAddress!, byteCount: $0.count)
      }
    }
    let pointer = header + 2 * cells
    bytes[pointer] = UInt8(start >> 8)
    bytes[pointer + 1] = UInt8(start & 0xFF)
    cells += 1
  }

  /// The last cell placed.
  var lastCell: ArraySlice<UInt8> { bytes[contentStart..<contentStart + lastCellSize] }

  /// Takes back the last cell placed (once: the one before it is not known).
  mutating func removeLast() {
    precondition(cells > 0 && lastCellSize > 0, "a page with a cell placed")
    cells -= 1
    for offset in contentStart..<contentStart + lastCellSize { bytes[offset] = 0 }
    contentStart += lastCellSize
    lastCellSize = 0
    bytes[header + 2 * cells] = 0
    bytes[header + 2 * cells + 1] = 0
  }

  /// Fills the header: type, cell count, content start and, for an interior page, the
  /// right-most child `right`. ``bytes`` are then the page as written.
  mutating func seal(right: UInt32? = nil) {
    bytes[0] = type
    bytes[3] = UInt8(cells >> 8)
    bytes[4] = UInt8(cells & 0xFF)
    let start = contentStart == 65536 ? 0 : contentStart
    bytes[5] = UInt8(start >> 8)
    bytes[6] = UInt8(start & 0xFF)
    if let right { PageFile.write32(right, into: &bytes, at: 8) }
  }
}
