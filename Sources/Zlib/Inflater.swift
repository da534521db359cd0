internal import CZlib

/// Streaming raw-DEFLATE decompression (no zlib or gzip header), as in Core Data's
/// `Z_MODELCACHE`; it owns its `z_stream` and frees it when released.
public final class Inflater {
  private var stream = z_stream()
  private var finished = false
  private var consumed = 0

  /// Prepares a raw-DEFLATE inflater; wraps `inflateInit2` with window bits -15.
  public init() throws(ZlibError) {
    let rc = gv_inflateInit2(&stream, -MAX_WBITS)
    guard rc == Z_OK else {
      throw ZlibError(
        kind: rc == Z_MEM_ERROR ? .outOfMemory : .other(code: rc), message: nil, inputOffset: 0)
    }
  }

  deinit {
    inflateEnd(&stream)
  }

  /// Whether the end of the DEFLATE stream has been reached.
  public var isFinished: Bool { finished }

  /// Feeds compressed bytes and passes every piece of decompressed output to `sink`.
  /// Bytes after the end of the DEFLATE stream are ignored.
  /// - Throws: ``ZlibError`` with the input offset when the data is invalid.
  public func feed(_ input: UnsafeRawBufferPointer, sink: (UnsafeRawBufferPointer) throws -> Void)
    throws
  {
    guard !finished, let base = input.baseAddress, input.count > 0 else { return }
    var output = [UInt8](repeating: 0, count: 64 * 1024)
    stream.next_in = UnsafeMutablePointer(mutating: base.assumingMemoryBound(to: Bytef.self))
    stream.avail_in = uInt(input.count)
    defer {
      consumed += input.count - Int(stream.avail_in)
      stream.next_in = nil
      stream.avail_in = 0
    }
    while stream.avail_in > 0 || !finished {
      let (rc, produced) = output.withUnsafeMutableBytes { out -> (Int32, Int) in
        stream.next_out = out.baseAddress!.assumingMemoryBound(to: Bytef.self)
        stream.avail_out = uInt(out.count)
        let rc = inflate(&stream, Z_NO_FLUSH)
        return (rc, out.count - Int(stream.avail_out))
      }
      if produced > 0 {
        try output.withUnsafeBytes { try sink(UnsafeRawBufferPointer(rebasing: $0[0..<produced])) }
      }
      switch rc {
      case Z_STREAM_END:
        finished = true
        return
      case Z_OK:
        if stream.avail_in == 0 && produced < output.count { return }
      case Z_BUF_ERROR:
        return  // needs more input
      case Z_DATA_ERROR, Z_NEED_DICT:
        throw makeError(.corruptData, input: input)
      case Z_MEM_ERROR:
        throw makeError(.outOfMemory, input: input)
      default:
        throw makeError(.other(code: rc), input: input)
      }
    }
  }

  private func makeError(_ kind: ZlibError.Kind, input: UnsafeRawBufferPointer) -> ZlibError {
    ZlibError(
      kind: kind, message: stream.msg.map { String(cString: $0) },
      inputOffset: consumed + input.count - Int(stream.avail_in))
  }

  /// The number of compressed bytes consumed so far.
  public var totalIn: Int { consumed }
}
