internal import Bytes
internal import CZstd

/// Whole zstd frames made and read one buffer at a time, with a context kept from one frame to
/// the next: for an archive compressed member by member (and pieces of a member), where making
/// a context per frame would cost more than compressing a small one.
///
/// Every frame carries its content size and its content's checksum (XXH64), so a reader of one
/// frame alone learns how much it holds before decompressing it and detects damage to it.
/// Not thread-safe: one per thread.
///
/// ```swift
/// let frames = try ZstdFrames(level: 3)
/// let frame = try frames.compress(Array("hello".utf8))
/// let back = try frames.decompress(frame, limit: 1 << 20)
/// ```
public final class ZstdFrames {
  private let compressor: OpaquePointer
  private let decompressor: OpaquePointer
  private var output: [UInt8] = []

  /// A compressor and decompressor at `level` (1–19; 3 is zstd's default).
  /// - Throws: ``ZstdError`` when libzstd cannot make its contexts.
  public init(level: Int32 = 3) throws(ZstdError) {
    guard let compressor = ZSTD_createCCtx() else { throw ZstdError(kind: .outOfMemory) }
    guard let decompressor = ZSTD_createDCtx() else {
      ZSTD_freeCCtx(compressor)
      throw ZstdError(kind: .outOfMemory)
    }
    self.compressor = compressor
    self.decompressor = decompressor
    ZSTD_CCtx_setParameter(compressor, ZSTD_c_compressionLevel, level)
    ZSTD_CCtx_setParameter(compressor, ZSTD_c_checksumFlag, 1)
    ZSTD_CCtx_setParameter(compressor, ZSTD_c_contentSizeFlag, 1)
  }

  deinit {
    ZSTD_freeCCtx(compressor)
    ZSTD_freeDCtx(decompressor)
  }

  /// `bytes` as one zstd frame. The returned array's storage is the compressor's until the next
  /// call: copy it, or use it before compressing again.
  /// - Throws: ``ZstdError`` when compression fails.
  public func compress(_ bytes: UnsafeRawBufferPointer) throws(ZstdError) -> [UInt8] {
    let bound = ZSTD_compressBound(bytes.count)
    if output.count < bound { output = [UInt8](repeating: 0, count: bound) }
    let written = output.withUnsafeMutableBytes { out in
      ZSTD_compress2(compressor, out.baseAddress, out.count, bytes.baseAddress, bytes.count)
    }
    guard ZSTD_isError(written) == 0 else {
      throw ZstdError(kind: .compressionFailed, message: Self.name(written))
    }
    return Array(output[0..<written])
  }

  /// `bytes` as one zstd frame.
  public func compress(_ bytes: [UInt8]) throws(ZstdError) -> [UInt8] {
    let result = bytes.withUnsafeBytes { buffer in
      Result { () throws(ZstdError) in try compress(buffer) }
    }
    return try result.get()
  }

  /// The content size a frame's header declares, when `frame` begins with a zstd frame
  /// header that gives one.
  public static func contentSize(of frame: UnsafeRawBufferPointer) -> Int? {
    let size = ZSTD_getFrameContentSize(frame.baseAddress, frame.count)
    guard size != ZSTD_CONTENTSIZE_UNKNOWN, size != ZSTD_CONTENTSIZE_ERROR, size <= UInt64(Int.max)
    else { return nil }
    return Int(size)
  }

  /// Decompresses `frame`, which must be exactly one zstd frame declaring its content size (at
  /// most `limit`), appending its content to `into`.
  /// - Throws: ``ZstdError``: `.outputLimitExceeded` before decompressing anything when the
  ///   frame declares more than `limit` or no size; `.corruptData` when it is not one whole
  ///   frame, or its content does not match its checksum.
  public func decompress(
    _ frame: UnsafeRawBufferPointer, limit: Int, appendingTo into: inout [UInt8]
  ) throws(ZstdError) {
    let frameSize = ZSTD_findFrameCompressedSize(frame.baseAddress, frame.count)
    guard ZSTD_isError(frameSize) == 0, frameSize == frame.count else {
      throw ZstdError(
        kind: .corruptData,
        message: ZSTD_isError(frameSize) != 0 ? Self.name(frameSize) : "bytes after the frame")
    }
    guard let size = Self.contentSize(of: frame), size <= limit else {
      throw ZstdError(kind: .outputLimitExceeded(limit: limit))
    }
    let start = into.count
    into.appendZeros(count: size)
    let produced = into.withUnsafeMutableBytes { out in
      ZSTD_decompressDCtx(
        decompressor, out.baseAddress! + start, size, frame.baseAddress, frame.count)
    }
    guard ZSTD_isError(produced) == 0, produced == size else {
      into.removeSubrange(start...)
      throw ZstdError(
        kind: .corruptData,
        message: ZSTD_isError(produced) != 0 ? Self.name(produced) : "content shorter than declared"
      )
    }
  }

  /// `frame` decompressed (``decompress(_:limit:appendingTo:)``).
  public func decompress(_ frame: [UInt8], limit: Int) throws(ZstdError) -> [UInt8] {
    var content: [UInt8] = []
    let result = frame.withUnsafeBytes { buffer in
      Result { () throws(ZstdError) in try decompress(buffer, limit: limit, appendingTo: &content) }
    }
    try result.get()
    return content
  }

  private static func name(_ code: Int) -> String {
    String(cString: ZSTD_getErrorName(code))
  }
}
