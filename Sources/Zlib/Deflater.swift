internal import CZlib

/// Streaming raw-DEFLATE compression (no zlib or gzip header); it owns its `z_stream` and frees
/// it when released.
public final class Deflater {
  private var stream = z_stream()

  /// Prepares a raw-DEFLATE compressor; wraps `deflateInit2` with window bits -15.
  /// - Parameter level: 0 (store) to 9 (smallest); 6 is zlib's default.
  public init(level: Int32 = 6) throws(ZlibError) {
    let rc = gv_deflateInit2(&stream, level, -MAX_WBITS, 8, Z_DEFAULT_STRATEGY)
    guard rc == Z_OK else {
      throw ZlibError(
        kind: rc == Z_MEM_ERROR ? .outOfMemory : .other(code: rc), message: nil, inputOffset: 0)
    }
  }

  deinit {
    deflateEnd(&stream)
  }

  /// Compresses `input` and passes the output produced so far to `sink`; with `finish`, ends the
  /// DEFLATE stream and flushes everything.
  public func feed(
    _ input: UnsafeRawBufferPointer, finish: Bool, sink: (UnsafeRawBufferPointer) throws -> Void
  ) throws {
    var output = [UInt8](repeating: 0, count: 64 * 1024)
    stream.next_in = input.baseAddress.map {
      UnsafeMutablePointer(mutating: $0.assumingMemoryBound(to: Bytef.self))
    }
    stream.avail_in = uInt(input.count)
    defer {
      stream.next_in = nil
      stream.avail_in = 0
    }
    let flush = finish ? Z_FINISH : Z_NO_FLUSH
    while true {
      let (rc, produced) = output.withUnsafeMutableBytes { out -> (Int32, Int) in
        stream.next_out = out.baseAddress!.assumingMemoryBound(to: Bytef.self)
        stream.avail_out = uInt(out.count)
        let rc = deflate(&stream, flush)
        return (rc, out.count - Int(stream.avail_out))
      }
      if produced > 0 {
        try output.withUnsafeBytes { try sink(UnsafeRawBufferPointer(rebasing: $0[0..<produced])) }
      }
      if rc == Z_STREAM_END { return }
      if rc != Z_OK && rc != Z_BUF_ERROR {
        throw ZlibError(
          kind: .other(code: rc), message: stream.msg.map { String(cString: $0) },
          inputOffset: Int(stream.total_in))
      }
      // Without finish, deflate is done with this input once it leaves output space unused.
      if !finish && stream.avail_in == 0 && produced < output.count { return }
    }
  }
}
