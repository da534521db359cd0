/// Builds a rowid table's B-tree bottom-up in a ``PageFile``, from rows given in ascending rowid
/// order (<https://sqlite.org/fileformat2.html#b_tree_pages>): leaves filled as full as their
/// cells allow, payloads past a leaf's share spilled to overflow pages, interior pages above
/// them, and the top page written into the table's existing (empty) root page.
///
/// What SQLite does row by row (finding the leaf, splitting and balancing pages as they fill)
/// this does once per page. The tree is SQLite's own format: SQLite reads, changes and checks
/// it (`PRAGMA integrity_check`) as one it built.
package final class TableTreeWriter {
  /// A page being filled, and what its parent needs of it.
  private struct Node {
    var page: BTreePage
    /// Interior pages: the child each cell points to, and the right-most child with the
    /// largest key below it.
    var children: [UInt32] = []
    var right: UInt32?
    /// The largest rowid in the page's subtree.
    var lastKey: Int64 = 0
    /// Leaves: the first overflow page of each cell that spilled.
    var overflows: [UInt32] = []

    init(_ type: UInt8, pageSize: Int) { page = BTreePage(type: type, pageSize: pageSize) }
  }

  /// The largest interior cell: a child's page number and a nine-byte key, with its pointer.
  private static let largestInteriorCell = 4 + 9 + 2

  private let file: PageFile
  private let root: UInt32
  private var leaf: Node
  /// Interior levels, the leaves' parents first.
  private var levels: [Node] = []
  /// Pages written at each level (leaves first), which tells whether a level's last page can
  /// still be the root.
  private var written: [Int] = [0]
  private var previous: Int64?
  /// Whether ``finish()`` is handing each level its last child, which the room every page
  /// keeps takes.
  private var sealing = false
  private var cell: [UInt8] = []
  private var interiorCell: [UInt8] = []

  /// A writer of the table whose root page is `root`, an empty leaf in `file`.
  package init(file: PageFile, root: UInt32) {
    self.file = file
    self.root = root
    leaf = Node(BTreePage.tableLeaf, pageSize: file.pageSize)
  }

  /// The rowid of the last row appended.
  package var lastRowid: Int64? { previous }

  /// Appends a row: `rowid` (greater than the last one's) and its record.
  /// - Throws: ``SQLiteError`` when a page cannot be written.
  package func append(rowid: Int64, record: UnsafeRawBufferPointer) throws(SQLiteError) {
    precondition(previous.map { rowid > $0 } ?? true, "rows are appended in ascending rowid order")
    previous = rowid
    let size = record.count
    let local = Self.localSize(of: size, usable: file.usableSize)
    cell.removeAll(keepingCapacity: true)
    RowRecord.appendVarint(UInt64(size), to: &cell)
    RowRecord.appendVarint(UInt64(bitPattern: rowid), to: &cell)
    cell.append(contentsOf: UnsafeRawBufferPointer(rebasing: record[0..<local]))
    let cellSize = cell.count + (local < size ? 4 : 0)
    if leaf.page.cells > 0 && leaf.page.free < cellSize + 2 {
      try finishLeaf()
    }
    if local < size {
      let first = try writeOverflow(UnsafeRawBufferPointer(rebasing: record[local...]))
      leaf.overflows.append(first)
      PageFile.append32(first, to: &cell)
    }
    leaf.page.place(cell)
    leaf.lastKey = rowid
  }

  /// Writes the pages still being filled, the top one into the root page. A writer given no
  /// row leaves the root page as it was.
  /// - Throws: ``SQLiteError`` when a page cannot be written.
  package func finish() throws(SQLiteError) {
    guard previous != nil else { return }
    sealing = true
    if written[0] == 0 {
      try writeLeaf(at: root)
      return
    }
    try finishLeaf()
    var level = 0
    while level < levels.count {
      if level == levels.count - 1 && written[level + 1] == 0 {
        try writeInterior(level, at: root)
        return
      }
      try finishInterior(level)
      level += 1
    }
  }

  /// The bytes of a payload of `size` a table leaf keeps in its cell; the rest spills
  /// (SQLite's rule with its minimum and maximum local sizes).
  static func localSize(of size: Int, usable: Int) -> Int {
    let most = usable - 35
    guard size > most else { return size }
    let least = (usable - 12) * 32 / 255 - 23
    let spread = least + (size - least) % (usable - 4)
    return spread <= most ? spread : least
  }

  /// Writes `payload` into a chain of overflow pages; returns the first.
  private func writeOverflow(_ payload: UnsafeRawBufferPointer) throws(SQLiteError)
    -> UInt32
  {
    let share = file.usableSize - 4
    let count = (payload.count + share - 1) / share
    var pages: [UInt32] = []
    for _ in 0..<count { pages.append(file.allocate()) }
    var page = [UInt8](repeating: 0, count: file.pageSize)
    for (index, number) in pages.enumerated() {
      let next = index + 1 < count ? pages[index + 1] : 0
      PageFile.write32(next, into: &page, at: 0)
      let start = index * share
      let end = min(start + share, payload.count)
      // Only the last page is partly filled: the bytes past its payload are zeros.
      for position in (4 + end - start)..<page.count { page[position] = 0 }
      page.withUnsafeMutableBytes {
        $0.baseAddress!.advanced(by: 4).copyMemory(
          from: payload.baseAddress!.advanced(by: start), byteCount: end - start)
      }
      try file.write(page, at: number)
      if index > 0 { try file.point(number, .laterOverflow, from: pages[index - 1]) }
    }
    return pages[0]
  }

  /// Writes the leaf being filled as a new page, hands it to its parent and starts another.
  private func finishLeaf() throws(SQLiteError) {
    let number = file.allocate()
    try writeLeaf(at: number)
    written[0] += 1
    let key = leaf.lastKey
    leaf = Node(BTreePage.tableLeaf, pageSize: file.pageSize)
    try add(child: number, key: key, to: 0)
  }

  private func writeLeaf(at number: UInt32) throws(SQLiteError) {
    leaf.page.seal()
    try file.write(leaf.page.bytes, at: number)
    for overflow in leaf.overflows { try file.point(overflow, .firstOverflow, from: number) }
  }

  /// Gives interior level `level` (0: the leaves' parents) the child `child`, whose subtree's
  /// largest rowid is `key`, as its right-most child; the one before becomes a cell. A page
  /// keeps room for one more cell, so that the child ``finish()`` hands each level always fits.
  private func add(child: UInt32, key: Int64, to level: Int) throws(SQLiteError) {
    if level == levels.count {
      levels.append(Node(BTreePage.tableInterior, pageSize: file.pageSize))
      written.append(0)
    }
    if let right = levels[level].right {
      interiorCell.removeAll(keepingCapacity: true)
      PageFile.append32(right, to: &interiorCell)
      RowRecord.appendVarint(UInt64(bitPattern: levels[level].lastKey), to: &interiorCell)
      let room = levels[level].page.free
      let kept = sealing ? 0 : Self.largestInteriorCell
      if room < interiorCell.count + 2 + kept {
        try finishInterior(level)
      } else {
        levels[level].page.place(interiorCell)
        levels[level].children.append(right)
      }
    }
    levels[level].right = child
    levels[level].lastKey = key
  }

  /// Writes interior level `level`'s page as a new page, hands it to the level above and starts
  /// another.
  private func finishInterior(_ level: Int) throws(SQLiteError) {
    let number = file.allocate()
    try writeInterior(level, at: number)
    written[level + 1] += 1
    let key = levels[level].lastKey
    levels[level] = Node(BTreePage.tableInterior, pageSize: file.pageSize)
    try add(child: number, key: key, to: level + 1)
  }

  private func writeInterior(_ level: Int, at number: UInt32) throws(SQLiteError) {
    guard let right = levels[level].right else { return }
    levels[level].page.seal(right: right)
    try file.write(levels[level].page.bytes, at: number)
    for child in levels[level].children + [right] { try file.point(child, .btree, from: number) }
  }
}
