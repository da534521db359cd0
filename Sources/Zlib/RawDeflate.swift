/// One-shot raw-DEFLATE compression and decompression of byte arrays.
///
/// ```swift
/// let model = try RawDeflate.decompress(modelCacheBytes, limit: 64 << 20)
/// ```
public enum RawDeflate {
  /// Compresses `bytes` as a raw DEFLATE stream.
  /// - Parameter level: 0 (store) to 9 (smallest).
  public static func compress(_ bytes: [UInt8], level: Int32 = 6) throws(ZlibError) -> [UInt8] {
    let deflater = try Deflater(level: level)
    var output: [UInt8] = []
    output.reserveCapacity(bytes.count / 2 + 64)
    do {
      try bytes.withUnsafeBytes { input in
        try deflater.feed(input, finish: true) { output.append(contentsOf: $0) }
      }
    } catch let error as ZlibError {
      throw error
    } catch {
      preconditionFailure("the sink does not throw")
    }
    return output
  }

  /// Decompresses a raw DEFLATE stream.
  /// - Parameter limit: the largest output accepted; larger output throws rather than
  ///   exhausting memory on hostile input.
  /// - Throws: ``ZlibError`` when the data is corrupt, truncated, or inflates past `limit`.
  public static func decompress(_ bytes: [UInt8], limit: Int = 1 << 30) throws(ZlibError)
    -> [UInt8]
  {
    let inflater = try Inflater()
    var output: [UInt8] = []
    do {
      try bytes.withUnsafeBytes { input in
        try inflater.feed(input) { piece in
          guard output.count + piece.count <= limit else {
            throw ZlibError(
              kind: .outputLimitExceeded(limit: limit), message: nil, inputOffset: inflater.totalIn)
          }
          output.append(contentsOf: piece)
        }
      }
    } catch let error as ZlibError {
      throw error
    } catch {
      preconditionFailure("only ZlibError is thrown")
    }
    guard inflater.isFinished else {
      throw ZlibError(kind: .truncated, message: nil, inputOffset: bytes.count)
    }
    return output
  }
}
