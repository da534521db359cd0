import PropertyList

/// The frames one member of a framed archive (``FramedStream``) is compressed into when it is
/// more than one: a chunk of objects whose large columns' values each have a frame of their own
/// (``ColumnSpan``), between frames holding the rest of its tar records. Decompressed one after
/// another they are the member's tar records, as one frame's would be; a reader that wants some
/// columns reads every frame but those of the columns it does not want.
///
/// In the index (FORMAT.md section 3): `frames`, data, each frame's length in the file and
/// content size as two varints; `columns`, an array of `[key, frame]` pairs, the frames that
/// hold exactly a column's values.
package struct MemberFrames: Sendable, Equatable {
  /// One frame.
  package struct Frame: Sendable, Equatable {
    /// Its length in the archive file.
    package let length: Int64
    /// The bytes it decompresses to.
    package let size: Int

    package init(length: Int64, size: Int) {
      self.length = length
      self.size = size
    }
  }

  /// The member's frames, in order.
  package let frames: [Frame]
  /// The frames that hold one column's values each, by frame number.
  package let columns: [Int: String]

  package init(frames: [Frame], columns: [Int: String]) {
    self.frames = frames
    self.columns = columns
  }

  /// The index's entries for them.
  package var entries: [String: PropertyListValue] {
    var encoded: [UInt8] = []
    for frame in frames {
      Varint.append(UInt64(frame.length), to: &encoded)
      Varint.append(UInt64(frame.size), to: &encoded)
    }
    return [
      "frames": .data(encoded),
      "columns": .array(
        columns.keys.sorted().map { .array([.string(columns[$0]!), .integer(Int64($0))]) }),
    ]
  }

  /// The frames an index entry gives `member`, at `place`; nil when it gives none (a member
  /// of one frame, or an archive written before members had several).
  /// - Throws: ``ArchiveFormatError`` when they are there but damaged: lengths that do not add
  ///   up to the member's, content sizes that do not hold its `size` bytes in tar records
  ///   (at least one header; at most 64 KiB of headers), a column's frame that is not one.
  package init?(
    reading entry: PropertyListValue, member: String, place: FramedStream.Place, size: Int
  )
    throws(ArchiveFormatError)
  {
    guard let value = entry["frames"] else { return nil }
    let damaged = ArchiveFormatError(
      member: ArchiveLayout.index, "the frames it gives \(member) are damaged")
    guard case .data(let encoded) = value, case .array(let pairs)? = entry["columns"] else {
      throw damaged
    }
    var reader = Varint.Reader(encoded)
    var frames: [Frame] = []
    var length: Int64 = 0
    var content = 0
    while !reader.isAtEnd {
      guard let frameLength = reader.next(), let frameSize = reader.next(), frameLength > 0,
        frameLength <= UInt64(place.length), frameSize <= UInt64(Int32.max)
      else { throw damaged }
      frames.append(Frame(length: Int64(frameLength), size: Int(frameSize)))
      length += Int64(frameLength)
      content += Int(frameSize)
      guard length <= place.length else { throw damaged }
    }
    let records = (size + 511) / 512 * 512
    guard frames.count > 1, length == place.length, content >= records + 512,
      content - records <= 64 << 10
    else { throw damaged }
    var columns: [Int: String] = [:]
    for pair in pairs {
      guard let items = pair.arrayValue, items.count == 2, let key = items[0].stringValue,
        let frame = items[1].integerValue, frame >= 0, frame < Int64(frames.count),
        columns[Int(frame)] == nil
      else { throw damaged }
      columns[Int(frame)] = key
    }
    self.init(frames: frames, columns: columns)
  }
}
