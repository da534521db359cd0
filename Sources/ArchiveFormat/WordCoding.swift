/// A text column's values as numbered words (archive format 4, `graphvault(1)`, ARCHIVE
/// FORMAT): each value cut at its spaces into words, the column's distinct words listed once
/// (`words`, most frequent first), and each value's words given by their numbers in that list
/// (`values`, varints).
///
/// zstd, at the speed a backup needs, pays one to two bytes for each word of a text it has
/// seen before: a match's length and distance. Numbered, a word of a column of a few hundred
/// distinct words is one byte, which zstd's entropy coder brings near the word's own
/// information. Summaries, names, labels and states, texts of few words used often, take half
/// the room; text of many distinct words (prose, identifiers, addresses) does not gain, and
/// the writer leaves it as it is (``WordCoder/code(values:lengths:count:)``).
///
/// Each value's byte length stays in the column's `lengths`, which is what tells where a value's
/// words end: its first word, then a space and the next word until the value's length is
/// reached. A value of no bytes has no words; a value of one space, two empty words.
package enum WordCoding {
  /// The writer codes a column only when its values take at least this many times the bytes of
  /// their words and numbers: below it, zstd does as well with the text.
  static let gain = 3
  /// A coded column's values take at most this many times the bytes of its words and numbers:
  /// what a reader allows, so that a small chunk cannot decode to a large one.
  package static let expansion = 16

  /// What is wrong with a coded column.
  package struct Malformed: Error {
    package let detail: String
  }

  /// The values `words` and `tokens` code, `count` values of the byte lengths `lengths` gives,
  /// back to back.
  /// - Throws: ``Malformed`` when a word's entry runs past the list, a number names no word,
  ///   a value's words do not make its length exactly, numbers are left over, or the values
  ///   would take more than ``expansion`` times the coded bytes.
  package static func decode(
    words: ArraySlice<UInt8>, tokens: ArraySlice<UInt8>, lengths: ArraySlice<UInt8>, count: Int
  ) throws(Malformed) -> [UInt8] {
    let total = try size(words: words, tokens: tokens, lengths: lengths, count: count)
    var problem: Malformed?
    let result = [UInt8](unsafeUninitializedCapacity: total + padding) { output, initialized in
      do throws(Malformed) {
        try decode(
          words: words, tokens: tokens, lengths: lengths, count: count,
          into: UnsafeMutableRawBufferPointer(output))
        initialized = total
      } catch {
        problem = error
      }
    }
    if let problem { throw problem }
    return result
  }

  /// The bytes ``decode(words:tokens:lengths:count:into:)`` needs room for beyond the values.
  package static let padding = 16

  /// The values' total size: the sum of their lengths.
  /// - Throws: ``Malformed`` when there are fewer than `count` lengths, or they add up to
  ///   more than ``expansion`` times the coded bytes.
  package static func size(
    words: ArraySlice<UInt8>, tokens: ArraySlice<UInt8>, lengths: ArraySlice<UInt8>, count: Int
  ) throws(Malformed) -> Int {
    let limit = expansion * (words.count + tokens.count)
    var total = 0
    var sizes = Varint.Reader(lengths)
    for _ in 0..<count {
      guard let length = sizes.next(), length <= UInt64(limit - total) else {
        throw Malformed(
          detail: "its values would take more than \(expansion) times the bytes of its words")
      }
      total += Int(length)
    }
    return total
  }

  /// Writes the values into `output`, which has room for their ``size(words:tokens:lengths:count:)``
  /// (which refuses lengths too many or too large) and ``padding`` bytes more (which it may
  /// write to).
  /// - Throws: ``Malformed`` when a word's entry runs past the list, a number names no word,
  ///   a value's words do not make its length exactly, or numbers are left over.
  package static func decode(
    words: ArraySlice<UInt8>, tokens: ArraySlice<UInt8>, lengths: ArraySlice<UInt8>, count: Int,
    into output: UnsafeMutableRawBufferPointer
  ) throws(Malformed) {
    // Each word's start (from the list's start) and size, side by side.
    var list: [Int] = []
    var entries = Varint.Reader(words)
    while !entries.isAtEnd {
      guard let length = entries.next(), length <= UInt64(words.endIndex - entries.offset)
      else { throw Malformed(detail: "a word runs past its list of words") }
      list.append(entries.offset - words.startIndex)
      list.append(Int(length))
      entries.skip(Int(length))
    }
    // Words up to 16 bytes are copied as two 8-byte loads and stores, which may run up to 15
    // bytes past a word, or the values' end: both buffers have room for that.
    var padded = Array(words)
    padded.append(contentsOf: repeatElement(0, count: padding))
    let problem = padded.withUnsafeBufferPointer { words in
      tokens.withUnsafeBufferPointer { tokens in
        list.withUnsafeBufferPointer { list in
          fill(output, words: words, list: list, tokens: tokens, lengths: lengths, count: count)
        }
      }
    }
    if let problem { throw Malformed(detail: problem) }
  }

  /// Writes the `count` values whose byte lengths `lengths` gives into `output` (of their
  /// total size and ``padding`` bytes more), from the numbers in `tokens` of the words `list`
  /// places in `words`; what is wrong, or nil.
  private static func fill(
    _ output: UnsafeMutableRawBufferPointer, words: UnsafeBufferPointer<UInt8>,
    list: UnsafeBufferPointer<Int>, tokens: UnsafeBufferPointer<UInt8>,
    lengths: ArraySlice<UInt8>, count: Int
  ) -> String? {
    var sizes = Varint.Reader(lengths)
    var written = 0
    let room = output.count - padding
    let wordCount = UInt64(list.count / 2)
    var at = 0
    for _ in 0..<count {
      guard let length = sizes.next(), length <= UInt64(room - written) else {
        preconditionFailure("no room for the values: the output is not of their size")
      }
      let end = written + Int(length)
      var space = false
      while written < end {
        // The next number, a varint.
        var number: UInt64 = 0
        var shift: UInt64 = 0
        while true {
          guard at < tokens.count, shift < 64 else {
            return "a value's word number names no word"
          }
          let byte = tokens[at]
          at += 1
          number |= UInt64(byte & 0x7F) << shift
          if byte < 0x80 { break }
          shift += 7
        }
        guard number < wordCount else { return "a value's word number names no word" }
        let start = list[Int(number) * 2]
        let size = list[Int(number) * 2 + 1]
        guard size + (space ? 1 : 0) <= end - written else {
          return "a value's words run past its length"
        }
        if space {
          output[written] = 0x20
          written += 1
        }
        let target = UnsafeMutableRawPointer(output.baseAddress! + written)
        let source = UnsafeRawPointer(words.baseAddress! + start)
        if size <= 16 {
          target.storeBytes(of: source.loadUnaligned(as: UInt64.self), as: UInt64.self)
          target.storeBytes(
            of: source.loadUnaligned(fromByteOffset: 8, as: UInt64.self), toByteOffset: 8,
            as: UInt64.self)
        } else {
          target.copyMemory(from: source, byteCount: size)
        }
        written += size
        space = true
      }
    }
    return at == tokens.count ? nil : "word numbers are left over"
  }
}
